"""What the MCP tools share: where the Memory.Wiki server is, the default hub, and (over HTTP)
the token the write tools need."""

from __future__ import annotations

import hmac

from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError
from memorywiki.client import Config
from memorywiki.client.operations import Wiki

USER_AGENT = "memorywiki-mcp/0.1"


class MemoryWiki:
    def __init__(
        self,
        server_url: str | None = None,
        hub: str | None = None,
        timeout: float = 60.0,
        write_token: str | None = None,
    ):
        self._server_flag = server_url
        self._hub_flag = hub
        self._timeout = timeout
        self._write_token = write_token  # None: stdio, no token needed

    def wiki(self) -> Wiki:
        """The operations' context for one call. The config is read per call: a `memorywiki hub
        create` in a shell is seen at once."""
        return Wiki.open(
            Config.load(),
            self._server_flag,
            source="mcp",
            user_agent=USER_AGENT,
            timeout=self._timeout,
            default_hub=self._hub_flag,
        )

    def require_write_token(self, ctx: Context | None) -> None:
        """A write tool over HTTP: the request must carry the server's token."""
        if self._write_token is None:
            return
        headers = (ctx.headers if ctx is not None else None) or {}
        scheme, _, value = (headers.get("authorization") or "").partition(" ")
        if scheme.lower() != "bearer" or not hmac.compare_digest(value.strip().encode(), self._write_token.encode()):
            raise ToolError(
                "this tool changes Memory.Wiki, and over HTTP it needs this MCP server's token: "
                "send `Authorization: Bearer <token>` (printed by `memorywiki mcp --http`, "
                "or set with --token)"
            )
