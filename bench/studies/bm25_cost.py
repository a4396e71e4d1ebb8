"""Where a hybrid recall's PostgreSQL CPU goes on the latency section's 100k-chunk hub, and in
the BM25 statement: per query term read, per posting, per candidate re-scored.

    python -m bench latency --sizes 100000 --build-only --pg-dir DIR   # the hub, once
    python -m bench.studies.bm25_cost --pg-dir DIR [--label before] [--out FILE]

Runs on the hub `python -m bench latency` built (database bench_lat_100000), on a connection
set up as the server's public pool is (the memorywiki_public role), with the SciFact questions
and their vectors (embedded once, in this process, before anything is timed). CPU is the
backend's own (user + system, /proc/<backend pid>/stat, around all the questions), not wall
time: the machine is shared. Each cost is measured over every question, `--passes` times, the
lowest pass kept (the others had more of the machine taken from them).

Statements, as the hybrid recall route runs them (services/recall.py):
  hub_and_fulltext   the hub's lookup and full text's pool (store/recall.py HUB_AND_FULLTEXT)
  fused statement    the vector pool, the full-text pool handed back, the fusion, k rows
Inside bm25_search, the stages are cut off one after another (copies of the function in
pg_temp, each returning after one more stage): the question's terms and their df, the
postings read (and summed per candidate), the candidates re-scored from the forward index.
The counts (terms, postings, candidates) are read from the index tables for each question.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from ..common import (
    CACHE,
    RESULTS,
    SHARED_DATA,
    MissingData,
    Postgres,
    load_beir,
    log,
    machine_line,
    make_bench_embedder,
    md_table,
    require_beir,
)

TITLE = "Where a hybrid recall's PostgreSQL CPU goes, and the BM25 statement's (100k chunks)"
INTRO = """Measured by `python -m bench.studies.bm25_cost` on the latency section's 100,000-chunk hub
(SciFact abstracts then synthetic distractors, bench/suite/latency.py), each cost as the backend
process's own CPU time (user + system from /proc) over the 300 SciFact questions, not wall time:
the machine is shared. bm25_search's stages are measured by cutting copies of the function after
each stage; the counts (terms, postings, candidates) are read from the index tables.
"""
K = 10
HUB_DB = "bench_lat_100000"
FUNCTIONS = Path(__file__).resolve().parents[2] / "server" / "store" / "functions" / "40_bm25_search.sql"


def backend_cpu_ms(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) * 1000 / os.sysconf("SC_CLK_TCK")


def search_function() -> str:
    """bm25_search's CREATE statement as this checkout has it."""
    text = FUNCTIONS.read_text()
    start = text.index("CREATE OR REPLACE FUNCTION bm25_search(")
    end = text.index("$$;", start) + 3
    return text[start:end]


def staged(body: str, stage: str) -> str:
    """A copy of bm25_search in pg_temp that returns right after `stage`: "terms" (the question
    analysed, its terms' df and idf), "postings" (every posting read and summed per candidate,
    the best candidates kept, none re-scored)."""
    fn = body.replace("CREATE OR REPLACE FUNCTION bm25_search(", "CREATE OR REPLACE FUNCTION pg_temp.bm25_stage(")
    fn = fn.replace("SECURITY DEFINER ", "")
    if stage == "terms":
        marker = "    IF v_exact THEN"
        return fn.replace(marker, "    RETURN;\n" + marker, 1)
    if stage == "postings":
        # the candidates of the pruned path, summed and cut, returned unscored; the exact path
        # (no pruned term) has no re-scoring stage: it is all postings
        m = re.search(r"\n    -- each pruned term's tf in the candidate.*?LIMIT p_limit;\n", fn, re.S)
        if m is None:
            raise RuntimeError("bm25_search's re-scoring stage not found")
        return fn[: m.start()] + "\n    SELECT c.chunk_id, c.s FROM cand c LIMIT p_limit;\n" + fn[m.end() :]
    raise ValueError(stage)


