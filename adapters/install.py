"""Install /memory.wiki into Claude Code, Cursor, Codex CLI and Aider, and register the MCP
server, without ever clobbering the user's own edits.

Every file or config entry we write is recorded with a sha256 of what we wrote in a manifest
(`<home>/.config/memorywiki/installed.json`). On re-install a file is rewritten only when it
is missing, already identical, or still exactly what we wrote last time; anything else is a
"conflict" that is left alone unless `force=True`. Uninstall removes exactly what the
manifest says we wrote (files, the `read:` entry in `.aider.conf.yml`, the `memorywiki` MCP
server entry), and keeps files the user has edited since (unless forced).

Config files are edited in place as text and re-parsed to check the result, so a user's
comments and other keys in `.aider.conf.yml` / `config.toml` survive.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import tomllib
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Mapping

from memorywiki.skill.render import AIDER_CONVENTIONS, normalize_tool, render

SCOPES = ("project", "user")
SERVER_NAME = "memorywiki"
MCP_COMMAND = "memorywiki"
MCP_ARGS = ["mcp"]


@dataclass
class Action:
    """One thing install/uninstall did (or, in a dry run, would do).

    op: create | update | unchanged | conflict | remove | keep | missing
    applied: False for dry runs and conflicts (nothing was written).
    """

    op: str
    path: Path
    detail: str = ""
    applied: bool = True

    def __str__(self) -> str:
        suffix = f" ({self.detail})" if self.detail else ""
        dry = "" if self.applied or self.op in ("unchanged", "conflict", "keep", "missing") else " [dry run]"
        return f"{self.op:9} {self.path}{suffix}{dry}"


class InstallError(Exception):
    pass


# --- helpers -----------------------------------------------------------------------------------


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None


def _write(path: Path, text: str) -> list[str]:
    """Atomic write; returns the directories it had to create (outermost first)."""
    created: list[str] = []
    missing = []
    d = path.parent
    while not d.exists():
        missing.append(d)
        d = d.parent
    for d in reversed(missing):
        d.mkdir()
        created.append(str(d))
    tmp = path.with_name(f".{path.name}.memorywiki-tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)
    return created


def _env(env: Mapping[str, str] | None) -> Mapping[str, str]:
    return os.environ if env is None else env


def _codex_home(home: Path, env: Mapping[str, str]) -> Path:
    return Path(env["CODEX_HOME"]) if env.get("CODEX_HOME") else home / ".codex"


def _paths(project_dir: Path | str | None, home: Path | str | None) -> tuple[Path, Path]:
    project = Path(project_dir).resolve() if project_dir else Path.cwd().resolve()
    home_p = Path(home).resolve() if home else Path.home()
    return project, home_p


def _check_scope(scope: str) -> str:
    if scope not in SCOPES:
        raise ValueError(f"unknown scope {scope!r}; expected 'project' or 'user'")
    return scope


def _target(rel: str, scope: str, project: Path, home: Path, env: Mapping[str, str]) -> Path:
    if scope == "user" and rel.startswith(".codex/"):
        return _codex_home(home, env) / rel[len(".codex/"):]
    return (project if scope == "project" else home) / rel


def detect_codex_version() -> str | None:
    """`codex --version` output, or None when codex is not on PATH."""
    exe = shutil.which("codex")
    if not exe:
        return None
    try:
        out = subprocess.run([exe, "--version"], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    return (out.stdout or out.stderr).strip() or None


# --- manifest ------------------------------------------------------------------------------------


def manifest_path(home: Path | str | None = None) -> Path:
    _, home_p = _paths(None, home)
    return home_p / ".config" / "memorywiki" / "installed.json"


class Manifest:
    def __init__(self, home: Path) -> None:
        self.path = manifest_path(home)
        data: dict = {}
        text = _read(self.path)
        if text:
            try:
                data = json.loads(text)
            except ValueError:
                data = {}
        self.entries: dict[str, dict] = data.get("entries", {}) if isinstance(data, dict) else {}

    def get(self, path: Path) -> dict | None:
        return self.entries.get(str(path))

    def put(self, path: Path, **record: Any) -> None:
        self.entries[str(path)] = record

    def drop(self, path: Path) -> None:
        self.entries.pop(str(path), None)

    def save(self) -> None:
        if not self.entries and not self.path.exists():
            return
        _write(self.path, json.dumps({"version": 1, "entries": self.entries}, indent=2, sort_keys=True) + "\n")


def _matches(rec: dict, tool: str, scope: str, project: Path) -> bool:
    if rec.get("tool") != tool or rec.get("scope") != scope:
        return False
    return scope == "user" or rec.get("project") == str(project)


def _prune_dirs(dirs: list[str]) -> None:
    for d in reversed(dirs or []):
        try:
            Path(d).rmdir()  # only succeeds when empty
        except OSError:
            pass


# --- whole files ---------------------------------------------------------------------------------


def _install_file(path: Path, content: str, rec_base: dict, manifest: Manifest,
                  dry_run: bool, force: bool) -> Action:
    current = _read(path)
    rec = manifest.get(path)
    if current is None:
        if dry_run:
            return Action("create", path, applied=False)
        dirs = _write(path, content)
        manifest.put(path, **rec_base, kind="file", sha256=_sha(content), dirs=dirs)
        return Action("create", path)
    if current == content:
        if not dry_run and (rec is None or rec.get("sha256") != _sha(content)):
            manifest.put(path, **rec_base, kind="file", sha256=_sha(content),
                         dirs=(rec or {}).get("dirs", []))
        return Action("unchanged", path, applied=False)
    ours = rec is not None and rec.get("kind") == "file" and rec.get("sha256") == _sha(current)
    if not ours and not force:
        why = "edited since install" if rec else "exists and was not written by memorywiki"
        return Action("conflict", path, f"{why}; kept, use force to overwrite", applied=False)
    if dry_run:
        return Action("update", path, "forced" if not ours else "", applied=False)
    _write(path, content)
    manifest.put(path, **rec_base, kind="file", sha256=_sha(content), dirs=(rec or {}).get("dirs", []))
    return Action("update", path, "forced: overwrote local edits" if not ours else "")


def _remove_file(path: Path, rec: dict, manifest: Manifest, dry_run: bool, force: bool) -> Action:
    current = _read(path)
    if current is None:
        if not dry_run:
            manifest.drop(path)
            _prune_dirs(rec.get("dirs", []))
        return Action("missing", path, "already gone", applied=False)
    if _sha(current) != rec.get("sha256") and not force:
        return Action("keep", path, "edited since install; kept, use force to remove", applied=False)
    if dry_run:
        return Action("remove", path, applied=False)
    path.unlink()
    manifest.drop(path)
    _prune_dirs(rec.get("dirs", []))
    return Action("remove", path)


# --- .aider.conf.yml `read:` entry ------------------------------------------------------------

_OUR_COMMENT = "# added by memorywiki install (read-only conventions for /memory.wiki)"


def _yaml_load(text: str) -> dict:
    import yaml

    data = yaml.safe_load(text) if text.strip() else {}
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise InstallError("not a YAML mapping")
    return data


def _as_list(value: Any) -> list:
    if value is None:
        return []
    return list(value) if isinstance(value, list) else [value]


def _read_block_span(text: str) -> tuple[int, int] | None:
    """[start, end) character span of the top-level `read:` key and its value lines."""
    lines = text.splitlines(keepends=True)
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line))
    start_idx = next((i for i, line in enumerate(lines) if re.match(r"read[ \t]*:", line)), None)
    if start_idx is None:
        return None
    last = start_idx
    j = start_idx + 1
    while j < len(lines):
        line = lines[j]
        stripped = line.strip()
        if not stripped:
            j += 1
            continue
        if line[0] in " \t" or stripped.startswith("-"):
            last = j
            j += 1
            continue
        break
    return offsets[start_idx], offsets[last + 1]


def _render_read(items: list) -> str:
    return "read:\n" + "".join(f"  - {_yaml_item(str(i))}\n" for i in items)


def _set_read(text: str, items: list) -> str:
    """`text` with the top-level read: key set to `items` (removed when empty)."""
    span = _read_block_span(text)
    if span is None:
        if not items:
            return text
        sep = "" if not text or text.endswith("\n") else "\n"
        return f"{text}{sep}{_OUR_COMMENT}\n{_render_read(items)}"
    start, end = span
    new = _render_read(items) if items else ""
    before = text[:start]
    if not items and before.endswith(_OUR_COMMENT + "\n"):
        before = before[: -len(_OUR_COMMENT) - 1]
    return before + new + text[end:]


def _yaml_item(entry: str) -> str:
    if re.fullmatch(r"[A-Za-z0-9_./~][A-Za-z0-9_./~-]*|[A-Za-z0-9_.]", entry) and ": " not in entry:
        return entry
    return json.dumps(entry, ensure_ascii=False)


def _minimal_read_edit(text: str, entry: str, add: bool) -> str | None:
    """Insert or delete just the one `- entry` line of a block-style read: list."""
    span = _read_block_span(text)
    if span is None:
        return None
    block = text[span[0]:span[1]].splitlines(keepends=True)
    key_line, rest = block[0], block[1:]
    if key_line.split(":", 1)[1].split("#", 1)[0].strip():
        return None  # inline value: not a block list
    item_idx = [i for i, line in enumerate(rest) if re.match(r"\s*-(\s|$)", line)]
    if not item_idx:
        return None
    if add:
        indent = re.match(r"(\s*)-", rest[item_idx[0]]).group(1)
        last = rest[item_idx[-1]]
        if not last.endswith("\n"):
            rest[item_idx[-1]] = last + "\n"
        rest.insert(item_idx[-1] + 1, f"{indent}- {_yaml_item(entry)}\n")
    else:
        pattern = re.compile(r"\s*-\s*(['\"]?)" + re.escape(entry) + r"\1\s*(#.*)?$")
        hits = [i for i in item_idx if pattern.match(rest[i].rstrip("\r\n"))]
        if not hits or len(item_idx) == 1:
            return None
        del rest[hits[0]]
    return text[:span[0]] + key_line + "".join(rest) + text[span[1]:]


def _edit_read(text: str, entry: str, add: bool) -> str:
    data = _yaml_load(text)
    items = _as_list(data.get("read"))
    if add:
        if entry in items:
            return text
        new_items = items + [entry]
    else:
        if entry not in items:
            return text
        new_items = [i for i in items if i != entry]
    expected = dict(data)
    if new_items:
        expected["read"] = new_items
    else:
        expected.pop("read", None)
    for candidate in (_minimal_read_edit(text, entry, add), _set_read(text, new_items)):
        if candidate is None:
            continue
        try:
            if _yaml_load(candidate) == expected:
                return candidate
        except Exception:  # noqa: BLE001 - a parse failure means this edit went wrong
            continue
    raise InstallError("could not edit read: in place without changing other settings")


def _yaml_dump(data: dict) -> str:
    import yaml

    return yaml.safe_dump(data, sort_keys=False, allow_unicode=True) if data else ""


def _install_aider_conf(conf: Path, entry: str, rec_base: dict, manifest: Manifest,
                        dry_run: bool, force: bool) -> Action:
    current = _read(conf)
    created = current is None
    text = current or ""
    try:
        new_text = _edit_read(text, entry, add=True)
    except InstallError as exc:
        if not force:
            return Action("conflict", conf, f"{exc}; add `read: {entry}` by hand or use force", applied=False)
        data = _yaml_load(text) if _safe_parses(text) else {}
        data["read"] = _as_list(data.get("read")) + [entry]
        new_text = _yaml_dump(data)
    except Exception as exc:  # noqa: BLE001 - invalid YAML: never touch it
        return Action("conflict", conf, f"cannot parse ({exc.__class__.__name__}); left alone", applied=False)
    rec = manifest.get(conf)
    if new_text == text and not created:
        if not dry_run and rec is None:
            manifest.put(conf, **rec_base, kind="aider-read", entry=entry, created=False, sha256=_sha(text))
        return Action("unchanged", conf, f"read: already lists {entry}", applied=False)
    if dry_run:
        return Action("create" if created else "update", conf, f"read: + {entry}", applied=False)
    dirs = _write(conf, new_text)
    was_created = created or bool(rec and rec.get("created"))
    original = (rec or {}).get("original") if rec else (None if created else text)
    manifest.put(conf, **rec_base, kind="aider-read", entry=entry, created=was_created,
                 sha256=_sha(new_text), dirs=dirs, original=original)
    return Action("create" if created else "update", conf, f"read: + {entry}")


def _safe_parses(text: str) -> bool:
    try:
        _yaml_load(text)
        return True
    except Exception:  # noqa: BLE001
        return False


def _remove_aider_conf(conf: Path, rec: dict, manifest: Manifest, dry_run: bool, force: bool) -> Action:
    current = _read(conf)
    if current is None:
        if not dry_run:
            manifest.drop(conf)
        return Action("missing", conf, "already gone", applied=False)
    entry = rec.get("entry", AIDER_CONVENTIONS)
    if rec.get("created") and _sha(current) == rec.get("sha256"):
        if dry_run:
            return Action("remove", conf, applied=False)
        conf.unlink()
        manifest.drop(conf)
        _prune_dirs(rec.get("dirs", []))
        return Action("remove", conf)
    if isinstance(rec.get("original"), str) and _sha(current) == rec.get("sha256"):
        # untouched since we edited it: put back the user's file byte for byte
        if dry_run:
            return Action("update", conf, f"read: - {entry}", applied=False)
        _write(conf, rec["original"])
        manifest.drop(conf)
        return Action("update", conf, f"read: - {entry}")
    try:
        new_text = _edit_read(current, entry, add=False)
    except Exception as exc:  # noqa: BLE001
        if not force or not _safe_parses(current):
            return Action("keep", conf, f"could not remove read: {entry} ({exc}); edit by hand", applied=False)
        data = _yaml_load(current)
        items = [i for i in _as_list(data.get("read")) if i != entry]
        if items:
            data["read"] = items
        else:
            data.pop("read", None)
        new_text = _yaml_dump(data)
    if dry_run:
        return Action("update", conf, f"read: - {entry}", applied=False)
    if rec.get("created") and not new_text.strip():
        conf.unlink()
        manifest.drop(conf)
        return Action("remove", conf)
    if new_text != current:
        _write(conf, new_text)
    manifest.drop(conf)
    return Action("update", conf, f"read: - {entry}")


# --- public API: skill / command files -----------------------------------------------------


def install(
    tool: str,
    scope: str = "project",
    project_dir: Path | str | None = None,
    home: Path | str | None = None,
    dry_run: bool = False,
    force: bool = False,
    codex_version: str | None = None,
    env: Mapping[str, str] | None = None,
) -> list[Action]:
    """Write /memory.wiki for `tool` ("claude-code", "cursor", "codex", "aider").

    scope "project" writes under project_dir (default: cwd); "user" under home (default: ~),
    with Codex prompt files under $CODEX_HOME. For Codex at user scope, `codex_version`
    (default: detected with `codex --version`) below 0.117 adds the legacy custom prompt.
    """
    tool = normalize_tool(tool)
    scope = _check_scope(scope)
    env = _env(env)
    project, home_p = _paths(project_dir, home)
    if tool == "codex" and scope == "user" and codex_version is None:
        codex_version = detect_codex_version()
    files = render(tool, codex_version=codex_version)
    manifest = Manifest(home_p)
    rec_base = {"tool": tool, "scope": scope, "project": str(project) if scope == "project" else None}
    actions: list[Action] = []
    for rel, content in files.items():
        if scope == "project" and rel.startswith(".codex/"):
            continue  # custom prompts only exist at user level ($CODEX_HOME/prompts)
        actions.append(_install_file(_target(rel, scope, project, home_p, env), content,
                                     rec_base, manifest, dry_run, force))
    if tool == "aider":
        root = project if scope == "project" else home_p
        entry = AIDER_CONVENTIONS if scope == "project" else str(root / AIDER_CONVENTIONS)
        actions.append(_install_aider_conf(root / ".aider.conf.yml", entry, rec_base, manifest, dry_run, force))
    if not dry_run:
        manifest.save()
    return actions


def uninstall(
    tool: str,
    scope: str = "project",
    project_dir: Path | str | None = None,
    home: Path | str | None = None,
    dry_run: bool = False,
    force: bool = False,
    env: Mapping[str, str] | None = None,
) -> list[Action]:
    """Remove what install() / write_mcp_registration() wrote for `tool` in `scope`.
    Files edited since are kept (reported as "keep") unless `force`."""
    tool = normalize_tool(tool)
    scope = _check_scope(scope)
    project, home_p = _paths(project_dir, home)
    manifest = Manifest(home_p)
    actions: list[Action] = []
    dirs: set[str] = set()
    for key, rec in list(manifest.entries.items()):
        if not _matches(rec, tool, scope, project):
            continue
        dirs.update(rec.get("dirs") or [])
        path = Path(key)
        kind = rec.get("kind")
        if kind == "file":
            actions.append(_remove_file(path, rec, manifest, dry_run, force))
        elif kind == "aider-read":
            actions.append(_remove_aider_conf(path, rec, manifest, dry_run, force))
        elif kind in ("mcp-json", "mcp-toml"):
            actions.append(_remove_mcp(path, rec, manifest, dry_run, force))
    if not dry_run:
        _prune_dirs(sorted(dirs, key=lambda d: d.count(os.sep)))  # deepest last -> removed first
        manifest.save()
    return actions


def list_installed(project_dir: Path | str | None = None, home: Path | str | None = None) -> list[dict]:
    """What the manifest says is installed at user scope or in `project_dir`, each with a
    status: "installed" (as written), "modified" (edited since) or "missing"."""
    project, home_p = _paths(project_dir, home)
    out = []
    for key, rec in sorted(Manifest(home_p).entries.items()):
        if rec.get("scope") == "project" and rec.get("project") != str(project):
            continue
        current = _read(Path(key))
        if current is None:
            status = "missing"
        elif rec.get("kind") in ("mcp-json", "mcp-toml"):
            status = "installed" if _mcp_current(Path(key), rec) == rec.get("value") else "modified"
        else:
            status = "installed" if _sha(current) == rec.get("sha256") else "modified"
        out.append({"tool": rec.get("tool"), "scope": rec.get("scope"), "path": key,
                    "kind": rec.get("kind"), "status": status})
    return out


# --- MCP registration ------------------------------------------------------------------------


def _mcp_entry(tool: str) -> dict:
    entry: dict[str, Any] = {"command": MCP_COMMAND, "args": list(MCP_ARGS)}
    if tool == "claude-code":
        entry = {"type": "stdio", **entry}
    return entry


def mcp_registration(tool: str) -> str:
    """The config snippet that registers `memorywiki mcp` (stdio) with `tool`:
    JSON for Claude Code (.mcp.json) and Cursor (.cursor/mcp.json), TOML for Codex
    (~/.codex/config.toml). Aider has no MCP client: ValueError."""
    tool = normalize_tool(tool)
    if tool == "aider":
        raise ValueError("aider has no MCP client; use /run memorywiki ... instead")
    if tool == "codex":
        return _toml_block()
    return json.dumps({"mcpServers": {SERVER_NAME: _mcp_entry(tool)}}, indent=2) + "\n"


def mcp_command(tool: str) -> str | None:
    """The tool's own CLI command that registers the server, when it has one."""
    tool = normalize_tool(tool)
    if tool == "claude-code":
        return f"claude mcp add {SERVER_NAME} -- {MCP_COMMAND} {' '.join(MCP_ARGS)}"
    if tool == "codex":
        return f"codex mcp add {SERVER_NAME} -- {MCP_COMMAND} {' '.join(MCP_ARGS)}"
    return None


