"""Retrieval quality on a BEIR dataset (default: SciFact), through the real capture path.

Every corpus entry is POSTed to a running server (uvicorn on loopback, a subprocess) as a
markdown doc (title = BEIR title, markdown = BEIR text) in one hub; the server's in-process
worker indexes it with the configured embedder (MEMORYWIKI_EMBEDDER, default `local` =
all-MiniLM-L6-v2). Then:

- nDCG@10 and MRR@10 come from the HTTP recall endpoint at k=10, exactly as a client sees it.
  "full text" is the same endpoint on a second server process with MEMORYWIKI_EMBEDDER=none
  (the API has no per-request switch; without an embedder recall answers from full text).
- Recall@100 needs k=100, above the API's limit of 50, so it comes from the same SQL the
  endpoint runs (memorywiki.server.store.recall.recall_chunks / recall_docs), on the same public
  (row-level-security) pool, with k=100; query vectors from the same embedder, in-process.
  Note: hybrid's candidate pools grow with k, so the k=100 list is not the k=10 list extended.
- Chunk level: results map to their doc; a doc ranks where its best chunk ranks.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import httpx

from ..common import (
    Options,
    Postgres,
    Proc,
    count_summary,
    create_hub,
    load_beir,
    log,
    machine_line,
    make_bench_embedder,
    md_table,
    post_docs,
    run_bm25s,
    run_concurrent,
    wait_indexed,
    write_result,
)

# Published nDCG@10 on a dataset's test split, shown only under that dataset.
PUBLISHED = {"scifact": {"BM25 (BEIR paper)": 0.665, "all-MiniLM-L6-v2 (MTEB)": 0.645}}
METHODS = ("fulltext", "vector", "hybrid")
LEVELS = ("doc", "chunk")


def _runs_from_results(results: list[dict], doc_map: dict[str, str]) -> dict[str, float]:
    """Ordered recall results -> {beir_id: score}, best chunk per doc, scores by rank."""
    run: dict[str, float] = {}
    for rank, r in enumerate(results):
        beir_id = doc_map.get(r["doc_id"])
        if beir_id is not None and beir_id not in run:
            run[beir_id] = 1.0 / (rank + 1)
    return run


def _metrics_py(qrels: dict, run: dict, metrics: list[str]) -> dict[str, float]:
    """Plain-Python nDCG@k (rel / log2(rank + 1)), MRR@k and Recall@k, averaged over qrels' queries."""
    import math

    totals = dict.fromkeys(metrics, 0.0)
    for qid, rels in qrels.items():
        ranked = sorted((run.get(qid) or {}).items(), key=lambda kv: -kv[1])
        for metric in metrics:
            name, k = metric.split("@")
            top = [doc for doc, _ in ranked[: int(k)]]
            if name == "ndcg":
                dcg = sum(rels.get(d, 0) / math.log2(i + 2) for i, d in enumerate(top))
                ideal = sorted(rels.values(), reverse=True)[: int(k)]
                idcg = sum(r / math.log2(i + 2) for i, r in enumerate(ideal))
                totals[metric] += dcg / idcg if idcg else 0.0
            elif name == "mrr":
                totals[metric] += next((1.0 / (i + 1) for i, d in enumerate(top) if rels.get(d, 0) > 0), 0.0)
            elif name == "recall":
                totals[metric] += sum(1 for d in top if rels.get(d, 0) > 0) / max(
                    1, sum(1 for r in rels.values() if r > 0)
                )
    return {m: v / max(1, len(qrels)) for m, v in totals.items()}


USE_RANX = True  # --smoke turns it off: numba's first JIT compile alone takes ~30 s


def evaluate(qrels: dict, run: dict, metrics: list[str]) -> dict[str, float]:
    """ranx's scores; the plain-Python ones must agree (checked), and stand in for --smoke."""
    mine = _metrics_py(qrels, run, metrics)
    if not USE_RANX:
        return mine
    from ranx import Qrels, Run
    from ranx import evaluate as ranx_evaluate

    run = {q: (r if r else {"__none__": 0.0}) for q, r in run.items()}
    for q in qrels:
        run.setdefault(q, {"__none__": 0.0})
    run = {q: r for q, r in run.items() if q in qrels}
    scores = ranx_evaluate(Qrels(qrels), Run(run), metrics)
    if isinstance(scores, float):
        scores = {metrics[0]: scores}
    scores = {k: float(v) for k, v in scores.items()}
    for k in metrics:
        if abs(scores[k] - mine[k]) > 1e-6:
            log(f"[quality] note: ranx {k} {scores[k]:.6f} differs from plain Python {mine[k]:.6f}")
    return scores