COUNTS = """
WITH q AS (
    SELECT t.term, sum(t.df) AS df
      FROM bm25_terms t
     WHERE t.hub_id = %(hub)s
       AND t.term = ANY (SELECT lexeme FROM unnest(bm25_tsvector(left(%(question)s, 20000))) LIMIT 256)
     GROUP BY t.term HAVING sum(t.df) > 0
)
SELECT count(*) AS terms,
       count(*) FILTER (WHERE df > %(full)s) AS pruned_terms,
       coalesce(sum(CASE WHEN df > %(full)s THEN least(df, %(topn)s) ELSE df END), 0) AS postings,
       coalesce(sum(df), 0) AS postings_exact
  FROM q
"""
CANDIDATES = """
WITH q AS (
    SELECT t.term, sum(t.df) AS df
      FROM bm25_terms t
     WHERE t.hub_id = %(hub)s
       AND t.term = ANY (SELECT lexeme FROM unnest(bm25_tsvector(left(%(question)s, 20000))) LIMIT 256)
     GROUP BY t.term HAVING sum(t.df) > 0
)
SELECT count(DISTINCT p.chunk_id) AS candidates
  FROM q CROSS JOIN LATERAL (
        SELECT p.chunk_id FROM bm25_postings p
         WHERE p.hub_id = %(hub)s AND p.term = q.term
         ORDER BY p.impact DESC
         LIMIT CASE WHEN q.df > %(full)s THEN %(topn)s ELSE q.df END) p
"""


# The postings stage split further, as plain statements that do what bm25_search's does step by
# step (its constants written in: k1 1.2, b 0.75, full_df 3000, top_n 300, the hub's N and avgdl):
# the postings read, then summed per candidate, then the best 100 kept.
POSTINGS = """
WITH q0 AS (SELECT t.term, sum(t.df) AS df FROM bm25_terms t WHERE t.hub_id = %(hub)s
            AND t.term = ANY (SELECT lexeme FROM unnest(bm25_tsvector(%(question)s))) GROUP BY t.term),
q AS MATERIALIZED (SELECT term, df > 3000 AS pruned,
                          ln(1 + (%(n)s - df + 0.5) / (df + 0.5))::float8 AS idf,
                          CASE WHEN df > 3000 THEN 300 ELSE df END AS n FROM q0),
post AS (SELECT p.chunk_id, q.pruned, q.idf * p.tf / (p.tf + %(c0)s::float8 + %(c1)s::float8 * p.len) AS w
           FROM q CROSS JOIN LATERAL (SELECT p.chunk_id, p.tf, p.len FROM bm25_postings p
                WHERE p.hub_id = %(hub)s AND p.term = q.term ORDER BY p.impact DESC LIMIT q.n) p)
"""
POSTING_STEPS = {
    "terms": "SELECT count(*) FROM q",
    "read": "SELECT count(*) FROM post",
    "summed": "SELECT count(*) FROM (SELECT chunk_id, sum(w) AS s,"
    " coalesce(sum(w) FILTER (WHERE NOT pruned), 0) AS e FROM post GROUP BY chunk_id) x",
    "best 100": "SELECT count(*) FROM (SELECT chunk_id, sum(w) AS s,"
    " coalesce(sum(w) FILTER (WHERE NOT pruned), 0) AS e FROM post GROUP BY chunk_id ORDER BY s DESC LIMIT 100) x",
}


async def _cpu_per_call(conn, pid: int, sql: str, params: list[dict[str, Any]], passes: int) -> float:
    """Backend CPU ms per execution of `sql` (each params once), the lowest of `passes` passes."""
    for p in params[:20]:  # warm: plans cached, pages read
        await (await conn.execute(sql, p)).fetchall()
    best = float("inf")
    for _ in range(passes):
        c0 = backend_cpu_ms(pid)
        for p in params:
            await (await conn.execute(sql, p)).fetchall()
        best = min(best, (backend_cpu_ms(pid) - c0) / len(params))
    return best


