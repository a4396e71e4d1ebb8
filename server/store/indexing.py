"""SQL for index refresh: claims on owed docs and bundles, what each owes, and its vectors.

Owed work is derived from the data (`source_hash IS DISTINCT FROM embedded_hash`). A claim is
a lease held by a worker's session (claimed_by = its backend pid): it lapses when the lease
runs out or at once when that session is gone (a crashed or killed worker), so a restart
picks the work up immediately.
"""

from __future__ import annotations

from typing import Any

from psycopg import sql

from .connection import Conn, one_row

LEASE = "5 minutes"

CLAIM = """
UPDATE {table} SET claimed_until = now() + {lease}::interval, claimed_by = %(worker)s
WHERE id IN (
    SELECT id FROM {table} t
    WHERE deleted_at IS NULL
      AND source_hash IS DISTINCT FROM embedded_hash
      AND (claimed_until IS NULL OR claimed_until < now()
           OR NOT EXISTS (SELECT 1 FROM pg_stat_activity a WHERE a.pid = t.claimed_by))
    ORDER BY updated_at
    LIMIT %(limit)s
    FOR UPDATE SKIP LOCKED)
RETURNING id
"""
CLAIM_DOCS = sql.SQL(CLAIM).format(table=sql.Identifier("docs"), lease=sql.Literal(LEASE))
CLAIM_BUNDLES = sql.SQL(CLAIM).format(table=sql.Identifier("bundles"), lease=sql.Literal(LEASE))

RELEASE_DOCS = "UPDATE docs SET claimed_until = NULL, claimed_by = NULL WHERE id = ANY(%s)"
RELEASE_BUNDLES = "UPDATE bundles SET claimed_until = NULL, claimed_by = NULL WHERE id = ANY(%s)"

# A doc's vector is the normalised mean of its chunk vectors: it covers the whole doc
# (a model that truncates at 256 tokens would only see the start of a long one) and
# costs no embedding input of its own, so an edit embeds exactly the changed chunks.
DOC_VECTOR_FROM_CHUNKS = """
UPDATE docs SET embedding = (
    SELECT l2_normalize(avg(embedding)) FROM chunks WHERE doc_id = %(doc)s AND embedding IS NOT NULL)
WHERE id = %(doc)s
"""

BUNDLE_TEXT = """
SELECT b.id, b.title, b.description, b.source_hash,
       coalesce(string_agg(d.title, E'\\n' ORDER BY bd.position), '') AS member_titles
FROM bundles b
LEFT JOIN bundle_docs bd ON bd.bundle_id = b.id
LEFT JOIN docs d ON d.id = bd.doc_id AND doc_is_public(d)
WHERE b.id = %s AND b.deleted_at IS NULL
GROUP BY b.id
"""

OWED = """
SELECT (SELECT count(*) FROM docs WHERE deleted_at IS NULL
          AND source_hash IS DISTINCT FROM embedded_hash) AS docs,
       (SELECT count(*) FROM bundles WHERE deleted_at IS NULL
          AND source_hash IS DISTINCT FROM embedded_hash) AS bundles
"""


async def claim(conn: Conn, worker: int, limit: int) -> tuple[list[str], list[str]]:
    """(doc ids, bundle ids) now leased to this worker's session."""
    params = {"worker": worker, "limit": limit}
    docs = [r["id"] for r in await (await conn.execute(CLAIM_DOCS, params)).fetchall()]
    bundles = [r["id"] for r in await (await conn.execute(CLAIM_BUNDLES, params)).fetchall()]
    return docs, bundles


async def release_docs(conn: Conn, doc_ids: list[str]) -> None:
    await conn.execute(RELEASE_DOCS, (doc_ids,))


async def release_bundles(conn: Conn, bundle_ids: list[str]) -> None:
    await conn.execute(RELEASE_BUNDLES, (bundle_ids,))


async def doc_to_index(conn: Conn, doc_id: str) -> dict[str, Any] | None:
    """The live doc's text and hashes, or None."""
    return await (
        await conn.execute(
            """SELECT id, title, markdown, source_hash, embedded_hash, embedded_chunk_hashes
           FROM docs WHERE id = %s AND deleted_at IS NULL""",
            (doc_id,),
        )
    ).fetchone()


