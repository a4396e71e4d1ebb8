"""The hooks that bring a project's memory into a coding session and keep the session as a page
(`memorywiki install TOOL --hooks`), and taking exactly them out again.

Claude Code: `.claude/settings.local.json` (this machine's settings of the project, which
Claude Code keeps out of git) or `~/.claude/settings.json`. Codex: `.codex/hooks.json` or
`$CODEX_HOME/hooks.json`. Cursor: `.cursor/hooks.json` or `~/.cursor/hooks.json`. The file's
other settings and hooks are kept; the manifest records the very entries written, so uninstall
removes those and nothing else, and an entry the user edited since is kept unless forced.
"""

from __future__ import annotations

import json
import shlex
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from memorywiki.adapters.tools import normalize_tool

from .files import prune_dirs, read, sha, write
from .locations import check_scope, codex_home, env_or_os, resolve
from .manifest import Action, Manifest, record_base

HOOK_MODULE = "memorywiki.adapters.hooks"
# Seconds a tool waits for each hook before going on without it. The hook keeps its own
# shorter limits (adapters/hooks/lean.py); this only bounds a hook that hangs anyway.
TIMEOUT = {"session-start": 10, "prompt": 5, "pre-compact": 10, "session-end": 3}
# The tool's name for each of our events. Cursor's beforeSubmitPrompt cannot add context, so
# it has no prompt hook.
EVENTS = {
    "claude-code": {
        "session-start": "SessionStart",
        "prompt": "UserPromptSubmit",
        "pre-compact": "PreCompact",
        "session-end": "SessionEnd",
    },
    "codex": {
        "session-start": "SessionStart",
        "prompt": "UserPromptSubmit",
        "pre-compact": "PreCompact",
        "session-end": "SessionEnd",
    },
    "cursor": {"session-start": "sessionStart", "pre-compact": "preCompact", "session-end": "sessionEnd"},
}
SUPPORTS = {
    "claude-code": "session start, each prompt (--recall-prompts), before compaction, session end",
    "codex": "session start, each prompt (--recall-prompts), before compaction, session end",
    "cursor": "session start, before compaction, session end (Cursor's prompt hook cannot add context)",
    "aider": "none: Aider has no hooks",
}


def hook_command(tool: str, event: str, python: str | None = None) -> str:
    """The command a tool runs for `event`: this installation's interpreter by its absolute path
    (a tool's hooks do not run in the user's shell) and the hook module."""
    exe = python or str(Path(sys.executable).absolute())
    return shlex.join([exe, "-m", HOOK_MODULE, tool, event])


def hooks_path(
    tool: str,
    scope: str = "project",
    project_dir: Path | str | None = None,
    home: Path | str | None = None,
    env: Mapping[str, str] | None = None,
) -> Path:
    tool = normalize_tool(tool)
    scope = check_scope(scope)
    project, home_p = resolve(project_dir, home)
    if tool == "claude-code":
        return (
            project / ".claude" / "settings.local.json" if scope == "project" else home_p / ".claude" / "settings.json"
        )
    if tool == "codex":
        return (
            project / ".codex" / "hooks.json"
            if scope == "project"
            else codex_home(home_p, env_or_os(env)) / "hooks.json"
        )
    if tool == "cursor":
        return (project if scope == "project" else home_p) / ".cursor" / "hooks.json"
    raise ValueError(f"{tool} has no hooks: {SUPPORTS.get(tool, 'none')}")


def hook_entries(tool: str, prompts: bool, python: str | None = None) -> list[list[Any]]:
    """[tool event name, entry] for each hook to add, as the tool's file writes it."""
    tool = normalize_tool(tool)
    out = []
    for event, name in EVENTS[tool].items():
        if event == "prompt" and not prompts:
            continue
        command = hook_command(tool, event, python)
        if tool == "cursor":
            entry: dict[str, Any] = {"command": command, "timeout": TIMEOUT[event]}
        else:
            entry = {"hooks": [{"type": "command", "command": command, "timeout": TIMEOUT[event]}]}
        out.append([name, entry])
    return out


def _load(text: str | None) -> dict[str, Any]:
    data = json.loads(text) if text and text.strip() else {}
    if not isinstance(data, dict):
        raise ValueError("not a JSON object")
    hooks = data.get("hooks", {})
    if not isinstance(hooks, dict):
        raise ValueError("its 'hooks' is not an object")
    return data


def _has(data: dict[str, Any], name: str, entry: Any) -> bool:
    return entry in (data.get("hooks", {}).get(name) or [])


def _ours(entry: Any) -> bool:
    """An entry that runs the hook module (what --force removes, whatever it became)."""
    return HOOK_MODULE in json.dumps(entry)