async def measure(url: str, questions: list[str], qvecs: list, passes: int) -> dict[str, Any]:

    from memorywiki.server.store import recall
    from memorywiki.server.store.db import Database

    db = Database(url, min_size=1, max_size=2)
    await db.open()
    out: dict[str, Any] = {}
    try:
        async with db.owner.connection() as conn:
            hub = (await (await conn.execute("SELECT id FROM hubs WHERE slug = 'lat'")).fetchone())["id"]
            dim = (await (await conn.execute("SELECT dim FROM embedding_space")).fetchone())["dim"]
            model = (await (await conn.execute("SELECT model FROM embedding_space")).fetchone())["model"]
            full = int(
                (await (await conn.execute("SELECT current_setting('bm25.full_df', true) AS v")).fetchone())["v"]
                or 3000
            )
            topn = int(
                (await (await conn.execute("SELECT current_setting('bm25.top_n', true) AS v")).fetchone())["v"] or 300
            )
            counts = []
            for q in questions:
                row = await (
                    await conn.execute(COUNTS, {"hub": hub, "question": q, "full": full, "topn": topn})
                ).fetchone()
                cand = await (
                    await conn.execute(CANDIDATES, {"hub": hub, "question": q, "full": full, "topn": topn})
                ).fetchone()
                counts.append({**row, **cand})
            # one question's plan of the postings stage, as EXPLAIN (ANALYZE, BUFFERS) tells it
            sample = max(range(len(counts)), key=lambda i: counts[i]["postings"])
            out["sample"] = {"question": questions[sample], **counts[sample]}
        n_pool = recall.pool_size("chunk", K, True)
        async with db.public.connection() as conn:
            pid = (await (await conn.execute("SELECT pg_backend_pid() AS p")).fetchone())["p"]
            base = [{"hub": hub, "question": q, "n": n_pool} for q in questions]
            out["bm25_search"] = await _cpu_per_call(
                conn, pid, "SELECT * FROM bm25_search(%(hub)s, %(question)s, %(n)s)", base, passes
            )
            out["analyse"] = await _cpu_per_call(
                conn, pid, "SELECT count(*) FROM unnest(bm25_tsvector(%(question)s))", base, passes
            )
            out["select1"] = await _cpu_per_call(conn, pid, "SELECT %(n)s::int", base, passes)
            hf = [
                {"slug": "lat", "model": model, "question": q, "n_fts": n_pool, "k1": 1.2, "b": 0.75} for q in questions
            ]
            out["hub_and_fulltext"] = await _cpu_per_call(conn, pid, recall.HUB_AND_FULLTEXT, hf, passes)
            pools = []
            for p in hf:
                row = await (await conn.execute(recall.HUB_AND_FULLTEXT, p)).fetchone()
                pools.append((row["fts_ids"], row["fts_scores"]))
            fused = []
            for q, v, pool in zip(questions, qvecs, pools, strict=True):
                stmt, params = recall.fused_query(
                    "chunk", hub_id=hub, question=q, k=K, qvec=v, dim=dim, hybrid=True, k1=1.2, b=0.75, fts=pool
                )
                fused.append((stmt, params))
            stmt = fused[0][0]
            out["fused"] = await _cpu_per_call(conn, pid, stmt, [p for _, p in fused], passes)
            vec_stmt, _ = recall.fused_query(
                "chunk", hub_id=hub, question="", k=K, qvec=qvecs[0], dim=dim, hybrid=False, k1=1.2, b=0.75
            )
            out["vector_alone"] = await _cpu_per_call(
                conn,
                pid,
                vec_stmt,
                [
                    recall.fused_query(
                        "chunk", hub_id=hub, question=q, k=K, qvec=v, dim=dim, hybrid=False, k1=1.2, b=0.75
                    )[1]
                    for q, v in zip(questions, qvecs, strict=True)
                ],
                passes,
            )
        # the stages, on the owner's pool (pg_temp functions; the public role cannot create them)
        async with db.owner.connection() as conn:
            pid = (await (await conn.execute("SELECT pg_backend_pid() AS p")).fetchone())["p"]
            body = search_function()
            for stage in ("terms", "postings"):
                await conn.execute(staged(body, stage))
                out[f"stage_{stage}"] = await _cpu_per_call(
                    conn, pid, "SELECT * FROM pg_temp.bm25_stage(%(hub)s, %(question)s, %(n)s)", base, passes
                )
            await conn.execute(body.replace("FUNCTION bm25_search(", "FUNCTION pg_temp.bm25_stage(", 1))
            out["stage_all"] = await _cpu_per_call(
                conn, pid, "SELECT * FROM pg_temp.bm25_stage(%(hub)s, %(question)s, %(n)s)", base, passes
            )
            await conn.rollback()
            hubrow = await (
                await conn.execute(
                    "SELECT sum(n_chunks) AS n, sum(total_len)::float8 / sum(n_chunks) AS avgdl"
                    " FROM bm25_hubs WHERE hub_id = %s",
                    (hub,),
                )
            ).fetchone()
            consts = {"hub": hub, "n": hubrow["n"], "c0": 1.2 * 0.25, "c1": 1.2 * 0.75 / hubrow["avgdl"]}
            steps = [{**consts, "question": q} for q in questions]
            out["steps"] = {
                name: await _cpu_per_call(conn, pid, POSTINGS + tail, steps, passes)
                for name, tail in POSTING_STEPS.items()
            }
            s = out["sample"]
            plan = await (
                await conn.execute(
                    "EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) SELECT * FROM bm25_search(%(hub)s, %(question)s, %(n)s)",
                    {"hub": hub, "question": s["question"], "n": n_pool},
                )
            ).fetchall()
            out["plan_outer"] = "\n".join(r["QUERY PLAN"] for r in plan)
            await conn.execute("LOAD 'auto_explain'")
            await conn.execute("SET auto_explain.log_min_duration = 0")
            await conn.execute("SET auto_explain.log_analyze = on")
            await conn.execute("SET auto_explain.log_buffers = on")
            await conn.execute("SET auto_explain.log_nested_statements = on")
            await conn.execute("SET auto_explain.log_level = 'NOTICE'")
            await conn.execute("SET client_min_messages = 'NOTICE'")
            notices: list[str] = []
            conn.add_notice_handler(lambda d: notices.append(d.message_primary or ""))
            await (
                await conn.execute(
                    "SELECT * FROM bm25_search(%(hub)s, %(question)s, %(n)s)",
                    {"hub": hub, "question": s["question"], "n": n_pool},
                )
            ).fetchall()
            await conn.execute("RESET auto_explain.log_min_duration")
            # the statement that reads the postings and re-scores (the others are a few rows each)
            out["plan_inner"] = max(notices, key=len) if notices else ""
            await conn.rollback()
    finally:
        await db.close()
    out["counts"] = counts
    return out


