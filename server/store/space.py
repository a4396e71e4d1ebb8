"""The embedding space: which model the stored vectors come from, and its HNSW indexes.

Vector columns have no fixed dimension, so the indexes are expression indexes cast to
the recorded dimension. Switching embedders wipes the vectors and marks every doc owed,
so a re-index follows instead of a mix of dimensions.

The indexes are built CONCURRENTLY, on a connection of their own, by the worker once the
space is recorded: a plain CREATE INDEX holds a SHARE lock on its table until commit, and
taken mid-traffic against saves (which hold ROW EXCLUSIVE on docs and then want chunks) it
deadlocked them into HTTP 500s (bench/results/findings.md, item 2). A concurrent build
takes no lock that a save waits for, so saves go on while the first vectors arrive.
"""

from __future__ import annotations

import logging

import psycopg
from psycopg import sql

from .connection import AnyConn, Conn, one_row

log = logging.getLogger("memorywiki.store")

_INDEXED_TABLES = ("docs", "bundles", "chunks")

# Session advisory lock (two-key form, its own lock space) held while one process builds the
# indexes; the others skip the build instead of queueing duplicate concurrent builds.
BUILD_LOCK = (0x6D77, 0x686E)  # "mw", "hn"

DROP_INDEX = "DROP INDEX IF EXISTS {index}"
CREATE_INDEX = """
CREATE INDEX CONCURRENTLY IF NOT EXISTS {index} ON {table}
USING hnsw ((embedding::vector({dim})) vector_cosine_ops)
"""
# A concurrent build that was interrupted (a killed worker) leaves an INVALID index behind,
# which the planner ignores and IF NOT EXISTS would keep: it is dropped and built again.
DROP_INVALID = "DROP INDEX CONCURRENTLY IF EXISTS {index}"
INDEX_STATE = """
SELECT i.indisvalid AS valid FROM pg_class c JOIN pg_index i ON i.indexrelid = c.oid
WHERE c.relname = %s AND c.relnamespace = current_schema()::regnamespace
"""


def _index(table: str) -> sql.Identifier:
    return sql.Identifier(f"{table}_embedding_hnsw")


async def current_space(conn: AnyConn) -> tuple[str, int] | None:
    row = await (await conn.execute("SELECT model, dim FROM embedding_space")).fetchone()
    if row is None:
        return None
    return (row["model"], row["dim"]) if isinstance(row, dict) else (row[0], row[1])


async def reset_if_model_changed(conn: Conn, model: str) -> bool:
    """Forget all vectors when the configured embedder differs from the recorded one."""
    space = await current_space(conn)
    if space is None or space[0] == model:
        return False
    log.warning("embedder changed from %s to %s: re-indexing every doc", space[0], model)
    async with conn.transaction():
        for table in _INDEXED_TABLES:
            await conn.execute(sql.SQL(DROP_INDEX).format(index=_index(table)))
        await conn.execute("UPDATE chunks SET embedding = NULL WHERE embedding IS NOT NULL")
        await conn.execute("UPDATE docs SET embedding = NULL, embedded_hash = NULL, embedded_chunk_hashes = '{}'")
        await conn.execute("UPDATE bundles SET embedding = NULL, embedded_hash = NULL")
        await conn.execute("DELETE FROM doc_edges")  # measured in the old space
        await conn.execute("DELETE FROM doc_reach")
        await conn.execute(
            "INSERT INTO embedding_space_history (model, dim, replaced_by) SELECT model, dim, %s FROM embedding_space",
            (model,),
        )
        await conn.execute("DELETE FROM embedding_space")
    return True


# Why a hub's recall has no vectors to use: how many of its public pages still owe indexing,
# and whether vectors were wiped by an embedder change (rather than never made yet).
VECTOR_BACKLOG = """
SELECT (SELECT count(*) FROM docs d
        WHERE d.hub_id = %s AND doc_is_public(d) AND d.source_hash IS DISTINCT FROM d.embedded_hash) AS owed,
       EXISTS (SELECT 1 FROM embedding_space_history) AS replaced
"""


async def vector_backlog(conn: Conn, hub_id: int) -> tuple[int, bool]:
    """(public pages of the hub still owed indexing, whether an embedder change wiped vectors)."""
    row = await one_row(conn, VECTOR_BACKLOG, (hub_id,))
    return row["owed"], row["replaced"]


async def ensure_space(conn: Conn, model: str, dim: int) -> bool:
    """Record the space on first use (True when this call recorded it); refuse a mismatched
    dimension. Locks only the one-row embedding_space table: the indexes come later
    (build_indexes), so a save is never made to wait here."""
    space = await current_space(conn)
    if space is None:
        async with conn.transaction():
            await conn.execute("LOCK TABLE embedding_space IN EXCLUSIVE MODE")
            space = await current_space(conn)
            if space is None:
                await conn.execute("INSERT INTO embedding_space (model, dim) VALUES (%s, %s)", (model, dim))
                return True
    if space != (model, dim):
        raise RuntimeError(f"embedding space is {space[0]} ({space[1]}-d), got {model} ({dim}-d)")
    return False


async def _index_state(conn: AnyConn, table: str) -> bool | None:
    """True: the table's HNSW index is usable; False: a leftover invalid one; None: none."""
    row = await (await conn.execute(INDEX_STATE, (f"{table}_embedding_hnsw",))).fetchone()
    return None if row is None else bool(row[0])


async def build_indexes(url: str) -> bool:
    """Build the recorded space's missing HNSW indexes without blocking writes.

    Returns True when every index is in place; False when there is no space yet or another
    process holds the build lock: the caller tries again after its next batch.
    """
    async with await psycopg.AsyncConnection.connect(url, autocommit=True) as conn:
        space = await current_space(conn)
        if space is None:
            return False
        row = await (await conn.execute("SELECT pg_try_advisory_lock(%s, %s)", BUILD_LOCK)).fetchone()
        if not (row and row[0]):
            return False
        for table in _INDEXED_TABLES:
            state = await _index_state(conn, table)
            if state:
                continue
            if state is False:
                log.warning("dropping the invalid index %s_embedding_hnsw left by an interrupted build", table)
                await conn.execute(sql.SQL(DROP_INVALID).format(index=_index(table)))
            log.info("building the HNSW index on %s (%s-d), concurrently with traffic", table, space[1])
            await conn.execute(
                sql.SQL(CREATE_INDEX).format(
                    index=_index(table), table=sql.Identifier(table), dim=sql.Literal(int(space[1]))
                )
            )
    return True  # closing the session released the advisory lock
