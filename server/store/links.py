"""SQL for cross-references: the links between docs, rewritten whenever a doc's body is saved.

Rows are read on the public pool, where row-level security (0061) shows a link only while
both of its docs are public. A link's `host` ('' for a relative link) lets a read keep just
the links to this server.
"""

from __future__ import annotations

from typing import Any

from memorywiki.formats.doclinks import doc_links

from .connection import Conn


async def sync_links(conn: Conn, doc_id: str, markdown: str) -> None:
    """Make the doc's link rows match the `/{id}` links its markdown holds (in the caller's
    transaction). Links to itself are left out."""
    found = sorted((target, host) for target, host in doc_links(markdown) if target != doc_id)
    current = await (await conn.execute("SELECT target, host FROM links WHERE source = %s", (doc_id,))).fetchall()
    if sorted((r["target"], r["host"]) for r in current) == found:
        return
    await conn.execute("DELETE FROM links WHERE source = %s", (doc_id,))
    if found:
        async with conn.cursor() as cur:
            await cur.executemany(
                "INSERT INTO links (source, target, host) VALUES (%s, %s, %s)",
                [(doc_id, target, host) for target, host in found],
            )


DOC_SIDE = """
SELECT DISTINCT d.id, d.title, h.slug AS hub_slug
FROM links l
JOIN docs d ON d.id = l.{other}
LEFT JOIN hubs h ON h.id = d.hub_id
WHERE l.{this} = %(doc)s AND l.host = ANY(%(hosts)s) AND l.source <> l.target
ORDER BY d.title, d.id
"""
OUTBOUND = DOC_SIDE.format(this="source", other="target")
INBOUND = DOC_SIDE.format(this="target", other="source")

HUB_PAIRS = """
SELECT DISTINCT s.id AS source_id, s.title AS source_title, sh.slug AS source_hub,
       t.id AS target_id, t.title AS target_title, th.slug AS target_hub
FROM links l
JOIN docs s ON s.id = l.source
JOIN docs t ON t.id = l.target
LEFT JOIN hubs sh ON sh.id = s.hub_id
LEFT JOIN hubs th ON th.id = t.hub_id
WHERE l.host = ANY(%(hosts)s) AND (s.hub_id = %(hub)s OR t.hub_id = %(hub)s)
ORDER BY s.id, t.id
"""


async def doc_cross_refs(
    conn: Conn, doc_id: str, hosts: list[str]
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(the public docs this doc links to, the public docs that link to it); `hosts` are the
    hosts that name this server ('' included: relative links)."""
    params = {"doc": doc_id, "hosts": hosts}
    outbound = await (await conn.execute(OUTBOUND, params)).fetchall()
    inbound = await (await conn.execute(INBOUND, params)).fetchall()
    return outbound, inbound


async def hub_cross_refs(conn: Conn, hub_id: int, hosts: list[str]) -> list[dict[str, Any]]:
    """Every link between public docs with at least one end in the hub."""
    return await (await conn.execute(HUB_PAIRS, {"hub": hub_id, "hosts": hosts})).fetchall()