def mcp_config_path(tool: str, scope: str = "project", project_dir: Path | str | None = None,
                    home: Path | str | None = None, env: Mapping[str, str] | None = None) -> Path:
    tool = normalize_tool(tool)
    scope = _check_scope(scope)
    project, home_p = _paths(project_dir, home)
    if tool == "claude-code":
        return project / ".mcp.json" if scope == "project" else home_p / ".claude.json"
    if tool == "cursor":
        return (project if scope == "project" else home_p) / ".cursor" / "mcp.json"
    if tool == "codex":
        return project / ".codex" / "config.toml" if scope == "project" else _codex_home(home_p, _env(env)) / "config.toml"
    raise ValueError("aider has no MCP client")


def _toml_block() -> str:
    args = ", ".join(json.dumps(a) for a in MCP_ARGS)
    return f"[mcp_servers.{SERVER_NAME}]\ncommand = {json.dumps(MCP_COMMAND)}\nargs = [{args}]\n"


_TOML_HEADER = re.compile(r"^\s*\[\[?\s*([^\]]+?)\s*\]\]?\s*(#.*)?$")


def _toml_span(text: str) -> tuple[int, int] | None:
    """Span of the [mcp_servers.memorywiki] table (and its sub-tables)."""
    lines = text.splitlines(keepends=True)
    pos, start, end = 0, None, None
    own = f"mcp_servers.{SERVER_NAME}"
    for line in lines:
        m = _TOML_HEADER.match(line)
        if m:
            name = m.group(1).replace('"', "").replace(" ", "")
            if start is None and name == own:
                start = pos
            elif start is not None and end is None and not name.startswith(own + "."):
                end = pos
        pos += len(line)
    if start is None:
        return None
    return start, end if end is not None else len(text)


