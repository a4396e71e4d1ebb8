"""`digest`: every concept of the hub and the pages about it, in one call."""

from __future__ import annotations

from typing import Annotated

from mcp.types import CallToolResult, ToolAnnotations
from memorywiki.client import operations as ops
from pydantic import Field

from ..context import MemoryWiki
from .common import HubArg, result

TITLE = "Memory.Wiki concept digest"
ANNOTATIONS = ToolAnnotations(title=TITLE, read_only_hint=True, open_world_hint=False)


def digest(
    mw: MemoryWiki,
    hub: HubArg = None,
    compact: Annotated[
        bool, Field(description="true: the form that fits 2,000 tokens (page ids, short glosses).")
    ] = True,
) -> CallToolResult:
    """Get the hub's concept digest: every concept the user's pages discuss, its kind, what it
    is, and which pages discuss it (with URLs).

    One call gives an overview of everything in the hub; then read_doc or recall for details.
    """
    with mw.wiki() as wiki:
        slug = wiki.require_hub(hub)
        text = ops.digest_markdown(wiki, slug, compact=compact)
    return result(text, {"hub": slug, "compact": compact, "markdown": text})
