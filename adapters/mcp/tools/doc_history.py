"""`doc_history`: a page's versions, newest first, or one old version in full."""

from __future__ import annotations

from typing import Annotated

from mcp.types import CallToolResult, ToolAnnotations
from memorywiki.client import operations as ops
from pydantic import Field

from ..context import MemoryWiki
from .common import result

TITLE = "Versions of a Memory.Wiki page"
ANNOTATIONS = ToolAnnotations(title=TITLE, read_only_hint=True, open_world_hint=False)


def doc_history(
    mw: MemoryWiki,
    doc: Annotated[str, Field(min_length=1, description="The doc id or its URL.")],
    version: Annotated[
        int | None,
        Field(
            ge=1,
            description=("A version number from the list: returns that version's full markdown. Omit for the list."),
        ),
    ] = None,
) -> CallToolResult:
    """List the versions of a Memory.Wiki page, newest first, or read one old version.

    Every change to a page keeps the previous version. Each entry has its number, when it was
    saved, its size, what made it (create, edit, import, restore, delete) and through which
    token. Use it before restore_doc, or to see what a page said before an edit.
    """
    with mw.wiki() as wiki:
        if version is not None:
            old = ops.version(wiki, doc, version)
            head = (
                f"Version {old.get('version')} of {old.get('id')} ({old.get('action') or 'saved'}, "
                f"{old.get('saved_at')}): {old.get('title')}"
            )
            return result(head + "\n\n" + (old.get("markdown") or ""), old)
        data = ops.history(wiki, doc)
    lines = [
        f"Versions of {data.get('url')} (current: {data.get('version')}"
        + (", deleted" if data.get("deleted") else "")
        + ")"
    ]
    for v in data.get("versions") or []:
        how = (v.get("action") or "saved") + (f" of v{v['restored_from']}" if v.get("restored_from") else "")
        lines.append(
            f"- v{v.get('version')} {v.get('saved_at')} {how} via {v.get('via') or 'unknown'}, "
            f"{v.get('size')} bytes: {v.get('title')}"
        )
    return result("\n".join(lines) + "\n", data)