def report(label: str, r: dict[str, Any], questions: int, passes: int) -> str:
    counts = r["counts"]

    def mean(key: str) -> float:
        return statistics.fmean(c[key] for c in counts)

    pruned_q = [c for c in counts if c["pruned_terms"]]
    terms, postings, cands = mean("terms"), mean("postings"), mean("candidates")
    rescored = statistics.fmean(min(max(100, 2 * 40), c["candidates"]) if c["pruned_terms"] else 0 for c in counts)
    t_terms = r["stage_terms"] - r["select1"]
    t_post = r["stage_postings"] - r["stage_terms"]
    t_resc = r["stage_all"] - r["stage_postings"]
    rows = [
        ["hub_and_fulltext (the hub, full text's pool of 40)", r["hub_and_fulltext"]],
        ["fused statement (vector pool of 40, the pool handed back, fusion, 10 rows)", r["fused"]],
        ["hybrid recall, both statements", r["hub_and_fulltext"] + r["fused"]],
        ["bm25_search alone (SELECT * FROM bm25_search(hub, q, 40))", r["bm25_search"]],
        ["vector recall alone (k 10)", r["vector_alone"]],
        ["the question analysed alone (bm25_tsvector)", r["analyse"]],
        ["an empty statement (SELECT $1), the round trip's own", r["select1"]],
    ]
    stages = [
        [
            "terms: the question analysed, df and idf of its terms",
            t_terms,
            f"{terms:.1f} terms",
            1000 * t_terms / terms if terms else None,
            "µs per term",
        ],
        [
            "postings: read (rare terms whole, frequent ones their top 300) and summed per candidate",
            t_post,
            f"{postings:.0f} postings, {cands:.0f} candidates",
            1000 * t_post / postings if postings else None,
            "µs per posting",
        ],
        [
            "re-scoring: the best candidates' frequent terms from the forward index",
            t_resc,
            f"{rescored:.0f} candidates ({len(pruned_q)} of {len(counts)} questions prune)",
            1000 * t_resc / rescored if rescored else None,
            "µs per candidate",
        ],
    ]
    st = r["steps"]
    split = [
        [
            "read (index-only scans, each posting's weight)",
            st["read"] - st["terms"],
            1000 * (st["read"] - st["terms"]) / postings,
        ],
        [
            "summed per candidate (hash aggregate)",
            st["summed"] - st["read"],
            1000 * (st["summed"] - st["read"]) / postings,
        ],
        [
            "the best 100 kept (top-N sort)",
            st["best 100"] - st["summed"],
            1000 * (st["best 100"] - st["summed"]) / cands,
        ],
    ]
    sample = r["sample"]
    return f"""### {label}

Backend CPU per statement (ms, user + system of the backend process, the lowest of {passes} passes over the
{questions} SciFact questions; hub of 100,000 chunks, as the public role):

{md_table(["statement", "CPU ms"], rows, digits=3)}

Inside bm25_search (staged copies of the function, each cut after one more stage; the difference
between two stages is that stage's cost; counts are means per question):

{md_table(["stage", "CPU ms", "work per question", "cost", "unit"], stages, digits=3)}

The postings stage step by step (plain statements doing what it does, one step more each time):

{md_table(["step", "CPU ms", "µs per posting (sort: per candidate)"], split, digits=3)}

Per question (mean): {terms:.1f} terms in the hub, {mean("pruned_terms"):.1f} of them frequent (df > full_df, read
to their top 300), {postings:.0f} postings read (all of every term's: {mean("postings_exact"):.0f}), {cands:.0f}
distinct candidates.

The question with the most postings ({sample["postings"]} postings, {sample["terms"]} terms,
{sample["pruned_terms"]} pruned, {sample["candidates"]} candidates): "{sample["question"][:120]}"; bm25_search's
statement that reads the postings and re-scores, as auto_explain (ANALYZE, BUFFERS) logged it:

```
{r["plan_inner"].strip()}
```
"""


