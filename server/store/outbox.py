"""SQL for the mail outbox (migrations/0101_signin_links.sql): take the mails that are due,
record how a delivery went, and the counts /healthz shows (never an address or a body)."""

from __future__ import annotations

from typing import Any

from .connection import Conn, one_row

# Due mails, each leased for `lease` seconds so another server draining the same database
# leaves it alone while this one delivers it (a crash mid-delivery retries after the lease).
TAKE = """
WITH due AS (
    SELECT id FROM mail_outbox
    WHERE sent_at IS NULL AND failed_at IS NULL AND next_attempt_at <= now()
    ORDER BY next_attempt_at, id LIMIT %(limit)s FOR UPDATE SKIP LOCKED
)
UPDATE mail_outbox m SET next_attempt_at = now() + make_interval(secs => %(lease)s)
FROM due WHERE m.id = due.id
RETURNING m.id, m.recipient, m.subject, m.body, m.attempts
"""


async def take_due(conn: Conn, limit: int, lease: float) -> list[dict[str, Any]]:
    return await (await conn.execute(TAKE, {"limit": limit, "lease": lease})).fetchall()


async def sent(conn: Conn, mail_id: int) -> None:
    """Delivered: the body (it holds a sign-in link) is blanked at once."""
    await conn.execute(
        "UPDATE mail_outbox SET sent_at = now(), body = '', attempts = attempts + 1 WHERE id = %s", (mail_id,)
    )


async def failed(conn: Conn, mail_id: int, error: str, *, retry_in: float | None) -> None:
    """A delivery failed: try again in `retry_in` seconds, or (None) give the mail up, blanking its body."""
    await conn.execute(
        "UPDATE mail_outbox SET attempts = attempts + 1, last_error = %(error)s, last_error_at = now(),"
        " next_attempt_at = now() + make_interval(secs => coalesce(%(retry)s, 0)),"
        " failed_at = CASE WHEN %(retry)s IS NULL THEN now() END,"
        " body = CASE WHEN %(retry)s IS NULL THEN '' ELSE body END WHERE id = %(id)s",
        {"id": mail_id, "error": error, "retry": retry_in},
    )


STATS = """
SELECT count(*) FILTER (WHERE sent_at IS NOT NULL) AS sent,
       count(*) FILTER (WHERE sent_at IS NULL AND failed_at IS NULL) AS pending,
       count(*) FILTER (WHERE sent_at IS NULL AND failed_at IS NULL AND attempts > 0) AS retrying,
       count(*) FILTER (WHERE failed_at IS NOT NULL) AS failed,
       (SELECT last_error FROM mail_outbox WHERE last_error IS NOT NULL
        ORDER BY last_error_at DESC, id DESC LIMIT 1) AS last_error
FROM mail_outbox
"""


async def stats(conn: Conn) -> dict[str, Any]:
    return dict(await one_row(conn, STATS))
