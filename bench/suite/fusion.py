"""Fusion against each ranker on every collection the bench can read: English and not.

    python -m bench fusion                      # 300 questions a collection, bench/results/fusion.md
    python -m bench fusion --questions 100 --collections arcd,scifact
    python -m bench fusion --embed-cache bench/.cache/embeddings --pools bench/.cache/fusion-pools.pkl

Every collection is captured through a running server (uvicorn subprocess, `POST /api/docs`, its
in-process worker indexing with MEMORYWIKI_EMBEDDER, default all-MiniLM-L6-v2), one hub per
collection (LoCoMo: one per conversation). Then each sampled question is asked at level chunk,
k = 10:

- vector: `POST /api/hub/<hub>/recall` with `"hybrid": false`;
- hybrid, the default fusion and `"fusion": "rrf"`: the same endpoint (the response names the
  fusion that ran, checked);
- full text: the endpoint's own SQL (`recall_chunks` with no question vector: what a server with
  no embedder answers), in this process;
- hybrid, z-scores before: each ranker's candidate pool (the same SQL, vector alone and full text
  alone, top 40 = max(4k, 40)), fused here as the server fused them before it weighed its rankers:
  each candidate's score above its pool's floor in standard deviations of the pool, summed.

nDCG@10 over docs: a result counts for the doc it belongs to, at the rank of that doc's best chunk
(SciFact, Cranfield, CISI: their graded judgments; the SQuAD-layout sets: the question's own
paragraph; LoCoMo: the sessions that hold the evidence). LoCoMo also gets evidence recall@10, the
share of the evidence turns among the returned chunks.

The exact-identifier set is in the repository (bench/data/identifiers.json, written by
bench/data/make_identifiers.py: identifiers among look-alike decoys). The other datasets are not:
SciFact and LoCoMo from --data (the project's shared data folder), the rest from --raw, one file
or folder each, as their public git repositories hold them:

    cran.all.1400, cran.qry, cranqrel   Cranfield, e.g. github.com/Chetan-Prasad/IR-Lucene_Cran
    CISI.ALL, CISI.QRY, CISI.REL        CISI, e.g. github.com/Shakiba-Alipour/Information-Retrieval-on-CISI
    arcd.json                           github.com/husseinmozannar/SOQAL (data/arcd.json)
    cmrc2018_dev.json                   github.com/ymcui/cmrc2018 (squad-style-data/cmrc2018_dev.json)
    jsquad_valid.json                   github.com/yahoojapan/JGLUE (datasets/jsquad-v1.3/valid-v1.3.json)
    korquad_v1_dev.json                 github.com/korquad/korquad.github.io (dataset/KorQuAD_v1.0_dev.json)
    dbpedia-entity/                     BEIR's DBpedia-Entity v2 (corpus.jsonl, queries.jsonl,
                                        qrels/test.tsv); queries and qrels are in
                                        github.com/iai-group/DBpedia-Entity, the 4.6 M abstracts
                                        only in BEIR's download (a git copy is an LFS pointer)

A collection whose files are missing is skipped and named.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import pickle
import random
import re
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from ..common import (
    CACHE,
    RESULTS,
    SHARED_DATA,
    Options,
    Postgres,
    Proc,
    create_hub,
    load_beir,
    log,
    machine_line,
    make_bench_embedder,
    md_table,
    post_docs,
    run_concurrent,
    wait_indexed,
    write_result,
)

# Cranfield, CISI and the SQuAD-layout sets: the project's data folder beside shared/ (MEMORYWIKI_BENCH_RAW)
RAW_DATA = Path(os.environ.get("MEMORYWIKI_BENCH_RAW", SHARED_DATA.parents[1] / "data" / "raw"))
K = 10
POOL = 40  # each ranker's candidates at k = 10: max(4k, 40), as the server reads them
COLUMNS = ("vector", "fulltext", "zscore-before", "hybrid", "rrf")
HEADERS = {
    "vector": "vector",
    "fulltext": "full text",
    "zscore-before": "hybrid, z-scores before",
    "hybrid": "hybrid, default fusion",
    "rrf": "hybrid, RRF",
}


@dataclass
class Doc:
    key: str
    hub: str
    title: str
    markdown: str
    source: str | None = None
    doc_id: str | None = None
    session: object = None  # LoCoMo: the bench.suite.locomo Session, for the turns a chunk holds


@dataclass
class Query:
    hub: str
    text: str
    relevant: dict[str, int]  # doc key -> grade
    evidence: frozenset[str] = frozenset()  # LoCoMo turn ids


@dataclass
class Collection:
    name: str
    language: str
    docs: list[Doc]
    queries: list[Query]
    metric_note: str = ""
    by_key: dict[str, Doc] = field(default_factory=dict)

    def __post_init__(self):
        self.by_key = {d.key: d for d in self.docs}


# --------------------------------------------------------------------------- collections


def scifact(data: Path, raw: Path) -> Collection | str:
    folder = data / "scifact"
    if not (folder / "corpus.jsonl").is_file():
        return f"SciFact: no {folder}/corpus.jsonl"
    beir = load_beir(folder)
    docs = [
        Doc(d["_id"], "scifact", (d["title"] or "").strip() or d["_id"], d["text"] or d["title"]) for d in beir.corpus
    ]
    queries = [Query("scifact", beir.queries[q], beir.qrels[q]) for q in beir.queries]
    return Collection("SciFact", "en", docs, queries)


def locomo(data: Path, raw: Path) -> Collection | str:
    from .locomo import chat_sessions, evidence_sessions, load

    folder = data / "locomo"
    if not (folder / "locomo10.json").is_file():
        return f"LoCoMo: no {folder}/locomo10.json"
    samples, qa = load(folder)
    docs, hubs = [], {}
    for sample in samples:
        hub = re.sub(r"[^a-z0-9-]+", "-", f"locomo-{sample['sample_id']}".lower()).strip("-")[:63]
        hubs[sample["sample_id"]] = hub
        docs += [Doc(s.key, hub, s.title, s.markdown, s.source, session=s) for s in chat_sessions(sample)]
    queries = [
        Query(hubs[q["sample_id"]], q["question"], dict.fromkeys(evidence_sessions(q), 1), frozenset(q["evidence"]))
        for q in qa
    ]
    return Collection("LoCoMo", "en", docs, queries, "sessions holding the evidence")


def _dot_fields(text: str) -> dict[str, dict[str, str]]:
    """The SMART layout of Cranfield and CISI: `.I id`, then `.T`, `.A`, `.W`, ... fields."""
    records: dict[str, dict[str, str]] = {}
    current: dict[str, list[str]] | None = None
    name = ""
    for line in text.splitlines():
        m = re.match(r"^\.([A-Z])\s*(.*)$", line)
        if m and m.group(1) == "I":
            current = {}
            records[m.group(2).strip()] = current  # type: ignore[assignment]
            name = ""
        elif m and current is not None:
            name = m.group(1)
            current.setdefault(name, [])
            if m.group(2).strip():
                current[name].append(m.group(2))
        elif current is not None and name:
            current[name].append(line)
    return {i: {k: " ".join(" ".join(v).split()) for k, v in r.items()} for i, r in records.items()}  # type: ignore[union-attr]


def cranfield(data: Path, raw: Path) -> Collection | str:
    files = [raw / n for n in ("cran.all.1400", "cran.qry", "cranqrel")]
    if not all(f.is_file() for f in files):
        return f"Cranfield: no {files[0]}"
    corpus = _dot_fields(files[0].read_text(encoding="utf-8", errors="replace"))
    docs = []
    for i, r in corpus.items():
        title = r.get("T", "").rstrip(" .") or f"Cranfield {i}"
        docs.append(Doc(str(int(i)), "cranfield", title, r.get("W", "") or title))
    # cranqrel numbers the queries 1..225 in file order, not by their .I ids; codes 1 (a complete
    # answer) .. 4 (of minimal interest) become grades 4 .. 1; -1 (not relevant) is dropped
    texts = [r.get("W", "") for r in _dot_fields(files[1].read_text(encoding="utf-8", errors="replace")).values()]
    qrels: dict[int, dict[str, int]] = {}
    for line in files[2].read_text().splitlines():
        parts = line.split()
        if len(parts) >= 3 and 1 <= int(parts[2]) <= 4:
            qrels.setdefault(int(parts[0]), {})[parts[1]] = 5 - int(parts[2])
    queries = [Query("cranfield", texts[n - 1], rel) for n, rel in sorted(qrels.items()) if n <= len(texts)]
    return Collection("Cranfield", "en", docs, queries)


def cisi(data: Path, raw: Path) -> Collection | str:
    files = [raw / n for n in ("CISI.ALL", "CISI.QRY", "CISI.REL")]
    if not all(f.is_file() for f in files):
        return f"CISI: no {files[0]}"
    corpus = _dot_fields(files[0].read_text(encoding="utf-8", errors="replace"))
    docs = [Doc(i, "cisi", r.get("T", "") or f"CISI {i}", r.get("W", "") or r.get("T", "")) for i, r in corpus.items()]
    texts = {i: r.get("W", "") for i, r in _dot_fields(files[1].read_text(encoding="utf-8", errors="replace")).items()}
    qrels: dict[str, dict[str, int]] = {}
    for line in files[2].read_text().splitlines():
        parts = line.split()
        if len(parts) >= 2:
            qrels.setdefault(parts[0], {})[parts[1]] = 1
    queries = [Query("cisi", texts[q], rel) for q, rel in qrels.items() if texts.get(q)]
    return Collection("CISI", "en", docs, queries)


def squad(name: str, language: str, file: str, hub: str):
    """A SQuAD-layout reading-comprehension set as a retrieval set: the corpus is its unique
    paragraphs (titled by their article), each question a query, its own paragraph the one
    relevant doc."""

    def load(data: Path, raw: Path) -> Collection | str:
        path = raw / file
        if not path.is_file():
            return f"{name}: no {path}"
        keys: dict[str, str] = {}
        docs, queries = [], []
        for article in json.loads(path.read_text(encoding="utf-8"))["data"]:
            for paragraph in article["paragraphs"]:
                title, text = article.get("title", "").replace("_", " "), paragraph["context"]
                if " [SEP] " in text:  # JSQuAD opens each context with its title
                    title, text = text.split(" [SEP] ", 1)
                key = keys.get(text)
                if key is None:
                    key = keys[text] = str(len(keys))
                    docs.append(Doc(key, hub, title.strip() or f"{name} {key}", text))
                queries += [
                    Query(hub, qa["question"].strip(), {key: 1}) for qa in paragraph["qas"] if qa["question"].strip()
                ]
        return Collection(name, language, docs, queries, "the question's own paragraph")

    return load


IDENTIFIERS = Path(__file__).resolve().parents[1] / "data" / "identifiers.json"


def identifiers(data: Path, raw: Path) -> Collection | str:
    """Exact identifiers among look-alike decoys (bench/data/identifiers.json): the one note
    holding the identifier is the answer."""
    if not IDENTIFIERS.is_file():
        return f"identifiers: no {IDENTIFIERS} (python bench/data/make_identifiers.py)"
    got = json.loads(IDENTIFIERS.read_text(encoding="utf-8"))
    docs = [Doc(d["key"], "identifiers", d["title"], d["markdown"]) for d in got["docs"]]
    queries = [Query("identifiers", q["text"], {q["relevant"]: 1}) for q in got["questions"]]
    return Collection("Identifiers", "en", docs, queries, "the note holding the identifier")


def dbpedia(data: Path, raw: Path) -> Collection | str:
    """DBpedia-Entity v2 in BEIR's layout (test split, graded 0-2): entity search, short names
    and descriptions as questions over DBpedia abstracts."""
    folder = raw / "dbpedia-entity"
    if not (folder / "corpus.jsonl").is_file():
        return (
            f"DBpedia-Entity: no {folder}/corpus.jsonl (BEIR's dbpedia-entity; the queries and qrels "
            "are in github.com/iai-group/DBpedia-Entity, the abstracts are not in any git repository)"
        )
    beir = load_beir(folder)
    docs = [
        Doc(d["_id"], "dbpedia", (d["title"] or "").strip() or d["_id"], d["text"] or d["title"]) for d in beir.corpus
    ]
    queries = [
        Query("dbpedia", beir.queries[q], {k: v for k, v in beir.qrels[q].items() if v > 0}) for q in beir.queries
    ]
    return Collection("DBpedia-Entity", "en", docs, [q for q in queries if q.relevant], "graded judgments")


COLLECTIONS = {
    "identifiers": identifiers,
    "dbpedia": dbpedia,
    "scifact": scifact,
    "locomo": locomo,
    "cranfield": cranfield,
    "cisi": cisi,
    "arcd": squad("ARCD", "ar", "arcd.json", "arcd"),
    "cmrc": squad("CMRC 2018", "zh", "cmrc2018_dev.json", "cmrc"),
    "jsquad": squad("JSQuAD", "ja", "jsquad_valid.json", "jsquad"),
    "korquad": squad("KorQuAD", "ko", "korquad_v1_dev.json", "korquad"),
}


# --------------------------------------------------------------------------- metrics


def ndcg(relevant: dict[str, int], ranked_keys: list[str], k: int = K) -> float:
    seen: list[str] = []
    for key in ranked_keys:
        if key not in seen:
            seen.append(key)
    dcg = sum(relevant.get(d, 0) / math.log2(i + 2) for i, d in enumerate(seen[:k]))
    ideal = sorted(relevant.values(), reverse=True)[:k]
    idcg = sum(g / math.log2(i + 2) for i, g in enumerate(ideal))
    return dcg / idcg if idcg else 0.0


def evidence_recall(q: Query, col: Collection, chunks: list[tuple[str, str]]) -> float:
    """Share of a LoCoMo question's evidence turns among the returned chunks (doc key, markdown)."""
    found: set[str] = set()
    for key, markdown in chunks[:K]:
        found |= col.by_key[key].session.turns_in(markdown)
    return len(q.evidence & found) / len(q.evidence) if q.evidence else 0.0


