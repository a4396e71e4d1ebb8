"""The embedding space: which model the stored vectors come from, and its HNSW indexes.

Vector columns have no fixed dimension, so the indexes are expression indexes cast to
the recorded dimension. Switching embedders wipes the vectors and marks every doc owed,
so a re-index follows instead of a mix of dimensions.
"""

from __future__ import annotations

import logging

import psycopg
from psycopg import sql

log = logging.getLogger("memorywiki.store")

# In the order saves take their write locks (docs, then bundles via triggers, then chunks):
# building the indexes locks the tables in that same order, so a save running while the
# first vectors arrive waits instead of deadlocking.
_INDEXED_TABLES = ("docs", "bundles", "chunks")

DROP_INDEX = "DROP INDEX IF EXISTS {index}"
CREATE_INDEX = """
CREATE INDEX IF NOT EXISTS {index} ON {table}
USING hnsw ((embedding::vector({dim})) vector_cosine_ops)
"""


def _index(table: str) -> sql.Identifier:
    return sql.Identifier(f"{table}_embedding_hnsw")


async def current_space(conn: psycopg.AsyncConnection) -> tuple[str, int] | None:
    row = await (await conn.execute("SELECT model, dim FROM embedding_space")).fetchone()
    if row is None:
        return None
    return (row["model"], row["dim"]) if isinstance(row, dict) else (row[0], row[1])


async def reset_if_model_changed(conn: psycopg.AsyncConnection, model: str) -> bool:
    """Forget all vectors when the configured embedder differs from the recorded one."""
    space = await current_space(conn)
    if space is None or space[0] == model:
        return False
    log.warning("embedder changed from %s to %s: re-indexing every doc", space[0], model)
    async with conn.transaction():
        for table in _INDEXED_TABLES:
            await conn.execute(sql.SQL(DROP_INDEX).format(index=_index(table)))
        await conn.execute("UPDATE chunks SET embedding = NULL WHERE embedding IS NOT NULL")
        await conn.execute(
            "UPDATE docs SET embedding = NULL, embedded_hash = NULL, embedded_chunk_hashes = '{}'"
        )
        await conn.execute("UPDATE bundles SET embedding = NULL, embedded_hash = NULL")
        await conn.execute("DELETE FROM doc_edges")  # measured in the old space
        await conn.execute(
            "INSERT INTO embedding_space_history (model, dim, replaced_by)"
            " SELECT model, dim, %s FROM embedding_space", (model,))
        await conn.execute("DELETE FROM embedding_space")
    return True


# Why a hub's recall has no vectors to use: how many of its public pages still owe indexing,
# and whether vectors were wiped by an embedder change (rather than never made yet).
VECTOR_BACKLOG = """
SELECT (SELECT count(*) FROM docs d
        WHERE d.hub_id = %s AND doc_is_public(d) AND d.source_hash IS DISTINCT FROM d.embedded_hash) AS owed,
       EXISTS (SELECT 1 FROM embedding_space_history) AS replaced
"""


async def vector_backlog(conn: psycopg.AsyncConnection, hub_id: int) -> tuple[int, bool]:
    """(public pages of the hub still owed indexing, whether an embedder change wiped vectors)."""
    row = await (await conn.execute(VECTOR_BACKLOG, (hub_id,))).fetchone()
    return (row["owed"], row["replaced"]) if isinstance(row, dict) else (row[0], row[1])


async def ensure_space(conn: psycopg.AsyncConnection, model: str, dim: int) -> None:
    """Record the space on first use and build its indexes; refuse a mismatched dimension."""
    space = await current_space(conn)
    if space == (model, dim):
        return
    if space is not None:
        raise RuntimeError(f"embedding space is {space[0]} ({space[1]}-d), got {model} ({dim}-d)")
    async with conn.transaction():
        await conn.execute("LOCK TABLE embedding_space IN EXCLUSIVE MODE")
        if await current_space(conn) is None:
            await conn.execute(sql.SQL("LOCK TABLE {} IN SHARE MODE").format(
                sql.SQL(", ").join(map(sql.Identifier, _INDEXED_TABLES))))
            await conn.execute("INSERT INTO embedding_space (model, dim) VALUES (%s, %s)", (model, dim))
            for table in _INDEXED_TABLES:
                await conn.execute(sql.SQL(CREATE_INDEX).format(
                    index=_index(table), table=sql.Identifier(table), dim=sql.Literal(int(dim))))
