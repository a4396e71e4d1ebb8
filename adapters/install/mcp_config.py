"""Registering the stdio MCP server with a coding tool's MCP config, and removing it again.

Claude Code `.mcp.json` / `~/.claude.json`, Cursor `.cursor/mcp.json`, Codex
`.codex/config.toml` / `$CODEX_HOME/config.toml`. Other servers and settings in those files are
kept; the TOML is edited as text (comments survive) and re-parsed to check the result. The
command written is absolute (see launch.py): an MCP client does not see the user's PATH.
"""

from __future__ import annotations

import json
import re
import shlex
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from memorywiki.adapters.tools import get_tool, normalize_tool

from .files import prune_dirs, read, sha, write
from .launch import mcp_server_command
from .locations import check_scope, codex_home, env_or_os, resolve
from .manifest import Action, Manifest, record_base

SERVER_NAME = "memorywiki"


def _mcp_entry(tool: str, command: list[str] | None = None) -> dict[str, Any]:
    """The server entry: an absolute command, since an MCP client does not run in the user's shell."""
    exe, *args = command or mcp_server_command()
    entry: dict[str, Any] = {"command": exe, "args": args}
    if tool == "claude-code":
        entry = {"type": "stdio", **entry}
    return entry


def _require_mcp_client(tool: str) -> str:
    tool = normalize_tool(tool)
    if not get_tool(tool).mcp_client:
        raise ValueError(f"{tool} has no MCP client; use /run memorywiki ... instead")
    return tool


def mcp_registration(tool: str, command: list[str] | None = None) -> str:
    """The config snippet that registers the MCP server (stdio) with `tool`:
    JSON for Claude Code (.mcp.json) and Cursor (.cursor/mcp.json), TOML for Codex
    (~/.codex/config.toml). A tool without an MCP client (aider): ValueError."""
    tool = _require_mcp_client(tool)
    if tool == "codex":
        return _toml_block(_mcp_entry(tool, command))
    return json.dumps({"mcpServers": {SERVER_NAME: _mcp_entry(tool, command)}}, indent=2) + "\n"


def mcp_command(tool: str, command: list[str] | None = None) -> str | None:
    """The tool's own CLI command that registers the server, when it has one."""
    tool = _require_mcp_client(tool)
    if tool in ("claude-code", "codex"):
        cli = "claude" if tool == "claude-code" else "codex"
        return f"{cli} mcp add {SERVER_NAME} -- {shlex.join(command or mcp_server_command())}"
    return None


def mcp_config_path(
    tool: str,
    scope: str = "project",
    project_dir: Path | str | None = None,
    home: Path | str | None = None,
    env: Mapping[str, str] | None = None,
) -> Path:
    tool = _require_mcp_client(tool)
    scope = check_scope(scope)
    project, home_p = resolve(project_dir, home)
    if tool == "claude-code":
        return project / ".mcp.json" if scope == "project" else home_p / ".claude.json"
    if tool == "cursor":
        return (project if scope == "project" else home_p) / ".cursor" / "mcp.json"
    if tool == "codex":
        return (
            project / ".codex" / "config.toml"
            if scope == "project"
            else codex_home(home_p, env_or_os(env)) / "config.toml"
        )
    raise ValueError(f"no MCP config location known for {tool}")


def _toml_block(entry: dict[str, Any]) -> str:
    args = ", ".join(json.dumps(a) for a in entry["args"])
    return f"[mcp_servers.{SERVER_NAME}]\ncommand = {json.dumps(entry['command'])}\nargs = [{args}]\n"


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


def registered_entry(path: Path, rec: dict[str, Any]) -> Any:
    text = read(path)
    if text is None:
        return None
    try:
        if rec.get("kind") == "mcp-toml":
            return tomllib.loads(text).get("mcp_servers", {}).get(SERVER_NAME)
        return (json.loads(text) or {}).get("mcpServers", {}).get(SERVER_NAME)
    except (ValueError, AttributeError):
        return None


def _parsed(tool: str, path: Path, text: str | None) -> tuple[str, Any, Any] | Action:
    """(manifest kind, the config as parsed, the entry it registers under our name), or the
    conflict that leaves a config we cannot read alone."""
    if tool == "codex":
        try:
            data = tomllib.loads(text or "")
        except tomllib.TOMLDecodeError:
            return Action("conflict", path, "not valid TOML; left alone", applied=False)
        servers = data.get("mcp_servers")
        return "mcp-toml", data, data.get("mcp_servers", {}).get(SERVER_NAME) if isinstance(servers, dict) else None
    try:
        data = json.loads(text) if text and text.strip() else {}
    except ValueError:
        return Action("conflict", path, "not valid JSON; left alone", applied=False)
    if not isinstance(data, dict):
        return Action("conflict", path, "not a JSON object; left alone", applied=False)
    servers = data.get("mcpServers")
    return "mcp-json", data, servers.get(SERVER_NAME) if isinstance(servers, dict) else None


