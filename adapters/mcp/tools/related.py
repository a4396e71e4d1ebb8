"""`related`: the pages of a page's hub closest to it."""

from __future__ import annotations

from typing import Annotated

from mcp.types import CallToolResult, ToolAnnotations
from memorywiki.client import doc_id_from
from memorywiki.client import operations as ops
from pydantic import Field

from ..context import MemoryWiki
from .common import result

TITLE = "Related Memory.Wiki pages"
ANNOTATIONS = ToolAnnotations(title=TITLE, read_only_hint=True, open_world_hint=False)


def related(
    mw: MemoryWiki,
    doc: Annotated[str, Field(min_length=1, description="The page's id or URL.")],
    k: Annotated[int, Field(ge=1, le=50, description="How many related pages (1-50).")] = 5,
) -> CallToolResult:
    """List the public pages of a page's hub that are related to it.

    Nearest in meaning first (by vector), else the pages that share most of its concepts.
    Each result has a title, url, and why it is related (`similarity` or `shared_concepts`).
    Use it to widen context around a page found with recall or read_doc.
    """
    with mw.wiki() as wiki:
        data = ops.related(wiki, doc, k=k)
    results = data.get("results") or []
    lines = [f"{len(results)} page(s) related to {doc_id_from(doc)}:"]
    for r in results:
        why = (
            f"shares {', '.join(r['shared_concepts'])}"
            if r.get("shared_concepts")
            else f"similarity {r.get('similarity')}"
        )
        lines.append(f"- {r.get('title')} — {r.get('url')} ({why})")
    if not results:
        lines.append("(none: no other public page of the hub is close)")
    return result("\n".join(lines) + "\n", data)
