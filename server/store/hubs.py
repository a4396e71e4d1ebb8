"""SQL for hubs: create one, find one by slug, check its owner, list its public contents."""

from __future__ import annotations

from typing import Any

from .connection import Conn, one_row


async def create_hub(conn: Conn, slug: str, owner_token_hash: str) -> int | None:
    """The new hub's id, or None when the slug is taken."""
    row = await (
        await conn.execute(
            "INSERT INTO hubs (slug, owner_token_hash) VALUES (%s, %s) ON CONFLICT (slug) DO NOTHING RETURNING id",
            (slug, owner_token_hash),
        )
    ).fetchone()
    return row["id"] if row else None


async def find_hub(conn: Conn, slug: str) -> dict[str, Any] | None:
    """{"id", "slug", "listed", "description"} of the hub, or None. Reads only public
    columns, so either pool works."""
    if "\x00" in slug:  # a URL may carry a NUL, a slug never does (PostgreSQL text cannot hold one)
        return None
    return await (
        await conn.execute("SELECT id, slug, listed, description FROM hubs WHERE slug = %s", (slug,))
    ).fetchone()


async def update_hub(
    conn: Conn,
    hub_id: int,
    *,
    listed: bool | None,
    description: str | None,
    redact_secrets: bool | None = None,
) -> dict[str, Any]:
    """Set what the owner changed (None: unchanged); the hub as it is now."""
    return await one_row(
        conn,
        "UPDATE hubs SET listed = coalesce(%s, listed), description = coalesce(%s, description),"
        " redact_secrets = coalesce(%s, redact_secrets)"
        " WHERE id = %s RETURNING id, slug, listed, description, redact_secrets",
        (listed, description, redact_secrets, hub_id),
    )


async def redacts_secrets(conn: Conn, hub_id: int | None) -> bool:
    """Whether writes into the hub are redacted (a page in no hub always is). Owner pool only."""
    if hub_id is None:
        return True
    row = await (await conn.execute("SELECT redact_secrets FROM hubs WHERE id = %s", (hub_id,))).fetchone()
    return True if row is None else bool(row["redact_secrets"])


# The listed hubs with their public page counts (run on the public pool: the counts are of
# what row-level security lets the public see).
LISTED = """
SELECT h.slug, h.description,
       (SELECT count(*) FROM docs d WHERE d.hub_id = h.id) AS docs,
       (SELECT max(d.updated_at) FROM docs d WHERE d.hub_id = h.id) AS updated_at
FROM hubs h
WHERE h.listed
ORDER BY h.slug
"""


async def listed_hubs(conn: Conn) -> list[dict[str, Any]]:
    return await (await conn.execute(LISTED)).fetchall()


# The hub and the recorded embedding space (model and dim None before the first vector): recall
# needs both for every question. A hybrid recall reads it with full text's pool (recall.HUB_AND_FULLTEXT).
HUB_FOR_RECALL = (
    "SELECT h.id, h.slug, s.model, s.dim FROM hubs h LEFT JOIN embedding_space s ON true WHERE h.slug = %(slug)s"
)


async def find_hub_for_recall(conn: Conn, slug: str) -> dict[str, Any] | None:
    """{"id", "slug", "model", "dim"} in one round trip (HUB_FOR_RECALL)."""
    return await (await conn.execute(HUB_FOR_RECALL, {"slug": slug})).fetchone()


# The hub and what a bearer token is to it, in one round trip: its owner's, a live member's
# (hub_members, migrations/0100_members.sql), or neither.
HUB_FOR_TOKEN = """
SELECT h.id, h.slug, h.listed, h.description,
       h.owner_token_hash = %(token)s AS is_owner, m.id AS member_id, m.name AS member_name
FROM hubs h
LEFT JOIN hub_members m ON m.hub_id = h.id AND m.token_hash = %(token)s AND m.revoked_at IS NULL
WHERE h.slug = %(slug)s
"""


async def find_hub_for_token(conn: Conn, slug: str, token_hash: str) -> dict[str, Any] | None:
    """find_hub's columns, plus "is_owner", "member_id" and "member_name" for the token whose
    sha256 is `token_hash`; None when there is no such hub."""
    if "\x00" in slug:
        return None
    return await (await conn.execute(HUB_FOR_TOKEN, {"slug": slug, "token": token_hash})).fetchone()


async def is_owner(conn: Conn, hub_id: int, token_hash: str) -> bool:
    row = await (
        await conn.execute("SELECT 1 FROM hubs WHERE id = %s AND owner_token_hash = %s", (hub_id, token_hash))
    ).fetchone()
    return row is not None


async def hub_slug(conn: Conn, hub_id: int | None) -> str | None:
    if hub_id is None:
        return None
    row = await (await conn.execute("SELECT slug FROM hubs WHERE id = %s", (hub_id,))).fetchone()
    return row["slug"] if row else None


# Newest first; the id breaks ties, so pages never repeat or skip a doc.
HUB_DOCS = """
SELECT d.id, d.title, d.updated_at, left(d.markdown, 2000) AS head
FROM docs d
WHERE d.hub_id = %s
ORDER BY d.updated_at DESC, d.id
LIMIT %s OFFSET %s
"""

HUB_DOC_COUNT = "SELECT count(*) AS n FROM docs d WHERE d.hub_id = %s"

HUB_BUNDLES = """
SELECT b.id, b.title, b.description, b.updated_at
FROM bundles b
WHERE b.hub_id = %s
ORDER BY b.updated_at DESC
"""


