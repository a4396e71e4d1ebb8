"""`suggest_bundles`: reading lists the hub proposes, or its pages on a topic in order."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any

from mcp.types import CallToolResult, ToolAnnotations
from memorywiki.client import operations as ops
from pydantic import Field

from ..context import MemoryWiki
from .common import HubArg, result

TITLE = "Suggest Memory.Wiki bundles"
ANNOTATIONS = ToolAnnotations(title=TITLE, read_only_hint=True, open_world_hint=False)


def suggest_bundles(
    mw: MemoryWiki,
    intent: Annotated[
        str | None,
        Field(
            max_length=500,
            description=(
                "A topic: returns the hub's pages on it in a reading order, each with why it belongs. "
                "Omit to get the groups of related pages the hub itself suggests."
            ),
        ),
    ] = None,
    k: Annotated[int, Field(ge=2, le=20, description="With intent: how many pages.")] = 8,
    hub: HubArg = None,
) -> CallToolResult:
    """Suggest bundles (reading lists) from the user's pages.

    Without `intent`: the groups of related pages the hub suggests (title, description, pages).
    With `intent`: the pages on that topic in a reading order, each with a line on why.
    To make one a bundle, call create_bundle with its doc ids (ask the user first).
    """
    with mw.wiki() as wiki:
        slug = wiki.require_hub(hub)
        data: Mapping[str, Any]
        if intent and intent.strip():
            topic = ops.pages_on_topic(wiki, intent, k=k, hub=slug)
            lines = [f'Pages on "{intent.strip()}" in reading order:']
            lines += [
                f"{i}. {d.get('title')} — {d.get('url')} (id: {d.get('id')})\n   {d.get('why')}"
                for i, d in enumerate(topic.get("docs") or [], 1)
            ]
            data = topic
        else:
            offered = ops.suggestions(wiki, slug)
            lines = [f'Suggested bundles in hub "{slug}":']
            for s in offered.get("suggestions") or []:
                lines.append(f"- {s.get('title')} (suggestion id: {s.get('id')}): {s.get('description')}")
                lines += [f"    {d.get('title')} — {d.get('url')} (id: {d.get('id')})" for d in s.get("docs") or []]
            data = offered
    if len(lines) == 1:
        lines.append("(none yet)")
    return result("\n".join(lines) + "\n", data)