def zscore_sum(vec: list[tuple[int, float]], fts: list[tuple[int, float]]) -> list[int]:
    """The fusion before rankers were weighed: per pool, (score - min) / stddev (1 for a lone
    candidate or a pool of equal scores), 0 when absent; summed; ties by vector rank, then full
    text's rank, then chunk id (server/store/recall.py at the time)."""

    def z(pool):
        scores = [s for _, s in pool]
        if not scores:
            return {}
        mean = sum(scores) / len(scores)
        sd = math.sqrt(sum((s - mean) ** 2 for s in scores) / len(scores))
        low = min(scores)
        return {cid: ((s - low) / sd if sd > 0 else 1.0) for cid, s in pool}

    zv, zf = z(vec), z(fts)
    vrank = {cid: i for i, (cid, _) in enumerate(vec)}
    frank = {cid: i for i, (cid, _) in enumerate(fts)}
    ids = set(zv) | set(zf)
    big = 10**9
    order = sorted(ids, key=lambda c: (-(zv.get(c, 0.0) + zf.get(c, 0.0)), vrank.get(c, big), frank.get(c, big), c))
    return order[:K]


# --------------------------------------------------------------------------- run


def sample(queries: list[Query], n: int, seed: int = 25) -> list[Query]:
    if len(queries) <= n:
        return list(queries)
    picked = sorted(random.Random(seed).sample(range(len(queries)), n))
    return [queries[i] for i in picked]