async def _main(args: argparse.Namespace) -> None:
    try:
        require_beir(args.dataset)  # before PostgreSQL starts: where to get it, not a traceback
    except MissingData as error:
        print(error, file=sys.stderr)
        sys.exit(2)
    pg = Postgres(args.pg_dir)
    try:
        if not pg.exists(HUB_DB):
            sys.exit(f"no {HUB_DB} in {args.pg_dir}: run `python -m bench latency --sizes 100000 --build-only` first")
        data = load_beir(args.dataset)
        questions = list(data.queries.values())[: args.questions]
        embedder = make_bench_embedder()
        qvecs = await embedder.embed(questions)
        log(f"[bm25_cost] {len(questions)} questions, {args.passes} passes")
        t0 = time.perf_counter()
        r = await measure(pg.db_url(HUB_DB), questions, qvecs, args.passes)
        text = report(args.label, r, len(questions), args.passes)
        text += f"\n{machine_line()} ({time.perf_counter() - t0:.0f} s)\n"
        print(text)
        if args.out:
            args.out.parent.mkdir(parents=True, exist_ok=True)
            head = "" if args.out.exists() else f"# {TITLE}\n\n{INTRO}\n"
            with args.out.open("a", encoding="utf-8") as f:
                f.write(f"{head}<!-- {' '.join(['python -m bench.studies.bm25_cost', *sys.argv[1:]])} -->\n{text}\n")
    finally:
        pg.close()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.studies.bm25_cost", description=__doc__)
    parser.add_argument("--pg-dir", type=Path, default=CACHE / "pg")
    parser.add_argument("--dataset", type=Path, default=SHARED_DATA / "scifact")
    parser.add_argument("--questions", type=int, default=300)
    parser.add_argument("--passes", type=int, default=3)
    parser.add_argument("--label", default="this checkout")
    parser.add_argument("--out", type=Path, default=None, help=f"append the section to this file (e.g. {RESULTS})")
    asyncio.run(_main(parser.parse_args(argv)))


if __name__ == "__main__":
    main()
