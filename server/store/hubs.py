"""SQL for hubs: create one, find one by slug, check its owner, list its public contents."""

from __future__ import annotations

from typing import Any

import psycopg


async def create_hub(conn: psycopg.AsyncConnection, slug: str, owner_token_hash: str) -> int | None:
    """The new hub's id, or None when the slug is taken."""
    row = await (await conn.execute(
        "INSERT INTO hubs (slug, owner_token_hash) VALUES (%s, %s) ON CONFLICT (slug) DO NOTHING RETURNING id",
        (slug, owner_token_hash),
    )).fetchone()
    return row["id"] if row else None


async def find_hub(conn: psycopg.AsyncConnection, slug: str) -> dict[str, Any] | None:
    """{"id", "slug"} of the hub, or None. Reads only public columns, so either pool works."""
    return await (await conn.execute("SELECT id, slug FROM hubs WHERE slug = %s", (slug,))).fetchone()


async def is_owner(conn: psycopg.AsyncConnection, hub_id: int, token_hash: str) -> bool:
    row = await (await conn.execute(
        "SELECT 1 FROM hubs WHERE id = %s AND owner_token_hash = %s", (hub_id, token_hash)
    )).fetchone()
    return row is not None


async def hub_slug(conn: psycopg.AsyncConnection, hub_id: int | None) -> str | None:
    if hub_id is None:
        return None
    row = await (await conn.execute("SELECT slug FROM hubs WHERE id = %s", (hub_id,))).fetchone()
    return row["slug"] if row else None


HUB_DOCS = """
SELECT d.id, d.title, d.updated_at, left(d.markdown, 2000) AS head
FROM docs d
WHERE d.hub_id = %s
ORDER BY d.updated_at DESC
LIMIT 1000
"""

HUB_BUNDLES = """
SELECT b.id, b.title, b.description, b.updated_at
FROM bundles b
WHERE b.hub_id = %s
ORDER BY b.updated_at DESC
"""


async def hub_contents(conn: psycopg.AsyncConnection, hub_id: int) -> tuple[list[dict], list[dict]]:
    """The hub's docs (newest first, with the head of their markdown) and bundles. Run on the
    public pool, row-level security leaves only what the public may see."""
    docs = await (await conn.execute(HUB_DOCS, (hub_id,))).fetchall()
    bundles = await (await conn.execute(HUB_BUNDLES, (hub_id,))).fetchall()
    return docs, bundles
