"""PostgreSQL storage against the latency bench's 100k hub: two A/B runs, each in one process.

    python -m bench.studies.pgstorage [--pg-dir bench/.cache/pg-latency] [--rounds 3] [--out bench/results]

1. shared_buffers: PostgreSQL's default 128 MB against the embedded cluster's auto size
   (server/store/embedded.py), in turn, the cluster restarted with each: the fused hybrid
   statement (recall.recall_chunks, query vectors computed once) over the 300 SciFact questions
   at concurrency 2 after three warm passes, PostgreSQL's CPU per statement read from /proc.
   The machine's speed drifts by 10-20% over minutes here, so the two sizes alternate.
2. The BM25 forward index as stored before migration 0062 (arrays over ~2 kB pglz-compressed),
   before 0063 (plain arrays, re-scored by array_position) and now (with a jsonb map from term
   to tf): `bm25_search` over copies of bm25_chunks, question by question in turn with the real
   function, the answers compared.

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

from ..common import (
    CACHE,
    RESULTS,
    SHARED_DATA,
    MissingData,
    Postgres,
    child_pids,
    load_beir,
    machine_line,
    make_bench_embedder,
    md_table,
    process_cpu_s,
    require_beir,
)
from ..suite.latency import sql_run

HUB_DB = "bench_lat_100000"
STATEMENTS = 1200


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
    return [
        [size, statistics.median(cpu[size]), min(cpu[size]), max(cpu[size]), statistics.median(qps[size])]
        for size in sizes
    ]


# The forward index as it was stored before migrations 0062 and 0063, and now: (label, table,
# toast_tuple_target, whether its rows carry tf_map). Each copy's arrays are new values, which
# the insert stores as that target says; a row without tf_map is re-scored from the arrays.
STORAGES = [
    ("before 0062: arrays, compressed over ~2 kB", "bm25_chunks_before_0062", 2032, False),
    ("0062: arrays, plain up to 8160 bytes", "bm25_chunks_before_0063", 8160, False),
    ("0063: and the jsonb tf map (now)", "bm25_chunks", None, True),
]


def forward_index_rows(pg: Postgres, questions: list[str], rounds: int) -> tuple[list[list], int]:
    from importlib import resources

    source = (resources.files("memorywiki.server.store") / "functions" / "40_bm25_search.sql").read_text()
    body = source[source.index("CREATE OR REPLACE FUNCTION bm25_search(") : source.index("-- Doc level")]
    functions = {}
    with psycopg.connect(pg.db_url(HUB_DB), autocommit=True) as conn:
        try:
            for label, table, target, _ in STORAGES:
                if target is None:
                    functions[label] = "bm25_search"
                    continue
                conn.execute(f"DROP TABLE IF EXISTS {table}")
                conn.execute(
                    f"CREATE TABLE {table} (LIKE bm25_chunks INCLUDING ALL) WITH (toast_tuple_target = {target})"
                )
                conn.execute(
                    f"INSERT INTO {table} (chunk_id, hub_id, doc_id, len, terms, tfs, impacts)"
                    " SELECT chunk_id, hub_id, doc_id, len, terms || '{}'::text[], tfs || '{}'::integer[],"
                    " impacts || '{}'::real[] FROM bm25_chunks"
                )
                conn.execute(f"VACUUM ANALYZE {table}")
                functions[label] = f"bm25_search_{table}"
                variant = body.replace("FUNCTION bm25_search(", f"FUNCTION {functions[label]}(").replace(
                    "JOIN bm25_chunks b", f"JOIN {table} b"
                )
                assert variant != body
                conn.execute(variant)
            stats = {
                label: conn.execute(
                    f"SELECT count(*) FILTER (WHERE pg_column_compression(terms) IS NOT NULL), count(tf_map), count(*),"
                    f" pg_total_relation_size('{table}') FROM {table}"
                ).fetchone()
                for label, table, _, _ in STORAGES
            }
            hub = conn.execute("SELECT id FROM hubs WHERE slug = 'lat'").fetchone()[0]
            same = 0
            for question in questions:
                answers = [
                    conn.execute(f"SELECT * FROM {f}(%s, %s, 40)", (hub, question)).fetchall()
                    for f in functions.values()
                ]
                same += all(a == answers[0] for a in answers)
            times: dict[str, list[float]] = {label: [] for label in functions}
            order = list(functions)
            for round_ in range(rounds + 1):  # the first round warms them up
                for i, question in enumerate(questions):
                    shift = (i + round_) % len(order)
                    for label in order[shift:] + order[:shift]:
                        t0 = time.perf_counter()
                        conn.execute(
                            f"SELECT * FROM {functions[label]}(%s, %s, 40)", (hub, question), prepare=True
                        ).fetchall()
                        if round_:
                            times[label].append(1000 * (time.perf_counter() - t0))
        finally:
            for _label, table, target, _ in STORAGES:
                if target is not None:
                    conn.execute(f"DROP FUNCTION IF EXISTS bm25_search_{table}(bigint, text, integer, float8, float8)")
                    conn.execute(f"DROP TABLE IF EXISTS {table}")
    rows = []
    for label in functions:
        compressed, mapped, n, size = stats[label]
        rows.append(
            [
                label,
                f"{compressed:,} of {n:,}",
                f"{mapped:,}",
                f"{size / 2**20:.0f} MB",
                statistics.median(times[label]),
                statistics.mean(times[label]),
                sorted(times[label])[int(0.95 * len(times[label]))],
            ]
        )
    return rows, same


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.studies.pgstorage", description=__doc__.split("\n\n")[0])
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
            print(
                f"no 100k latency hub in an embedded cluster at {args.pg_dir}: build it with "
                f"`python -m bench latency --sizes 100000 --pg-dir {args.pg_dir}`",
                file=sys.stderr,
            )
            return 2
        questions = list(load_beir(args.dataset).queries.values())
        buffers = asyncio.run(shared_buffers_rows(pg, args.pg_dir, questions, args.rounds))
        forward, same = forward_index_rows(pg, questions, args.rounds)
    finally:
        pg.close()
    text = "\n\n".join(
        [
            f"<!-- python -m bench.studies.pgstorage --rounds {args.rounds}, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} -->",
            "## PostgreSQL storage at 100,000 chunks (the latency hub)",
            "**shared_buffers.** The fused hybrid statement (both rankers, level chunk, k = 10, query vectors "
            "computed once) over the 300 SciFact questions at concurrency 2, after three warm passes; "
            f"{STATEMENTS} statements per size and round, the two sizes in turn, {args.rounds} rounds, the cluster "
            "restarted with each size. CPU: the postmaster and its backends, from /proc.",
            md_table(
                ["shared_buffers", "PostgreSQL CPU ms per statement (median)", "min", "max", "statements/s (median)"],
                buffers,
                2,
            ),
            f"**The BM25 forward index.** `bm25_search(hub, question, 40)` (a hybrid's full-text pool), each of "
            f"the 300 questions through each storage in turn, {args.rounds} rounds after a warm one; the same chunks "
            f"and scores from all of them for {same} of {len(questions)} questions.",
            md_table(
                [
                    "bm25_chunks storage",
                    "rows with compressed terms",
                    "rows with a tf map",
                    "table",
                    "p50 ms",
                    "mean ms",
                    "p95 ms",
                ],
                forward,
                2,
            ),
            machine_line(),
        ]
    )
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "pgstorage.md").write_text(text + "\n", encoding="utf-8")
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
