"""SQL for bundles: a curated reading order of a hub's docs, embedded as one vector."""

from __future__ import annotations

from typing import Any

import psycopg
from memorywiki.formats.hubfolder import own_id
from psycopg import sql

from .docs import SAVE_LOCK

# The hash of what the bundle's vector is made from; the indexer compares it with embedded_hash.
SET_SOURCE_HASH = "UPDATE bundles SET source_hash = bundle_source_hash(id) WHERE id = %s"

EDITABLE = ("title", "description")


async def insert_bundle(
    conn: psycopg.AsyncConnection,
    bundle_id: str,
    hub_id: int,
    title: str,
    description: str,
    doc_ids: list[str],
    external_id: str | None = None,
    dates: dict[str, Any] | None = None,
) -> None:
    """`dates` ("created_at", "updated_at"): an import's, else now (as store/docs.py's insert_doc)."""
    made, changed = (dates or {}).get("created_at"), (dates or {}).get("updated_at")
    await conn.execute(
        "INSERT INTO bundles (id, hub_id, title, description, external_id, created_at, updated_at)"
        " VALUES (%s, %s, %s, %s, %s, coalesce(%s::timestamptz, %s::timestamptz, now()),"
        " coalesce(%s::timestamptz, now()))",
        (bundle_id, hub_id, title, description, external_id, made, changed, changed),
    )
    await replace_members(conn, bundle_id, doc_ids)
    await conn.execute(SET_SOURCE_HASH, (bundle_id,))


async def not_in_hub(conn: psycopg.AsyncConnection, hub_id: int, doc_ids: list[str]) -> set[str]:
    """The ids that are not live docs of this hub."""
    found = await (
        await conn.execute(
            "SELECT id FROM docs WHERE id = ANY(%s) AND hub_id = %s AND deleted_at IS NULL", (doc_ids, hub_id)
        )
    ).fetchall()
    return set(doc_ids) - {r["id"] for r in found}


async def replace_members(conn: psycopg.AsyncConnection, bundle_id: str, doc_ids: list[str]) -> None:
    await conn.execute("DELETE FROM bundle_docs WHERE bundle_id = %s", (bundle_id,))
    async with conn.cursor() as cur:
        await cur.executemany(
            "INSERT INTO bundle_docs (bundle_id, doc_id, position) VALUES (%s, %s, %s)",
            [(bundle_id, doc_id, i) for i, doc_id in enumerate(doc_ids)],
        )


async def lock_bundle(conn: psycopg.AsyncConnection, bundle_id: str) -> dict[str, Any] | None:
    """{"id", "hub_id", "slug"} of a live bundle, row-locked for this transaction."""
    return await (
        await conn.execute(
            "SELECT b.id, b.hub_id, h.slug FROM bundles b JOIN hubs h ON h.id = b.hub_id"
            " WHERE b.id = %s AND b.deleted_at IS NULL FOR UPDATE OF b",
            (bundle_id,),
        )
    ).fetchone()


async def find_bundle_hub(conn: psycopg.AsyncConnection, bundle_id: str) -> dict[str, Any] | None:
    """{"id", "hub_id", "slug"} of a live bundle."""
    return await (
        await conn.execute(
            "SELECT b.id, b.hub_id, h.slug FROM bundles b JOIN hubs h ON h.id = b.hub_id"
            " WHERE b.id = %s AND b.deleted_at IS NULL",
            (bundle_id,),
        )
    ).fetchone()


async def update_bundle(
    conn: psycopg.AsyncConnection,
    bundle_id: str,
    changes: dict[str, Any],
    doc_ids: list[str] | None,
    dates: dict[str, Any] | None = None,
) -> None:
    """Apply title/description changes and, when given, a new member list; bump the version
    (dated now, or by an import's `dates`)."""
    fields = {k: v for k, v in changes.items() if k in EDITABLE}
    if (dates or {}).get("created_at") is not None:
        fields["created_at"] = dates["created_at"]
    assignments = [sql.SQL("{} = {}").format(sql.Identifier(k), sql.Placeholder(k)) for k in fields]
    assignments.append(sql.SQL("version = version + 1, updated_at = coalesce(%(updated_at)s::timestamptz, now())"))
    await conn.execute(
        sql.SQL("UPDATE bundles SET {} WHERE id = %(bundle_id)s").format(sql.SQL(", ").join(assignments)),
        {**fields, "bundle_id": bundle_id, "updated_at": (dates or {}).get("updated_at")},
    )
    if doc_ids is not None:
        await replace_members(conn, bundle_id, doc_ids)
    await conn.execute(SET_SOURCE_HASH, (bundle_id,))


async def delete_bundle(conn: psycopg.AsyncConnection, bundle_id: str) -> None:
    """Soft delete: the bundle leaves every read at once (row-level security and every owner
    query skip deleted bundles); its members and their order stay with the row. The hub's
    suggestions are marked owed, since a group this bundle held may be offered again."""
    row = await (
        await conn.execute(
            "UPDATE bundles SET deleted_at = now(), version = version + 1, updated_at = now()"
            " WHERE id = %s AND deleted_at IS NULL RETURNING hub_id",
            (bundle_id,),
        )
    ).fetchone()
    if row is not None:
        await conn.execute("SELECT curation_mark_hub(%s)", (row["hub_id"],))


