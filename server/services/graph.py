"""The hub graph: its public docs joined by meaning, grouped into clusters. Read as the public
role, so private docs are neither nodes nor the end of any edge."""

from __future__ import annotations

from typing import Any

from ..errors import unknown_hub
from ..store import graph as graph_store
from ..store import hubs as hub_store
from ..web.graphview import clusters
from .context import Context
from .urls import Urls


async def hub_graph(ctx: Context, urls: Urls, slug: str) -> dict[str, Any]:
    async with ctx.db.public.connection() as conn:
        hub = await hub_store.find_hub(conn, slug)
        if hub is None:
            raise unknown_hub(slug)
        nodes, edges = await graph_store.hub_graph(conn, hub["id"])
    weighted = [(e["source"], e["target"], round(1.0 - float(e["distance"]), 4)) for e in edges]
    cluster_of = clusters([n["id"] for n in nodes], weighted)
    return {
        "hub": slug, "url": urls.hub(slug),
        "max_distance": ctx.settings.graph_max_distance,
        "nodes": [{"id": n["id"], "title": n["title"], "url": urls.doc(n["id"]),
                   "size": n["chars"], "cluster": cluster_of[n["id"]]} for n in nodes],
        "edges": [{"source": a, "target": b, "weight": w} for a, b, w in weighted],
    }
