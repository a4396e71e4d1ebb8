"""How a chunk longer than the model's window becomes one vector: a study on exact cosine.

A chunk past all-MiniLM-L6-v2's 256 word pieces is cut into windows (server/embedding/windows.py),
each window is embedded, and the windows' vectors are pooled into the chunk's one vector. This
study embeds every window once (cached under bench/.cache/pooling) and compares poolings without
a server:

- truncate: the first window only (what the model does by itself);
- mean: the windows weighted by their word pieces (mean pooling over the whole text);
- lead xW: the first window's weight multiplied by W, the rest as in mean;
- half lead: the first window weighs as much as all the others together.

Collections: SciFact as `bench quality` saves it (a doc per abstract; nDCG@10 at doc level, the
best chunk per doc, exact cosine), and SciFact's long heading-less docs as `bench longdocs` builds
them (token-level recall@5 of the answering abstract, vector only, exact cosine).

    python -m bench.studies.pooling --dataset ../shared/data/scifact
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

import numpy as np

from ..common import CACHE, embedder_env, load_beir, log, md_table
from .ablation import ndcg


def make_embedder():
    from memorywiki.server.config import Settings
    from memorywiki.server.embedding.factory import make_embedder as make

    embedder = make(Settings.from_env(embedder=embedder_env()["MEMORYWIKI_EMBEDDER"]), onnx_in_process=True)
    embedder._ensure_loaded()
    return embedder


class WindowVectors:
    """Every window of every text embedded once, through the model's own forward pass."""

    def __init__(self, embedder, cache_dir: Path) -> None:
        from ..embcache import VectorCache

        self.embedder = embedder
        self.cache = VectorCache(cache_dir)
        self.name = f"window:{embedder.name}"

    def of(self, texts: list[str]) -> np.ndarray:
        unique = sorted(set(texts), key=len)
        missing = [t for t, v in zip(unique, self.cache.get_many(self.name, unique), strict=False) if v is None]
        for start in range(0, len(missing), 32):
            part = missing[start : start + 32]
            self.cache.put_many(self.name, part, self.embedder._run(part))
            if start % 1024 == 0:
                log(f"  embedded {start + len(part)}/{len(missing)} windows")
        return np.asarray(self.cache.get_many(self.name, texts), dtype=np.float32)


def pooled(embedder, vectors: WindowVectors, texts: list[str]) -> dict[str, np.ndarray]:
    """Each pooling's chunk vectors (rows L2-normalised)."""
    split = embedder._windows.split(texts)
    windows = vectors.of(split.texts).astype(np.float64)
    owners = np.asarray(split.owners)
    weights = np.asarray(split.weights, dtype=np.float64)
    first = np.r_[True, owners[1:] != owners[:-1]]
    count = np.bincount(owners, minlength=len(texts))
    log(f"  {len(texts)} chunks, {int((count > 1).sum())} past the window, {len(split.texts)} windows")

    def pool(w: np.ndarray) -> np.ndarray:
        out = np.zeros((len(texts), windows.shape[1]))
        np.add.at(out, owners, windows * w[:, None])
        return out / np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-12)

    rest = np.bincount(owners, weights=np.where(first, 0.0, weights), minlength=len(texts))
    out = {"truncate": pool(np.where(first, 1.0, 0.0)), "mean": pool(weights)}
    for lead in (2.0, 3.0):
        out[f"lead x{lead:g}"] = pool(np.where(first, weights * lead, weights))
    out["half lead"] = pool(np.where(first, np.maximum(rest[owners], 1.0), weights))
    return out


def questions(embedder, texts: list[str]) -> np.ndarray:
    return np.asarray(embedder._encode(texts, question=True), dtype=np.float64)


def scifact_docs(folder: Path, embedder, vectors: WindowVectors) -> list[list[str]]:
    from memorywiki.server.indexing.indexer import chunk_text
    from memorywiki.server.store.chunks import chunks_of

    data = load_beir(folder)
    texts, owner = [], []
    for d in data.corpus:
        title = (d["title"] or "").strip() or d["_id"]
        for c in chunks_of(title, d["text"] or d["title"], None):
            texts.append(chunk_text(c.heading_path, c.markdown))
            owner.append(d["_id"])
    pools = pooled(embedder, vectors, texts)
    qids = [q for q in data.queries if q in data.qrels]
    qv = questions(embedder, [data.queries[q] for q in qids])
    rows = []
    for name, matrix in pools.items():
        scores = qv @ matrix.T
        values = []
        for qi, qid in enumerate(qids):
            # a doc where its best chunk ranks
            ranked = list(dict.fromkeys(owner[i] for i in np.argsort(-scores[qi], kind="stable")[:200]))
            values.append(ndcg(ranked, data.qrels[qid]))
        rows.append([name, f"{np.mean(values):.3f}"])
    return rows


def longdocs(folder: Path, embedder, vectors: WindowVectors, passages: int) -> list[list[str]]:
    from memorywiki.server.indexing.indexer import chunk_text
    from memorywiki.server.store.chunks import chunks_of

    from ..suite.longdocs import K, _token_starts, locate, scifact, token_recall, word_pieces

    corpus = scifact(folder, passages)
    tokenizer = word_pieces()
    texts, spans = [], []
    for d, (title, text) in enumerate(corpus.docs):
        cursor = 0
        for c in chunks_of(title, text, None):
            start = locate(text, c.markdown, cursor)
            cursor = start + len(c.markdown)
            texts.append(chunk_text(c.heading_path, c.markdown))
            spans.append((d, start, start + len(c.markdown)))
    pools = pooled(embedder, vectors, texts)
    qids = list(corpus.queries)
    qv = questions(embedder, [corpus.queries[q][0] for q in qids])
    doc_tokens = [_token_starts(tokenizer, text) for _, text in corpus.docs]
    rows = []
    for name, matrix in pools.items():
        scores = qv @ matrix.T
        recalls = []
        for qi, qid in enumerate(qids):
            got = [spans[i] for i in np.argsort(-scores[qi], kind="stable")[:K]]
            recalls.append(token_recall(corpus, doc_tokens, corpus.queries[qid][1], got))
        rows.append([name, f"{np.mean(recalls):.3f}"])
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dataset", type=Path, required=True, help="SciFact in BEIR layout")
    parser.add_argument("--passages", type=int, default=600, help="abstracts in the long docs (bench longdocs: 600)")
    args = parser.parse_args(argv)
    os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")
    embedder = make_embedder()
    vectors = WindowVectors(embedder, CACHE / "pooling")
    log("SciFact (bench quality's docs)")
    quality = dict(scifact_docs(args.dataset, embedder, vectors))
    log("SciFact long docs (bench longdocs)")
    long = dict(longdocs(args.dataset, embedder, vectors, args.passages))
    rows = [[name, quality[name], long[name]] for name in quality]
    print(f"Embedder `{embedder.name}`; exact cosine.\n")
    print(md_table(["pooling", "SciFact nDCG@10 (doc level)", "long docs recall@5 (vector)"], rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