BUNDLE = """
SELECT b.id, b.title, b.description, b.updated_at, h.slug AS hub_slug
FROM bundles b JOIN hubs h ON h.id = b.hub_id WHERE b.id = %s
"""

MEMBERS = """
SELECT d.id AS doc_id, d.id, d.title, d.markdown, d.source, d.meta, d.updated_at, h.slug AS hub_slug
FROM bundle_docs bd
JOIN docs d ON d.id = bd.doc_id
LEFT JOIN hubs h ON h.id = d.hub_id
WHERE bd.bundle_id = %s
ORDER BY bd.position
"""


async def public_bundle(conn: psycopg.AsyncConnection, bundle_id: str) -> tuple[dict | None, list[dict]]:
    """The bundle and its members in reading order. Run on the public pool, row-level
    security leaves out deleted bundles and private members."""
    bundle = await (await conn.execute(BUNDLE, (bundle_id,))).fetchone()
    if bundle is None:
        return None, []
    members = await (await conn.execute(MEMBERS, (bundle_id,))).fetchall()
    return bundle, members


CONTAINING = """
SELECT b.id, b.title, b.description
FROM bundle_docs bd JOIN bundles b ON b.id = bd.bundle_id
WHERE bd.doc_id = %s
ORDER BY b.title, b.id
"""


async def bundles_containing(conn: psycopg.AsyncConnection, doc_id: str) -> list[dict[str, Any]]:
    """The live bundles a doc is a member of (public pool: none for a private doc)."""
    return await (await conn.execute(CONTAINING, (doc_id,))).fetchall()


# The bundle as its owner edits it: every live member, private ones included, with its
# visibility; nothing unless the token or a session owns the bundle's hub (hub_owned()).
OWNER_BUNDLE = """
SELECT b.id, b.hub_id, b.title, b.description, b.updated_at, h.slug AS hub_slug
FROM bundles b JOIN hubs h ON h.id = b.hub_id
WHERE b.id = %(bundle)s AND b.deleted_at IS NULL AND hub_owned(b.hub_id, %(token)s, %(sessions)s)
"""

OWNER_MEMBERS = """
SELECT d.id, d.title, doc_visibility(d) AS visibility
FROM bundle_docs bd JOIN docs d ON d.id = bd.doc_id
WHERE bd.bundle_id = %(bundle)s AND d.deleted_at IS NULL
ORDER BY bd.position
"""


async def owner_bundle(
    conn: psycopg.AsyncConnection, bundle_id: str, token_hash: str | None, session_hashes: list[str]
) -> tuple[dict | None, list[dict]]:
    """The bundle and all its live members in reading order, for its hub's owner only."""
    args = {"bundle": bundle_id, "token": token_hash, "sessions": session_hashes}
    bundle = await (await conn.execute(OWNER_BUNDLE, args)).fetchone()
    if bundle is None:
        return None, []
    return bundle, await (await conn.execute(OWNER_MEMBERS, args)).fetchall()


# A bundle an importer knows by its id, or by "memorywiki:<its id>" (as docs.LOCK_BY_EXTERNAL_ID);
# live ones only: a deleted bundle is not brought back by an import, it is made again.
LOCK_BY_EXTERNAL_ID = """
SELECT b.id, b.hub_id, b.title, b.description,
       coalesce((SELECT array_agg(bd.doc_id ORDER BY bd.position) FROM bundle_docs bd WHERE bd.bundle_id = b.id),
                '{}') AS doc_ids
FROM bundles b
WHERE b.hub_id = %(hub)s AND b.deleted_at IS NULL
  AND (b.external_id = %(key)s OR (b.id = %(own)s AND b.external_id IS NULL))
ORDER BY b.external_id IS NULL
LIMIT 1 FOR UPDATE OF b
"""


EXTERNAL_ID_LOCK_CLASS = 0x6D79  # beside docs' save locks (store/docs.py)


async def find_by_external_id(conn: psycopg.AsyncConnection, hub_id: int, key: str) -> dict[str, Any] | None:
    """The live bundle of the hub an importer knows by `key`, with its members in order,
    row-locked for this transaction. The key stays locked until the transaction ends, so two
    imports of one bundle at once never both make it."""
    await conn.execute(SAVE_LOCK, (EXTERNAL_ID_LOCK_CLASS, f"{hub_id}:{key}"))
    return await (await conn.execute(LOCK_BY_EXTERNAL_ID, {"hub": hub_id, "key": key, "own": own_id(key)})).fetchone()


# The hub's live bundles, oldest first, and their members that are live docs, in order
# (owner pool: private members too).
HUB_BUNDLES_ALL = """
SELECT b.id, b.title, b.description, b.external_id, b.created_at, b.updated_at,
       coalesce((SELECT array_agg(bd.doc_id ORDER BY bd.position)
                 FROM bundle_docs bd JOIN docs d ON d.id = bd.doc_id
                 WHERE bd.bundle_id = b.id AND d.deleted_at IS NULL), '{}') AS doc_ids
FROM bundles b
WHERE b.hub_id = %s AND b.deleted_at IS NULL
ORDER BY b.created_at, b.id
"""


async def hub_bundles(conn: psycopg.AsyncConnection, hub_id: int) -> list[dict[str, Any]]:
    return await (await conn.execute(HUB_BUNDLES_ALL, (hub_id,))).fetchall()
