"""Recall on long, heading-less documents: chunk sizes, token-level recall, tokens returned.

What a PDF or a pasted transcript often is: one long text with single newlines, no headings,
no blank lines. Built from public judged data so the answering passage is known:

- SciFact (BEIR, --dataset): the abstracts the test queries judge relevant, plus distractors,
  concatenated with single newlines into docs of 5 to 40 abstracts (title "Collection n").
- CMRC 2018 (Chinese) and JSQuAD (Japanese) dev paragraphs (SQuAD layout, from data/raw/ beside
  the checkout or MEMORYWIKI_BENCH_RAW), concatenated the same way; each question's own
  paragraph answers it (skipped when the files are not there).

Every configuration runs the real server path in this process: a fresh database, docs saved
through store.docs.insert_doc (so store.chunks cuts them), indexed by indexer.index_docs with
the local ONNX embedder (all-MiniLM-L6-v2, int8), recalled through store.recall.recall_chunks
(the endpoint's SQL) at k = 5, vector only and hybrid. Configurations:

- before: the chunker of --baseline (default: the commit before this benchmark's chunker), a
  block over its 1,800 characters kept whole, the embedder truncating at its window;
- fixed 1,000-character windows: the doc text cut every 1,000 characters, same embedder;
- this checkout's chunker at several maxima and overlaps, embedding a chunk past the model's
  window as the mean of its windows (or truncating it: the "truncating" rows).

Figures: token-level recall@5 (the share of the answering passage's tokens, word pieces of the
model's tokenizer, that lie in the 5 returned chunks), tokens returned per recall (word pieces
of the 5 chunks' breadcrumb and markdown), the chunk-size distribution (characters p50 / p95 /
max) and the share of chunks longer than the model's window.
"""

from __future__ import annotations

import asyncio
import bisect
import hashlib
import importlib.util
import json
import os
import random
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from ..common import ROOT, Options, Postgres, embedder_env, load_beir, log, machine_line, md_table, pct, write_result

# the SQuAD-layout sets (CMRC 2018, JSQuAD) beside the project's data folder, or MEMORYWIKI_BENCH_RAW
RAW = Path(os.environ.get("MEMORYWIKI_BENCH_RAW", ROOT.parent / "data" / "raw"))
BEFORE = "d68d037"  # main before the chunker that bounds every chunk
K = 5
GROUPS = (5, 10, 20, 40)  # passages per doc, in turn
MAXIMA = (1000, 1500, 2000)  # the chunk maxima compared


@dataclass
class Corpus:
    name: str
    docs: list[tuple[str, str]]  # (title, text)
    spans: dict[str, tuple[int, int, int]]  # passage id -> (doc index, start, end)
    queries: dict[str, tuple[str, list[str]]]  # query id -> (question, answering passage ids)


@dataclass
class Config:
    name: str
    chunks_of: Callable | None = None  # replaces store.chunks.chunks_of; None: this checkout's
    size: tuple[int, int] | None = None  # (max, overlap) for this checkout's chunker
    windowed: bool = True
    corpora: tuple[str, ...] = ("scifact", "cmrc", "jsquad")


@dataclass
class Outcome:
    recall: dict[str, float] = field(default_factory=dict)  # mode -> mean token-level recall@5
    tokens: dict[str, float] = field(default_factory=dict)  # mode -> mean tokens returned
    sizes: list[int] = field(default_factory=list)  # chunk lengths in characters
    over_window: float = 0.0  # share of chunks past the model's window
    chunks: int = 0
    index_s: float = 0.0


# --------------------------------------------------------------------------- corpora


def _grouped(passages: list[tuple[str, str]], title: str) -> tuple[list[tuple[str, str]], dict]:
    docs, spans, i, n = [], {}, 0, 0
    while i < len(passages):
        group = passages[i : i + GROUPS[n % len(GROUPS)]]
        text, pos = [], 0
        for pid, passage in group:
            spans[pid] = (len(docs), pos, pos + len(passage))
            text.append(passage)
            pos += len(passage) + 1
        docs.append((f"{title} {len(docs) + 1}", "\n".join(text)))
        i += len(group)
        n += 1
    return docs, spans


