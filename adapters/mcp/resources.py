"""The MCP resources: a hub's markdown index (``memorywiki://hub/{slug}``, the default hub's
at ``memorywiki://hub``) and one page as markdown (``memorywiki://doc/{doc_id}``)."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ResourceError, ResourceNotFoundError
from memorywiki.client import ApiError, MemoryWikiError
from memorywiki.client import operations as ops
from memorywiki.client.errors import NOT_FOUND, UNKNOWN_HUB

from .context import MemoryWiki

F = TypeVar("F", bound=Callable[..., Any])


def _resource_errors(fn: F) -> F:
    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except MemoryWikiError as exc:
            if exc.code in (NOT_FOUND, UNKNOWN_HUB):
                raise ResourceNotFoundError(exc.message) from None
            if isinstance(exc, ApiError):
                raise ResourceError(f"HTTP {exc.status}: {exc.message}") from None
            raise ResourceError(exc.message) from None

    return wrapper  # type: ignore[return-value]


def register_resources(server: MCPServer, mw: MemoryWiki) -> None:
    @server.resource(
        "memorywiki://hub",
        name="default-hub",
        title="Memory.Wiki: default hub index",
        description="The markdown index of the user's default hub: its bundles and pages with URLs.",
        mime_type="text/markdown",
    )
    @_resource_errors
    def default_hub_resource() -> str:
        with mw.wiki() as wiki:
            return ops.hub_markdown(wiki)

    @server.resource(
        "memorywiki://hub/{slug}",
        name="hub",
        title="Memory.Wiki hub index",
        description="A hub's markdown index (GET /raw/hub/<slug>): bundles and pages with their URLs.",
        mime_type="text/markdown",
    )
    @_resource_errors
    def hub_resource(slug: str) -> str:
        with mw.wiki() as wiki:
            return ops.hub_markdown(wiki, slug)

    @server.resource(
        "memorywiki://doc/{doc_id}",
        name="doc",
        title="Memory.Wiki page",
        description="One page as markdown with front matter (GET /raw/<id>).",
        mime_type="text/markdown",
    )
    @_resource_errors
    def doc_resource(doc_id: str) -> str:
        with mw.wiki() as wiki:
            return ops.doc_markdown(wiki, doc_id, curation=True)
