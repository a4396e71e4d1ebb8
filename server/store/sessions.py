"""SQL for browser sessions: open one, revoke some, and what a browser's sessions are worth
for a hub (migrations/0070_sessions.sql). Session ids arrive here only as their sha256."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from .connection import Conn, one_row

OPEN = """
INSERT INTO sessions (id_hash, hub_id, kind, email, expires_at)
VALUES (%(id_hash)s, %(hub)s, %(kind)s, %(email)s, now() + make_interval(secs => %(seconds)s))
RETURNING expires_at
"""


async def open_session(
    conn: Conn, id_hash: str, hub_id: int, kind: str, *, seconds: int, email: str | None = None
) -> datetime:
    """A new session of this kind for the hub; when it expires."""
    row = await one_row(
        conn, OPEN, {"id_hash": id_hash, "hub": hub_id, "kind": kind, "email": email, "seconds": seconds}
    )
    expires: datetime = row["expires_at"]
    return expires


async def revoke(conn: Conn, hub_id: int, id_hashes: list[str]) -> int:
    """End these sessions of the hub (signing out, or in again); how many were live."""
    cur = await conn.execute(
        "UPDATE sessions SET revoked_at = now() WHERE hub_id = %s AND id_hash = ANY(%s) AND revoked_at IS NULL",
        (hub_id, id_hashes),
    )
    return cur.rowcount


# The most telling session a browser holds for a hub: a live one first (the owner's before
# any other kind), else one that ended, so a refusal can say it ended and why.
FOR_HUB = """
SELECT kind, email, expires_at, revoked_at IS NULL AND expires_at > now() AS live,
       CASE WHEN revoked_at IS NOT NULL THEN 'signed_out' WHEN expires_at <= now() THEN 'expired' END AS ended
FROM sessions
WHERE hub_id = %s AND id_hash = ANY(%s)
ORDER BY (revoked_at IS NULL AND expires_at > now()) DESC, (kind = 'owner') DESC, created_at DESC
LIMIT 1
"""


async def for_hub(conn: Conn, hub_id: int, id_hashes: list[str]) -> dict[str, Any] | None:
    """{"kind", "email", "expires_at", "live", "ended"} of the browser's session for the hub, or None."""
    if not id_hashes:
        return None
    return await (await conn.execute(FOR_HUB, (hub_id, id_hashes))).fetchone()


async def live(conn: Conn, id_hashes: list[str]) -> set[str]:
    """Which of these sessions (any hub) are still live: what a browser's cookie keeps."""
    if not id_hashes:
        return set()
    rows = await (
        await conn.execute(
            "SELECT id_hash FROM sessions WHERE id_hash = ANY(%s) AND revoked_at IS NULL AND expires_at > now()",
            (id_hashes,),
        )
    ).fetchall()
    return {r["id_hash"] for r in rows}


async def owns(conn: Conn, hub_id: int, token_hash: str | None, id_hashes: list[str]) -> bool:
    """Whether the owner token or one of the sessions owns the hub (hub_owned(), 70_owner.sql)."""
    row = await one_row(conn, "SELECT hub_owned(%s, %s, %s) AS owned", (hub_id, token_hash, id_hashes))
    return bool(row["owned"])