def scifact(folder: Path, size: int, seed: int = 7) -> Corpus:
    data = load_beir(folder)
    texts = {d["_id"]: " ".join((d["text"] or "").split()) for d in data.corpus if (d["text"] or "").strip()}
    wanted = sorted({pid for rels in data.qrels.values() for pid in rels if pid in texts})
    rng = random.Random(seed)
    others = [pid for pid in sorted(texts) if pid not in set(wanted)]
    chosen = wanted + rng.sample(others, min(len(others), max(0, size - len(wanted))))
    rng.shuffle(chosen)
    docs, spans = _grouped([(pid, texts[pid]) for pid in chosen], "Collection")
    queries = {qid: (data.queries[qid], [p for p in rels if p in spans]) for qid, rels in data.qrels.items()}
    return Corpus("SciFact", docs, spans, {q: v for q, v in queries.items() if v[1]})


def squad(path: Path, name: str, size: int, seed: int = 7) -> Corpus:
    data = json.loads(path.read_text(encoding="utf-8"))
    paragraphs, queries = [], {}
    for article in data["data"]:
        for p in article["paragraphs"]:
            pid = f"p{len(paragraphs)}"
            paragraphs.append((pid, " ".join(p["context"].split())))
            if p["qas"]:
                queries[p["qas"][0]["id"]] = (p["qas"][0]["question"], [pid])
    rng = random.Random(seed)
    chosen = rng.sample(paragraphs, min(size, len(paragraphs)))
    docs, spans = _grouped(chosen, "Collection")
    return Corpus(name, docs, spans, {q: v for q, v in queries.items() if v[1][0] in spans})


# --------------------------------------------------------------------------- chunkers


