"""Recall queries: vector, full text (BM25) and their Reciprocal Rank Fusion.

Every query here runs on the public pool, as the memorywiki_public role, so row-level
security decides what exists; the SQL itself never needs to remember the gates.
Both rankers and the fusion run in one statement, one round trip.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import psycopg
from psycopg import sql

RRF_K = 60

# The two rankers (vector top n_vec, BM25 top n_fts) and their fusion, for chunks or docs.
# The top k is taken before joining, so only k rows are looked up by primary key (otherwise
# the planner, misjudging the privacy gate, hashes every public chunk x doc: ~300 ms at 100k).
FUSED_TOP_K = """
WITH vec AS (
    SELECT id, row_number() OVER (ORDER BY dist) AS rank, 1 - dist AS similarity
    FROM (
        SELECT t.id, t.embedding::vector({dim}) <=> %(qvec)s::vector({dim}) AS dist
        FROM {table} t
        WHERE t.hub_id = %(hub)s AND t.embedding IS NOT NULL
        ORDER BY dist
        LIMIT %(n_vec)s
    ) v
),
fts AS (
    SELECT {fts_id} AS id, row_number() OVER (ORDER BY score DESC, {fts_id}) AS rank, score
    FROM {fts_function}(%(hub)s, %(question)s, %(n_fts)s, %(k1)s, %(b)s)
),
fused AS (
    SELECT coalesce(vec.id, fts.id) AS id, vec.rank AS vector_rank, fts.rank AS fts_rank,
           vec.similarity, fts.score AS fts_score,
           coalesce(1.0 / ({rrf} + vec.rank), 0) + coalesce(1.0 / ({rrf} + fts.rank), 0) AS rrf_score
    FROM vec FULL OUTER JOIN fts ON fts.id = vec.id
),
top AS (
    SELECT * FROM fused
    ORDER BY rrf_score DESC, vector_rank NULLS LAST, fts_rank NULLS LAST
    LIMIT %(k)s
)
"""

CHUNK_RECALL = """
SELECT c.id AS chunk_id, c.doc_id, d.title, c.heading_path, c.markdown, c.ordinal,
       f.rrf_score::float8 AS rrf_score, f.vector_rank, f.fts_rank,
       f.similarity::float8 AS similarity, f.fts_score::float8 AS fts_score
FROM top f
JOIN chunks c ON c.id = f.id
JOIN docs d ON d.id = c.doc_id
ORDER BY f.rrf_score DESC, f.vector_rank NULLS LAST, f.fts_rank NULLS LAST
"""

DOC_RECALL = """
SELECT d.id AS doc_id, d.title, d.markdown, f.similarity::float8 AS similarity,
       f.rrf_score::float8 AS rrf_score, f.vector_rank, f.fts_rank, f.fts_score::float8 AS fts_score
FROM top f
JOIN docs d ON d.id = f.id
ORDER BY f.rrf_score DESC, f.vector_rank NULLS LAST, f.fts_rank NULLS LAST
"""

BUNDLE_VECTOR = """
SELECT b.id AS bundle_id, b.title, b.description,
       (1 - (b.embedding::vector({dim}) <=> %(qvec)s::vector({dim})))::float8 AS similarity
FROM bundles b
WHERE b.hub_id = %(hub)s AND b.embedding IS NOT NULL
ORDER BY b.embedding::vector({dim}) <=> %(qvec)s::vector({dim})
LIMIT %(k)s
"""

# Without vectors, bundles rank by their text with the question's lexemes OR-ed
# (a question is never AND-ed term by term).
BUNDLE_FULLTEXT = """
WITH q AS (
    SELECT string_agg(quote_literal(lexeme), ' | ')::tsquery AS query
    FROM unnest(to_tsvector('english', %(question)s))
)
SELECT b.id AS bundle_id, b.title, b.description, NULL::float8 AS similarity,
       ts_rank(to_tsvector('english', b.title || ' ' || b.description), q.query)::float8 AS fts_score
FROM bundles b, q
WHERE b.hub_id = %(hub)s AND q.query IS NOT NULL
  AND to_tsvector('english', b.title || ' ' || b.description) @@ q.query