async def hub_contents(
    conn: Conn, hub_id: int, *, limit: int | None = None, offset: int = 0
) -> tuple[list[dict[str, Any]], int, list[dict[str, Any]]]:
    """One page of the hub's docs (newest first, with the head of their markdown; all of them
    when `limit` is None), how many docs it has, and its bundles. Run on the public pool,
    row-level security leaves only what the public may see."""
    docs = await (await conn.execute(HUB_DOCS, (hub_id, limit, offset))).fetchall()
    total = int((await one_row(conn, HUB_DOC_COUNT, (hub_id,)))["n"])
    bundles = await (await conn.execute(HUB_BUNDLES, (hub_id,))).fetchall()
    return docs, total, bundles


# The full text of every public doc, oldest first, a batch at a time (llms-full.txt).
HUB_FULL_BATCH = """
SELECT d.id, d.title, d.markdown, d.source, d.meta, d.created_at, d.updated_at
FROM docs d
WHERE d.hub_id = %(hub)s AND (d.created_at, d.id) > (%(after_at)s, %(after_id)s)
ORDER BY d.created_at, d.id
LIMIT %(limit)s
"""


async def hub_docs_batch(
    conn: Conn, hub_id: int, after: tuple[Any, str] | None, limit: int = 100
) -> list[dict[str, Any]]:
    """The next `limit` public docs after `after` ((created_at, id) of the last one read)."""
    after_at, after_id = after or ("-infinity", "")
    return await (
        await conn.execute(HUB_FULL_BATCH, {"hub": hub_id, "after_at": after_at, "after_id": after_id, "limit": limit})
    ).fetchall()


# The owner's view of a hub. Every statement proves the credential itself (hub_owned(), in
# functions/70_owner.sql): run without the owner's token or session, it reads nothing.
OWNER_DOCS = """
SELECT d.id, d.title, d.updated_at, left(d.markdown, 2000) AS head, doc_visibility(d) AS visibility,
       d.allowed_emails
FROM docs d
WHERE d.hub_id = %(hub)s AND d.deleted_at IS NULL AND hub_owned(%(hub)s, %(token)s, %(sessions)s)
ORDER BY d.updated_at DESC, d.id
LIMIT %(limit)s OFFSET %(offset)s
"""

OWNER_COUNTS = """
SELECT count(*) FILTER (WHERE d.deleted_at IS NULL) AS live, count(*) FILTER (WHERE d.deleted_at IS NOT NULL) AS trash
FROM docs d
WHERE d.hub_id = %(hub)s AND hub_owned(%(hub)s, %(token)s, %(sessions)s)
"""

OWNER_BUNDLES = """
SELECT b.id, b.title, b.description, b.updated_at, bundle_is_public(b) AS public
FROM bundles b
WHERE b.hub_id = %(hub)s AND b.deleted_at IS NULL AND hub_owned(%(hub)s, %(token)s, %(sessions)s)
ORDER BY b.updated_at DESC
"""

TRASH = """
SELECT d.id, d.title, d.deleted_at, d.updated_at, d.version, doc_visibility(d) AS visibility
FROM docs d
WHERE d.hub_id = %(hub)s AND d.deleted_at IS NOT NULL AND hub_owned(%(hub)s, %(token)s, %(sessions)s)
ORDER BY d.deleted_at DESC, d.id
LIMIT %(limit)s OFFSET %(offset)s
"""


def _proof(
    hub_id: int, token_hash: str | None, session_hashes: list[str], limit: int | None = None, offset: int = 0
) -> dict[str, Any]:
    return {"hub": hub_id, "token": token_hash, "sessions": session_hashes, "limit": limit, "offset": offset}


async def owner_contents(
    conn: Conn,
    hub_id: int,
    token_hash: str | None,
    session_hashes: list[str],
    *,
    limit: int | None = None,
    offset: int = 0,
) -> tuple[list[dict[str, Any]], int, int, list[dict[str, Any]]]:
    """One page of the hub's live docs, drafts and private ones included, each with its
    visibility (all of them when `limit` is None); how many live docs and how many in the
    trash; and its bundles. Nothing at all unless the token or a session owns the hub."""
    proof = _proof(hub_id, token_hash, session_hashes, limit, offset)
    docs = await (await conn.execute(OWNER_DOCS, proof)).fetchall()
    live, in_trash = await owner_counts(conn, hub_id, token_hash, session_hashes)
    bundles = await (await conn.execute(OWNER_BUNDLES, proof)).fetchall()
    return docs, live, in_trash, bundles


async def owner_counts(conn: Conn, hub_id: int, token_hash: str | None, session_hashes: list[str]) -> tuple[int, int]:
    """How many live docs the hub has and how many are in its trash (0, 0 without the owner's proof)."""
    counts = await one_row(conn, OWNER_COUNTS, _proof(hub_id, token_hash, session_hashes))
    return counts["live"], counts["trash"]


async def trash(
    conn: Conn,
    hub_id: int,
    token_hash: str | None,
    session_hashes: list[str],
    *,
    limit: int,
    offset: int = 0,
) -> list[dict[str, Any]]:
    """One page of the hub's deleted docs, newest deletion first (nothing without the owner's proof)."""
    return await (await conn.execute(TRASH, _proof(hub_id, token_hash, session_hashes, limit, offset))).fetchall()
