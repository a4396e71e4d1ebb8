"""SciFact nDCG@10 at chunk level for several chunk maxima, in this process (no HTTP, no server).

`python -m bench quality` measures the same SQL through the endpoint on the whole corpus with
vectors, which takes an hour on a busy 2-core machine for each maximum; this study answers the
question the chunk maximum raises in minutes:

- full text on the whole corpus (5,183 abstracts, 300 test questions): no embedding needed;
- vector, full text and hybrid on a sample: every abstract the test questions judge plus
  distractors drawn with a fixed seed, up to --docs abstracts.

Docs are saved with store.docs.insert_doc (so store.chunks cuts them), indexed by
indexer.index_docs with the local embedder, recalled with store.recall.recall_chunks at k = 10;
a doc ranks where its best chunk ranks (as `quality`'s chunk level). Configurations: the
chunker before the bounded one (blocks up to 1,800 kept whole, the embedder truncating) and
this checkout's chunker at each maximum (overlap 0, a chunk past the window embedded as the
mean of its windows). Writes bench/results/chunk_scifact.md.

    python -m bench.studies.chunk_scifact [--docs 800] [--maxima 1000,1500,2000] [--embedded-maxima ...]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import time
from pathlib import Path

from ..common import CACHE, RESULTS, SHARED_DATA, Postgres, embedder_env, load_beir, log, machine_line, md_table
from ..suite.longdocs import BEFORE, baseline_chunks_of
from ..suite.quality import _metrics_py

K = 10


async def run_config(
    pg: Postgres,
    name: str,
    chunker,
    size,
    windowed: bool,
    docs: list,
    queries: dict,
    qrels: dict,
    embedder,
    modes: tuple[str, ...],
) -> dict:
    from memorywiki.server.indexing.chunker import ChunkSize
    from memorywiki.server.indexing.indexer import index_docs
    from memorywiki.server.store import chunks as chunk_store
    from memorywiki.server.store import docs as doc_store
    from memorywiki.server.store import recall
    from memorywiki.server.store.db import Database
    from memorywiki.server.store.space import build_indexes

    original = chunk_store.chunks_of
    if chunker is not None:
        chunk_store.chunks_of = chunker
    chunk_store.use_chunk_size(ChunkSize(size, 0) if size else ChunkSize())
    if embedder is not None:
        embedder.windowed = windowed
    url = pg.fresh("bench_chunk_scifact")
    db = Database(url, min_size=1, max_size=4)
    await db.open()
    out: dict = {}
    try:
        async with db.owner.connection() as conn:
            hub = (
                await (
                    await conn.execute("INSERT INTO hubs (slug, owner_token_hash) VALUES ('sf', 'x') RETURNING id")
                ).fetchone()
            )["id"]
        beir_of = {}
        for beir_id, title, text in docs:
            row = await db.write(
                lambda conn, title=title, text=text: doc_store.insert_doc(
                    conn,
                    hub_id=hub,
                    title=title,
                    markdown=text,
                    source=None,
                    meta={},
                    external_id=None,
                    is_draft=False,
                    password_hash=None,
                    allowed_emails=[],
                    edit_token_hash="x",
                    via="owner",
                )
            )
            beir_of[row["id"]] = beir_id
        async with db.owner.connection() as conn:
            out["chunks"] = (await (await conn.execute("SELECT count(*) AS n FROM chunks")).fetchone())["n"]
        qids = list(queries)
        qvecs = {}
        if embedder is not None:
            ids = list(beir_of)
            for i in range(0, len(ids), 16):
                await index_docs(db, embedder, ids[i : i + 16])
            await build_indexes(url)
            qvecs = dict(zip(qids, await embedder.embed_questions([queries[q] for q in qids]), strict=False))
        async with db.public.connection() as conn:
            for mode in modes:
                run = {}
                for qid in qids:
                    qvec = qvecs.get(qid) if mode != "full text" else None
                    found = await recall.recall_chunks(
                        conn,
                        hub_id=hub,
                        question=queries[qid],
                        k=K,
                        qvec=qvec,
                        dim=len(qvec) if qvec else None,
                        hybrid=mode == "hybrid",
                        k1=1.2,
                        b=0.75,
                    )
                    ranked = {}
                    for rank, f in enumerate(found):
                        ranked.setdefault(beir_of[f["doc_id"]], 1.0 / (rank + 1))
                    run[qid] = ranked
                out[mode] = _metrics_py(qrels, run, ["ndcg@10"])["ndcg@10"]
                log(f"[chunk_scifact] {name}: {mode} nDCG@10 {out[mode]:.3f} ({out['chunks']} chunks)")
    finally:
        await db.close()
        pg.drop("bench_chunk_scifact")
        chunk_store.chunks_of = original
        chunk_store.use_chunk_size(ChunkSize())
        if embedder is not None:
            embedder.windowed = True
    return out


async def main(args) -> str:
    os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")
    from memorywiki.server.config import Settings
    from memorywiki.server.embedding.factory import make_embedder

    data = load_beir(args.dataset)
    queries = {q: text for q, text in data.queries.items() if q in data.qrels}
    qrels = {q: data.qrels[q] for q in queries}
    everything = [(d["_id"], (d["title"] or "").strip() or d["_id"], d["text"] or d["title"]) for d in data.corpus]
    judged = {pid for rels in qrels.values() for pid in rels}
    rng = random.Random(7)
    others = [d for d in everything if d[0] not in judged]
    sample = [d for d in everything if d[0] in judged] + rng.sample(others, max(0, args.docs - len(judged)))
    embedder = make_embedder(Settings.from_env(embedder=embedder_env()["MEMORYWIKI_EMBEDDER"]), onnx_in_process=True)

    def configs(maxima):
        before = (
            []
            if args.skip_before
            else [
                (
                    f"before: {BEFORE}'s chunker (1,800, blocks kept whole), truncating",
                    baseline_chunks_of(BEFORE),
                    None,
                    False,
                )
            ]
        )
        return [*before, *((f"chunker max {most:,}, overlap 0, mean of windows", None, most, True) for most in maxima)]

    pg = Postgres(args.pg_dir)
    rows_full, rows_sample = [], []

    def write() -> str:  # after every configuration, so a long run shows its progress
        text = "\n".join(
            [
                f"## SciFact nDCG@10 at chunk level, by chunk maximum (k = {K}, in process)\n",
                f"Embedder `{embedder.name}`; docs saved with `store.docs.insert_doc`, recalled with "
                "`store.recall.recall_chunks` (the endpoint's SQL); a doc ranks where its best chunk ranks. "
                f"`python -m bench.studies.chunk_scifact --docs {args.docs}`.\n",
                f"### Full text, the whole corpus ({len(everything):,} abstracts, {len(queries)} questions)\n",
                md_table(["configuration", "chunks", "full text"], rows_full) + "\n",
                f"### Sample: the {len(judged)} judged abstracts and {len(sample) - len(judged)} distractors "
                f"({len(sample):,} abstracts, {len(queries)} questions)\n",
                md_table(["configuration", "chunks", "full text", "vector", "hybrid", "seconds"], rows_sample) + "\n",
                machine_line(),
            ]
        )
        Path(args.out).mkdir(parents=True, exist_ok=True)
        (Path(args.out) / "chunk_scifact.md").write_text(text, encoding="utf-8")
        return text

    try:
        for name, chunker, size, windowed in configs(args.maxima):
            full = await run_config(pg, name, chunker, size, windowed, everything, queries, qrels, None, ("full text",))
            rows_full.append([name, full["chunks"], full["full text"]])
            write()
        for name, chunker, size, windowed in configs(args.embedded_maxima):
            t = time.perf_counter()
            part = await run_config(
                pg, name, chunker, size, windowed, sample, queries, qrels, embedder, ("full text", "vector", "hybrid")
            )
            rows_sample.append(
                [
                    name,
                    part["chunks"],
                    part["full text"],
                    part["vector"],
                    part["hybrid"],
                    f"{time.perf_counter() - t:.0f}",
                ]
            )
            write()
    finally:
        pg.close()
    text = write()
    print(text)
    return text


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", type=Path, default=SHARED_DATA / "scifact")
    parser.add_argument("--docs", type=int, default=800, help="abstracts in the sample that is embedded")
    parser.add_argument("--maxima", type=lambda s: [int(x) for x in s.split(",")], default=[1000, 1500, 2000])
    parser.add_argument(
        "--embedded-maxima",
        type=lambda s: [int(x) for x in s.split(",")],
        default=[1000, 1500, 2000],
        help="the maxima measured on the embedded sample",
    )
    parser.add_argument("--skip-before", action="store_true", help="only this checkout's chunker")
    parser.add_argument("--out", type=Path, default=RESULTS)
    parser.add_argument("--pg-dir", type=Path, default=CACHE / "pg")
    asyncio.run(main(parser.parse_args()))
