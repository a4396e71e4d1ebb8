"""The Memory.Wiki MCP server: a thin client of the HTTP contract, built on the `mcp` SDK 2.x.

Tools (one module each under tools/): recall, capture, read_doc, update_doc, doc_history,
restore_doc, list_docs, hub_url, create_bundle, delete_bundle, related, digest, suggest_bundles.
Resources (resources.py): ``memorywiki://hub/{slug}`` (the hub's markdown index, GET /raw/hub/<slug>),
``memorywiki://doc/{doc_id}`` (one doc as markdown, GET /raw/<id>) and ``memorywiki://hub``
(the default hub's index).

Server URL, default hub and tokens come from the same config as the CLI
(``~/.config/memorywiki/config.toml`` or ``$MEMORYWIKI_CONFIG``; ``$MEMORYWIKI_URL``,
``$MEMORYWIKI_HUB`` and ``$MEMORYWIKI_TOKEN`` override it). Every HTTP error
(``{"error": {"code", "message"}}``) and every connection failure comes back as an MCP tool
error (``is_error`` with the message) so the model can read it; the server never crashes.

Over streamable HTTP (``memorywiki mcp --http``) anything on the machine, a web page in a
browser too, could reach the port, and the server acts with the user's tokens. So the HTTP
transport answers only requests whose Host (and Origin, when sent) is this loopback address and
port, which defeats DNS rebinding (a hostile name resolved to 127.0.0.1), and the tools that
write (those not annotated read-only) need the server's own token, ``Authorization: Bearer
<token>``, printed at start. Over stdio the client launched the server itself: no token.
"""

from __future__ import annotations

import inspect
import secrets

from mcp.server.mcpserver import MCPServer
from mcp.server.transport_security import TransportSecuritySettings

from .context import MemoryWiki
from .resources import register_resources
from .tools import TOOLS
from .tools.common import bind

SERVER_NAME = "memorywiki"

INSTRUCTIONS = """\
Memory.Wiki is the user's own long-term memory: markdown pages ("docs") at permanent URLs,
grouped in a hub (one URL any AI can read) and in curated bundles (a topic with a reading order).

- Before answering a question the user may have worked on before ("what did we decide about…",
  "from my notes", "remember…"), call `recall`. Base the answer on the passages it returns and
  cite the `doc_url` of every passage you use; never invent URLs or content.
- Call `capture` only when the user asks to save, remember or record something. Write a clean,
  self-contained markdown page (not the chat log); it returns the page's permanent URL.
- To change a page: `read_doc` first (it shows the version), then `update_doc`, preferably
  replacing one `section`, so the rest of the page stays exactly as it was.
- Every change keeps the previous version: `doc_history` lists a page's versions (or shows one),
  `restore_doc` brings one back as a new version when the user asks to undo an edit.
- `list_docs` shows what is in the hub, `hub_url` gives the link to share with another AI, and
  `create_bundle` groups related pages into a reading list (`delete_bundle` removes one, only
  when the user asks; its pages stay).
- `digest` gives every concept of the hub and its pages in one call (an overview before
  recall); `related` lists the pages close to a page; `suggest_bundles` proposes reading lists.
Errors come back as tool errors with the server's message; report them to the user as they are.
"""


def _version() -> str:
    try:
        from importlib.metadata import version

        return version("memorywiki")
    except Exception:
        return "0.3.0"


def build_server(
    server_url: str | None = None,
    hub: str | None = None,
    timeout: float = 60.0,
    log_level: str = "WARNING",
    write_token: str | None = None,
) -> MCPServer:
    """The MCP server object (run it with ``.run()`` or ``.run(transport="streamable-http", ...)``).

    ``server_url`` / ``hub`` override the config file and env, like the CLI's ``--url`` / ``--hub``.
    ``write_token``: the token write tools need (the HTTP transport); None over stdio.
    """
    mw = MemoryWiki(server_url, hub, timeout, write_token)
    server = MCPServer(
        SERVER_NAME,
        title="Memory.Wiki",
        instructions=INSTRUCTIONS,
        version=_version(),
        log_level=log_level.upper(),  # type: ignore[arg-type]
    )
    for module in TOOLS:
        handler = getattr(module, module.__name__.rpartition(".")[2])  # each module's handler is named as its tool
        server.add_tool(
            bind(handler, mw, module.ANNOTATIONS),
            name=handler.__name__,
            title=module.TITLE,
            description=inspect.cleandoc(handler.__doc__ or ""),
            annotations=module.ANNOTATIONS,
        )
    register_resources(server, mw)
    return server


def http_security(port: int) -> TransportSecuritySettings:
    """Against DNS rebinding: only requests to this loopback port by one of its own names, and
    only from pages of those origins when a browser sends an Origin."""
    hosts = [f"127.0.0.1:{port}", f"localhost:{port}", f"[::1]:{port}"]
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True, allowed_hosts=hosts, allowed_origins=[f"http://{host}" for host in hosts]
    )


def new_write_token() -> str:
    return secrets.token_urlsafe(32)


def run(
    server_url: str | None = None,
    hub: str | None = None,
    http: bool = False,
    port: int = 8765,
    path: str = "/mcp",
    log_level: str = "WARNING",
    write_token: str | None = None,
) -> None:
    """Serve over stdio (default) or streamable HTTP on 127.0.0.1:<port><path>, where the write
    tools need `write_token` (made up when not given)."""
    if not http:
        build_server(server_url=server_url, hub=hub, log_level=log_level).run()
        return
    server = build_server(
        server_url=server_url, hub=hub, log_level=log_level, write_token=write_token or new_write_token()
    )
    server.run(
        transport="streamable-http",
        host="127.0.0.1",
        port=port,
        streamable_http_path=path,
        transport_security=http_security(port),
    )
