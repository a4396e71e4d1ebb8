"""SQL for concepts and related docs. Public surfaces call these on the public pool, where
row-level security keeps every private doc (and what was derived from it) out."""

from __future__ import annotations

from typing import Any

import psycopg

# Newest docs first, so each concept lists its freshest pages first.
HUB_MENTIONS = """
SELECT c.doc_id, d.title, d.updated_at, c.name, c.kind, c.gloss, c.aliases
FROM doc_concepts c JOIN docs d ON d.id = c.doc_id
WHERE c.hub_id = %s
ORDER BY d.updated_at DESC, c.doc_id, c.position
"""


async def hub_mentions(conn: psycopg.AsyncConnection, hub_id: int) -> list[dict[str, Any]]:
    return await (await conn.execute(HUB_MENTIONS, (hub_id,))).fetchall()


# The pages holding any of the given terms, and every page's title terms, newest page first.
HUB_TERMS = """
SELECT t.doc_id, t.key, t.in_title, d.title, d.updated_at
FROM doc_terms t JOIN docs d ON d.id = t.doc_id
WHERE t.hub_id = %s AND (t.key = ANY(%s) OR t.in_title)
ORDER BY d.updated_at DESC, t.doc_id
"""


async def hub_terms(conn: psycopg.AsyncConnection, hub_id: int, keys: list[str]) -> list[dict[str, Any]]:
    return await (await conn.execute(HUB_TERMS, (hub_id, keys))).fetchall()


async def hub_doc_count(conn: psycopg.AsyncConnection, hub_id: int) -> int:
    row = await (await conn.execute("SELECT count(*) AS n FROM docs WHERE hub_id = %s", (hub_id,))).fetchone()
    return int(row["n"])


async def doc_concepts(conn: psycopg.AsyncConnection, doc_id: str) -> list[dict[str, Any]]:
    return await (
        await conn.execute(
            "SELECT key, name, kind, gloss, aliases FROM doc_concepts WHERE doc_id = %s ORDER BY position", (doc_id,)
        )
    ).fetchall()


async def doc_vector(conn: psycopg.AsyncConnection, doc_id: str) -> tuple[Any, int | None, int | None]:
    """(the doc's vector or None, its dimension, its hub)."""
    row = await (
        await conn.execute("SELECT embedding, vector_dims(embedding) AS dim, hub_id FROM docs WHERE id = %s", (doc_id,))
    ).fetchone()
    if row is None:
        return None, None, None
    return row["embedding"], row["dim"], row["hub_id"]


# Nearest public docs of the same hub by cosine distance (HNSW on docs.embedding), closer than
# `max_distance`: past the embedding space's own limit texts are unrelated, however few the hub has.
NEAREST = """
SELECT n.id, n.title, (1 - n.distance)::float8 AS similarity
FROM (SELECT d.id, d.title, d.embedding::vector({dim}) <=> %(vec)s::vector({dim}) AS distance
      FROM docs d
      WHERE d.hub_id = %(hub)s AND d.id <> %(doc)s AND d.embedding IS NOT NULL
      ORDER BY d.embedding::vector({dim}) <=> %(vec)s::vector({dim})
      LIMIT %(k)s) n
WHERE n.distance < %(max_distance)s
ORDER BY n.distance
"""


async def nearest(
    conn: psycopg.AsyncConnection, *, doc_id: str, hub_id: int, vector: Any, dim: int, k: int, max_distance: float
) -> list[dict[str, Any]]:
    return await (
        await conn.execute(
            NEAREST.format(dim=int(dim)),
            {"vec": vector, "hub": hub_id, "doc": doc_id, "k": k, "max_distance": max_distance},
        )
    ).fetchall()


# Docs of the hub that hold the most of the given concepts: list them among their own, or
# name them in their text (their terms). Each concept comes as its concept key, its term key
# and the name shown.
SHARING = """
WITH wanted AS (SELECT * FROM unnest(%(concept_keys)s::text[], %(term_keys)s::text[], %(names)s::text[])
                AS w(concept_key, term_key, name)),
held AS (
    SELECT c.doc_id, w.name FROM doc_concepts c JOIN wanted w ON w.concept_key = c.key
    WHERE c.hub_id = %(hub)s AND c.doc_id <> %(doc)s
    UNION
    SELECT t.doc_id, w.name FROM doc_terms t JOIN wanted w ON w.term_key = t.key
    WHERE t.hub_id = %(hub)s AND t.doc_id <> %(doc)s
)
SELECT d.id, d.title, count(*) AS shared, array_agg(h.name ORDER BY h.name) AS names
FROM held h JOIN docs d ON d.id = h.doc_id
GROUP BY d.id, d.title
ORDER BY shared DESC, max(d.updated_at) DESC
LIMIT %(k)s
"""


async def sharing_concepts(
    conn: psycopg.AsyncConnection, *, doc_id: str, hub_id: int, concepts: list[tuple[str, str, str]], k: int
) -> list[dict[str, Any]]:
    """`concepts`: (concept key, term key, name) of the doc's own concepts."""
    if not concepts:
        return []
    concept_keys, term_keys, names = (list(column) for column in zip(*concepts, strict=True))
    params = {
        "hub": hub_id,
        "doc": doc_id,
        "k": k,
        "concept_keys": concept_keys,
        "term_keys": term_keys,
        "names": names,
    }
    return await (await conn.execute(SHARING, params)).fetchall()


async def hub_vectors(conn: psycopg.AsyncConnection, hub_id: int, limit: int = 100_000) -> list[dict[str, Any]]:
    """The hub's newest `limit` public docs with their titles and vectors (None when not
    embedded)."""
    return await (
        await conn.execute(
            "SELECT id, title, embedding FROM docs WHERE hub_id = %s ORDER BY updated_at DESC, id LIMIT %s",
            (hub_id, limit),
        )
    ).fetchall()


async def doc_titles(conn: psycopg.AsyncConnection, doc_ids: list[str]) -> dict[str, str]:
    rows = await (await conn.execute("SELECT id, title FROM docs WHERE id = ANY(%s)", (doc_ids,))).fetchall()
    return {r["id"]: r["title"] for r in rows}


async def bundles_of_doc(conn: psycopg.AsyncConnection, doc_id: str) -> list[dict[str, Any]]:
    return await (
        await conn.execute(
            """SELECT b.id, b.title, b.description FROM bundle_docs bd JOIN bundles b ON b.id = bd.bundle_id
           WHERE bd.doc_id = %s ORDER BY b.updated_at DESC""",
            (doc_id,),
        )
    ).fetchall()


async def hub_bundle_members(conn: psycopg.AsyncConnection, hub_id: int) -> list[set[str]]:
    rows = await (
        await conn.execute(
            """SELECT array_agg(bd.doc_id) AS ids FROM bundles b JOIN bundle_docs bd ON bd.bundle_id = b.id
           WHERE b.hub_id = %s GROUP BY b.id""",
            (hub_id,),
        )
    ).fetchall()
    return [set(r["ids"]) for r in rows]


async def enrichments_of(conn: psycopg.AsyncConnection, doc_ids: list[str]) -> dict[str, dict[str, Any]]:
    """Stored enrichments visible on this connection (the public pool: public docs only)."""
    rows = await (
        await conn.execute("SELECT doc_id, mode, data FROM enrichments WHERE doc_id = ANY(%s)", (doc_ids,))
    ).fetchall()
    return {r["doc_id"]: r for r in rows}