def _toml_with(text: str, entry: dict[str, Any]) -> str | None:
    """config.toml with our table in place of the old one (or added at the end); None when the
    result does not read back as that entry."""
    span = _toml_span(text)
    if span:
        text = text[: span[0]] + _toml_block(entry) + ("\n" if span[1] < len(text) else "") + text[span[1] :]
    else:
        text = (
            text
            + ("\n" if text and not text.endswith("\n") else "")
            + ("\n" if text.strip() else "")
            + _toml_block(entry)
        )
    check = tomllib.loads(text)
    return text if check.get("mcp_servers", {}).get(SERVER_NAME) == entry else None


def _json_with(data: dict[str, Any], entry: dict[str, Any]) -> str:
    if not isinstance(data.get("mcpServers"), dict):
        data["mcpServers"] = {}
    data["mcpServers"][SERVER_NAME] = entry
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def write_mcp_registration(
    tool: str,
    scope: str = "project",
    project_dir: Path | str | None = None,
    home: Path | str | None = None,
    dry_run: bool = False,
    force: bool = False,
    env: Mapping[str, str] | None = None,
    command: list[str] | None = None,
) -> list[Action]:
    """Add the `memorywiki` stdio server to the tool's MCP config, keeping everything else:
    Claude Code `.mcp.json` (project) / `~/.claude.json` (user); Cursor `.cursor/mcp.json`;
    Codex `.codex/config.toml` (project) / `$CODEX_HOME/config.toml` (user).

    `command` (default: mcp_server_command(), absolute) is what the client will run."""
    tool = _require_mcp_client(tool)
    scope = check_scope(scope)
    project, home_p = resolve(project_dir, home)
    path = mcp_config_path(tool, scope, project, home_p, env)
    manifest = Manifest(home_p)
    rec = manifest.get(path)
    rec_base = record_base(tool, scope, project)
    text = read(path)
    entry = _mcp_entry(tool, command)
    parsed = _parsed(tool, path, text)
    if isinstance(parsed, Action):
        return [parsed]
    kind, data, existing = parsed
    if existing == entry:
        if not dry_run and rec is None:
            manifest.put(path, **rec_base, kind=kind, value=entry, created=False)
            manifest.save()
        return [Action("unchanged", path, f"{SERVER_NAME} already registered", applied=False)]
    ours = existing is None or (rec is not None and rec.get("value") == existing)
    if not ours and not force:
        return [
            Action("conflict", path, f"a different {SERVER_NAME!r} server is configured; use --force", applied=False)
        ]
    op = "create" if text is None else "update"
    if dry_run:
        return [Action(op, path, f"mcp server {SERVER_NAME}", applied=False)]
    new_text = _toml_with(text or "", entry) if tool == "codex" else _json_with(data, entry)
    if new_text is None:
        return [Action("conflict", path, "could not edit config.toml safely", applied=False)]
    dirs = write(path, new_text)
    manifest.put(
        path,
        **rec_base,
        kind=kind,
        value=entry,
        created=text is None or bool(rec and rec.get("created")),
        dirs=dirs or (rec or {}).get("dirs", []),
        sha256=sha(new_text),
    )
    manifest.save()
    return [Action(op, path, f"mcp server {SERVER_NAME}")]


def remove_mcp(path: Path, rec: dict[str, Any], manifest: Manifest, dry_run: bool, force: bool) -> Action:
    text = read(path)
    if text is None:
        if not dry_run:
            manifest.drop(path)
        return Action("missing", path, "already gone", applied=False)
    current = registered_entry(path, rec)
    if current is None:
        if not dry_run:
            manifest.drop(path)
        return Action("missing", path, f"{SERVER_NAME} not registered", applied=False)
    if current != rec.get("value") and not force:
        return Action(
            "keep", path, f"{SERVER_NAME} entry edited since install; kept, use --force to remove", applied=False
        )
    if dry_run:
        return Action("update", path, f"mcp server {SERVER_NAME} removed", applied=False)
    if rec.get("kind") == "mcp-toml":
        span = _toml_span(text)
        new_text = text[: span[0]] + text[span[1] :] if span else text
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
        prune_dirs(rec.get("dirs", []))
        return Action("remove", path)
    write(path, new_text)
    return Action("update", path, f"mcp server {SERVER_NAME} removed")
