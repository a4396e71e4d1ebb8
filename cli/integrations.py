"""`memorywiki install | uninstall | mcp`: put /memory.wiki into coding tools and serve MCP.

The lead wires these into the main app with ``integrations.register(app)`` (cli/main.py).

- ``memorywiki install TOOL [--project|--user] [--dry-run] [--force] [--mcp]`` writes the
  tool's command / skill / conventions files (adapters.install.install), prints one line per
  file, and exits 1 when a file the user edited was left alone (``--force`` overwrites it).
  Without ``--mcp`` it prints how to register the MCP server; with ``--mcp`` it writes that
  registration into the tool's MCP config.
- ``memorywiki install --list`` shows what is installed (user scope and this project).
- ``memorywiki uninstall TOOL [--project|--user]`` removes exactly what install wrote.
- ``memorywiki mcp [--http [--port N]]`` runs the MCP server over stdio (or streamable HTTP
  on 127.0.0.1).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Optional

import typer
from typer.exceptions import Exit

from . import output
from .errors import CLIError

TOOLS_HELP = "claude-code, cursor, codex or aider"

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


def _normalize(tool: str) -> str:
    from memorywiki.skill.render import normalize_tool

    try:
        return normalize_tool(tool)
    except ValueError as exc:
        raise CLIError(str(exc)) from None


def _scope(user: bool) -> str:
    return "user" if user else "project"


def _write_actions(actions) -> None:
    for action in actions:
        sys.stdout.write(f"{action}\n")


def _conflicts(actions) -> list:
    return [a for a in actions if a.op == "conflict"]


def _run_install(fn, *args, **kwargs):
    """Call an adapters.install function, turning its failures into one-line CLI errors."""
    from memorywiki.adapters.install import InstallError

    try:
        return fn(*args, **kwargs)
    except (InstallError, ValueError) as exc:
        raise CLIError(str(exc)) from None
    except OSError as exc:
        where = f" {exc.filename}" if getattr(exc, "filename", None) else ""
        raise CLIError(f"cannot write{where}: {exc.strerror or exc}") from None


def _print_list(tool: str | None) -> None:
    from memorywiki.adapters.install import list_installed, manifest_path

    rows = _run_install(list_installed, project_dir=Path.cwd())
    if tool:
        rows = [r for r in rows if r.get("tool") == tool]
    if not rows:
        where = f" for {tool}" if tool else ""
        sys.stdout.write(f"nothing installed{where} (user scope or {Path.cwd()})\n")
        output.note(f"manifest: {manifest_path()}")
        return
    headers = ("TOOL", "SCOPE", "STATUS", "KIND", "PATH")
    table = [headers] + [
        (str(r.get("tool") or "-"), str(r.get("scope") or "-"), str(r.get("status") or "-"),
         str(r.get("kind") or "-"), str(r.get("path") or "-"))
        for r in rows
    ]
    widths = [max(len(row[i]) for row in table) for i in range(len(headers) - 1)]
    for row in table:
        cells = [row[i].ljust(widths[i]) for i in range(len(headers) - 1)] + [row[-1]]
        sys.stdout.write("  ".join(cells).rstrip() + "\n")


def _mcp_hint(tool: str, scope: str) -> None:
    from memorywiki.adapters.install import mcp_command, mcp_config_path, mcp_registration

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


def _usage(tool: str) -> None:
    sys.stdout.write("\nThen, inside the tool:\n")
    for line in USAGE.get(tool, []):
        sys.stdout.write(f"  {line}\n")


def install_cmd(
    tool: Annotated[Optional[str], typer.Argument(metavar="TOOL", help=f"The tool: {TOOLS_HELP}.", show_default=False)] = None,
    user: Annotated[bool, typer.Option(
        "--user/--project", help="Install for your user (every project) or only this project (the current directory).")] = False,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Show what would change; write nothing.")] = False,
    force: Annotated[bool, typer.Option("--force", help="Overwrite files you edited since they were installed.")] = False,
    mcp: Annotated[bool, typer.Option("--mcp", help="Also register the `memorywiki mcp` server in the tool's MCP config.")] = False,
    list_: Annotated[bool, typer.Option("--list", help="List what is installed (user scope and this project).")] = False,
) -> None:
    """Install the /memory.wiki command into Claude Code, Cursor, Codex CLI or Aider."""
    from memorywiki.adapters.install import install, write_mcp_registration

    if list_:
        _print_list(_normalize(tool) if tool else None)
        return
    if not tool:
        raise CLIError(f"which tool? memorywiki install TOOL, where TOOL is {TOOLS_HELP} (or --list)")
    name = _normalize(tool)
    scope = _scope(user)
    where = str(Path.cwd()) if scope == "project" else "~"
    sys.stdout.write(f"{'Would install' if dry_run else 'Installing'} /memory.wiki for {name} ({scope} scope: {where})\n")
    actions = list(_run_install(install, name, scope, project_dir=Path.cwd(), dry_run=dry_run, force=force))
    if mcp:
        if name == "aider":
            output.note("aider has no MCP client: nothing to register (use /run memorywiki ... instead)")
        else:
            actions += _run_install(write_mcp_registration, name, scope, project_dir=Path.cwd(),
                                    dry_run=dry_run, force=force)
    _write_actions(actions)
    conflicts = _conflicts(actions)
    if conflicts:
        output.error(
            f"{len(conflicts)} file(s) left alone because they were changed outside memorywiki; "
            f"rerun with --force to overwrite them (`memorywiki install {name}"
            f"{' --user' if user else ''}{' --mcp' if mcp else ''} --force`)"
        )
        raise Exit(1)
    if not mcp and name != "aider":
        _mcp_hint(name, scope)
    if not dry_run:
        _usage(name)


def uninstall_cmd(
    tool: Annotated[str, typer.Argument(metavar="TOOL", help=f"The tool: {TOOLS_HELP}.", show_default=False)],
    user: Annotated[bool, typer.Option("--user/--project", help="Remove the user-wide install or this project's.")] = False,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Show what would be removed; change nothing.")] = False,
    force: Annotated[bool, typer.Option("--force", help="Also remove files you edited since they were installed.")] = False,
) -> None:
    """Remove what `memorywiki install` wrote (files you edited since are kept unless --force)."""
    from memorywiki.adapters.install import uninstall

    name = _normalize(tool)
    scope = _scope(user)
    actions = _run_install(uninstall, name, scope, project_dir=Path.cwd(), dry_run=dry_run, force=force)
    if not actions:
        where = str(Path.cwd()) if scope == "project" else "user scope"
        sys.stdout.write(f"nothing installed for {name} ({where})\n")
        return
    _write_actions(actions)
    kept = [a for a in actions if a.op == "keep"]
    if kept:
        output.note(f"{len(kept)} edited file(s) kept; rerun with --force to remove them too")


def mcp_cmd(
    ctx: typer.Context,
    http: Annotated[bool, typer.Option("--http", help="Serve streamable HTTP on 127.0.0.1 instead of stdio.")] = False,
    port: Annotated[int, typer.Option("--port", min=1, max=65535, help="Port for --http.")] = 8765,
    hub: Annotated[Optional[str], typer.Option("--hub", help="Default hub for the tools (default: the config's).")] = None,
    url: Annotated[Optional[str], typer.Option(
        "--url", "--server", help="Memory.Wiki server URL (default: $MEMORYWIKI_URL, the config, or http://127.0.0.1:8000).",
        show_default=False)] = None,
) -> None:
    """Run the Memory.Wiki MCP server (stdio; --http for streamable HTTP at http://127.0.0.1:PORT/mcp)."""
    root = ctx.find_root().obj
    server_url = url or getattr(root, "server_flag", None)
    try:
        from memorywiki.adapters.mcp.server import run
    except ImportError as exc:
        raise CLIError(f"the MCP server needs the mcp SDK 2.x (pip install 'mcp>=2,<3'): {exc}") from None
    if http:
        _check_port(port)
        output.note(f"Memory.Wiki MCP server: http://127.0.0.1:{port}/mcp (Ctrl-C to stop)")
    try:
        run(server_url=server_url, hub=hub, http=http, port=port)
    except KeyboardInterrupt:
        pass


def _check_port(port: int) -> None:
    import errno
    import socket

    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        try:
            sock.bind(("127.0.0.1", port))
        except OSError as exc:
            if exc.errno == errno.EADDRINUSE:
                raise CLIError(f"port {port} on 127.0.0.1 is already in use; try --port {port + 1}") from None
            raise CLIError(f"cannot listen on 127.0.0.1:{port}: {exc.strerror or exc}") from None


def register(app: typer.Typer) -> None:
    """Add `install`, `uninstall` and `mcp` to the `memorywiki` app."""
    app.command("install", no_args_is_help=True)(install_cmd)
    app.command("uninstall", no_args_is_help=True)(uninstall_cmd)
    app.command("mcp")(mcp_cmd)
