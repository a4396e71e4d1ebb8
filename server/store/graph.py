"""SQL for the hub graph: semantic edges between a hub's docs, kept by the indexer.

When a doc's vector changes, only that doc's rows are replaced: one exact scan of its hub's
vectors gives its distances to every other doc, from which it chooses the docs it reaches
(EdgeRule) and keeps an edge to each, and to each doc whose stored reach covers it. Edges to
private docs are stored like any other and hidden by row-level security (0061), so making a
doc private or public again needs no recomputation.

Whether two docs are close depends on the embedding space and on the docs: all-MiniLM-L6-v2
puts short notes of one topic further apart than text-embedding-3-small does, and a long page
(its vector the mean of its sections') sits closer to every other page than a short note
does. So a doc reaches what is close *for its hub*, measured on its own distances, under a
limit per space (bench/results/graph.md). A hub that changes size shifts those distances:
stale_docs names the docs to measure again (indexing/edges.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .connection import Conn
from .space import current_space

# The farthest two docs of an embedding model may be and still be neighbours; past it, texts
# are unrelated (bench/results/graph.md). Keyed by the model's own name: the space's name
# without its provider, organisation, tag or int8 suffix, so the same model served by an
# OpenAI-compatible endpoint (TEI, Ollama) gets the same limit.
MODEL_MAX_DISTANCE = {
    "text-embedding-3-small": 0.42,  # the seeds' calibration
    "all-minilm-l6-v2": 0.70,
    "all-minilm": 0.70,  # Ollama's name for it
}
DEFAULT_MAX_DISTANCE = 0.42

# A doc reaches a third of the way from its nearest neighbour to its median distance to the
# hub: what stands out from the hub around it, not a fixed distance, so it holds for long
# pages and short notes, and for spaces whose distances run wide or narrow.
REACH_SHARE = 1 / 3
# Below this many docs a hub has no "usual distance" to speak of: the space's limit alone.
REACH_MIN_DOCS = 8
# A doc's reach is measured again when its hub's size has changed: at every change in a
# small hub, by more than a quarter in a bigger one (so a bulk import costs a few rounds).
EXACT_BELOW = 64
DRIFT = 0.25


def model_key(space: str | None) -> str:
    """ "local:all-MiniLM-L6-v2-int8", "openai:sentence-transformers/all-MiniLM-L6-v2",
    "openai:all-minilm:latest" -> the model's own name in lower case."""
    name = (space or "").split(":", 1)[-1].split(":", 1)[0].rsplit("/", 1)[-1].lower()
    return name.removesuffix("-int8")


@dataclass(frozen=True)
class EdgeRule:
    """Which docs a doc reaches: closer than `max_distance` (None: the embedding space's own),
    closer than its hub makes close when `relative`, and its `max_neighbours` nearest at most.
    Two docs are neighbours when either one reaches the other."""

    max_distance: float | None = None
    relative: bool = True
    max_neighbours: int = 10

    def ceiling(self, space: str | None) -> float:
        if self.max_distance is not None:
            return self.max_distance
        return MODEL_MAX_DISTANCE.get(model_key(space), DEFAULT_MAX_DISTANCE)

    def signature(self, space: str | None) -> str:
        """What the stored reaches were measured under: a change means measuring them again."""
        relative = f"relative {REACH_SHARE:.4g} from {REACH_MIN_DOCS}" if self.relative else "fixed"
        return f"below {self.ceiling(space):g}, {relative}, {self.max_neighbours} nearest"

    def params(self, space: str | None) -> dict[str, Any]:
        return {
            "ceiling": self.ceiling(space),
            "relative": self.relative,
            "share": REACH_SHARE,
            "min_docs": REACH_MIN_DOCS,
            "cap": self.max_neighbours,
            "rule": self.signature(space),
        }