async def _api_runs(
    client: httpx.AsyncClient,
    hub: str,
    queries: dict[str, str],
    doc_map: dict,
    level: str,
    hybrid: bool,
    expect_mode: str,
    k: int = 10,
) -> dict[str, dict]:
    async def one(item):
        qid, text = item
        r = await client.post(
            f"/api/hub/{hub}/recall", json={"question": text, "k": k, "level": level, "hybrid": hybrid}
        )
        r.raise_for_status()
        body = r.json()
        if body["mode"] != expect_mode:
            raise RuntimeError(f"expected mode {expect_mode}, got {body['mode']}: {body.get('vector_note')}")
        return qid, _runs_from_results(body["results"], doc_map)

    pairs = await run_concurrent(list(queries.items()), one, 2)
    return dict(pairs)


async def _sql_runs(
    url: str,
    hub_slug: str,
    queries: dict[str, str],
    qvecs: dict[str, list[float]],
    doc_map: dict,
    dim: int,
    k: int = 100,
) -> dict[tuple[str, str], dict]:
    from memorywiki.server.store import recall
    from memorywiki.server.store.db import Database

    db = Database(url, min_size=1, max_size=2)
    await db.open()
    out: dict[tuple[str, str], dict] = {}
    try:
        async with db.public.connection() as conn:
            hub_id = (await (await conn.execute("SELECT id FROM hubs WHERE slug = %s", (hub_slug,))).fetchone())["id"]
            for level in LEVELS:
                fn = recall.recall_docs if level == "doc" else recall.recall_chunks
                for method in METHODS:
                    run = {}
                    for qid, text in queries.items():
                        qvec = None if method == "fulltext" else qvecs[qid]
                        rows = await fn(
                            conn,
                            hub_id=hub_id,
                            question=text,
                            k=k,
                            qvec=qvec,
                            dim=dim if qvec is not None else None,
                            hybrid=method == "hybrid",
                            k1=1.2,
                            b=0.75,
                        )
                        run[qid] = _runs_from_results(rows, doc_map)
                    out[(level, method)] = run
    finally:
        await db.close()
    return out


def _exact_cosine(url: str, queries: dict, qvecs: dict, doc_map: dict, k: int = 100) -> dict | None:
    """Brute-force cosine over the stored doc vectors: what HNSW approximates."""
    import numpy as np
    import psycopg
    from pgvector.psycopg import register_vector

    with psycopg.connect(url) as conn:
        register_vector(conn)
        rows = conn.execute("SELECT id, embedding FROM docs WHERE embedding IS NOT NULL").fetchall()
    if not rows:
        return None
    ids = [doc_map.get(r[0]) for r in rows]
    mat = np.stack([np.asarray(r[1].to_numpy() if hasattr(r[1], "to_numpy") else r[1], dtype=np.float32) for r in rows])
    run = {}
    for qid in queries:
        sims = mat @ np.asarray(qvecs[qid], dtype=np.float32)
        top = np.argsort(-sims)[:k]
        run[qid] = {ids[i]: float(sims[i]) for i in top if ids[i] is not None}
    return run


def _plot(rows: dict, anchors: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4))
    width = 0.38
    xs = range(len(METHODS))
    for i, level in enumerate(LEVELS):
        vals = [rows[(level, m)]["ndcg@10"] for m in METHODS]
        bars = ax.bar([x + (i - 0.5) * width for x in xs], vals, width, label=f"{level} level")
        for b, v in zip(bars, vals, strict=False):
            ax.text(b.get_x() + b.get_width() / 2, v + 0.005, f"{v:.3f}", ha="center", fontsize=8)
    styles = ["--", ":", "-.", (0, (1, 3))]
    for (name, value), style in zip(anchors.items(), styles, strict=False):
        ax.axhline(value, linestyle=style, color="gray", linewidth=1, label=f"{name}: {value:.3f}")
    ax.set_xticks(list(xs), ["full text (BM25)", "vector", "hybrid"])
    ax.set_ylabel("nDCG@10")
    ax.set_ylim(0, max(0.8, max(r["ndcg@10"] for r in rows.values()) + 0.08))
    ax.set_title("Retrieval quality by method (through HTTP, k=10)")
    ax.legend(loc="lower right", fontsize=7, framealpha=0.95)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


