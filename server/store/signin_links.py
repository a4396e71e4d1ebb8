"""SQL for mailed sign-in links (migrations/0101_signin_links.sql): ask for one, use one.
A link's secret arrives here only as its sha256."""

from __future__ import annotations

from typing import Any

import psycopg

# One statement whether or not the address is on the page's list: it finds the page, and
# inserts the link and its mail only for a listed address of a page only people may read.
# Listed or not, the caller does the same work and gets back the same kind of answer.
REQUEST = """
WITH page AS (
    SELECT d.id, d.hub_id FROM docs d
    WHERE d.id = %(doc)s AND d.hub_id IS NOT NULL AND d.deleted_at IS NULL AND doc_visibility(d) = 'people'
      AND lower(%(email)s) IN (SELECT lower(e) FROM unnest(d.allowed_emails) AS e)
), link AS (
    INSERT INTO signin_links (secret_hash, hub_id, doc_id, email, expires_at)
    SELECT %(hash)s, hub_id, id, %(email)s, now() + make_interval(secs => %(seconds)s) FROM page
    RETURNING email
)
INSERT INTO mail_outbox (recipient, subject, body)
SELECT email, %(subject)s, %(body)s FROM link
RETURNING id
"""


async def request(
    conn: psycopg.AsyncConnection, *, doc_id: str, email: str, secret_hash: str, seconds: int, subject: str, body: str
) -> bool:
    """Keep a link and queue its mail if `email` may read the doc; whether it did."""
    cur = await conn.execute(
        REQUEST,
        {"doc": doc_id, "email": email, "hash": secret_hash, "seconds": seconds, "subject": subject, "body": body},
    )
    return await cur.fetchone() is not None


# The link, stamped used in the same statement that reads it, so two browsers racing with
# one link cannot both get in; `used_before` and `expired` say why a refused link opens nothing.
USE = """
WITH found AS (
    SELECT secret_hash, used_at IS NOT NULL AS used_before, expires_at <= now() AS expired
    FROM signin_links WHERE secret_hash = %(hash)s AND doc_id = %(doc)s FOR UPDATE
), stamped AS (
    UPDATE signin_links l SET used_at = now() FROM found f
    WHERE l.secret_hash = f.secret_hash AND NOT f.used_before AND NOT f.expired
    RETURNING l.hub_id, l.email
)
SELECT f.used_before, f.expired, s.hub_id, s.email,
       (SELECT slug FROM hubs WHERE id = s.hub_id) AS hub_slug,
       EXISTS (SELECT 1 FROM docs d WHERE d.id = %(doc)s AND d.hub_id = s.hub_id AND d.deleted_at IS NULL
                 AND doc_visibility(d) = 'people'
                 AND lower(s.email) IN (SELECT lower(e) FROM unnest(d.allowed_emails) AS e)) AS still_listed
FROM found f LEFT JOIN stamped s ON true
"""


async def use(conn: psycopg.AsyncConnection, secret_hash: str, doc_id: str) -> dict[str, Any] | None:
    """{"used_before", "expired", "hub_id", "email", "hub_slug", "still_listed"} of the link
    (now used up), or None for a link this server never mailed for this doc."""
    return await (await conn.execute(USE, {"hash": secret_hash, "doc": doc_id})).fetchone()


async def reader_email(conn: psycopg.AsyncConnection, doc_id: str, session_hashes: list[str]) -> str | None:
    """The address of a live reader session among these that may read the doc now
    (reader_email(), functions/80_readers.sql), or None."""
    if not session_hashes:
        return None
    row = await (await conn.execute("SELECT reader_email(%s, %s) AS email", (doc_id, session_hashes))).fetchone()
    return row["email"]


async def people_only(conn: psycopg.AsyncConnection, doc_id: str) -> bool | None:
    """Whether a live doc that only its listed people read is in a hub (where a reader can
    sign in); None when the doc is no such doc."""
    row = await (
        await conn.execute(
            "SELECT hub_id IS NOT NULL AS in_hub FROM docs d WHERE id = %s AND deleted_at IS NULL"
            " AND doc_visibility(d) = 'people'",
            (doc_id,),
        )
    ).fetchone()
    return row["in_hub"] if row else None


# The addresses a page is shared with that were never told: only while the page can open to
# them (live, in a hub, read by its listed people only), each address once whatever its case.
UNINVITED = """
SELECT DISTINCT ON (lower(e)) e AS email
FROM docs d, unnest(d.allowed_emails) AS e
WHERE d.id = %s AND d.hub_id IS NOT NULL AND d.deleted_at IS NULL AND doc_visibility(d) = 'people'
  AND NOT EXISTS (SELECT 1 FROM doc_invitations i WHERE i.doc_id = d.id AND i.email = lower(e))
ORDER BY lower(e)
"""

# Record that the address was told; RETURNING nothing when a concurrent save told it first.
RECORD_INVITATION = """
INSERT INTO doc_invitations (doc_id, email, mailed) VALUES (%s, lower(%s), %s)
ON CONFLICT DO NOTHING RETURNING email
"""

# The sign-in link and its mail, as REQUEST makes them, for an address just recorded as told.
INVITE = """
WITH link AS (
    INSERT INTO signin_links (secret_hash, hub_id, doc_id, email, expires_at)
    SELECT %(hash)s, d.hub_id, d.id, %(email)s, now() + make_interval(secs => %(seconds)s)
    FROM docs d WHERE d.id = %(doc)s
    RETURNING email
)
INSERT INTO mail_outbox (recipient, subject, body)
SELECT email, %(subject)s, %(body)s FROM link
RETURNING id
"""


async def uninvited(conn: psycopg.AsyncConnection, doc_id: str) -> list[str]:
    """The listed addresses of the doc never told it is shared with them (none unless the
    doc can open to them now)."""
    return [r["email"] for r in await (await conn.execute(UNINVITED, (doc_id,))).fetchall()]


async def record_invitation(conn: psycopg.AsyncConnection, doc_id: str, email: str, *, mailed: bool) -> bool:
    """Mark the address told; False when it already was."""
    return await (await conn.execute(RECORD_INVITATION, (doc_id, email, mailed))).fetchone() is not None


async def queue_invitation(
    conn: psycopg.AsyncConnection, *, doc_id: str, email: str, secret_hash: str, seconds: int, subject: str, body: str
) -> None:
    """Keep a sign-in link for the address and queue its mail."""
    await conn.execute(
        INVITE,
        {"doc": doc_id, "email": email, "hash": secret_hash, "seconds": seconds, "subject": subject, "body": body},
    )
