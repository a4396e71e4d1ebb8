"""Cross-references: which public docs link to which, by `/{id}` URLs of this server.

Read as the public role: a link shows only while both of its docs are public."""

from __future__ import annotations

from typing import Any

from ..errors import not_found, unknown_hub
from ..store import docs as doc_store
from ..store import hubs as hub_store
from ..store import links as link_store
from ..tokens import looks_like_id
from .context import Context
from .urls import Urls


def _entry(urls: Urls, doc_id: str, title: str, hub: str | None) -> dict[str, Any]:
    return {"id": doc_id, "title": title, "url": urls.doc(doc_id), "hub": hub}


async def of_doc(ctx: Context, urls: Urls, doc_id: str) -> dict[str, Any]:
    """The public docs this public doc links to, and those linking to it."""
    async with ctx.db.public.connection() as conn:
        doc = await doc_store.public_doc(conn, doc_id) if looks_like_id(doc_id) else None
        if doc is None:
            raise not_found("doc")
        outbound, inbound = await link_store.doc_cross_refs(conn, doc_id, list(urls.hosts))
    return {
        "doc": _entry(urls, doc_id, doc["title"], doc["hub_slug"]),
        "outbound": [_entry(urls, d["id"], d["title"], d["hub_slug"]) for d in outbound],
        "inbound": [_entry(urls, d["id"], d["title"], d["hub_slug"]) for d in inbound],
    }


async def of_hub(ctx: Context, urls: Urls, slug: str) -> dict[str, Any]:
    """Every link between public docs with one end in the hub."""
    async with ctx.db.public.connection() as conn:
        hub = await hub_store.find_hub(conn, slug)
        if hub is None:
            raise unknown_hub(slug)
        pairs = await link_store.hub_cross_refs(conn, hub["id"], list(urls.hosts))
    return {
        "hub": slug,
        "url": urls.hub(slug),
        "pairs": [
            {
                "source": _entry(urls, p["source_id"], p["source_title"], p["source_hub"]),
                "target": _entry(urls, p["target_id"], p["target_title"], p["target_hub"]),
            }
            for p in pairs
        ],
    }
