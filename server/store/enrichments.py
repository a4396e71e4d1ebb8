"""SQL for per-doc enrichment: claiming owed docs, storing results, reading them back.

Owed work is derived from the data (`source_hash IS DISTINCT FROM enriched_hash`), claimed
with FOR UPDATE SKIP LOCKED on leases of its own (enrich_claimed_*), so a crash leaves the
work owed and two curators never enrich the same doc at once.
"""

from __future__ import annotations

from typing import Any

import psycopg
from psycopg.types.json import Jsonb

from . import suggestions as suggestion_store

LEASE = "30 minutes"  # a long doc is several model calls; a dead worker's claim lapses at once anyway

# With an embedder, a doc is enriched after its vectors exist (extractive centrality and the
# budget's choice of chunks use them), unless they have not come for `vector_grace`.
CLAIM = f"""
UPDATE docs SET enrich_claimed_until = now() + interval '{LEASE}', enrich_claimed_by = %(worker)s
WHERE id IN (
    SELECT id FROM docs t
    WHERE deleted_at IS NULL
      AND source_hash IS DISTINCT FROM enriched_hash
      AND (NOT %(wait_for_vectors)s OR embedded_hash IS NOT DISTINCT FROM source_hash
           OR updated_at < now() - make_interval(secs => %(vector_grace)s))
      AND (enrich_claimed_until IS NULL OR enrich_claimed_until < now()
           OR NOT EXISTS (SELECT 1 FROM pg_stat_activity a WHERE a.pid = t.enrich_claimed_by))
    ORDER BY updated_at
    LIMIT %(limit)s
    FOR NO KEY UPDATE SKIP LOCKED)
RETURNING id
"""


async def claim_owed(
    conn: psycopg.AsyncConnection, *, worker: int, limit: int, wait_for_vectors: bool, vector_grace: float
) -> list[str]:
    rows = await (
        await conn.execute(
            CLAIM,
            {"worker": worker, "limit": limit, "wait_for_vectors": wait_for_vectors, "vector_grace": vector_grace},
        )
    ).fetchall()
    return [r["id"] for r in rows]


async def release(conn: psycopg.AsyncConnection, doc_ids: list[str], error: str | None, retry_seconds: float) -> None:
    """Keep the work owed; try again after `retry_seconds`."""
    await conn.execute(
        "UPDATE docs SET enrich_error = %s, enrich_claimed_until = now() + make_interval(secs => %s)"
        " WHERE id = ANY(%s)",
        (error[:500] if error else None, retry_seconds, doc_ids),
    )


async def let_go(conn: psycopg.AsyncConnection, doc_id: str) -> None:
    """Drop the claim on a doc that went away after it was claimed: kept, it would hold the doc
    for the whole lease, so a restore right after the delete would wait that long."""
    await conn.execute("UPDATE docs SET enrich_claimed_until = NULL, enrich_claimed_by = NULL WHERE id = %s", (doc_id,))


async def doc_input(conn: psycopg.AsyncConnection, doc_id: str) -> dict[str, Any] | None:
    """What enrichment reads: the doc and its chunks, with their vectors when present."""
    doc = await (
        await conn.execute(
            "SELECT id, hub_id, title, source_hash, enriched_hash FROM docs WHERE id = %s AND deleted_at IS NULL",
            (doc_id,),
        )
    ).fetchone()
    if doc is None:
        return None
    doc["chunks"] = await (
        await conn.execute(
            "SELECT heading_path, markdown, embedding FROM chunks WHERE doc_id = %s ORDER BY ordinal", (doc_id,)
        )
    ).fetchall()
    return doc


async def add_usage(
    conn: psycopg.AsyncConnection, job: str, calls: int, prompt_tokens: int, completion_tokens: int
) -> None:
    if not calls:
        return
    await conn.execute(
        """INSERT INTO curation_usage (job, calls, prompt_tokens, completion_tokens) VALUES (%s, %s, %s, %s)
           ON CONFLICT (job) DO UPDATE SET calls = curation_usage.calls + EXCLUDED.calls,
               prompt_tokens = curation_usage.prompt_tokens + EXCLUDED.prompt_tokens,
               completion_tokens = curation_usage.completion_tokens + EXCLUDED.completion_tokens""",
        (job, calls, prompt_tokens, completion_tokens),
    )


INSERT_CONCEPT = """
INSERT INTO doc_concepts (doc_id, hub_id, position, key, name, kind, gloss, aliases)
VALUES (%s, %s, %s, %s, %s, %s, %s, %s)
"""