async def doc_chunks(conn: Conn, doc_id: str) -> list[dict[str, Any]]:
    """The doc's chunks in order, each saying whether it still has no vector."""
    return await (
        await conn.execute(
            "SELECT id, heading_path, markdown, hash, embedding IS NULL AS missing FROM chunks"
            " WHERE doc_id = %s ORDER BY ordinal",
            (doc_id,),
        )
    ).fetchall()


async def store_chunk_vectors(conn: Conn, chunks: list[dict[str, Any]], vectors: list[list[float]]) -> None:
    """Each vector onto its chunk, only if the chunk still has the text that was embedded."""
    async with conn.cursor() as cur:
        await cur.executemany(
            "UPDATE chunks SET embedding = %s WHERE id = %s AND hash = %s",
            [(vec, c["id"], c["hash"]) for c, vec in zip(chunks, vectors, strict=True)],
        )


async def lock_source_hash(conn: Conn, doc_id: str) -> str | None:
    """The doc's source hash as it is now, row-locked for this transaction; None when gone."""
    doc = await (await conn.execute("SELECT source_hash FROM docs WHERE id = %s FOR UPDATE", (doc_id,))).fetchone()
    return None if doc is None else doc["source_hash"]


async def doc_vector_from_chunks(conn: Conn, doc_id: str) -> None:
    await conn.execute(DOC_VECTOR_FROM_CHUNKS, {"doc": doc_id})


async def set_doc_vector(conn: Conn, doc_id: str, vector: list[float]) -> None:
    await conn.execute("UPDATE docs SET embedding = %s WHERE id = %s", (vector, doc_id))


async def mark_doc_indexed(conn: Conn, doc_id: str, chunk_hashes: list[str]) -> None:
    """The doc owes nothing now; its claim and last error go."""
    await conn.execute(
        """UPDATE docs SET embedded_hash = source_hash, embedded_chunk_hashes = %s,
               claimed_until = NULL, claimed_by = NULL, index_error = NULL
           WHERE id = %s""",
        (chunk_hashes, doc_id),
    )


async def bundle_to_index(conn: Conn, bundle_id: str) -> dict[str, Any] | None:
    """The live bundle's text (title, description, public member titles), its source hash
    and the hash it was last embedded from; None when gone."""
    row = await (await conn.execute(BUNDLE_TEXT, (bundle_id,))).fetchone()
    if row is None:
        return None
    current = await one_row(conn, "SELECT embedded_hash FROM bundles WHERE id = %s", (bundle_id,))
    return {**row, "embedded_hash": current["embedded_hash"]}


async def set_bundle_vector(conn: Conn, bundle_id: str, vector: list[float], source_hash: str) -> bool:
    """Store the vector if the bundle still has the text it was computed from."""
    cur = await conn.execute(
        """UPDATE bundles SET embedding = %s, embedded_hash = %s, claimed_until = NULL, claimed_by = NULL
           WHERE id = %s AND source_hash = %s""",
        (vector, source_hash, bundle_id, source_hash),
    )
    return cur.rowcount > 0


async def owed_counts(conn: Conn) -> dict[str, int]:
    row = await one_row(conn, OWED)
    return {"docs": row["docs"], "bundles": row["bundles"]}


async def release_with_error(
    conn: Conn, doc_ids: list[str], bundle_ids: list[str], error: str, retry_seconds: float
) -> None:
    """Keep the work owed, but leased for `retry_seconds` before anyone tries again."""
    await conn.execute(
        "UPDATE docs SET index_error = %s, claimed_until = now() + make_interval(secs => %s) WHERE id = ANY(%s)",
        (error[:500], retry_seconds, doc_ids),
    )
    await conn.execute(
        "UPDATE bundles SET claimed_until = now() + make_interval(secs => %s) WHERE id = ANY(%s)",
        (retry_seconds, bundle_ids),
    )
