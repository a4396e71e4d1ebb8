"""Keeping the hub graph measured as hubs change.

A doc's edges are written with its vectors (indexer.py), measured against its hub as it was
then. What is close for a hub moves as the hub grows or shrinks, and every stored reach is
out of date after an upgrade or a change of the graph settings: those docs are measured again
here from the vectors already stored (no embedding), a few at a time, when the indexing
worker has nothing else owed, so a bulk import is never slowed by it.
"""

from __future__ import annotations

from ..store import graph as graph_store
from ..store.connection import Conn
from ..store.db import Database
from ..store.graph import EdgeRule


async def settle_graph(db: Database, rule: EdgeRule, limit: int) -> tuple[int, int]:
    """Measure up to `limit` out-of-date docs again; (docs found out of date, docs measured).
    A doc the indexer holds is skipped: it is measured when its vectors are written."""
    async with db.owner.connection() as conn:
        stale = await graph_store.stale_docs(conn, rule, limit)
    measured = 0
    for doc_id in stale:

        async def measure(conn: Conn, doc_id: str = doc_id) -> bool:
            if not await graph_store.lock_indexed(conn, doc_id):
                return False
            await graph_store.refresh_doc_edges(conn, doc_id, rule)
            return True

        measured += await db.write(measure)
    return len(stale), measured