def cut(col: Collection, questions: int, docs: int) -> tuple[Collection, list[Query]]:
    """The collection cut to about `docs` docs, and its sampled questions. LoCoMo keeps whole
    conversations (hubs), the first ones while their sessions hold about `docs` chunks (at most
    600 characters of chat a chunk), and asks only their questions; the others keep every doc a
    sampled question judges, then the first docs in the corpus's order up to `docs` (the
    distractors)."""
    if docs <= 0:
        return col, sample(col.queries, questions)
    if len({d.hub for d in col.docs}) > 1:
        size: dict[str, int] = {}
        for d in col.docs:
            size[d.hub] = size.get(d.hub, 0) + len(d.markdown)
        hubs, total = [], 0
        for hub, chars in size.items():
            if hubs and total + chars > docs * 600:
                break
            hubs.append(hub)
            total += chars
        kept = Collection(
            col.name,
            col.language,
            [d for d in col.docs if d.hub in hubs],
            [q for q in col.queries if q.hub in hubs],
            col.metric_note,
        )
        return kept, sample(kept.queries, questions)
    if len(col.docs) <= docs:
        return col, sample(col.queries, questions)
    asked = sample(col.queries, questions)
    wanted = {key for q in asked for key in q.relevant}
    keep = [d for d in col.docs if d.key in wanted]
    for d in col.docs:
        if len(keep) >= docs:
            break
        if d.key not in wanted:
            keep.append(d)
    order = {d.key: i for i, d in enumerate(col.docs)}
    keep.sort(key=lambda d: order[d.key])
    return Collection(col.name, col.language, keep, asked, col.metric_note), asked


