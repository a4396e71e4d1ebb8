"""`read_doc`: one page as markdown, with the front matter (id, url, version) an edit needs."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Annotated, Any

from mcp.types import CallToolResult, ToolAnnotations
from memorywiki.client import operations as ops
from pydantic import Field

from ..context import MemoryWiki
from .common import result

TITLE = "Read a Memory.Wiki page"
ANNOTATIONS = ToolAnnotations(title=TITLE, read_only_hint=True, open_world_hint=False)
FIELDS = ("id", "title", "url", "hub", "version", "updated_at", "source", "markdown")


def read_doc(
    mw: MemoryWiki,
    doc: Annotated[
        str,
        Field(
            min_length=1,
            description=(
                "The doc id (e.g. from recall's doc_id) or its full URL (doc_url; a ?access= token in "
                "a shared URL is used)."
            ),
        ),
    ],
) -> CallToolResult:
    """Fetch one Memory.Wiki page as markdown.

    Returns a front-matter header (id, title, url, hub, version, updated) followed by the page
    body exactly as stored. Use it to read a page in full after recall, and before update_doc
    (pass the version you read as expected_version to avoid overwriting someone else's edit).
    """
    with mw.wiki() as wiki:
        data = ops.read_doc(wiki, doc)
    return result(doc_text(data), {k: data.get(k) for k in FIELDS})


def doc_text(doc: Mapping[str, Any]) -> str:
    fields = {
        "id": doc.get("id"),
        "title": doc.get("title"),
        "url": doc.get("url"),
        "hub": doc.get("hub"),
        "version": doc.get("version"),
        "updated": doc.get("updated_at"),
        "source": doc.get("source"),
    }
    head = (
        ["---"]
        + [f"{k}: {json.dumps(v, ensure_ascii=False)}" for k, v in fields.items() if v is not None]
        + ["---", ""]
    )
    return "\n".join(head) + "\n" + (doc.get("markdown") or "")