ORDER BY fts_score DESC
LIMIT %(k)s
"""


# level -> (table ranked by vector, the BM25 function's id column, the BM25 function, the final select)
LEVELS = {
    "chunk": ("chunks", "chunk_id", "bm25_search", CHUNK_RECALL),
    "doc": ("docs", "doc_id", "bm25_search_docs", DOC_RECALL),
}


@lru_cache(maxsize=32)
def statement(level: str, dim: int) -> sql.Composed:
    """The fused recall statement for chunks or docs, vectors cast to `dim`."""
    table, fts_id, fts_function, final = LEVELS[level]
    return sql.SQL(FUSED_TOP_K + final).format(
        table=sql.Identifier(table), fts_id=sql.Identifier(fts_id), fts_function=sql.Identifier(fts_function),
        dim=sql.Literal(dim), rrf=sql.Literal(RRF_K))


async def _fused(conn: psycopg.AsyncConnection, level: str, *, hub_id: int, question: str, k: int,
                 qvec: list[float] | None, dim: int | None, hybrid: bool,
                 k1: float, b: float) -> list[dict[str, Any]]:
    """Hybrid: each ranker's top k*4, fused. Otherwise vector alone, or full text when
    there is no query vector."""
    use_vec = qvec is not None and dim is not None
    params = {
        "hub": hub_id, "question": question, "k": k, "k1": k1, "b": b,
        "qvec": qvec if use_vec else None,
        "n_vec": (k * 4 if hybrid else k) if use_vec else 0,
        "n_fts": (k * 4 if hybrid or not use_vec else 0),
    }
    return await (await conn.execute(statement(level, int(dim or 1)), params)).fetchall()


async def recall_chunks(conn: psycopg.AsyncConnection, **query: Any) -> list[dict[str, Any]]:
    return await _fused(conn, "chunk", **query)


async def recall_docs(conn: psycopg.AsyncConnection, **query: Any) -> list[dict[str, Any]]:
    return await _fused(conn, "doc", **query)


async def recall_bundles(conn: psycopg.AsyncConnection, *, hub_id: int, question: str, k: int,
                         qvec: list[float] | None, dim: int | None) -> list[dict[str, Any]]:
    params = {"hub": hub_id, "question": question, "k": k, "qvec": qvec}
    if qvec is not None and dim is not None:
        query = sql.SQL(BUNDLE_VECTOR).format(dim=sql.Literal(int(dim)))
        return await (await conn.execute(query, params)).fetchall()
    return await (await conn.execute(BUNDLE_FULLTEXT, params)).fetchall()


# Highlighted snippets for the hub page's search results: Postgres's own headline, with the
# question's lexemes OR-ed (as the full-text ranker reads them). The marks are private-use
# characters, so the caller escapes the text first and only then turns them into <mark>.
MARK_START, MARK_END = "\ue000", "\ue001"
HEADLINES = """
WITH q AS (
    SELECT string_agg(quote_literal(lexeme), ' | ')::tsquery AS query
    FROM unnest(to_tsvector('english', %(question)s))
)
SELECT t.ord, coalesce(ts_headline('english', t.text, q.query, %(options)s), left(t.text, 300)) AS snippet
FROM unnest(%(texts)s::text[]) WITH ORDINALITY AS t(text, ord), q
ORDER BY t.ord
"""
HEADLINE_OPTIONS = (f"StartSel={MARK_START}, StopSel={MARK_END}, MaxWords=40, MinWords=18, "
                    "MaxFragments=2, FragmentDelimiter=\" … \"")


async def headlines(conn: psycopg.AsyncConnection, question: str, texts: list[str]) -> list[str]:
    """Each text cut to the parts that match the question, matches between the marks."""
    if not texts:
        return []
    cleaned = [t.replace(MARK_START, "").replace(MARK_END, "") for t in texts]
    rows = await (await conn.execute(HEADLINES, {"question": question, "texts": cleaned,
                                                 "options": HEADLINE_OPTIONS})).fetchall()
    return [r["snippet"] for r in rows]
