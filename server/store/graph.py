"""SQL for the hub graph: semantic edges between a hub's docs, kept by the indexer.

When a doc's vector changes, only that doc's rows are replaced (its neighbours within the
rule's cosine distance, found by an exact scan of its hub's vectors): never all pairs. Edges
to private docs are stored like any other and hidden by row-level security (0061), so making
a doc private or public again needs no recomputation.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import psycopg


@dataclass(frozen=True)
class EdgeRule:
    """Which pairs are neighbours: cosine distance below `max_distance`, and at most
    `max_neighbours` per doc (the nearest), so a hub of near-duplicates stays bounded."""

    max_distance: float = 0.42
    max_neighbours: int = 50


# The scan compares vectors as stored (not cast to the space's dimension), so the HNSW index
# is not used: the neighbours come out exact, at the cost of one pass over the hub's vectors.
REFRESH = """
WITH me AS (
    SELECT id, hub_id, embedding FROM docs
    WHERE id = %(doc)s AND deleted_at IS NULL AND hub_id IS NOT NULL AND embedding IS NOT NULL
),
near AS (
    SELECT o.id, (o.embedding <=> me.embedding)::real AS distance
    FROM me JOIN docs o ON o.hub_id = me.hub_id AND o.id <> me.id
    WHERE o.deleted_at IS NULL AND o.embedding IS NOT NULL
      AND vector_dims(o.embedding) = vector_dims(me.embedding)
    ORDER BY 2
    LIMIT %(cap)s
)
INSERT INTO doc_edges (source, target, hub_id, distance)
SELECT least(me.id, near.id), greatest(me.id, near.id), me.hub_id, near.distance
FROM me, near
WHERE near.distance < %(max)s
"""


async def refresh_doc_edges(conn: psycopg.AsyncConnection, doc_id: str, rule: EdgeRule) -> None:
    """Replace the doc's edges with its current neighbours (none once it is deleted, has left
    its hub or has no vector). Runs in the caller's transaction."""
    await conn.execute("DELETE FROM doc_edges WHERE source = %s OR target = %s", (doc_id, doc_id))
    await conn.execute(REFRESH, {"doc": doc_id, "cap": rule.max_neighbours, "max": rule.max_distance})


async def forget_all(conn: psycopg.AsyncConnection) -> None:
    """Every edge: the vectors they were measured on are gone (an embedder change)."""
    await conn.execute("DELETE FROM doc_edges")


# Read on the public pool: row-level security keeps only public docs and the edges between
# them. An edge counts only while both ends are still in this hub.
NODES = """
SELECT d.id, d.title, length(d.markdown) AS chars
FROM docs d
WHERE d.hub_id = %s
ORDER BY d.updated_at DESC, d.id
"""

EDGES = """
SELECT e.source, e.target, e.distance
FROM doc_edges e
JOIN docs s ON s.id = e.source AND s.hub_id = %(hub)s
JOIN docs t ON t.id = e.target AND t.hub_id = %(hub)s
WHERE e.hub_id = %(hub)s
ORDER BY e.source, e.target
"""


async def hub_graph(conn: psycopg.AsyncConnection, hub_id: int) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The hub's public docs and the edges between them."""
    nodes = await (await conn.execute(NODES, (hub_id,))).fetchall()
    edges = await (await conn.execute(EDGES, {"hub": hub_id})).fetchall()
    return nodes, edges
