"""`memorywiki install | uninstall`: put /memory.wiki (and optionally the MCP server) into a
coding tool, or take it out again. Both exit 1 when they leave a file alone because the user
edited it (`--force` overrides)."""

from __future__ import annotations

import shlex
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, ParamSpec, TypeVar

import typer
from memorywiki.adapters.install import (
    HOOK_SUPPORT,
    Action,
    InstallError,
    hooks_path,
    install,
    install_hooks,
    list_installed,
    manifest_path,
    mcp_command,
    mcp_config_path,
    mcp_registration,
    uninstall,
    write_mcp_registration,
)
from memorywiki.adapters.tools import TOOLS_HELP, get_tool, normalize_tool
from memorywiki.client import MemoryWikiError
from typer.exceptions import Exit

from .. import output

P = ParamSpec("P")
T = TypeVar("T")

# how to use /memory.wiki once installed, per tool
USAGE = {
    "claude-code": [
        "/memory.wiki capture <title>        save this session's key result as a page",
        "/memory.wiki recall <question>      answer from your pages, with links",
        "(if /memory.wiki is not offered, the same skill answers to /memory-wiki)",
    ],
    "cursor": [
        "/memory.wiki capture <title>        (in Agent chat) save the key result as a page",
        "/memory.wiki recall <question>      answer from your pages, with links",
    ],
    "codex": [
        "$memory-wiki capture <title>        save this session's key result as a page",
        "$memory-wiki recall <question>      answer from your pages, with links",
    ],
    "aider": [
        "memory.wiki capture <title>         (start a message with it) save the key result",
        "/run memorywiki recall '<question>' then let aider add the output to the chat",
    ],
}

ToolArg = Annotated[str, typer.Argument(metavar="TOOL", help=f"The tool: {TOOLS_HELP}.", show_default=False)]


def _normalize(tool: str) -> str:
    try:
        return normalize_tool(tool)
    except ValueError as exc:
        raise MemoryWikiError(str(exc)) from None


def _scope(user: bool) -> str:
    return "user" if user else "project"