def _remove(data: dict[str, Any], entries: list[list[Any]], force: bool) -> tuple[dict[str, Any], list[str]]:
    """`data` without `entries` (with `force`, without any entry running the hook module), and
    the events whose recorded entry is no longer there as written."""
    hooks = data.get("hooks", {})
    edited = []
    for name, entry in entries:
        current = hooks.get(name)
        if not isinstance(current, list):
            continue
        if entry in current:
            current.remove(entry)
        elif force:
            current[:] = [e for e in current if not _ours(e)]
        elif any(_ours(e) for e in current):
            edited.append(name)
        if not current:
            hooks.pop(name, None)
    if not hooks:
        data.pop("hooks", None)
    return data, edited


def _dump(data: dict[str, Any]) -> str:
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def install_hooks(
    tool: str,
    scope: str,
    project_dir: Path | str | None = None,
    home: Path | str | None = None,
    *,
    prompts: bool = False,
    dry_run: bool = False,
    force: bool = False,
    env: Mapping[str, str] | None = None,
    python: str | None = None,
) -> Action:
    tool = normalize_tool(tool)
    project, home_p = resolve(project_dir, home)
    path = hooks_path(tool, scope, project, home_p, env)
    manifest = Manifest(home_p)
    rec = manifest.get(path)
    text = read(path)
    try:
        data = _load(text)
    except ValueError as exc:
        return Action("conflict", path, f"{exc}; left alone", applied=False)
    wanted = hook_entries(tool, prompts, python)
    if rec and rec.get("entries") != wanted:  # installed before with other entries: take them out first
        data, edited = _remove(data, rec.get("entries") or [], force)
        if edited:
            return Action(
                "conflict", path, f"hooks edited since install ({', '.join(edited)}); use --force", applied=False
            )
    added = [[name, entry] for name, entry in wanted if not _has(data, name, entry)]
    if not added and rec and rec.get("entries") == wanted:
        return Action("unchanged", path, "hooks already installed", applied=False)
    for name, entry in added:
        data.setdefault("hooks", {}).setdefault(name, []).append(entry)
    if tool == "cursor":
        data.setdefault("version", 1)
    new_text = _dump(data)
    events = ", ".join(name for name, _ in wanted)
    op = "create" if text is None else "update"
    if dry_run:
        return Action(op, path, f"hooks: {events}", applied=False)
    dirs = write(path, new_text)
    # folders the /memory.wiki files of this install made (.cursor/) hold this file too: when
    # both are uninstalled, whichever goes last takes the emptied folder with it
    base = record_base(tool, scope, project)
    shared = {
        d
        for other in manifest.entries.values()
        if all(other.get(k) == v for k, v in base.items())
        for d in other.get("dirs") or []
        if path.is_relative_to(d)
    }
    dirs = sorted(set(dirs) | shared | set((rec or {}).get("dirs") or []), key=len)
    created = text is None or bool(rec and rec.get("created"))
    manifest.put(
        path,
        **record_base(tool, scope, project),
        kind="hooks-json",
        entries=wanted,
        created=created,
        dirs=dirs,
        sha256=sha(new_text),
    )
    manifest.save()
    return Action(op, path, f"hooks: {events}")


def remove_hooks(path: Path, rec: dict[str, Any], manifest: Manifest, dry_run: bool, force: bool) -> Action:
    text = read(path)
    if text is None:
        if not dry_run:
            manifest.drop(path)
        return Action("missing", path, "already gone", applied=False)
    try:
        data = _load(text)
    except ValueError as exc:
        return Action("keep", path, f"{exc}; remove the memorywiki hooks by hand", applied=False)
    data, edited = _remove(data, rec.get("entries") or [], force)
    if edited:
        return Action(
            "keep", path, f"hooks edited since install ({', '.join(edited)}); kept, use --force", applied=False
        )
    tool = rec.get("tool") or ""
    if tool == "cursor" and set(data) == {"version"} and rec.get("created"):
        data = {}
    if dry_run:
        return Action("update" if data else "remove", path, "memorywiki hooks removed", applied=False)
    manifest.drop(path)
    if not data and rec.get("created"):
        path.unlink()
        prune_dirs(rec.get("dirs", []))
        return Action("remove", path)
    write(path, _dump(data))
    return Action("update", path, "memorywiki hooks removed")


def installed_hooks(path: Path, rec: dict[str, Any]) -> bool:
    """Whether every recorded entry is still in the file as written."""
    try:
        data = _load(read(path))
    except ValueError:
        return False
    return all(_has(data, name, entry) for name, entry in rec.get("entries") or [])
