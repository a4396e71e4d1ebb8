"""`hub_url`: the one link that hands the user's memory to another AI."""

from __future__ import annotations

from dataclasses import asdict

from mcp.types import CallToolResult, ToolAnnotations
from memorywiki.client import operations as ops

from ..context import MemoryWiki
from .common import HubArg, result

TITLE = "Memory.Wiki hub URL"
ANNOTATIONS = ToolAnnotations(title=TITLE, read_only_hint=True, open_world_hint=False)


def hub_url(mw: MemoryWiki, hub: HubArg = None) -> CallToolResult:
    """Get the URL of the user's Memory.Wiki hub: one link any AI can fetch as context.

    Returns the hub page URL (HTML for people, markdown for AI fetchers) and the raw markdown
    index URL. Use it when the user wants to share their memory with another AI or person.
    """
    with mw.wiki() as wiki:
        urls = ops.hub_urls(wiki, hub)
    return result(
        f"Hub URL: {urls.url}\nMarkdown index: {urls.raw_url}\n({urls.docs} page(s), {urls.bundles} bundle(s))",
        asdict(urls),
    )