# The scan compares vectors as stored (not cast to the space's dimension), so the HNSW index
# is not used: the distances come out exact, at the cost of one pass over the hub's vectors.
# `near` is materialised, so that pass is made once for the doc's statistics, its choice and
# its edges. An edge that stays is left as it is (not deleted and written again); a doc that
# cannot be measured (deleted, out of any hub, no vector) keeps no edge and no reach.
MEASURE = """
WITH me AS (
    SELECT id, hub_id, embedding FROM docs
    WHERE id = %(doc)s AND deleted_at IS NULL AND hub_id IS NOT NULL AND embedding IS NOT NULL
),
near AS MATERIALIZED (
    SELECT o.id, (o.embedding <=> me.embedding)::real AS distance
    FROM me JOIN docs o ON o.hub_id = me.hub_id AND o.id <> me.id
    WHERE o.deleted_at IS NULL AND o.embedding IS NOT NULL
      AND vector_dims(o.embedding) = vector_dims(me.embedding)
),
shape AS (
    SELECT count(*) AS others, min(distance) AS nearest,
           percentile_cont(0.5) WITHIN GROUP (ORDER BY distance) AS median
    FROM near
),
bound AS (
    SELECT CASE WHEN %(relative)s AND others + 1 >= %(min_docs)s
                THEN least(%(ceiling)s, nearest + (median - nearest) * %(share)s)
                ELSE %(ceiling)s END AS distance
    FROM shape
),
chosen AS (
    SELECT near.id, near.distance FROM near, bound
    WHERE near.distance < bound.distance
    ORDER BY near.distance, near.id
    LIMIT %(cap)s
),
wanted AS MATERIALIZED (
    SELECT least(me.id, near.id) AS source, greatest(me.id, near.id) AS target, me.hub_id, near.distance
    FROM me
    CROSS JOIN near
    LEFT JOIN doc_reach theirs ON theirs.doc_id = near.id AND theirs.hub_id = me.hub_id AND theirs.rule = %(rule)s
    WHERE near.id IN (SELECT id FROM chosen) OR near.distance <= theirs.reach
),
dropped AS (
    DELETE FROM doc_edges e
    WHERE (e.source = %(doc)s OR e.target = %(doc)s)
      AND NOT EXISTS (SELECT 1 FROM wanted w WHERE w.source = e.source AND w.target = e.target)
),
unmeasured AS (
    DELETE FROM doc_reach WHERE doc_id = %(doc)s AND NOT EXISTS (SELECT 1 FROM me)
),
reach AS (
    INSERT INTO doc_reach (doc_id, hub_id, reach, hub_docs, rule)
    SELECT me.id, me.hub_id, (SELECT max(distance) FROM chosen), shape.others + 1, %(rule)s
    FROM me, shape
    ON CONFLICT (doc_id) DO UPDATE
        SET hub_id = EXCLUDED.hub_id, reach = EXCLUDED.reach, hub_docs = EXCLUDED.hub_docs, rule = EXCLUDED.rule
)
INSERT INTO doc_edges (source, target, hub_id, distance)
SELECT source, target, hub_id, distance FROM wanted
ON CONFLICT (source, target) DO UPDATE SET distance = EXCLUDED.distance, hub_id = EXCLUDED.hub_id
    WHERE (doc_edges.distance, doc_edges.hub_id) IS DISTINCT FROM (EXCLUDED.distance, EXCLUDED.hub_id)
"""


async def refresh_doc_edges(conn: Conn, doc_id: str, rule: EdgeRule) -> None:
    """Make the doc's edges and reach what it is close to now (none once it is deleted, has
    left its hub or has no vector). Runs in the caller's transaction."""
    space = await current_space(conn)
    if space is None:  # no vector anywhere
        await conn.execute("DELETE FROM doc_edges WHERE source = %s OR target = %s", (doc_id, doc_id))
        await conn.execute("DELETE FROM doc_reach WHERE doc_id = %s", (doc_id,))
        return
    await conn.execute(MEASURE, {"doc": doc_id, **rule.params(space[0])})


# Docs to measure again: indexed (a doc still owed is measured when its vectors are written),
# and never measured, measured under another rule or in another hub, or in a hub whose size
# has changed since (exactly in a small hub, by more than DRIFT in a bigger one).
STALE = """
WITH sizes AS (
    SELECT hub_id, count(*) AS docs FROM docs
    WHERE hub_id IS NOT NULL AND deleted_at IS NULL AND embedding IS NOT NULL
    GROUP BY hub_id
)
SELECT d.id FROM docs d
JOIN sizes s ON s.hub_id = d.hub_id
LEFT JOIN doc_reach r ON r.doc_id = d.id
WHERE d.deleted_at IS NULL AND d.embedding IS NOT NULL AND d.embedded_hash = d.source_hash
  AND (r.doc_id IS NULL OR r.rule <> %(rule)s OR r.hub_id <> d.hub_id
       OR (r.hub_docs <> s.docs AND (s.docs < %(exact_below)s OR abs(s.docs - r.hub_docs) > r.hub_docs * %(drift)s)))
ORDER BY d.hub_id, d.id
LIMIT %(limit)s
"""


async def stale_docs(conn: Conn, rule: EdgeRule, limit: int) -> list[str]:
    """Up to `limit` docs whose reach is out of date for their hub as it is now."""
    space = await current_space(conn)
    if space is None:
        return []
    rows = await (
        await conn.execute(
            STALE, {"rule": rule.signature(space[0]), "exact_below": EXACT_BELOW, "drift": DRIFT, "limit": limit}
        )
    ).fetchall()
    return [r["id"] if isinstance(r, dict) else r[0] for r in rows]


async def lock_indexed(conn: Conn, doc_id: str) -> bool:
    """Row-lock the doc for this transaction unless another holds it (the indexer writing
    its vectors, which measures it then anyway)."""
    row = await (await conn.execute("SELECT 1 FROM docs WHERE id = %s FOR UPDATE SKIP LOCKED", (doc_id,))).fetchone()
    return row is not None


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


async def hub_graph(conn: Conn, hub_id: int) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The hub's public docs and the edges between them."""
    nodes = await (await conn.execute(NODES, (hub_id,))).fetchall()
    edges = await (await conn.execute(EDGES, {"hub": hub_id})).fetchall()
    return nodes, edges
