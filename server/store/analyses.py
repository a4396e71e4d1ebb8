"""SQL for bundle analyses: owed when a bundle's input (title, description, public members
and their enrichments) changed since its analysis; read back only while every member the
analysis read is still public (see the bundle_analyses_public policy)."""

from __future__ import annotations

from typing import Any

from psycopg.types.json import Jsonb

from .connection import Conn, one_row

LEASE = "10 minutes"

# Owed: the input changed, and every public member is enriched (no analysis of half the
# members, to be redone a moment later).
CLAIM = f"""
UPDATE bundles SET analysis_claimed_until = now() + interval '{LEASE}', analysis_claimed_by = %(worker)s
WHERE id IN (
    SELECT b.id FROM bundles b
    LEFT JOIN bundle_analyses a ON a.bundle_id = b.id
    WHERE b.deleted_at IS NULL
      AND bundle_analysis_hash(b.id) IS DISTINCT FROM a.input_hash
      AND NOT EXISTS (SELECT 1 FROM bundle_docs bd JOIN docs d ON d.id = bd.doc_id
                      WHERE bd.bundle_id = b.id AND doc_is_public(d)
                        AND d.enriched_hash IS DISTINCT FROM d.source_hash)
      AND (b.analysis_claimed_until IS NULL OR b.analysis_claimed_until < now()
           OR NOT EXISTS (SELECT 1 FROM pg_stat_activity s WHERE s.pid = b.analysis_claimed_by))
    ORDER BY b.updated_at
    LIMIT %(limit)s
    FOR NO KEY UPDATE OF b SKIP LOCKED)
RETURNING id
"""


async def claim_owed(conn: Conn, *, worker: int, limit: int) -> list[str]:
    return [r["id"] for r in await (await conn.execute(CLAIM, {"worker": worker, "limit": limit})).fetchall()]


async def release(conn: Conn, bundle_ids: list[str], retry_seconds: float) -> None:
    await conn.execute(
        "UPDATE bundles SET analysis_claimed_until = now() + make_interval(secs => %s) WHERE id = ANY(%s)",
        (retry_seconds, bundle_ids),
    )


async def let_go(conn: Conn, bundle_id: str) -> None:
    """Drop the claim on a bundle that went away after it was claimed (as enrichments.let_go)."""
    await conn.execute(
        "UPDATE bundles SET analysis_claimed_until = NULL, analysis_claimed_by = NULL WHERE id = %s", (bundle_id,)
    )


async def analysis_input(conn: Conn, bundle_id: str) -> dict[str, Any] | None:
    """The bundle, the hash of its input, and its public members with their enrichments."""
    bundle = await (
        await conn.execute(
            "SELECT id, title, description, bundle_analysis_hash(id) AS input_hash FROM bundles"
            " WHERE id = %s AND deleted_at IS NULL",
            (bundle_id,),
        )
    ).fetchone()
    if bundle is None:
        return None
    bundle["members"] = await (
        await conn.execute(
            """SELECT d.id, d.title, e.data FROM bundle_docs bd JOIN docs d ON d.id = bd.doc_id
           LEFT JOIN enrichments e ON e.doc_id = d.id AND e.source_hash = d.source_hash
           WHERE bd.bundle_id = %s AND doc_is_public(d) ORDER BY bd.position""",
            (bundle_id,),
        )
    ).fetchall()
    return bundle


async def write(conn: Conn, bundle_id: str, input_hash: str, member_ids: list[str], analysis: dict[str, Any]) -> bool:
    """Store the analysis if the bundle's input is still what it was computed from."""
    async with conn.transaction():
        row = await (
            await conn.execute(
                "SELECT bundle_analysis_hash(id) AS h FROM bundles WHERE id = %s FOR NO KEY UPDATE", (bundle_id,)
            )
        ).fetchone()
        await let_go(conn, bundle_id)
        if row is None or row["h"] != input_hash:
            return False
        await conn.execute(
            """INSERT INTO bundle_analyses (bundle_id, input_hash, member_ids, mode, model, data, missing,
                                            calls, prompt_tokens, completion_tokens)
               VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s)
               ON CONFLICT (bundle_id) DO UPDATE SET input_hash = EXCLUDED.input_hash,
                   member_ids = EXCLUDED.member_ids, mode = EXCLUDED.mode, model = EXCLUDED.model,
                   data = EXCLUDED.data, missing = EXCLUDED.missing, calls = EXCLUDED.calls,
                   prompt_tokens = EXCLUDED.prompt_tokens, completion_tokens = EXCLUDED.completion_tokens,
                   updated_at = now()""",
            (
                bundle_id,
                input_hash,
                member_ids,
                analysis["mode"],
                analysis.get("model"),
                Jsonb(analysis["data"]),
                analysis.get("missing") or [],
                analysis.get("calls", 0),
                analysis.get("prompt_tokens", 0),
                analysis.get("completion_tokens", 0),
            ),
        )
    return True


async def for_bundle(conn: Conn, bundle_id: str) -> dict[str, Any] | None:
    """The stored analysis (on the public pool: only while its members are all public)."""
    return await (
        await conn.execute(
            "SELECT mode, model, data, missing, member_ids, updated_at FROM bundle_analyses WHERE bundle_id = %s",
            (bundle_id,),
        )
    ).fetchone()


async def owed_count(conn: Conn) -> int:
    row = await one_row(
        conn,
        """SELECT count(*) AS n FROM bundles b LEFT JOIN bundle_analyses a ON a.bundle_id = b.id
           WHERE b.deleted_at IS NULL AND bundle_analysis_hash(b.id) IS DISTINCT FROM a.input_hash""",
    )
    return int(row["n"])