async def capture(client: httpx.AsyncClient, cols: list[Collection]) -> dict[str, Doc]:
    """Every collection's docs into their hubs; the server's doc id -> Doc."""
    by_id: dict[str, Doc] = {}
    for col in cols:
        hubs: dict[str, list[Doc]] = {}
        for d in col.docs:
            hubs.setdefault(d.hub, []).append(d)
        t0 = time.perf_counter()
        for hub, docs in hubs.items():
            token = await create_hub(client, hub)
            created = await post_docs(
                client,
                token,
                hub,
                [
                    {
                        "title": d.title,
                        "markdown": d.markdown,
                        "dedupe": False,
                        **({"source": d.source} if d.source else {}),
                    }
                    for d in docs
                ],
                concurrency=4,
            )
            for d, c in zip(docs, created, strict=False):
                d.doc_id = c["id"]
                by_id[c["id"]] = d
        log(
            f"[fusion] {col.name}: captured {len(col.docs)} docs in {len(hubs)} hub(s) in {time.perf_counter() - t0:.0f}s"
        )
    return by_id


async def ask_http(client: httpx.AsyncClient, q: Query, body: dict) -> dict:
    r = await client.post(f"/api/hub/{q.hub}/recall", json={"question": q.text, "k": K, "level": "chunk", **body})
    r.raise_for_status()
    return r.json()


