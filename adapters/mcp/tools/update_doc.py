"""`update_doc`: change a page: one section, the whole body, and/or the title."""

from __future__ import annotations

from typing import Annotated

from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import CallToolResult, ToolAnnotations
from memorywiki.client import operations as ops
from memorywiki.client.errors import VersionConflict
from memorywiki.client.operations.types import redaction_line
from pydantic import Field

from ..context import MemoryWiki
from .common import result

TITLE = "Update a Memory.Wiki page"
ANNOTATIONS = ToolAnnotations(
    title=TITLE, read_only_hint=False, destructive_hint=True, idempotent_hint=True, open_world_hint=False
)


def update_doc(
    mw: MemoryWiki,
    doc: Annotated[str, Field(min_length=1, description="The doc id or its URL.")],
    markdown: Annotated[
        str | None,
        Field(
            description=(
                "New markdown. With `section`: the new text of that one section (its body; start it "
                "with a heading of the same level to rename the section too). Without `section`: the "
                "whole new page body, replacing everything."
            )
        ),
    ] = None,
    section: Annotated[
        str | None,
        Field(
            description=(
                "Heading text of the one section to replace (e.g. 'Decisions'); everything else in the "
                "page stays byte-for-byte. Prefer this over rewriting the whole page."
            )
        ),
    ] = None,
    title: Annotated[str | None, Field(description="A new page title (optional).")] = None,
    expected_version: Annotated[
        int | None,
        Field(
            ge=1,
            description=(
                "The version you read with read_doc. If the page changed since, the update is refused "
                "instead of overwriting; read it again and retry."
            ),
        ),
    ] = None,
    ctx: Context = None,  # type: ignore[assignment]  # given by the SDK
) -> CallToolResult:
    """Change an existing Memory.Wiki page: replace one section, the whole body, and/or the title.

    Needs the page's edit token or the hub owner token (from the user's config). Returns the
    page's url and new version. A version conflict means the page changed since it was read:
    call read_doc again, redo the edit on the fresh text, and retry.
    """
    with mw.wiki() as wiki:
        try:
            updated = ops.update_doc(
                wiki, doc, markdown=markdown, section=section, title=title, expected_version=expected_version
            )
        except VersionConflict as exc:
            raise ToolError(f"version conflict: {exc.message}; call read_doc again and retry") from None
    data = updated.data
    out = {
        "id": data.get("id") or updated.doc_id,
        "url": data.get("url"),
        "version": data.get("version"),
        "title": data.get("title"),
        "section": section,
        "redacted": data.get("redacted"),
    }
    said = redaction_line(out["redacted"])
    text = f"Updated {updated.what}: {out['url']}\nversion: {out['version']}" + (f"\n{said}" if said else "")
    return result(text, out)
