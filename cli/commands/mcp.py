"""`memorywiki mcp`: run the MCP server (stdio, or streamable HTTP on 127.0.0.1)."""

from __future__ import annotations

import errno
import socket
from typing import Annotated

import typer
from memorywiki.client import MemoryWikiError

from .. import output
from ..context import state


def _check_port(port: int) -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        try:
            sock.bind(("127.0.0.1", port))
        except OSError as exc:
            if exc.errno == errno.EADDRINUSE:
                raise MemoryWikiError(f"port {port} on 127.0.0.1 is already in use; try --port {port + 1}") from None
            raise MemoryWikiError(f"cannot listen on 127.0.0.1:{port}: {exc.strerror or exc}") from None


def mcp_cmd(
    ctx: typer.Context,
    http: Annotated[bool, typer.Option("--http", help="Serve streamable HTTP on 127.0.0.1 instead of stdio.")] = False,
    port: Annotated[int, typer.Option("--port", min=1, max=65535, help="Port for --http.")] = 8765,
    hub: Annotated[str | None, typer.Option("--hub", help="Default hub for the tools (default: the config's).")] = None,
    url: Annotated[
        str | None,
        typer.Option(
            "--url",
            "--server",
            help="Memory.Wiki server URL (default: $MEMORYWIKI_URL, the config, or http://127.0.0.1:8000).",
            show_default=False,
        ),
    ] = None,
    token: Annotated[
        str | None,
        typer.Option(
            "--token",
            envvar="MEMORYWIKI_MCP_TOKEN",
            show_default=False,
            help="With --http: the token the write tools need (Authorization: Bearer TOKEN); default: a new one, printed.",
        ),
    ] = None,
) -> None:
    """Run the Memory.Wiki MCP server (stdio; --http for streamable HTTP at http://127.0.0.1:PORT/mcp)."""
    server_url = url or state(ctx).server_flag
    # imported here: the MCP SDK takes a while to load and only this command needs it
    from memorywiki.adapters.mcp.server import new_write_token, run

    if http:
        _check_port(port)
        token = token or new_write_token()
        output.note(
            f"Memory.Wiki MCP server: http://127.0.0.1:{port}/mcp (Ctrl-C to stop)\n"
            f"The tools that write need the header: Authorization: Bearer {token}"
        )
    try:
        run(server_url=server_url, hub=hub, http=http, port=port, write_token=token)
    except KeyboardInterrupt:
        pass


def register(app: typer.Typer) -> None:
    app.command("mcp")(mcp_cmd)