async def pools(url: str, cols: list[Collection], asked: dict[str, list[Query]]) -> dict[tuple[str, int], dict]:
    """Each asked question's two candidate pools and full text's answer, from the endpoint's SQL
    on the public pool: {"vec": [(chunk id, similarity)], "fts": [(chunk id, bm25)], "fulltext":
    [chunk id]} by (collection, question index)."""
    from memorywiki.server.store import recall
    from memorywiki.server.store.db import Database

    embedder = make_bench_embedder(cached=True)
    db = Database(url, min_size=1, max_size=2)
    await db.open()
    out: dict[tuple[str, int], dict] = {}
    try:
        async with db.public.connection() as conn:
            hub_ids = {r["slug"]: r["id"] for r in await (await conn.execute("SELECT id, slug FROM hubs")).fetchall()}
            space = await (await conn.execute("SELECT dim FROM embedding_space")).fetchone()
            dim = space["dim"]
            for col in cols:
                qs = asked[col.name]
                vectors = await embedder.embed_questions([q.text for q in qs])
                for i, (q, qvec) in enumerate(zip(qs, vectors, strict=False)):
                    common = {"hub_id": hub_ids[q.hub], "question": q.text, "k1": 1.2, "b": 0.75}
                    vec = await recall.recall_chunks(conn, **common, k=POOL, qvec=qvec, dim=dim, hybrid=False)
                    fts = await recall.recall_chunks(conn, **common, k=POOL, qvec=None, dim=None, hybrid=False)
                    out[(col.name, i)] = {
                        "vec": [(r["chunk_id"], r["similarity"]) for r in vec],
                        "fts": [(r["chunk_id"], r["fts_score"]) for r in fts],
                        "fulltext": [r["chunk_id"] for r in fts[:K]],
                    }
            chunks = {
                r["id"]: (r["doc_id"], r["markdown"])
                for r in await (await conn.execute("SELECT id, doc_id, markdown FROM chunks")).fetchall()
            }
    finally:
        await db.close()
    out[("", -1)] = {"chunks": chunks}
    return out