async def write(
    conn: psycopg.AsyncConnection,
    doc_id: str,
    source_hash: str,
    enrichment: Any,
    concept_rows: list[tuple[str, str, str, str, list[str]]],
    term_rows: list[tuple[str, bool]] = (),
) -> bool:
    """Store an enrichment computed for `source_hash`; False (nothing stored, claim
    released) when the doc changed or went away meanwhile. concept_rows: (key, name, kind,
    gloss, aliases); term_rows: (key, in_title), the noun phrases the doc holds."""
    async with conn.transaction():
        doc = await (
            await conn.execute(
                # NO KEY UPDATE: a bundle insert's foreign-key check (KEY SHARE) never waits on it
                "SELECT source_hash, hub_id FROM docs WHERE id = %s AND deleted_at IS NULL FOR NO KEY UPDATE",
                (doc_id,),
            )
        ).fetchone()
        if doc is None or doc["source_hash"] != source_hash:
            await let_go(conn, doc_id)
            return False
        await conn.execute(
            """INSERT INTO enrichments (doc_id, hub_id, source_hash, mode, model, data, missing, note,
                                        calls, prompt_tokens, completion_tokens)
               VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)
               ON CONFLICT (doc_id) DO UPDATE SET hub_id = EXCLUDED.hub_id, source_hash = EXCLUDED.source_hash,
                   mode = EXCLUDED.mode, model = EXCLUDED.model, data = EXCLUDED.data, missing = EXCLUDED.missing,
                   note = EXCLUDED.note, calls = EXCLUDED.calls, prompt_tokens = EXCLUDED.prompt_tokens,
                   completion_tokens = EXCLUDED.completion_tokens, created_at = now()""",
            (
                doc_id,
                doc["hub_id"],
                source_hash,
                enrichment.mode,
                enrichment.model,
                Jsonb(enrichment.data),
                enrichment.missing,
                enrichment.note,
                enrichment.calls,
                enrichment.prompt_tokens,
                enrichment.completion_tokens,
            ),
        )
        await conn.execute("DELETE FROM doc_concepts WHERE doc_id = %s", (doc_id,))
        if concept_rows:
            async with conn.cursor() as cur:
                await cur.executemany(
                    INSERT_CONCEPT, [(doc_id, doc["hub_id"], i, *row) for i, row in enumerate(concept_rows)]
                )
        await conn.execute("DELETE FROM doc_terms WHERE doc_id = %s", (doc_id,))
        if term_rows:
            async with conn.cursor() as cur:
                await cur.executemany(
                    "INSERT INTO doc_terms (doc_id, hub_id, key, in_title) VALUES (%s, %s, %s, %s)"
                    " ON CONFLICT DO NOTHING",
                    [(doc_id, doc["hub_id"], key, in_title) for key, in_title in term_rows],
                )
        await conn.execute(
            """UPDATE docs SET enriched_hash = source_hash, enrich_claimed_until = NULL, enrich_claimed_by = NULL,
                   enrich_error = NULL WHERE id = %s""",
            (doc_id,),
        )
        if doc["hub_id"] is not None:
            await conn.execute("SELECT curation_mark_hub(%s)", (doc["hub_id"],))
    return True


async def redo_extractive(conn: psycopg.AsyncConnection) -> int:
    """A chat model is now configured: docs enriched extractively become owed again."""
    cur = await conn.execute(
        """UPDATE docs SET enriched_hash = NULL
           WHERE enriched_hash IS NOT NULL
             AND id IN (SELECT doc_id FROM enrichments WHERE mode = 'extractive')"""
    )
    return cur.rowcount


CURRENT = """
SELECT e.mode, e.model, e.data, e.missing, e.note, e.calls, e.prompt_tokens, e.completion_tokens, e.created_at
FROM enrichments e JOIN docs d ON d.id = e.doc_id
WHERE e.doc_id = %s AND e.source_hash = d.source_hash
"""


async def current(conn: psycopg.AsyncConnection, doc_id: str) -> dict[str, Any] | None:
    """The enrichment of the doc's current text, or None while one is owed. Read on the
    owner pool, by a caller that has already established the reader may see the doc."""
    return await (await conn.execute(CURRENT, (doc_id,))).fetchone()


async def totals(conn: psycopg.AsyncConnection) -> dict[str, Any]:
    """Owed and done enrichments, and model use, for /healthz."""
    row = await (
        await conn.execute(
            """SELECT (SELECT count(*) FROM docs WHERE deleted_at IS NULL
                     AND source_hash IS DISTINCT FROM enriched_hash) AS owed,
                  (SELECT count(*) FROM enrichments WHERE mode = 'model') AS by_model,
                  (SELECT count(*) FROM enrichments WHERE mode = 'extractive') AS extractive,
                  (SELECT coalesce(sum(calls), 0) FROM curation_usage) AS calls,
                  (SELECT coalesce(sum(prompt_tokens), 0) FROM curation_usage) AS prompt_tokens,
                  (SELECT coalesce(sum(completion_tokens), 0) FROM curation_usage) AS completion_tokens"""
        )
    ).fetchone()
    totals = {k: int(v) for k, v in row.items()}
    totals["owed_suggestions"] = await suggestion_store.owed_count(conn)
    return totals


async def usage_by_job(conn: psycopg.AsyncConnection) -> dict[str, dict[str, int]]:
    rows = await (
        await conn.execute("SELECT job, calls, prompt_tokens, completion_tokens FROM curation_usage")
    ).fetchall()
    return {r["job"]: {k: int(r[k]) for k in ("calls", "prompt_tokens", "completion_tokens")} for r in rows}
