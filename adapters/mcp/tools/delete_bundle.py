"""`delete_bundle`: remove a bundle; the pages it listed stay."""

from __future__ import annotations

from typing import Annotated

from mcp.server.mcpserver import Context
from mcp.types import CallToolResult, ToolAnnotations
from memorywiki.client import operations as ops
from pydantic import Field

from ..context import MemoryWiki
from .common import HubArg, result

TITLE = "Delete a Memory.Wiki bundle"
ANNOTATIONS = ToolAnnotations(
    title=TITLE, read_only_hint=False, destructive_hint=True, idempotent_hint=False, open_world_hint=False
)


def delete_bundle(
    mw: MemoryWiki,
    bundle: Annotated[str, Field(min_length=1, description="The bundle's id or its URL (/b/<id>).")],
    hub: HubArg = None,
    ctx: Context = None,  # type: ignore[assignment]  # given by the SDK
) -> CallToolResult:
    """Delete a bundle of the hub: it leaves the hub page, llms.txt, recall and its URL at once.

    The pages it listed are not touched. Use only when the user asks to remove the bundle
    itself (to change what it lists, create a new one). Needs the hub owner token from the
    user's config; there is no undo.
    """
    with mw.wiki() as wiki:
        deleted = ops.delete_bundle(wiki, bundle, hub=hub)
    out = {"id": deleted.bundle_id, "hub": deleted.hub, "deleted": True}
    return result(f"Bundle {deleted.bundle_id} deleted from hub {deleted.hub} (its pages stay).", out)