async def _main(args: argparse.Namespace, pg: Postgres) -> None:
    wanted = [c.strip().lower() for c in args.collections.split(",") if c.strip()]
    cols, skipped = [], []
    for name in wanted:
        got = COLLECTIONS[name](args.data, args.raw)
        (skipped if isinstance(got, str) else cols).append(got)
    for why in skipped:
        log(f"[fusion] skipped {why}")
    if not cols:
        raise SystemExit(2)
    cols, samples = zip(*(cut(c, args.questions, args.docs) for c in cols), strict=False)
    asked = {c.name: qs for c, qs in zip(cols, samples, strict=False)}
    url = pg.fresh("bench_fusion")
    logs = args.out / ".logs"
    results: dict[tuple[str, str], list[float]] = {}
    evidence: dict[str, list[float]] = {}
    fusion_seen: dict[str, set] = {}
    t0 = time.perf_counter()
    with Proc("serve", url, logs) as srv:
        async with httpx.AsyncClient(base_url=srv.url, timeout=600) as client:
            by_id = await capture(client, cols)
            await wait_indexed(client, progress=True)
            embedder = (await client.get("/healthz")).json()["embedder"]
            index_s = time.perf_counter() - t0
            log(f"[fusion] indexed in {index_s:.0f}s; pools through SQL ...")
            got = await pools(url, cols, asked)
            chunk_doc = got.pop(("", -1))["chunks"]
            if args.pools:
                args.pools.parent.mkdir(parents=True, exist_ok=True)
                keyed = {cid: (by_id[doc].key, md) for cid, (doc, md) in chunk_doc.items() if doc in by_id}
                args.pools.write_bytes(
                    pickle.dumps(
                        {
                            "collections": {
                                c.name: [(q.text, q.relevant, q.evidence) for q in asked[c.name]] for c in cols
                            },
                            "pools": got,
                            "chunks": keyed,
                        }
                    )
                )
                log(f"[fusion] pools written to {args.pools}")
            if args.pools_only:
                return

            def keys(chunk_ids: list[int]) -> list[tuple[str, str]]:
                return [(by_id[chunk_doc[c][0]].key, chunk_doc[c][1]) for c in chunk_ids]

            for col in cols:
                qs = asked[col.name]
                log(f"[fusion] {col.name}: {len(qs)} questions over HTTP ...")
                lists: dict[str, list[list[tuple[str, str]]]] = {}
                for column, body in (("vector", {"hybrid": False}), ("hybrid", {}), ("rrf", {"fusion": "rrf"})):
                    answers = await run_concurrent(qs, lambda q, b=body: ask_http(client, q, b), 2)
                    fusion_seen[column] = {a.get("fusion") for a in answers}
                    lists[column] = [[(by_id[r["doc_id"]].key, r["markdown"]) for r in a["results"]] for a in answers]
                lists["fulltext"] = [keys(got[(col.name, i)]["fulltext"]) for i in range(len(qs))]
                lists["zscore-before"] = [
                    keys(zscore_sum(got[(col.name, i)]["vec"], got[(col.name, i)]["fts"])) for i in range(len(qs))
                ]
                for column in COLUMNS:
                    results[(col.name, column)] = [
                        ndcg(q.relevant, [key for key, _ in ranked])
                        for q, ranked in zip(qs, lists[column], strict=False)
                    ]
                    if col.name == "LoCoMo":
                        evidence[column] = [
                            evidence_recall(q, col, ranked) for q, ranked in zip(qs, lists[column], strict=False)
                        ]
    report(args, cols, asked, results, evidence, fusion_seen, embedder, index_s, skipped)