def _mcp_current(path: Path, rec: dict) -> Any:
    text = _read(path)
    if text is None:
        return None
    try:
        if rec.get("kind") == "mcp-toml":
            return tomllib.loads(text).get("mcp_servers", {}).get(SERVER_NAME)
        return (json.loads(text) or {}).get("mcpServers", {}).get(SERVER_NAME)
    except (ValueError, AttributeError):
        return None


def write_mcp_registration(
    tool: str,
    scope: str = "project",
    project_dir: Path | str | None = None,
    home: Path | str | None = None,
    dry_run: bool = False,
    force: bool = False,
    env: Mapping[str, str] | None = None,
) -> list[Action]:
    """Add the `memorywiki` stdio server to the tool's MCP config, keeping everything else:
    Claude Code `.mcp.json` (project) / `~/.claude.json` (user); Cursor `.cursor/mcp.json`;
    Codex `.codex/config.toml` (project) / `$CODEX_HOME/config.toml` (user)."""
    tool = normalize_tool(tool)
    scope = _check_scope(scope)
    project, home_p = _paths(project_dir, home)
    path = mcp_config_path(tool, scope, project, home_p, env)
    manifest = Manifest(home_p)
    rec = manifest.get(path)
    rec_base = {"tool": tool, "scope": scope, "project": str(project) if scope == "project" else None}
    text = _read(path)
    created = text is None
    if tool == "codex":
        entry = tomllib.loads(_toml_block())["mcp_servers"][SERVER_NAME]
        kind = "mcp-toml"
        try:
            data = tomllib.loads(text or "")
        except tomllib.TOMLDecodeError:
            return [Action("conflict", path, "not valid TOML; left alone", applied=False)]
        existing = data.get("mcp_servers", {}).get(SERVER_NAME) if isinstance(data.get("mcp_servers"), dict) else None
    else:
        entry = _mcp_entry(tool)
        kind = "mcp-json"
        try:
            data = json.loads(text) if text and text.strip() else {}
        except ValueError:
            return [Action("conflict", path, "not valid JSON; left alone", applied=False)]
        if not isinstance(data, dict):
            return [Action("conflict", path, "not a JSON object; left alone", applied=False)]
        servers = data.get("mcpServers")
        existing = servers.get(SERVER_NAME) if isinstance(servers, dict) else None
    if existing == entry:
        if not dry_run and rec is None:
            manifest.put(path, **rec_base, kind=kind, value=entry, created=False)
            manifest.save()
        return [Action("unchanged", path, f"{SERVER_NAME} already registered", applied=False)]
    ours = existing is None or (rec is not None and rec.get("value") == existing)
    if not ours and not force:
        return [Action("conflict", path, f"a different {SERVER_NAME!r} server is configured; use force", applied=False)]
    op = "create" if created else "update"
    if dry_run:
        return [Action(op, path, f"mcp server {SERVER_NAME}", applied=False)]
    if tool == "codex":
        body = text or ""
        span = _toml_span(body)
        if span:
            body = body[: span[0]] + _toml_block() + ("\n" if span[1] < len(body) else "") + body[span[1]:]
        else:
            body = body + ("\n" if body and not body.endswith("\n") else "") + ("\n" if body.strip() else "") + _toml_block()
        check = tomllib.loads(body)
        if check.get("mcp_servers", {}).get(SERVER_NAME) != entry:
            return [Action("conflict", path, "could not edit config.toml safely", applied=False)]
        new_text = body
    else:
        if not isinstance(data.get("mcpServers"), dict):
            data["mcpServers"] = {}
        data["mcpServers"][SERVER_NAME] = entry
        new_text = json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    dirs = _write(path, new_text)
    was_created = created or bool(rec and rec.get("created"))
    manifest.put(path, **rec_base, kind=kind, value=entry, created=was_created,
                 dirs=dirs or (rec or {}).get("dirs", []), sha256=_sha(new_text))
    manifest.save()
    return [Action(op, path, f"mcp server {SERVER_NAME}")]


