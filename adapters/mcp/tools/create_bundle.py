"""`create_bundle`: group existing pages into a reading list at one URL."""

from __future__ import annotations

from typing import Annotated

from mcp.server.mcpserver import Context
from mcp.types import CallToolResult, ToolAnnotations
from memorywiki.client import operations as ops
from pydantic import Field

from ..context import MemoryWiki
from .common import HubArg, result

TITLE = "Create a Memory.Wiki bundle"
ANNOTATIONS = ToolAnnotations(
    title=TITLE, read_only_hint=False, destructive_hint=False, idempotent_hint=False, open_world_hint=False
)


def create_bundle(
    mw: MemoryWiki,
    title: Annotated[str, Field(min_length=1, max_length=500, description="The bundle's topic, as a title.")],
    doc_ids: Annotated[
        list[str],
        Field(min_length=1, description=("Doc ids (or doc URLs) in reading order; every doc must belong to the hub.")),
    ],
    description: Annotated[
        str | None,
        Field(max_length=5000, description="What the bundle covers and who it is for (helps recall find it)."),
    ] = None,
    hub: HubArg = None,
    ctx: Context = None,  # type: ignore[assignment]  # given by the SDK
) -> CallToolResult:
    """Group existing pages into a bundle: a topic with a reading order, at one URL.

    Use when the user asks to collect related pages (find them with recall or list_docs
    first). Needs the hub owner token from the user's config. Returns the bundle's url and id.
    """
    with mw.wiki() as wiki:
        created = ops.create_bundle(wiki, title, doc_ids, description=description, hub=hub)
    out = {"id": created.data.get("id"), "url": created.data.get("url"), "hub": created.hub, "doc_ids": created.doc_ids}
    return result(f"Bundle created: {out['url']}\nid: {out['id']}  ({len(created.doc_ids)} page(s))", out)