def report(args, cols, asked, results, evidence, fusion_seen, embedder, index_s, skipped) -> None:
    def mean(xs):
        return sum(xs) / len(xs) if xs else float("nan")

    rows = []
    for col in cols:
        figures = {c: mean(results[(col.name, c)]) for c in COLUMNS}
        better = max(figures["vector"], figures["fulltext"])
        rows.append(
            [
                col.name,
                col.language,
                len(col.docs),
                len(asked[col.name]),
                *(figures[c] for c in COLUMNS),
                "yes" if figures["hybrid"] >= better - 0.0005 else "**no**",
            ]
        )
    table = md_table(
        ["collection", "lang", "docs", "questions", *(HEADERS[c] for c in COLUMNS), "default >= better ranker?"], rows
    )
    extra = ""
    if evidence:
        extra = "\n\nLoCoMo, evidence recall@10 (share of the evidence turns among the 10 chunks):\n\n" + md_table(
            [HEADERS[c] for c in COLUMNS], [[mean(evidence[c]) for c in COLUMNS]]
        )
    names = ", ".join(f"{column}: {sorted(map(str, seen))}" for column, seen in fusion_seen.items())
    missing = "".join(f"\n- skipped: {why}" for why in skipped)
    text = f"""## Fusion against each ranker, nDCG@10 at level chunk, k = 10

`{args.command}`. Embedder `{embedder}`; {sum(len(c.docs) for c in cols)} docs captured through
`POST /api/docs` and indexed by the server's worker in {index_s:.0f} s. Up to {args.questions}
questions a collection (a fixed sample), each asked once per column: vector, the default fusion and
RRF through `POST /api/hub/<hub>/recall`; full text and each ranker's pool of {POOL} through the
endpoint's SQL; "z-scores before" fuses those two pools as the server did before it weighed its
rankers. A result counts for its doc at the rank of the doc's best chunk (relevant: the collection's
judgments; SQuAD-layout sets: the question's own paragraph; LoCoMo: the sessions holding the
evidence). The fusion each response named: {names}.{missing}

{table}{extra}
"""
    print(text)
    write_result(Options(out=args.out), "fusion.md", text + "\n" + machine_line() + "\n")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench fusion", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--collections",
        default=",".join(COLLECTIONS),
        help=f"comma-separated, of: {', '.join(COLLECTIONS)} (default: all)",
    )
    parser.add_argument("--questions", type=int, default=300, help="questions sampled per collection (default 300)")
    parser.add_argument(
        "--docs",
        type=int,
        default=0,
        help="cut each collection to about this many docs: the sampled questions' judged docs, then "
        "the first others (LoCoMo: whole conversations); 0 = every doc (default)",
    )
    parser.add_argument("--data", type=Path, default=SHARED_DATA, help="folder holding scifact/ and locomo/")
    parser.add_argument(
        "--raw",
        type=Path,
        default=RAW_DATA,
        help="folder of the raw Cranfield, CISI and SQuAD-layout files (MEMORYWIKI_BENCH_RAW)",
    )
    parser.add_argument("--out", type=Path, default=RESULTS, help="where fusion.md goes")
    parser.add_argument(
        "--pg-dir", type=Path, default=CACHE / "pg", help="embedded PostgreSQL folder when DATABASE_URL is not set"
    )
    parser.add_argument(
        "--embed-cache", type=Path, default=None, help="reuse vectors of texts embedded before (bench/embcache.py)"
    )
    parser.add_argument(
        "--pools",
        type=Path,
        default=None,
        help="also write every question's two candidate pools to this pickle (for studies)",
    )
    parser.add_argument("--pools-only", action="store_true", help="stop once the pools are written")
    args = parser.parse_args(argv)
    unknown = [c for c in args.collections.split(",") if c.strip() and c.strip().lower() not in COLLECTIONS]
    if unknown:
        parser.error(f"unknown collection(s) {', '.join(unknown)}; choose from {', '.join(COLLECTIONS)}")
    args.command = "python -m bench fusion " + " ".join(argv if argv is not None else sys.argv[1:])
    if args.embed_cache:
        os.environ["MEMORYWIKI_BENCH_EMBED_CACHE"] = str(args.embed_cache.resolve())
    pg = Postgres(args.pg_dir)
    try:
        asyncio.run(_main(args, pg))
    finally:
        pg.close()
    return 0
