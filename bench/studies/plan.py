"""Plan check: chunk-recall SQL joining every candidate vs taking the top k before the joins.

    python -m bench.studies.plan bench_lat_100000 [--pg-dir bench/.cache/pg-latency] [-n 60]

Runs on a hub built by the latency section. The shipped statement (server/store/recall.py,
CHUNK_RECALL) joins *every* fused candidate to chunks and docs and only then sorts and limits;
with the row-level-security gate on docs estimated at 0.5 % of rows (an expression the planner
has no statistics for), PostgreSQL hashes all public chunks x docs first. The variant adds one
CTE, `top`, that sorts and limits the fused ids before joining, so only k rows are looked up by
primary key. Same parameters, same public role; the check asserts both return the same chunks
in the same order, and prints p50 / p95 per mode. Nothing in the server is changed.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time

from ..common import CACHE, SHARED_DATA, MissingData, Postgres, load_beir, make_bench_embedder, pct, require_beir

TOP = (
    "\n),\ntop AS (\n    SELECT * FROM fused\n"
    "    ORDER BY rrf_score DESC, vector_rank NULLS LAST, fts_rank NULLS LAST\n    LIMIT %(k)s\n)\n"
)


def without_top(sql: str) -> str:
    """The statement as it was before the `top` CTE went in (server/store/recall.py, before the fix)."""
    start = sql.index(",\ntop AS (")
    end = sql.index("\n)\n", start) + 2
    return sql[:start] + sql[end:].replace("FROM top f\n", "FROM fused f\n", 1) + "LIMIT %(k)s\n"


def variant_sql(shipped: str) -> str:
    head, sep, tail = shipped.rpartition("\n)\n\nSELECT c.id AS chunk_id")
    if not sep:
        head, sep, tail = shipped.rpartition("\n)\nSELECT c.id AS chunk_id")
    assert sep, "CHUNK_RECALL changed shape; update bench/studies/plan.py"
    tail = tail.replace("FROM fused f\n", "FROM top f\n", 1)
    tail = tail[: tail.rindex("LIMIT %(k)s")] if "LIMIT %(k)s" in tail else tail
    return head + TOP + "SELECT c.id AS chunk_id" + tail


async def main_async(url: str, n: int) -> list[list]:
    from memorywiki.server.store import recall
    from memorywiki.server.store.db import Database

    data = load_beir(SHARED_DATA / "scifact")
    questions = list(data.queries.values())[:n]
    embedder = make_bench_embedder()
    qvecs = await embedder.embed(questions)
    dim = len(qvecs[0])
    current = recall.statement("chunk", dim).as_string(None)
    if "FROM top f" in current:  # the fix is in: compare with the statement as it was before
        before, after = without_top(current), current
    else:
        before, after = current, variant_sql(current)
    shipped, variant = before, after
    db = Database(url, min_size=1, max_size=2)
    await db.open()
    rows_out = []
    try:
        async with db.public.connection() as conn:
            hub = (await (await conn.execute("SELECT id FROM hubs WHERE slug = 'lat'")).fetchone())["id"]
            for mode in ("vector", "fulltext", "hybrid"):
                lat = {"shipped": [], "variant": []}
                same = 0
                for i, q in enumerate(questions):
                    use_vec = mode != "fulltext"
                    params = {
                        "hub": hub,
                        "question": q,
                        "k": 10,
                        "k1": 1.2,
                        "b": 0.75,
                        "qvec": qvecs[i] if use_vec else None,
                        "n_vec": (40 if mode == "hybrid" else 10) if use_vec else 0,
                        "n_fts": 40 if mode != "vector" else 0,
                    }
                    got = {}
                    for name, sql in (("shipped", shipped), ("variant", variant)):
                        t0 = time.perf_counter()
                        res = await (await conn.execute(sql, params)).fetchall()
                        lat[name].append((time.perf_counter() - t0) * 1000)
                        got[name] = [r["chunk_id"] for r in res]
                    same += got["shipped"] == got["variant"]
                rows_out.append(
                    [
                        mode,
                        pct(lat["shipped"], 50),
                        pct(lat["shipped"], 95),
                        pct(lat["variant"], 50),
                        pct(lat["variant"], 95),
                        f"{same}/{len(questions)}",
                    ]
                )
                print(
                    f"{mode:8} shipped p50 {rows_out[-1][1]:7.1f} p95 {rows_out[-1][2]:7.1f} | top-k-first "
                    f"p50 {rows_out[-1][3]:7.1f} p95 {rows_out[-1][4]:7.1f} | same results {same}/{len(questions)}",
                    flush=True,
                )
    finally:
        await db.close()
    return rows_out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("database")
    parser.add_argument("--pg-dir", default=str(CACHE / "pg-latency"))
    parser.add_argument("-n", type=int, default=60)
    args = parser.parse_args()
    from pathlib import Path

    try:
        require_beir(SHARED_DATA / "scifact", "BEIR SciFact")
    except MissingData as missing:
        print(missing, file=sys.stderr)
        raise SystemExit(2) from None
    pg = Postgres(Path(args.pg_dir))
    try:
        asyncio.run(main_async(pg.db_url(args.database), args.n))
    finally:
        pg.close()


if __name__ == "__main__":
    main()