def _remove_mcp(path: Path, rec: dict, manifest: Manifest, dry_run: bool, force: bool) -> Action:
    text = _read(path)
    if text is None:
        if not dry_run:
            manifest.drop(path)
        return Action("missing", path, "already gone", applied=False)
    current = _mcp_current(path, rec)
    if current is None:
        if not dry_run:
            manifest.drop(path)
        return Action("missing", path, f"{SERVER_NAME} not registered", applied=False)
    if current != rec.get("value") and not force:
        return Action("keep", path, f"{SERVER_NAME} entry edited since install; kept", applied=False)
    if dry_run:
        return Action("update", path, f"mcp server {SERVER_NAME} removed", applied=False)
    if rec.get("kind") == "mcp-toml":
        span = _toml_span(text)
        new_text = text[: span[0]] + text[span[1]:] if span else text
        new_text = re.sub(r"\n{3,}", "\n\n", new_text)
        empty = not new_text.strip()
    else:
        data = json.loads(text)
        data.get("mcpServers", {}).pop(SERVER_NAME, None)
        if not data.get("mcpServers"):
            data.pop("mcpServers", None)
        new_text = json.dumps(data, indent=2, ensure_ascii=False) + "\n"
        empty = not data
    manifest.drop(path)
    if empty and rec.get("created"):
        path.unlink()
        _prune_dirs(rec.get("dirs", []))
        return Action("remove", path)
    _write(path, new_text)
    return Action("update", path, f"mcp server {SERVER_NAME} removed")


def describe(actions: list[Action]) -> str:
    return "\n".join(str(a) for a in actions)


__all__ = [
    "Action", "InstallError", "install", "uninstall", "list_installed", "mcp_registration",
    "mcp_command", "mcp_config_path", "write_mcp_registration", "manifest_path",
    "detect_codex_version", "describe", "SCOPES",
]


def _debug_dump(actions: list[Action]) -> list[dict]:  # pragma: no cover - handy in a REPL
    return [{**asdict(a), "path": str(a.path)} for a in actions]
