"""SQL for suggested bundles: which hubs owe a recompute, storing groups, accepting one."""

from __future__ import annotations

from typing import Any

from .connection import Conn, one_row

LEASE = "10 minutes"

# Owed: marks past suggested_mark, the newest older than the debounce (the hub has settled).
CLAIM = f"""
UPDATE hubs SET suggest_claimed_until = now() + interval '{LEASE}', suggest_claimed_by = %(worker)s
WHERE id IN (
    SELECT t.id FROM hubs t
    JOIN (SELECT hub_id, max(marked_at) AS last FROM curation_marks GROUP BY hub_id) m ON m.hub_id = t.id
    WHERE EXISTS (SELECT 1 FROM curation_marks c WHERE c.hub_id = t.id AND c.id > t.suggested_mark)
      AND m.last <= now() - make_interval(secs => %(debounce)s)
      AND (t.suggest_claimed_until IS NULL OR t.suggest_claimed_until < now()
           OR NOT EXISTS (SELECT 1 FROM pg_stat_activity a WHERE a.pid = t.suggest_claimed_by))
    ORDER BY m.last
    LIMIT %(limit)s
    FOR NO KEY UPDATE OF t SKIP LOCKED)
RETURNING id, slug, (SELECT max(id) FROM curation_marks WHERE hub_id = hubs.id) AS mark
"""


async def claim_owed(conn: Conn, *, worker: int, limit: int, debounce: float) -> list[dict[str, Any]]:
    return await (await conn.execute(CLAIM, {"worker": worker, "limit": limit, "debounce": debounce})).fetchall()


async def release(conn: Conn, hub_ids: list[int], retry_seconds: float) -> None:
    await conn.execute(
        "UPDATE hubs SET suggest_claimed_until = now() + make_interval(secs => %s) WHERE id = ANY(%s)",
        (retry_seconds, hub_ids),
    )


async def known(conn: Conn, hub_id: int) -> dict[str, dict[str, Any]]:
    """Stored suggestions by signature (any status), so a group keeps its id and name."""
    rows = await (
        await conn.execute(
            "SELECT id, signature, title, description, status, mode FROM bundle_suggestions WHERE hub_id = %s",
            (hub_id,),
        )
    ).fetchall()
    return {r["signature"]: r for r in rows}


async def replace_open(conn: Conn, hub_id: int, mark: int, groups: list[dict[str, Any]]) -> None:
    """Make the hub's open suggestions exactly `groups` (each: id, signature, title,
    description, doc_ids, mode); accepted and dismissed ones are kept as history."""
    async with conn.transaction():
        signatures = [g["signature"] for g in groups]
        await conn.execute(
            "DELETE FROM bundle_suggestions WHERE hub_id = %s AND status = 'open' AND NOT (signature = ANY(%s))",
            (hub_id, signatures),
        )
        async with conn.cursor() as cur:
            await cur.executemany(
                """INSERT INTO bundle_suggestions (id, hub_id, signature, title, description, doc_ids, mode)
                   VALUES (%(id)s, %(hub)s, %(signature)s, %(title)s, %(description)s, %(doc_ids)s, %(mode)s)
                   ON CONFLICT (hub_id, signature) DO UPDATE SET doc_ids = EXCLUDED.doc_ids,
                       updated_at = CASE WHEN bundle_suggestions.doc_ids = EXCLUDED.doc_ids
                                         THEN bundle_suggestions.updated_at ELSE now() END""",
                [{**g, "hub": hub_id} for g in groups],
            )
        # Marks made while this ran are past `mark`: the hub stays owed for them.
        await conn.execute(
            """UPDATE hubs SET suggested_mark = %s, suggest_claimed_until = NULL, suggest_claimed_by = NULL
               WHERE id = %s""",
            (mark, hub_id),
        )
        await conn.execute("DELETE FROM curation_marks WHERE hub_id = %s AND id <= %s", (hub_id, mark))


# Open suggestions whose docs are still not bundled together (a bundle made since holds
# them all: no longer offered). Run on the public pool, RLS hides any with a private doc.
OPEN = """
SELECT s.id, s.title, s.description, s.doc_ids, s.mode, s.created_at
FROM bundle_suggestions s
WHERE s.hub_id = %s AND s.status = 'open'
  AND NOT EXISTS (
      SELECT 1 FROM bundles b
      WHERE b.hub_id = s.hub_id
        AND s.doc_ids <@ ARRAY(SELECT bd.doc_id FROM bundle_docs bd WHERE bd.bundle_id = b.id))
ORDER BY cardinality(s.doc_ids) DESC, s.created_at, s.id
"""


async def open_for_hub(conn: Conn, hub_id: int) -> list[dict[str, Any]]:
    return await (await conn.execute(OPEN, (hub_id,))).fetchall()


async def lock_open(conn: Conn, hub_id: int, suggestion_id: str) -> dict[str, Any] | None:
    return await (
        await conn.execute(
            """SELECT id, title, description, doc_ids, status, bundle_id FROM bundle_suggestions
           WHERE id = %s AND hub_id = %s FOR UPDATE""",
            (suggestion_id, hub_id),
        )
    ).fetchone()


async def public_members(conn: Conn, hub_id: int, doc_ids: list[str]) -> list[str]:
    """The suggested docs that are still live, public and in the hub, in the suggested order."""
    rows = await (
        await conn.execute(
            """SELECT m.id FROM unnest(%s::text[]) WITH ORDINALITY AS m(id, n) JOIN docs d ON d.id = m.id
           WHERE doc_is_public(d) AND d.hub_id = %s ORDER BY m.n""",
            (doc_ids, hub_id),
        )
    ).fetchall()
    return [r["id"] for r in rows]


async def mark_accepted(conn: Conn, suggestion_id: str, bundle_id: str) -> None:
    await conn.execute(
        "UPDATE bundle_suggestions SET status = 'accepted', bundle_id = %s, updated_at = now() WHERE id = %s",
        (bundle_id, suggestion_id),
    )


async def mark_dismissed(conn: Conn, suggestion_id: str) -> None:
    await conn.execute(
        "UPDATE bundle_suggestions SET status = 'dismissed', updated_at = now() WHERE id = %s", (suggestion_id,)
    )


OWED_COUNT = """
SELECT count(*) AS n FROM hubs h
WHERE EXISTS (SELECT 1 FROM curation_marks c WHERE c.hub_id = h.id AND c.id > h.suggested_mark)
"""


async def owed_count(conn: Conn) -> int:
    row = await one_row(conn, OWED_COUNT)
    return int(row["n"])
