"""`restore_doc`: bring an earlier version of a page back, as a new version."""

from __future__ import annotations

from typing import Annotated

from mcp.server.mcpserver import Context
from mcp.types import CallToolResult, ToolAnnotations
from memorywiki.client import operations as ops
from memorywiki.client.operations.types import redaction_line
from pydantic import Field

from ..context import MemoryWiki
from .common import result

TITLE = "Restore a version of a Memory.Wiki page"
ANNOTATIONS = ToolAnnotations(
    title=TITLE, read_only_hint=False, destructive_hint=False, idempotent_hint=True, open_world_hint=False
)


def restore_doc(
    mw: MemoryWiki,
    doc: Annotated[str, Field(min_length=1, description="The doc id or its URL.")],
    version: Annotated[int, Field(ge=1, description="The version number to bring back (from doc_history).")],
    ctx: Context = None,  # type: ignore[assignment]  # given by the SDK
) -> CallToolResult:
    """Make an earlier version of a Memory.Wiki page its current text again.

    Use only when the user asks to undo an edit or bring back a deleted page. The restore is
    itself a new version, so nothing is lost and it can be undone the same way. Needs the
    page's edit token or its hub's owner token (a deleted page: the hub owner token).
    """
    with mw.wiki() as wiki:
        restored = ops.restore(wiki, doc, version)
    data = restored.data
    out = {
        "id": data.get("id") or restored.doc_id,
        "url": data.get("url"),
        "version": data.get("version"),
        "restored_from": version,
        "changed": data.get("changed"),
        "redacted": data.get("redacted"),
    }
    said = redaction_line(out["redacted"])
    said = f"\n{said}" if said else ""
    if not data.get("changed"):
        return result(f"Version {version} already is the page's text: {out['url']} (nothing changed)", out)
    return result(f"Restored version {version} as version {out['version']}: {out['url']}{said}", out)
