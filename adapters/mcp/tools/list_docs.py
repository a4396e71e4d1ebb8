"""`list_docs`: what a hub holds, newest page first, then its bundles."""

from __future__ import annotations

from mcp.types import CallToolResult, ToolAnnotations
from memorywiki.client import operations as ops

from ..context import MemoryWiki
from .common import HubArg, result

TITLE = "List Memory.Wiki pages"
ANNOTATIONS = ToolAnnotations(title=TITLE, read_only_hint=True, open_world_hint=False)


def list_docs(mw: MemoryWiki, hub: HubArg = None) -> CallToolResult:
    """List the pages (newest first) and bundles of a Memory.Wiki hub.

    Returns one line per page: title, url, id and a one-line summary; then the bundles. When
    this server holds the hub's owner token, the list is the owner's: drafts and private pages
    too, each marked with who may read it (draft, password, people). Use it to browse what the
    user has saved or to find doc ids for read_doc / create_bundle. To find pages about a
    topic, recall is better (it answers from public pages only).
    """
    with mw.wiki() as wiki:
        slug = wiki.require_hub(hub)
        data = ops.hub_info(wiki, slug, owner=True)
    docs = data.get("docs") or []
    bundles = data.get("bundles") or []
    owner = data.get("view") == "owner"
    pages = f"{len(docs)} page(s), drafts and private ones included" if owner else f"{len(docs)} public page(s)"
    lines = [f'Hub "{slug}": {data.get("url")} ({pages}; {len(bundles)} bundle(s))', ""]
    for d in docs:
        private = f" [{d['visibility']}]" if d.get("visibility") not in (None, "public") else ""
        line = f"- {d.get('title')}{private} — {d.get('url')} (id: {d.get('id')}, updated {d.get('updated_at')})"
        if d.get("summary"):
            line += f"\n  {d['summary']}"
        lines.append(line)
    if not docs:
        lines.append("(no public pages yet)")
    if bundles:
        lines += ["", "Bundles:"]
        lines += [f"- {b.get('title')} — {b.get('url')} (id: {b.get('id')})" for b in bundles]
    return result("\n".join(lines) + "\n", {"hub": slug, "url": data.get("url"), "docs": docs, "bundles": bundles})
