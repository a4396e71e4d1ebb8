"""The hub graph: its public docs joined by meaning, grouped into clusters. Read as the public
role, so private docs are neither nodes nor the end of any edge."""

from __future__ import annotations

from typing import Any

from ..curation.suggest import clusters
from ..errors import unknown_hub
from ..store import graph as graph_store
from ..store import hubs as hub_store
from ..store.space import current_space
from .context import Context
from .urls import Urls


async def hub_graph(ctx: Context, urls: Urls, slug: str) -> dict[str, Any]:
    async with ctx.db.public.connection() as conn:
        hub = await hub_store.find_hub(conn, slug)
        if hub is None:
            raise unknown_hub(slug)
        nodes, edges = await graph_store.hub_graph(conn, hub["id"])
        space = await current_space(conn)
    rule = ctx.settings.edge_rule
    weighted = [(e["source"], e["target"], round(1.0 - float(e["distance"]), 4)) for e in edges]
    cluster_of = clusters([n["id"] for n in nodes], weighted)
    return {
        "hub": slug,
        "url": urls.hub(slug),
        # what the markdown and the page say about which pages are joined
        "max_distance": rule.ceiling(space[0] if space else None),
        "relative": rule.relative,
        "max_neighbours": rule.max_neighbours,
        "nodes": [
            {
                "id": n["id"],
                "title": n["title"],
                "url": urls.doc(n["id"]),
                "size": n["chars"],
                "cluster": cluster_of[n["id"]],
            }
            for n in nodes
        ],
        "edges": [{"source": a, "target": b, "weight": w} for a, b, w in weighted],
    }
