"""PostgreSQL storage against the latency bench's 100k hub: two A/B runs, each in one process.

    python -m bench.pgstorage [--pg-dir bench/.cache/pg-latency] [--rounds 3] [--out bench/results]

1. shared_buffers: PostgreSQL's default 128 MB against the embedded cluster's auto size
   (server/store/embedded.py), in turn, the cluster restarted with each: the fused hybrid
   statement (recall.recall_chunks, query vectors computed once) over the 300 SciFact questions
   at concurrency 2 after three warm passes, PostgreSQL's CPU per statement read from /proc.
   The machine's speed drifts by 10-20% over minutes here, so the two sizes alternate.
2. The BM25 forward index as stored before migration 0062 (arrays over ~2 kB pglz-compressed)
   against now (plain): `bm25_search` over a copy of bm25_chunks with the old storage, question
   by question in turn with the real function, both answers compared.

The hub comes from `python -m bench latency --sizes 100000 --pg-dir DIR` (its embedded cluster,
not DATABASE_URL: the first run restarts the cluster). Writes pgstorage.md.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from pathlib import Path

import psycopg

from .common import (CACHE, RESULTS, SHARED_DATA, MissingData, Postgres, child_pids, load_beir, machine_line,
                     make_bench_embedder, md_table, process_cpu_s, require_beir)
from .latency import sql_run

HUB_DB = "bench_lat_100000"
STATEMENTS = 1200
OLD_STORAGE = "bm25_chunks_before_0062"


def _postgres_cpu_s(folder: Path) -> float:
    pid = int((folder / "postmaster.pid").read_text().split()[0])
    return process_cpu_s(pid) + sum(process_cpu_s(c) for c in child_pids(pid))


async def shared_buffers_rows(pg: Postgres, folder: Path, questions: list[str], rounds: int) -> list[list]:
    from memorywiki.server.store.db import Database
    from memorywiki.server.store.embedded import auto_shared_buffers, size_shared_buffers

    embedder = make_bench_embedder()
    qvecs = await embedder.embed(questions)
    sizes = ("128MB", auto_shared_buffers())
    cpu: dict[str, list[float]] = {s: [] for s in sizes}
    qps: dict[str, list[float]] = {s: [] for s in sizes}
    for _ in range(rounds):
        for size in sizes:
            size_shared_buffers(pg._pg, size)
            db = Database(pg.db_url(HUB_DB), min_size=1, max_size=4)
            await db.open()
            try:
                async with db.public.connection() as conn:
                    hub = (await (await conn.execute("SELECT id FROM hubs WHERE slug = 'lat'")).fetchone())["id"]
                await sql_run(db, hub, questions, qvecs, len(qvecs[0]), "hybrid", 2, 3 * len(questions))
                before = _postgres_cpu_s(folder)
                _, rate = await sql_run(db, hub, questions, qvecs, len(qvecs[0]), "hybrid", 2, STATEMENTS)
                cpu[size].append(1000 * (_postgres_cpu_s(folder) - before) / STATEMENTS)
                qps[size].append(rate)
            finally:
                await db.close()
    size_shared_buffers(pg._pg, "auto")
    return [[size, statistics.median(cpu[size]), min(cpu[size]), max(cpu[size]), statistics.median(qps[size])]
            for size in sizes]


def forward_index_rows(pg: Postgres, questions: list[str], rounds: int) -> tuple[list[list], int]:
    from importlib import resources

    source = (resources.files("memorywiki.server.store") / "functions" / "40_bm25_search.sql").read_text()
    body = source[source.index("CREATE OR REPLACE FUNCTION bm25_search("):source.index("-- Doc level")]
    old = body.replace("FUNCTION bm25_search(", "FUNCTION bm25_search_before_0062(").replace(
        "JOIN bm25_chunks b", f"JOIN {OLD_STORAGE} b")
    assert old != body
    with psycopg.connect(pg.db_url(HUB_DB), autocommit=True) as conn:
        try:
            # the storage before 0062: PostgreSQL's default toast_tuple_target, so rows over ~2 kB
            # are compressed (each array a new value, which the insert then compresses)
            conn.execute(f"DROP TABLE IF EXISTS {OLD_STORAGE}")
            conn.execute(f"CREATE TABLE {OLD_STORAGE} (LIKE bm25_chunks INCLUDING ALL) WITH (toast_tuple_target = 2032)")
            conn.execute(f"INSERT INTO {OLD_STORAGE} SELECT chunk_id, hub_id, doc_id, len, terms || '{{}}'::text[],"
                         " tfs || '{}'::integer[], impacts || '{}'::real[] FROM bm25_chunks")
            conn.execute(f"VACUUM ANALYZE {OLD_STORAGE}")
            conn.execute(old)
            stats = conn.execute(
                f"SELECT (SELECT count(*) FILTER (WHERE pg_column_compression(terms) IS NOT NULL) FROM {OLD_STORAGE}),"
                f" pg_total_relation_size('{OLD_STORAGE}'), pg_total_relation_size('bm25_chunks'),"
                " (SELECT count(*) FILTER (WHERE pg_column_compression(terms) IS NOT NULL) FROM bm25_chunks),"
                " (SELECT count(*) FROM bm25_chunks)").fetchone()
            hub = conn.execute("SELECT id FROM hubs WHERE slug = 'lat'").fetchone()[0]
            functions = ("bm25_search_before_0062", "bm25_search")
            same = sum(conn.execute("SELECT * FROM bm25_search(%s, %s, 40)", (hub, q)).fetchall()
                       == conn.execute("SELECT * FROM bm25_search_before_0062(%s, %s, 40)", (hub, q)).fetchall()
                       for q in questions)
            times: dict[str, list[float]] = {f: [] for f in functions}
            for round_ in range(rounds + 1):  # the first round warms both up
                for i, question in enumerate(questions):
                    for function in (functions if (i + round_) % 2 else functions[::-1]):
                        t0 = time.perf_counter()
                        conn.execute(f"SELECT * FROM {function}(%s, %s, 40)", (hub, question), prepare=True).fetchall()
                        if round_:
                            times[function].append(1000 * (time.perf_counter() - t0))
        finally:
            conn.execute("DROP FUNCTION IF EXISTS bm25_search_before_0062(bigint, text, integer, float8, float8)")
            conn.execute(f"DROP TABLE IF EXISTS {OLD_STORAGE}")
    old_compressed, old_bytes, new_bytes, new_compressed, n = stats
    labels = {"bm25_search_before_0062": ("before 0062 (compressed over ~2 kB)", old_compressed, old_bytes),
              "bm25_search": ("0062 (plain up to 8160 bytes)", new_compressed, new_bytes)}
    rows = [[labels[f][0], f"{labels[f][1]:,} of {n:,}", f"{labels[f][2] / 2**20:.0f} MB",
             statistics.median(times[f]), statistics.mean(times[f]), sorted(times[f])[int(0.95 * len(times[f]))]]
            for f in functions]
    return rows, same


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.pgstorage", description=__doc__.split("\n\n")[0])
    parser.add_argument("--pg-dir", type=Path, default=CACHE / "pg-latency")
    parser.add_argument("--dataset", type=Path, default=SHARED_DATA / "scifact")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    try:
        require_beir(args.dataset)
    except MissingData as error:
        print(error, file=sys.stderr)
        return 2
    pg = Postgres(args.pg_dir)
    try:
        if not pg.exists(HUB_DB) or pg.folder is None:
            print(f"no 100k latency hub in an embedded cluster at {args.pg_dir}: build it with "
                  f"`python -m bench latency --sizes 100000 --pg-dir {args.pg_dir}`", file=sys.stderr)
            return 2
        questions = list(load_beir(args.dataset).queries.values())
        buffers = asyncio.run(shared_buffers_rows(pg, args.pg_dir, questions, args.rounds))
        forward, same = forward_index_rows(pg, questions, args.rounds)
    finally:
        pg.close()
    text = "\n\n".join([
        f"<!-- python -m bench.pgstorage --rounds {args.rounds}, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} -->",
        "## PostgreSQL storage at 100,000 chunks (the latency hub)",
        "**shared_buffers.** The fused hybrid statement (both rankers, level chunk, k = 10, query vectors "
        "computed once) over the 300 SciFact questions at concurrency 2, after three warm passes; "
        f"{STATEMENTS} statements per size and round, the two sizes in turn, {args.rounds} rounds, the cluster "
        "restarted with each size. CPU: the postmaster and its backends, from /proc.",
        md_table(["shared_buffers", "PostgreSQL CPU ms per statement (median)", "min", "max", "statements/s (median)"],
                 buffers, 2),
        f"**The BM25 forward index.** `bm25_search(hub, question, 40)` (a hybrid's full-text pool), each of "
        f"the 300 questions through both in turn, {args.rounds} rounds after a warm one; the same chunks and "
        f"scores from both for {same} of {len(questions)} questions.",
        md_table(["bm25_chunks storage", "rows with compressed terms", "table", "p50 ms", "mean ms", "p95 ms"],
                 forward, 2),
        machine_line(),
    ])
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "pgstorage.md").write_text(text + "\n", encoding="utf-8")
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
