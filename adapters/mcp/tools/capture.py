"""`capture`: save markdown the model wrote as a new page at a permanent URL."""

from __future__ import annotations

from typing import Annotated

from mcp.server.mcpserver import Context
from mcp.types import CallToolResult, ToolAnnotations
from memorywiki.client import operations as ops
from memorywiki.client.operations.types import redaction_line
from pydantic import Field

from ..context import MemoryWiki
from .common import HubArg, result

TITLE = "Save a page to Memory.Wiki"
ANNOTATIONS = ToolAnnotations(
    title=TITLE, read_only_hint=False, destructive_hint=False, idempotent_hint=False, open_world_hint=False
)


def capture(
    mw: MemoryWiki,
    title: Annotated[
        str, Field(min_length=1, max_length=500, description="Short, specific page title (at most ~80 characters).")
    ],
    markdown: Annotated[
        str,
        Field(
            min_length=1,
            description=(
                "The page body in markdown. Make it self-contained and reusable without this chat, e.g. "
                "## Question, ## Answer, ## Decisions, ## Code sections. Do not repeat the title as a "
                "'# ' heading. Replace secrets with <redacted>."
            ),
        ),
    ],
    hub: HubArg = None,
    is_draft: Annotated[
        bool, Field(description="true keeps the page private: drafts never appear in recall or the public hub.")
    ] = False,
    source: Annotated[
        str | None, Field(description="Where the content came from, e.g. 'claude-code', 'cursor', 'chatgpt'.")
    ] = None,
    new: Annotated[
        bool,
        Field(
            description=(
                "true saves a new page even when the hub already holds a page with the same title and "
                "markdown; by default that page is returned instead (status 'exists')."
            )
        ),
    ] = False,
    ctx: Context = None,  # type: ignore[assignment]  # given by the SDK
) -> CallToolResult:
    """Save markdown as a new page at a permanent URL in the user's Memory.Wiki hub.

    Use only when the user asks to save, remember, capture or record something. Returns the
    page's `url` (show it to the user), its `id`, `version` and `status`: "created", or
    "exists" when the hub already held the same title and markdown (that page is returned;
    pass new=true only if the user wants a second copy). The page is indexed for `recall` in
    the background within seconds. To change an existing page use update_doc.
    """
    with mw.wiki() as wiki:
        captured = ops.capture_markdown(wiki, markdown, title=title, hub=hub, source=source, draft=is_draft, new=new)
    slug = captured.hub
    out = {
        "id": captured.doc_id,
        "url": captured.url,
        "version": captured.data.get("version"),
        "hub": slug,
        "is_draft": is_draft,
        "status": captured.status,
        "redacted": captured.data.get("redacted"),
    }
    head = f"{out['url']}\nid: {out['id']}  version: {out['version']}"
    said = redaction_line(out["redacted"])
    if said:
        head += f"\n{said} (the page holds a marker in their place)"
    if captured.status == ops.EXISTS:
        return result(
            f"Already captured: {head}\n"
            "The hub already holds a page with this title and markdown, so no new page was made "
            "(call capture with new=true only if the user wants a second copy).",
            out,
        )
    text = f"Saved: {head}"
    if slug:
        text += f"  hub: {slug}"
        text += (
            "\n(draft: private, not in recall)" if is_draft else "\nIt will show up in recall once indexed (seconds)."
        )
    else:
        text += "\nNot in any hub (no hub configured), so recall will not find it."
    return result(text, out)
