"""Install /memory.wiki into Claude Code, Cursor, Codex CLI and Aider, and take it out again,
without ever clobbering the user's own edits.

Every file or config entry written is recorded in the manifest (manifest.py) with a sha256 of
what was written. On re-install a file is rewritten only when it is missing, already identical,
or still exactly what was written last time; anything else is a "conflict" left alone unless
`force=True`. Uninstall removes exactly what the manifest says was written (files, the `read:`
entry in `.aider.conf.yml`, the `memorywiki` MCP server entry) and keeps files the user edited
since (unless forced).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from memorywiki.adapters.tools import normalize_tool
from memorywiki.skill.render import AIDER_CONVENTIONS, render

from .aider_conf import install_aider_conf, remove_aider_conf
from .files import prune_dirs, read, sha
from .hook_config import installed_hooks, remove_hooks
from .launch import shell_command
from .locations import check_scope, env_or_os, resolve, target
from .manifest import Action, Manifest, matches, record_base
from .mcp_config import registered_entry, remove_mcp
from .skill_files import install_file, remove_file


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


def install(
    tool: str,
    scope: str = "project",
    project_dir: Path | str | None = None,
    home: Path | str | None = None,
    dry_run: bool = False,
    force: bool = False,
    codex_version: str | None = None,
    env: Mapping[str, str] | None = None,
    command: str | None = None,
) -> list[Action]:
    """Write /memory.wiki for `tool` ("claude-code", "cursor", "codex", "aider").

    scope "project" writes under project_dir (default: cwd); "user" under home (default: ~),
    with Codex prompt files under $CODEX_HOME. For Codex at user scope, `codex_version`
    (default: detected with `codex --version`) below 0.117 adds the legacy custom prompt.
    The files run `command` (default: this installation's absolute command, as the MCP
    configs do), so the tool finds it whatever PATH its shell has.
    """
    tool = normalize_tool(tool)
    scope = check_scope(scope)
    env = env_or_os(env)
    project, home_p = resolve(project_dir, home)
    if tool == "codex" and scope == "user" and codex_version is None:
        codex_version = detect_codex_version()
    files = render(tool, codex_version=codex_version, command=command or shell_command())
    manifest = Manifest(home_p)
    rec_base = record_base(tool, scope, project)
    actions: list[Action] = []
    for rel, content in files.items():
        if scope == "project" and rel.startswith(".codex/"):
            continue  # custom prompts only exist at user level ($CODEX_HOME/prompts)
        actions.append(
            install_file(target(rel, scope, project, home_p, env), content, rec_base, manifest, dry_run, force)
        )
    if tool == "aider":
        root = project if scope == "project" else home_p
        entry = AIDER_CONVENTIONS if scope == "project" else str(root / AIDER_CONVENTIONS)
        actions.append(install_aider_conf(root / ".aider.conf.yml", entry, rec_base, manifest, dry_run, force))
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
    scope = check_scope(scope)
    project, home_p = resolve(project_dir, home)
    manifest = Manifest(home_p)
    actions: list[Action] = []
    dirs: set[str] = set()
    for key, rec in list(manifest.entries.items()):
        if not matches(rec, tool, scope, project):
            continue
        dirs.update(rec.get("dirs") or [])
        path = Path(key)
        kind = rec.get("kind")
        if kind == "file":
            actions.append(remove_file(path, rec, manifest, dry_run, force))
        elif kind == "aider-read":
            actions.append(remove_aider_conf(path, rec, manifest, dry_run, force))
        elif kind in ("mcp-json", "mcp-toml"):
            actions.append(remove_mcp(path, rec, manifest, dry_run, force))
        elif kind == "hooks-json":
            actions.append(remove_hooks(path, rec, manifest, dry_run, force))
    if not dry_run:
        prune_dirs(sorted(dirs, key=lambda d: d.count(os.sep)))  # deepest last -> removed first
        manifest.save()
    return actions


def list_installed(project_dir: Path | str | None = None, home: Path | str | None = None) -> list[dict[str, Any]]:
    """What the manifest says is installed at user scope or in `project_dir`, each with a
    status: "installed" (as written), "modified" (edited since) or "missing"."""
    project, home_p = resolve(project_dir, home)
    out = []
    for key, rec in sorted(Manifest(home_p).entries.items()):
        if rec.get("scope") == "project" and rec.get("project") != str(project):
            continue
        current = read(Path(key))
        if current is None:
            status = "missing"
        elif rec.get("kind") in ("mcp-json", "mcp-toml"):
            status = "installed" if registered_entry(Path(key), rec) == rec.get("value") else "modified"
        elif rec.get("kind") == "hooks-json":
            status = "installed" if installed_hooks(Path(key), rec) else "modified"
        else:
            status = "installed" if sha(current) == rec.get("sha256") else "modified"
        out.append(
            {"tool": rec.get("tool"), "scope": rec.get("scope"), "path": key, "kind": rec.get("kind"), "status": status}
        )
    return out
