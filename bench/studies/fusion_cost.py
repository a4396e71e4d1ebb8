"""Recall SQL cost of z-score fusion against the RRF statement it replaced, on the same hub.

    python -m bench.studies.fusion_cost bench_lat_100000 [--pg-dir bench/.cache/pg-latency] [-n 100]

Runs on a hub the latency section built (`python -m bench latency --build-only --sizes 100000`:
10 chunks a doc, real MiniLM vectors mixed). BEFORE is the statement shipped before z-score fusion,
kept here verbatim: RRF of each ranker's top 4k, docs ranked by their mean vector and by
bm25_search_docs. AFTER is server/store/recall.py now: z-score fusion over pools of max(4k, 40),
docs by their best section. Hybrid mode, both on the public pool, interleaved per question so
load hits both alike; p50 / p95 per level and k. (bm25_search is the current function in both:
counting repeated query terms costs nothing measurable.)
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from pathlib import Path

from psycopg import sql

from ..common import (
    CACHE,
    SHARED_DATA,
    MissingData,
    Postgres,
    load_beir,
    make_bench_embedder,
    md_table,
    pct,
    require_beir,
)

RRF_K = 60

# server/store/recall.py before z-score fusion (commit d3faee3), verbatim.
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

LEVELS = {
    "chunk": ("chunks", "chunk_id", "bm25_search", CHUNK_RECALL),
    "doc": ("docs", "doc_id", "bm25_search_docs", DOC_RECALL),
}


def before_statement(level: str, dim: int) -> sql.Composed:
    table, fts_id, fts_function, final = LEVELS[level]
    return sql.SQL(FUSED_TOP_K + final).format(
        table=sql.Identifier(table),
        fts_id=sql.Identifier(fts_id),
        fts_function=sql.Identifier(fts_function),
        dim=sql.Literal(dim),
        rrf=sql.Literal(RRF_K),
    )


async def main_async(url: str, n: int) -> str:
    from memorywiki.server.store import recall
    from memorywiki.server.store.db import Database

    data = load_beir(SHARED_DATA / "scifact")
    questions = list(data.queries.values())[:n]
    embedder = make_bench_embedder(cached=True)
    qvecs = await embedder.embed(questions)
    dim = len(qvecs[0])
    db = Database(url, min_size=1, max_size=2)
    await db.open()
    rows = []
    try:
        async with db.public.connection() as conn:
            hub = (await (await conn.execute("SELECT id FROM hubs WHERE slug = 'lat'")).fetchone())["id"]
            for level, k in (("chunk", 5), ("chunk", 10), ("doc", 10)):
                old = before_statement(level, dim)
                pool = recall.pool_size(level, k, True)
                new = recall.statement(level, dim, hub=hub, k=k, n_vec=pool)
                lat: dict[str, list[float]] = {"before": [], "after": []}
                for i, q in enumerate(questions):
                    base = {"hub": hub, "question": q, "k": k, "k1": 1.2, "b": 0.75, "qvec": qvecs[i]}
                    runs = (
                        ("before", old, {**base, "n_vec": 4 * k, "n_fts": 4 * k}),
                        ("after", new, {**base, "n_fts": pool}),
                    )
                    for name, statement, params in runs if i % 2 else runs[::-1]:
                        t0 = time.perf_counter()
                        await (await conn.execute(statement, params)).fetchall()
                        lat[name].append((time.perf_counter() - t0) * 1000)
                rows.append(
                    [
                        level,
                        k,
                        pct(lat["before"], 50),
                        pct(lat["before"], 95),
                        pct(lat["after"], 50),
                        pct(lat["after"], 95),
                    ]
                )
                print(
                    f"{level} k={k}: before p50 {rows[-1][2]:.1f} p95 {rows[-1][3]:.1f} | "
                    f"after p50 {rows[-1][4]:.1f} p95 {rows[-1][5]:.1f} ms",
                    flush=True,
                )
    finally:
        await db.close()
    return md_table(["level", "k", "before p50 ms", "p95", "after p50 ms", "p95"], rows, digits=1)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("database")
    parser.add_argument("--pg-dir", default=str(CACHE / "pg-latency"))
    parser.add_argument("-n", type=int, default=100)
    args = parser.parse_args()
    try:
        require_beir(SHARED_DATA / "scifact", "BEIR SciFact")
    except MissingData as missing:
        print(missing, file=sys.stderr)
        raise SystemExit(2) from None
    pg = Postgres(Path(args.pg_dir))
    try:
        print(asyncio.run(main_async(pg.db_url(args.database), args.n)))
    finally:
        pg.close()


if __name__ == "__main__":
    main()