def _run(fn: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
    """Call an installer function, turning its failures into one-line errors."""
    try:
        return fn(*args, **kwargs)
    except (InstallError, ValueError) as exc:
        raise MemoryWikiError(str(exc)) from None
    except OSError as exc:
        where = f" {exc.filename}" if getattr(exc, "filename", None) else ""
        raise MemoryWikiError(f"cannot write{where}: {exc.strerror or exc}") from None


def _print_actions(actions: list[Action]) -> None:
    for action in actions:
        sys.stdout.write(f"{action}\n")


def _rerun(*words: str) -> str:
    return "`memorywiki " + " ".join(w for w in words if w) + " --force`"


def _print_list(tool: str | None) -> None:
    rows = _run(list_installed, project_dir=Path.cwd())
    if tool:
        rows = [r for r in rows if r.get("tool") == tool]
    if not rows:
        where = f" for {tool}" if tool else ""
        sys.stdout.write(f"nothing installed{where} (user scope or {Path.cwd()})\n")
        output.note(f"manifest: {manifest_path()}")
        return
    headers = ("TOOL", "SCOPE", "STATUS", "KIND", "PATH")
    table = [headers] + [
        (
            str(r.get("tool") or "-"),
            str(r.get("scope") or "-"),
            str(r.get("status") or "-"),
            str(r.get("kind") or "-"),
            str(r.get("path") or "-"),
        )
        for r in rows
    ]
    widths = [max(len(row[i]) for row in table) for i in range(len(headers) - 1)]
    for row in table:
        cells = [row[i].ljust(widths[i]) for i in range(len(headers) - 1)] + [row[-1]]
        sys.stdout.write("  ".join(cells).rstrip() + "\n")


def _mcp_hint(tool: str, scope: str) -> None:
    path = mcp_config_path(tool, scope, project_dir=Path.cwd())
    out = sys.stdout
    out.write("\nOptional: the MCP server (tools recall, capture, read_doc, update_doc, ...).\n")
    command = mcp_command(tool)
    if command:
        out.write(f"Register it with:  {command}\n")
        out.write(f"or rerun with --mcp to add it to {path}:\n")
    else:
        out.write(f"Rerun with --mcp to add it to {path}, or add this yourself:\n")
    out.write(mcp_registration(tool))


def _hooks_note(tool: str, scope: str, prompts: bool) -> None:
    out = sys.stdout
    out.write(f"\nHooks ({HOOK_SUPPORT[tool]}), in {hooks_path(tool, scope, project_dir=Path.cwd())}:\n")
    out.write("  a session starts with this project's memory from your hub (its sources named), within\n")
    out.write("  [hooks] max_tokens (default: the server's, 1,500); the session ends as a draft page\n")
    out.write("  (one per session, updated when it resumes); `memorywiki publish <url>` makes it public.\n")
    if prompts:
        out.write("  Each prompt also gets the few passages above the relevance floor.\n")
    if tool == "codex":
        out.write("  Codex runs new hooks only once you trust them: open Codex, type /hooks and trust them.\n")
    if tool == "cursor":
        out.write("  Cursor reads .cursor/hooks.json when it starts: restart it.\n")
    out.write("  Remove them with `memorywiki uninstall " + tool + ("" if scope == "project" else " --user") + "`.\n")


McpOpt = Annotated[
    bool,
    typer.Option("--mcp", help="Also register the MCP server (by its absolute path) in the tool's MCP config."),
]
HooksOpt = Annotated[
    bool,
    typer.Option(
        "--hooks",
        help="Also install the hooks: each session starts with this project's memory, and ends as a draft page.",
    ),
]
RecallPromptsOpt = Annotated[
    bool,
    typer.Option(
        "--recall-prompts",
        help="With --hooks: also add the few passages above a relevance floor to each prompt.",
    ),
]
ListOpt = Annotated[bool, typer.Option("--list", help="List what is installed (user scope and this project).")]


def install_cmd(
    tool: Annotated[
        str | None, typer.Argument(metavar="TOOL", help=f"The tool: {TOOLS_HELP}.", show_default=False)
    ] = None,
    user: Annotated[
        bool,
        typer.Option(
            "--user/--project",
            help="Install for your user (every project) or only this project (the current directory).",
        ),
    ] = False,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Show what would change; write nothing.")] = False,
    force: Annotated[
        bool, typer.Option("--force", help="Overwrite files you edited since they were installed.")
    ] = False,
    mcp: McpOpt = False,
    hooks: HooksOpt = False,
    recall_prompts: RecallPromptsOpt = False,
    list_: ListOpt = False,
) -> None:
    """Install the /memory.wiki command into Claude Code, Cursor, Codex CLI or Aider."""
    if list_:
        _print_list(_normalize(tool) if tool else None)
        return
    if not tool:
        raise MemoryWikiError(f"which tool? memorywiki install TOOL, where TOOL is {TOOLS_HELP} (or --list)")
    name = _normalize(tool)
    scope = _scope(user)
    if recall_prompts and not hooks:
        raise MemoryWikiError("--recall-prompts goes with --hooks")
    if hooks and HOOK_SUPPORT.get(name, "none").startswith("none"):
        raise MemoryWikiError(f"{name} has no hooks to install; /memory.wiki works without them")
    where = str(Path.cwd()) if scope == "project" else "~"
    sys.stdout.write(
        f"{'Would install' if dry_run else 'Installing'} /memory.wiki for {name} ({scope} scope: {where})\n"
    )
    actions = list(_run(install, name, scope, project_dir=Path.cwd(), dry_run=dry_run, force=force))
    has_mcp = get_tool(name).mcp_client
    if mcp and not has_mcp:
        output.note(f"{name} has no MCP client: nothing to register (use /run memorywiki ... instead)")
    elif mcp:
        actions += _run(write_mcp_registration, name, scope, project_dir=Path.cwd(), dry_run=dry_run, force=force)
    if hooks:
        actions.append(
            _run(
                install_hooks,
                name,
                scope,
                project_dir=Path.cwd(),
                prompts=recall_prompts,
                dry_run=dry_run,
                force=force,
            )
        )
    _print_actions(actions)
    conflicts = [a for a in actions if a.op == "conflict"]
    if conflicts:
        output.error(
            f"{len(conflicts)} file(s) left alone because they were changed outside memorywiki; "
            f"rerun with --force to overwrite them ({_rerun('install', shlex.quote(name), '--user' if user else '', '--mcp' if mcp else '')})"
        )
        raise Exit(1)
    if not mcp and has_mcp and not hooks:
        _mcp_hint(name, scope)
    if hooks:
        _hooks_note(name, scope, recall_prompts)
    if not dry_run:
        sys.stdout.write("\nThen, inside the tool:\n")
        for line in USAGE[name]:
            sys.stdout.write(f"  {line}\n")


def uninstall_cmd(
    tool: ToolArg,
    user: Annotated[
        bool, typer.Option("--user/--project", help="Remove the user-wide install or this project's.")
    ] = False,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Show what would be removed; change nothing.")] = False,
    force: Annotated[
        bool, typer.Option("--force", help="Also remove files you edited since they were installed.")
    ] = False,
) -> None:
    """Remove what `memorywiki install` wrote (files you edited since are kept, exit 1, unless --force)."""
    name = _normalize(tool)
    scope = _scope(user)
    actions = _run(uninstall, name, scope, project_dir=Path.cwd(), dry_run=dry_run, force=force)
    if not actions:
        where = str(Path.cwd()) if scope == "project" else "user scope"
        sys.stdout.write(f"nothing installed for {name} ({where})\n")
        return
    _print_actions(actions)
    kept = [a for a in actions if a.op == "keep"]
    if kept:
        output.error(
            f"{len(kept)} edited file(s) kept; rerun with --force to remove them too "
            f"({_rerun('uninstall', shlex.quote(name), '--user' if user else '')})"
        )
        raise Exit(1)


def register(app: typer.Typer) -> None:
    app.command("install", no_args_is_help=True)(install_cmd)
    app.command("uninstall", no_args_is_help=True)(uninstall_cmd)