def baseline_chunks_of(ref: str) -> Callable | None:
    """chunks_of as the chunker of commit `ref` made them (its module text from git, loaded here);
    None outside a git checkout that has that commit (a copy of the files, as CI tests)."""
    try:
        text = subprocess.run(
            ["git", "-C", str(ROOT), "show", f"{ref}:server/indexing/chunker.py"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    except (OSError, subprocess.CalledProcessError):
        print(f"[longdocs] no git history with {ref} here: the 'before' row is left out", file=sys.stderr)
        return None
    spec = importlib.util.spec_from_loader("bench_baseline_chunker", loader=None)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    exec(compile(text, f"{ref}:server/indexing/chunker.py", "exec"), module.__dict__)

    from memorywiki.formats.model import CONVERSATION_SOURCES

    def chunks_of(title, markdown, source, size=None):  # as store.chunks chose between them
        if source in CONVERSATION_SOURCES:
            return module.chunk_conversation(title, markdown)
        return module.chunk_markdown(title, markdown)

    return chunks_of


def windows_chunks_of(width: int = 1000) -> Callable:
    from memorywiki.server.indexing.chunker import Chunk

    def chunks_of(title, markdown, source, size=None):
        pieces = [markdown[i : i + width].strip() for i in range(0, len(markdown), width)]
        pieces = [p for p in pieces if p]
        return [Chunk(n, title, p, hashlib.sha256(f"{title}\n{p}".encode()).hexdigest()) for n, p in enumerate(pieces)]

    return chunks_of


# --------------------------------------------------------------------------- tokens


class _Words:
    """Word pieces' stand-in when the model package is not installed (--smoke): words,
    punctuation and each CJK character count one."""

    PATTERN = __import__("re").compile(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]|\w+|[^\w\s]")

    @dataclass
    class Encoding:
        ids: list[int]
        offsets: list[tuple[int, int]]

    def encode(self, text: str, add_special_tokens: bool = False) -> _Words.Encoding:
        offsets = [m.span() for m in self.PATTERN.finditer(text)]
        return self.Encoding(list(range(len(offsets))), offsets)


def word_pieces():
    """all-MiniLM-L6-v2's tokenizer, from its package (no truncation, no padding)."""
    try:
        from memorywiki.server.embedding.local import packaged_model_dir
        from tokenizers import Tokenizer

        tokenizer = Tokenizer.from_file(str(packaged_model_dir() / "tokenizer.json"))
    except Exception:  # no model package: the smoke run
        return _Words()
    tokenizer.no_truncation()
    tokenizer.no_padding()
    return tokenizer


def _token_starts(tokenizer, text: str) -> list[int]:
    return [a for a, b in tokenizer.encode(text, add_special_tokens=False).offsets]


def locate(text: str, piece: str, after: int) -> int:
    """Where a chunk cut from `text` starts: searched from just before where the previous chunk
    ended (pieces may overlap), else anywhere."""
    start = text.find(piece, max(0, after - len(piece)))
    return text.find(piece) if start < 0 else start


def token_recall(
    corpus: Corpus, doc_tokens: list[list[int]], answers: list[str], got: list[tuple[int, int, int]]
) -> float:
    """The share of the answering passages' tokens (their start offsets) that lie inside the
    returned chunks' spans (doc index, start, end)."""
    total = covered = 0
    for pid in answers:
        d, a, b = corpus.spans[pid]
        starts = doc_tokens[d]
        for t in starts[bisect.bisect_left(starts, a) : bisect.bisect_left(starts, b)]:
            total += 1
            covered += any(gd == d and ga <= t < gb for gd, ga, gb in got)
    return covered / total if total else 0.0


# --------------------------------------------------------------------------- one configuration


async def run_config(pg: Postgres, config: Config, corpus: Corpus, embedder, tokenizer, window: int) -> Outcome:
    from memorywiki.server.indexing.chunker import ChunkSize
    from memorywiki.server.indexing.indexer import index_docs
    from memorywiki.server.store import chunks as chunk_store
    from memorywiki.server.store import docs as doc_store
    from memorywiki.server.store import recall
    from memorywiki.server.store.db import Database
    from memorywiki.server.store.space import build_indexes

    original = chunk_store.chunks_of
    if config.chunks_of is not None:
        chunk_store.chunks_of = config.chunks_of
    chunk_store.use_chunk_size(ChunkSize(*config.size) if config.size else ChunkSize())
    embedder.windowed = config.windowed
    url = pg.fresh("bench_longdocs")
    db = Database(url, min_size=1, max_size=4)
    await db.open()
    out = Outcome()
    try:
        async with db.owner.connection() as conn:
            hub = (
                await (
                    await conn.execute("INSERT INTO hubs (slug, owner_token_hash) VALUES ('long', 'x') RETURNING id")
                ).fetchone()
            )["id"]
        ids = []
        for title, text in corpus.docs:
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
            ids.append(row["id"])
        t0 = time.perf_counter()
        for i in range(0, len(ids), 4):
            await index_docs(db, embedder, ids[i : i + 4])
        out.index_s = time.perf_counter() - t0
        await build_indexes(url)
        async with db.owner.connection() as conn:
            rows = await (
                await conn.execute(
                    "SELECT id, doc_id, ordinal, heading_path, markdown FROM chunks ORDER BY doc_id, ordinal"
                )
            ).fetchall()
        doc_index = {doc_id: n for n, doc_id in enumerate(ids)}
        spans, cost = {}, {}
        cursor: dict[str, int] = {}
        for r in rows:  # where each chunk lies in its doc's text (chunks are cut from it)
            text = corpus.docs[doc_index[r["doc_id"]]][1]
            start = locate(text, r["markdown"], cursor.get(r["doc_id"], 0))
            cursor[r["doc_id"]] = start + len(r["markdown"])
            spans[r["id"]] = (doc_index[r["doc_id"]], start, start + len(r["markdown"]))
            pieces = len(tokenizer.encode(f"{r['heading_path']}\n\n{r['markdown']}", add_special_tokens=False).ids)
            cost[r["id"]] = pieces
        out.sizes = [len(r["markdown"]) for r in rows]
        out.chunks = len(rows)
        out.over_window = sum(c > window for c in cost.values()) / max(1, len(cost))

        qids = list(corpus.queries)
        qvecs = dict(zip(qids, await embedder.embed_questions([corpus.queries[q][0] for q in qids]), strict=False))
        doc_tokens = [_token_starts(tokenizer, text) for _, text in corpus.docs]
        async with db.public.connection() as conn:
            for mode in ("vector", "hybrid"):
                recalls, tokens = [], []
                for qid in qids:
                    question, answers = corpus.queries[qid]
                    found = await recall.recall_chunks(
                        conn,
                        hub_id=hub,
                        question=question,
                        k=K,
                        qvec=qvecs[qid],
                        dim=len(qvecs[qid]),
                        hybrid=mode == "hybrid",
                        k1=1.2,
                        b=0.75,
                    )
                    got = [spans[f["chunk_id"]] for f in found if f["chunk_id"] in spans]
                    recalls.append(token_recall(corpus, doc_tokens, answers, got))
                    tokens.append(sum(cost.get(f["chunk_id"], 0) for f in found))
                out.recall[mode] = sum(recalls) / len(recalls)
                out.tokens[mode] = sum(tokens) / len(tokens)
    finally:
        await db.close()
        pg.drop("bench_longdocs")
        chunk_store.chunks_of = original
        chunk_store.use_chunk_size(ChunkSize())
        embedder.windowed = True
    return out


# --------------------------------------------------------------------------- the run


def configs(baseline: str) -> list[Config]:
    from memorywiki.server.indexing.chunker import DEFAULT_MAX_CHARS, DEFAULT_OVERLAP_CHARS

    def sized(most: int, overlap: int = 0, windowed: bool = True, corpora=("scifact", "cmrc", "jsquad")) -> Config:
        default = " (default)" if (most, overlap, windowed) == (DEFAULT_MAX_CHARS, DEFAULT_OVERLAP_CHARS, True) else ""
        how = "mean of windows" if windowed else "truncating"
        return Config(
            f"chunker max {most:,}, overlap {overlap}, {how}{default}",
            size=(most, overlap),
            windowed=windowed,
            corpora=corpora,
        )

    before = baseline_chunks_of(baseline)
    return [
        *(
            [Config(f"before: {baseline}'s chunker (1,800, blocks kept whole), truncating", before, windowed=False)]
            if before
            else []
        ),
        Config("fixed 1,000-character windows, truncating", windows_chunks_of(1000), windowed=False),
        *(sized(most) for most in MAXIMA),
        sized(MAXIMA[-1], windowed=False, corpora=("scifact",)),
    ]


async def _main(opts: Options, pg: Postgres) -> str:
    os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")
    os.environ.setdefault("ORT_TELEMETRY_DISABLED", "1")
    from memorywiki.server.config import Settings
    from memorywiki.server.embedding.factory import make_embedder

    small = opts.smoke
    # A smaller sample on a busy machine: SciFact passages (its judged ones at least), CJK questions.
    passages, questions = (int(n) for n in os.environ.get("MEMORYWIKI_BENCH_LONGDOCS_SAMPLE", "600,150").split(","))
    corpora = {"scifact": scifact(opts.dataset, 80 if small else passages)}
    for key, file, name in (
        ("cmrc", "cmrc2018_dev.json", "CMRC 2018 (Chinese)"),
        ("jsquad", "jsquad_valid.json", "JSQuAD (Japanese)"),
    ):
        if (RAW / file).is_file() and not small:
            corpora[key] = squad(RAW / file, name, questions)
    embedder = make_embedder(Settings.from_env(embedder=embedder_env()["MEMORYWIKI_EMBEDDER"]), onnx_in_process=True)
    tokenizer = word_pieces()
    window = 254  # all-MiniLM-L6-v2's 256 word pieces less [CLS] and [SEP]
    baseline = opts.extra.get("baseline") or BEFORE
    results: dict[tuple[str, str], Outcome] = {}
    for config in configs(baseline):
        for key, corpus in corpora.items():
            if key not in config.corpora:
                continue
            log(f"[longdocs] {corpus.name}: {config.name} ...")
            results[(config.name, key)] = outcome = await run_config(pg, config, corpus, embedder, tokenizer, window)
            log(
                f"[longdocs]   recall@5 vector {outcome.recall['vector']:.3f} hybrid {outcome.recall['hybrid']:.3f},"
                f" tokens {outcome.tokens['vector']:.0f}, {outcome.chunks} chunks, max {max(outcome.sizes)}"
            )
            report(opts, corpora, results, baseline, embedder.name)

    text = report(opts, corpora, results, baseline, embedder.name)
    return append_collection_changes(opts, baseline, tokenizer, window, text)


def collection_changes(opts: Options, baseline: str, tokenizer, window: int) -> str:
    """What the chunker changes on the suite's own collections, as `quality` and `locomo` save
    them (no embedding): chunks before and after, how many are the same text (so the same vector
    and the same recall), and how many are longer than the model's window."""
    from memorywiki.server.indexing.chunker import ChunkSize
    from memorywiki.server.store.chunks import chunks_of

    from .locomo import chat_sessions

    before = baseline_chunks_of(baseline)
    if before is None:
        return ""
    pages = [
        ((d["title"] or "").strip() or d["_id"], d["text"] or d["title"], None) for d in load_beir(opts.dataset).corpus
    ]
    locomo_file = opts.locomo / "locomo10.json"
    if locomo_file.is_file():
        pages_locomo = [
            (s.title, s.markdown, s.source)
            for sample in json.loads(locomo_file.read_text())
            for s in chat_sessions(sample)
        ]
    else:
        pages_locomo = []
    rows = []

    def over(chunks):
        return sum(len(tokenizer.encode(f"{p}\n\n{m}", add_special_tokens=False).ids) > window for p, m in chunks)

    for name, collection in (("SciFact (quality)", pages), ("LoCoMo (locomo)", pages_locomo)):
        if not collection:
            continue
        old = [(c.heading_path, c.markdown) for t, m, src in collection for c in before(t, m, src)]
        for most in MAXIMA:
            new = [
                (c.heading_path, c.markdown)
                for t, m, src in collection
                for c in chunks_of(t, m, src, ChunkSize(most, 0))
            ]
            rows.append(
                [name, f"{most:,}", len(collection), len(old), len(new), len(set(new) & set(old)), over(old), over(new)]
            )
    return (
        "### The suite's collections, chunked before and after (no embedding)\n\n"
        "Chunks that are the same text get the same vector and the same recall; only the others can move "
        "`quality` and `locomo`.\n\n"
        + md_table(
            [
                "collection",
                "max",
                "docs",
                "chunks before",
                "chunks after",
                "unchanged",
                "over window before",
                "over window after",
            ],
            rows,
        )
        + "\n"
    )


def append_collection_changes(opts: Options, baseline: str, tokenizer, window: int, text: str) -> str:
    text = text + "\n" + collection_changes(opts, baseline, tokenizer, window)
    write_result(opts, "longdocs.md", text)
    return text


def report(opts: Options, corpora: dict, results: dict, baseline: str, embedder_name: str) -> str:
    """The tables so far (written after every configuration, so a long run shows its progress)."""
    parts = [
        f"## Long heading-less documents: token-level recall@{K}\n",
        "Each doc is passages joined by single newlines (no heading, no blank line), 5 to 40 passages a doc. "
        "Saved through `store.docs.insert_doc`, indexed by `indexer.index_docs` with the local embedder "
        f"(`{embedder_name}`), recalled through `store.recall.recall_chunks` at k = {K}. Recall = share of the "
        "answering passage's word pieces inside the returned chunks; tokens = word pieces of the returned "
        "chunks (breadcrumb + markdown); over window = chunks longer than the model's 254 word pieces.\n",
    ]
    for key, corpus in corpora.items():
        rows = []
        for config in configs(baseline):
            o = results.get((config.name, key))
            if o is None:
                continue
            rows.append(
                [
                    config.name,
                    o.recall["vector"],
                    o.recall["hybrid"],
                    round(o.tokens["vector"]),
                    round(o.tokens["hybrid"]),
                    round(pct(o.sizes, 50)),
                    round(pct(o.sizes, 95)),
                    max(o.sizes),
                    f"{100 * o.over_window:.0f} %",
                    o.chunks,
                ]
            )
        parts.append(
            f"### {corpus.name}: {len(corpus.docs)} docs, {sum(len(t) for _, t in corpus.docs):,} characters, "
            f"{len(corpus.queries)} questions\n"
        )
        parts.append(
            md_table(
                [
                    "configuration",
                    "recall@5 vector",
                    "recall@5 hybrid",
                    "tokens/recall vector",
                    "tokens/recall hybrid",
                    "chunk p50",
                    "chunk p95",
                    "chunk max",
                    "over window",
                    "chunks",
                ],
                rows,
            )
            + "\n"
        )
    parts.append(machine_line())
    text = "\n".join(parts)
    write_result(opts, "longdocs.md", text)
    return text


def run(opts: Options, pg: Postgres) -> None:
    asyncio.run(_main(opts, pg))