async def _main(opts: Options, pg: Postgres) -> dict:
    global USE_RANX
    USE_RANX = not opts.smoke
    data = load_beir(opts.dataset)
    log(f"[quality] {data.name}: {len(data.corpus)} docs, {len(data.queries)} judged queries")
    url = pg.fresh("bench_quality")
    counts = opts.out / ".logs" / "quality-embed-counts.jsonl"
    counts.parent.mkdir(parents=True, exist_ok=True)
    counts.unlink(missing_ok=True)
    logs = opts.out / ".logs"
    result: dict = {"dataset": data.name, "docs": len(data.corpus), "queries": len(data.queries)}

    with Proc("serve", url, logs, counts=counts) as srv:
        async with httpx.AsyncClient(base_url=srv.url, timeout=600) as client:
            token = await create_hub(client, "bench")
            docs = [
                {
                    "title": (d["title"] or "").strip() or d["_id"],
                    "markdown": d["text"] or d["title"],
                    "meta": {"beir_id": d["_id"]},
                }
                for d in data.corpus
            ]
            t0 = time.perf_counter()
            created = await post_docs(client, token, "bench", docs, concurrency=8)
            capture_s = time.perf_counter() - t0
            log(f"[quality] captured {len(docs)} docs in {capture_s:.1f}s; indexing ...")
            await wait_indexed(client, progress=True)
            total_s = time.perf_counter() - t0
            doc_map = {c["id"]: d["_id"] for c, d in zip(created, data.corpus, strict=False)}
            emb = count_summary(counts)
            result.update(capture_s=capture_s, total_s=total_s, embed_calls=emb["calls"], embed_inputs=emb["inputs"])
            log(f"[quality] indexed in {total_s:.1f}s total; evaluating through HTTP ...")

            api: dict[tuple[str, str], dict] = {}
            for level in LEVELS:
                for method in ("vector", "hybrid"):
                    api[(level, method)] = await _api_runs(
                        client, "bench", data.queries, doc_map, level, method == "hybrid", method
                    )
        with Proc("serve", url, logs, embedder="none", worker="external") as ft:
            async with httpx.AsyncClient(base_url=ft.url, timeout=600) as client:
                for level in LEVELS:
                    api[(level, "fulltext")] = await _api_runs(
                        client, "bench", data.queries, doc_map, level, True, "fulltext"
                    )

    embedder = make_bench_embedder(cached=True)
    qids = list(data.queries)
    vecs = await embedder.embed([data.queries[q] for q in qids])
    qvecs = dict(zip(qids, vecs, strict=False))
    dim = len(vecs[0])
    log("[quality] Recall@100 through the recall SQL (k=100) ...")
    sql = await _sql_runs(url, "bench", data.queries, qvecs, doc_map, dim)

    rows = {}
    for key in api:
        m10 = evaluate(data.qrels, api[key], ["ndcg@10", "mrr@10"])
        m100 = evaluate(data.qrels, sql[key], ["recall@100", "ndcg@10"])
        rows[key] = {
            "ndcg@10": m10["ndcg@10"],
            "mrr@10": m10["mrr@10"],
            "recall@100": m100["recall@100"],
            "ndcg@10_sql100": m100["ndcg@10"],
        }
    refs: dict[str, dict] = {}
    bm = run_bm25s(data.corpus, data.queries, 1.2, 0.75, k=min(100, len(data.corpus)))
    refs["bm25s (k1 1.2, b 0.75, Snowball, same data)"] = evaluate(data.qrels, bm, ["ndcg@10", "mrr@10", "recall@100"])
    exact = _exact_cosine(url, data.queries, qvecs, doc_map)
    if exact:
        refs["exact cosine over the stored doc vectors (numpy, no HNSW)"] = evaluate(
            data.qrels, exact, ["ndcg@10", "mrr@10", "recall@100"]
        )
    result["rows"] = {f"{lvl}/{m}": v for (lvl, m), v in rows.items()}
    result["refs"] = refs

    # ---------------------------------------------------------------- report
    names = {
        "fulltext": "full text (BM25 in PostgreSQL)",
        "vector": "vector (HNSW cosine)",
        "hybrid": "hybrid (z-score fusion)",
    }
    table_rows = []
    for level in LEVELS:
        for m in METHODS:
            r = rows[(level, m)]
            table_rows.append([level, names[m], r["ndcg@10"], r["mrr@10"], r["recall@100"], r["ndcg@10_sql100"]])
    table = md_table(
        ["level", "method", "nDCG@10", "MRR@10", "Recall@100 (SQL, k=100)", "nDCG@10 of the k=100 list"], table_rows
    )
    ref_rows = [[name, v.get("ndcg@10"), v.get("mrr@10"), v.get("recall@100")] for name, v in refs.items()]
    anchors = PUBLISHED.get(data.name.lower(), {})
    ref_rows += [[f"published: {name}", value, None, None] for name, value in anchors.items()]
    ref_table = md_table(["reference", "nDCG@10", "MRR@10", "Recall@100"], ref_rows)

    hyb = rows[("chunk", "hybrid")]["ndcg@10"]
    best_alone = max(rows[("chunk", "fulltext")]["ndcg@10"], rows[("chunk", "vector")]["ndcg@10"])
    hyb_doc = rows[("doc", "hybrid")]["ndcg@10"]
    best_doc = max(rows[("doc", "fulltext")]["ndcg@10"], rows[("doc", "vector")]["ndcg@10"])
    bm25s_ndcg = refs["bm25s (k1 1.2, b 0.75, Snowball, same data)"]["ndcg@10"]
    goal = (
        f"Hybrid >= max(full text, vector): chunk level {hyb:.3f} vs {best_alone:.3f} -> "
        f"**{'yes' if hyb >= best_alone else 'no'}**; doc level {hyb_doc:.3f} vs {best_doc:.3f} -> "
        f"**{'yes' if hyb_doc >= best_doc else 'no'}**. Full text vs bm25s (doc level): "
        f"{rows[('doc', 'fulltext')]['ndcg@10']:.3f} vs {bm25s_ndcg:.3f}."
    )
    if data.name.lower() == "scifact":
        goal += (
            f" SciFact goal (hybrid nDCG@10 >= 0.69): chunk {hyb:.3f}, doc {hyb_doc:.3f} -> "
            f"**{'met' if min(hyb, hyb_doc) >= 0.69 else 'missed'}**."
        )
    n = len(data.corpus)
    from ..common import SERVER_ERRORS

    server_errors = ""
    if SERVER_ERRORS:
        server_errors = (
            f"\n**Server errors during capture: {len(SERVER_ERRORS)} POSTs answered 5xx and were retried** "
            f"(first: `{SERVER_ERRORS[0]}`); see the cost section / README for the cause.\n"
        )
        result["server_errors"] = len(SERVER_ERRORS)
        SERVER_ERRORS.clear()
    cache_note = (
        "; vectors of texts embedded before came from the bench's disk cache, bench/embcache.py,"
        " so these speeds are not embedding speeds"
        if opts.extra.get("embed_cache")
        else ""
    )
    text = f"""## Retrieval quality: {data.name} ({n} docs, {len(data.queries)} judged queries)

Embedder: `{embedder.name}`. Every doc went through `POST /api/docs` on a uvicorn server and was
indexed by the server's in-process worker (capture {n / result["capture_s"]:.0f} docs/s over HTTP;
capture + indexing {n / result["total_s"]:.1f} docs/s end to end; {result["embed_calls"]} embedding calls,
{result["embed_inputs"]} inputs, one per chunk{cache_note}).
nDCG@10 and MRR@10: `POST /api/hub/bench/recall` with k=10 (full text from a second server with
`MEMORYWIKI_EMBEDDER=none`, the only way the API answers full text only). Recall@100: the
endpoint's own SQL (`recall_chunks` / `recall_docs`) with k=100 on the public pool, since the API
caps k at 50. Chunk level maps chunks to docs, best-ranked chunk per doc.

{table}

{ref_table}

{goal}
{server_errors}
![quality by method](quality.png)
"""
    print(text)
    write_result(opts, "quality.md", text + "\n" + machine_line() + "\n")
    _plot(rows, {**anchors, "bm25s": bm25s_ndcg}, opts.out / "quality.png")
    pg.drop("bench_quality") if opts.smoke else None
    return result


def run(opts: Options, pg: Postgres) -> dict:
    return asyncio.run(_main(opts, pg))
