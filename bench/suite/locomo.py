"""Conversation memory on LoCoMo: evidence recall@k of recall, its token cost, and sessions.

Capture: one hub per conversation, one doc per session, POSTed to a running server
(uvicorn subprocess) and indexed by its in-process worker. Layouts (`--locomo-window`):

- 0 (default): what importing a chat gives a user. The chat-import renderer
  `memorywiki.formats.mdutil.render_turns` (the one the ChatGPT / Claude importers use) with
  the speakers and the session's date: a `## <day>` heading, a `### <speaker>` section per turn;
  title `<A> and <B>, session <n>`; source "chat", so the server chunks it as a conversation
  (windows of turns of up to 600 characters, overlapping by one turn, breadcrumb title > day).
- 1: the earlier default: one `## <speaker> (<dia_id>)` section per turn (render_turns without
  times), so one chunk per turn; the doc title carries the session's date and time.
- N > 1 (a variant written here in bench/): a `## Turns D1:1-D1:N` section per N consecutive
  turns, each turn a paragraph opening with `**<speaker> (<dia_id>):**`.

An image turn gets its BLIP caption appended as `[shares a photo: ...]`.

Which turns a returned chunk holds is found from the text, not from ids in it: every turn's
text is located in its session's markdown when the doc is rendered, a chunk's markdown is cut
from that markdown (the chunker never rewrites text), so the chunk's span in it says which
turns it covers.

Questions: every QA pair of categories 1-4 with at least one resolved evidence id
(locomo10_qa_normalized.jsonl), asked through `POST /api/hub/<hub>/recall`:
- level chunk, k = 5, 10, 20: hybrid once per k (it fuses candidate pools that depend on k, so
  the k=5 list is not a prefix of the k=20 list); vector and full text once at k=20, scored on
  their prefixes. Evidence recall = share of the question's evidence turns among the retrieved
  chunks. Tokens = tokens of the returned breadcrumb + markdown.
- level doc (a session is a doc), k = 10: session recall@5/@10 = share of the sessions holding
  the evidence among the returned docs; beside it the same from the chunk-level answer (k=20,
  sessions in the order of their best chunk).
- bm25s on the same chunks (heading path + markdown, per hub) and on whole sessions, as the
  reference for the full-text ranker.
"""

from __future__ import annotations

import asyncio
import json
import re
import time
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from ..common import (
    SERVER_ERRORS,
    Options,
    Postgres,
    Proc,
    count_summary,
    create_hub,
    log,
    machine_line,
    md_table,
    post_docs,
    run_concurrent,
    wait_indexed,
    write_result,
)

KS = (5, 10, 20)
DOC_KS = (5, 10)
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
METHODS = ("hybrid", "vector", "fulltext")
PUBLISHED = "recall@5 0.497 at turn level (a peer memory service, see shared/data/README.md)"
PUBLISHED_SESSIONS = "about 0.875 / 0.914 session recall@10 (published peers)"


@dataclass
class Session:
    """One session doc as POSTed, and where each of its turns sits in the markdown."""

    sample: str
    number: int
    title: str
    markdown: str
    source: str
    turns: list[tuple[str, int, int]] = field(default_factory=list)  # (dia_id, start, end)
    doc_id: str | None = None

    @property
    def key(self) -> str:
        return f"{self.sample}/{self.number}"

    def turns_in(self, chunk_markdown: str) -> set[str]:
        """The turns a returned chunk's markdown covers (its span in the session's markdown).
        A long section split in pieces repeats its heading line on each piece: try without it."""
        candidates = [chunk_markdown]
        head, _, rest = chunk_markdown.partition("\n\n")
        if rest and head.lstrip().startswith("#"):
            candidates.append(rest)
        for text in candidates:
            start = self.markdown.find(text)
            if start >= 0:
                end = start + len(text)
                return {dia for dia, a, b in self.turns if a < end and b > start}
        return set()


def _turn_texts(turns: list[dict]) -> list[str]:
    out = []
    for t in turns:
        text = t.get("text", "").strip()
        if t.get("blip_caption"):
            text += f"\n\n[shares a photo: {t['blip_caption']}]"
        out.append(text)
    return out


def _locate(markdown: str, turns: list[dict], texts: list[str]) -> list[tuple[str, int, int]]:
    """Each turn's span in the rendered markdown, found in order."""
    spans, pos = [], 0
    for t, text in zip(turns, texts, strict=False):
        start = markdown.find(text, pos)
        if start < 0:
            raise RuntimeError(f"turn {t['dia_id']} not found verbatim in the rendered session")
        spans.append((t["dia_id"], start, start + len(text)))
        pos = start + len(text)
    return spans


MONTHS = (
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
)


def session_time(text: str):
    """LoCoMo's "1:56 pm on 8 May, 2023" -> datetime, None when it does not parse."""
    from datetime import datetime

    m = re.search(r"(\d{1,2}):(\d{2})\s*([ap]m)\s+on\s+(\d{1,2})\s+(\w+),?\s+(\d{4})", text or "", re.I)
    if not m or m.group(5).capitalize() not in MONTHS:
        return None
    hour = int(m.group(1)) % 12 + (12 if m.group(3).lower() == "pm" else 0)
    return datetime(int(m.group(6)), MONTHS.index(m.group(5).capitalize()) + 1, int(m.group(4)), hour, int(m.group(2)))


def chat_sessions(sample: dict) -> list[Session]:
    """What a user gets from importing a chat: the chat renderer (`render_turns`, the one the
    ChatGPT / Claude importers use) with the speakers and the session's date, as source "chat",
    so the server chunks it as a conversation (windows of turns, overlapping by one)."""
    from memorywiki.formats.mdutil import render_turns

    conv = sample["conversation"]
    a, b = conv.get("speaker_a", "A"), conv.get("speaker_b", "B")
    numbers = sorted(int(m.group(1)) for k in conv if (m := re.fullmatch(r"session_(\d+)", k)))
    docs = []
    for n in numbers:
        turns = conv[f"session_{n}"]
        if not turns:
            continue
        when = session_time(conv.get(f"session_{n}_date_time", ""))
        texts = _turn_texts(turns)
        markdown = render_turns([(t["speaker"], text, when) for t, text in zip(turns, texts, strict=False)])
        docs.append(
            Session(
                sample["sample_id"], n, f"{a} and {b}, session {n}", markdown, "chat", _locate(markdown, turns, texts)
            )
        )
    return docs


def session_docs(sample: dict, window: int = 1) -> list[Session]:
    """window 1: the chat-import rendering, a section per turn. window N (a variant, written
    here in bench/): a `## Turns D1:1-D1:N` section per N consecutive turns, each turn a paragraph
    opening with `**<speaker> (<dia_id>):**`."""
    from memorywiki.formats.mdutil import render_turns

    conv = sample["conversation"]
    a, b = conv.get("speaker_a", "A"), conv.get("speaker_b", "B")
    numbers = sorted(int(m.group(1)) for k in conv if (m := re.fullmatch(r"session_(\d+)", k)))
    docs = []
    for n in numbers:
        turns = conv[f"session_{n}"]
        if not turns:
            continue
        date = conv.get(f"session_{n}_date_time", "")
        texts = _turn_texts(turns)
        if window <= 1:
            markdown = render_turns(
                [(f"{t['speaker']} ({t['dia_id']})", text) for t, text in zip(turns, texts, strict=False)]
            )
        else:
            parts = []
            for i in range(0, len(turns), window):
                group = turns[i : i + window]
                body = "\n\n".join(
                    f"**{t['speaker']} ({t['dia_id']}):** {text}"
                    for t, text in zip(group, texts[i : i + window], strict=False)
                )
                parts.append(f"## Turns {group[0]['dia_id']}-{group[-1]['dia_id']}\n\n{body}")
            markdown = "\n\n".join(parts) + "\n"
        title = f"{a} and {b}, session {n} ({date})" if date else f"{a} and {b}, session {n}"
        docs.append(Session(sample["sample_id"], n, title, markdown, "locomo", _locate(markdown, turns, texts)))
    return docs


def token_counter():
    """(count(text) -> int, description): MiniLM's WordPiece tokenizer offline, else words * 1.3."""
    try:
        from memorywiki.server.embedding.local import packaged_model_dir
        from transformers import AutoTokenizer

        tok = AutoTokenizer.from_pretrained(str(packaged_model_dir()), local_files_only=True)

        def count(text: str) -> int:
            return len(tok(text, add_special_tokens=False, verbose=False)["input_ids"])

        return count, "all-MiniLM-L6-v2's WordPiece tokenizer (bert-base-uncased vocabulary), offline"
    except Exception:
        return (lambda text: round(len(text.split()) * 1.3)), "words x 1.3 (no tokenizer available offline)"


def load(folder: Path) -> tuple[list[dict], list[dict]]:
    samples = json.loads((folder / "locomo10.json").read_text())
    qa = [json.loads(line) for line in open(folder / "locomo10_qa_normalized.jsonl") if line.strip()]
    qa = [q for q in qa if q.get("category") in CATEGORIES and q.get("evidence")]
    return samples, qa


def evidence_sessions(q: dict) -> set[str]:
    return {f"{q['sample_id']}/{e.split(':')[0][1:]}" for e in q["evidence"]}


def score_chunks(q: dict, results: list[dict], by_doc: dict[str, Session], count_tokens, p: int) -> dict:
    """Evidence recall, tokens and session recall of the top p chunk results."""
    found: set[str] = set()
    tokens = 0
    sessions: list[str] = []
    for res in results[:p]:
        s = by_doc[res["doc_id"]]
        found |= s.turns_in(res["markdown"])
        tokens += count_tokens(res["heading_path"] + "\n" + res["markdown"])
        if s.key not in sessions:
            sessions.append(s.key)
    evidence = set(q["evidence"])
    wanted = evidence_sessions(q)
    return {
        "category": q["category"],
        "recall": len(evidence & found) / len(evidence),
        "tokens": tokens,
        **{f"session@{d}": len(wanted & set(sessions[:d])) / len(wanted) for d in DOC_KS},
    }


async def _ask(
    client, qa: list[dict], hubs: dict, by_doc: dict, method: str, k: int, count_tokens, prefixes: tuple[int, ...] = ()
) -> dict[int, list[dict]]:
    """Ask every question at k, level chunk; score the top-p prefixes too (vector and full text
    rank the same way whatever k is, so their top 5 at k=20 is their answer at k=5)."""

    async def one(q):
        r = await client.post(
            f"/api/hub/{hubs[q['sample_id']]}/recall",
            json={"question": q["question"], "k": k, "level": "chunk", "hybrid": method == "hybrid"},
        )
        r.raise_for_status()
        body = r.json()
        if body["mode"] != method:
            raise RuntimeError(f"expected mode {method}, got {body['mode']} ({body.get('vector_note')})")
        return {p: score_chunks(q, body["results"], by_doc, count_tokens, p) for p in (k, *prefixes)}

    answers = await run_concurrent(qa, one, 4)
    return {p: [a[p] for a in answers] for p in (k, *prefixes)}


async def _ask_docs(client, qa: list[dict], hubs: dict, by_doc: dict, method: str, k: int = max(DOC_KS)) -> list[dict]:
    """Level doc (a session is a doc): session recall@5/@10."""

    async def one(q):
        r = await client.post(
            f"/api/hub/{hubs[q['sample_id']]}/recall",
            json={"question": q["question"], "k": k, "level": "doc", "hybrid": method == "hybrid"},
        )
        r.raise_for_status()
        body = r.json()
        if body["mode"] != method:
            raise RuntimeError(f"expected mode {method}, got {body['mode']} ({body.get('vector_note')})")
        sessions = [by_doc[res["doc_id"]].key for res in body["results"]]
        wanted = evidence_sessions(q)
        return {
            "category": q["category"],
            **{f"session@{d}": len(wanted & set(sessions[:d])) / len(wanted) for d in DOC_KS},
        }

    return await run_concurrent(qa, one, 4)


def bm25s_reference(
    url: str, qa: list[dict], hubs: dict, sessions: list[Session], by_doc: dict, count_tokens
) -> dict[str, list[dict]]:
    """bm25s (k1 1.2, b 0.75, Snowball, its English stopwords) on the chunks the server stored
    (heading path + markdown, one index per hub) and on whole sessions (title + markdown)."""
    import bm25s
    import psycopg
    import Stemmer

    stemmer = Stemmer.Stemmer("english")
    with psycopg.connect(url) as conn:
        rows = conn.execute(
            "SELECT h.slug, c.doc_id, c.heading_path, c.markdown FROM chunks c"
            " JOIN hubs h ON h.id = c.hub_id ORDER BY c.id"
        ).fetchall()
    per_hub: dict[str, list[tuple]] = {}
    for slug, doc_id, heading, md in rows:
        per_hub.setdefault(slug, []).append((doc_id, heading, md))
    sess_hub: dict[str, list[Session]] = {}
    for s in sessions:
        sess_hub.setdefault(hubs[s.sample], []).append(s)

    def index(texts):
        model = bm25s.BM25(k1=1.2, b=0.75)
        model.index(bm25s.tokenize(texts, stopwords="en", stemmer=stemmer, show_progress=False), show_progress=False)
        return model

    chunk_models = {h: index([f"{hd} {md}" for _, hd, md in c]) for h, c in per_hub.items()}
    sess_models = {h: index([f"{s.title} {s.markdown}" for s in ss]) for h, ss in sess_hub.items()}
    out: dict[str, list[dict]] = {f"k{p}": [] for p in KS}
    out["sessions"] = []
    for q in qa:
        hub = hubs[q["sample_id"]]
        qt = bm25s.tokenize([q["question"]], stopwords="en", stemmer=stemmer, show_progress=False)
        chunks = per_hub[hub]
        ids, scores = chunk_models[hub].retrieve(qt, k=min(max(KS), len(chunks)), show_progress=False, n_threads=1)
        results = [
            {"doc_id": chunks[int(i)][0], "heading_path": chunks[int(i)][1], "markdown": chunks[int(i)][2]}
            for i, s in zip(ids[0], scores[0], strict=False)
            if s > 0
        ]
        for p in KS:
            out[f"k{p}"].append(score_chunks(q, results, by_doc, count_tokens, p))
        ss = sess_hub[hub]
        ids, scores = sess_models[hub].retrieve(qt, k=min(max(DOC_KS), len(ss)), show_progress=False, n_threads=1)
        keys = [ss[int(i)].key for i, s in zip(ids[0], scores[0], strict=False) if s > 0]
        wanted = evidence_sessions(q)
        out["sessions"].append(
            {"category": q["category"], **{f"session@{d}": len(wanted & set(keys[:d])) / len(wanted) for d in DOC_KS}}
        )
    return out


def mean(xs) -> float:
    xs = list(xs)
    return sum(xs) / len(xs) if xs else float("nan")


async def _main(opts: Options, pg: Postgres) -> dict:
    samples, qa = load(opts.locomo)
    window = int(opts.extra.get("locomo_window") or 0)
    count_tokens, tokenizer = token_counter()
    url = pg.fresh("bench_locomo")
    logs = opts.out / ".logs"
    counts = logs / "locomo-embed-counts.jsonl"
    logs.mkdir(parents=True, exist_ok=True)
    counts.unlink(missing_ok=True)
    hubs: dict[str, str] = {}
    sessions: list[Session] = []
    scores: dict[tuple[str, int], list[dict]] = {}
    doc_scores: dict[str, list[dict]] = {}

    with Proc("serve", url, logs, counts=counts) as srv:
        async with httpx.AsyncClient(base_url=srv.url, timeout=600) as client:
            t0 = time.perf_counter()
            for sample in samples:
                slug = re.sub(r"[^a-z0-9-]+", "-", f"locomo-{sample['sample_id']}".lower()).strip("-")[:63]
                hubs[sample["sample_id"]] = slug
                token = await create_hub(client, slug)
                docs = chat_sessions(sample) if window == 0 else session_docs(sample, window)
                created = await post_docs(
                    client,
                    token,
                    slug,
                    [{"title": d.title, "markdown": d.markdown, "source": d.source} for d in docs],
                    concurrency=4,
                )
                for d, c in zip(docs, created, strict=False):
                    d.doc_id = c["id"]
                sessions += docs
            by_doc = {s.doc_id: s for s in sessions}
            n_turns = sum(len(s.turns) for s in sessions)
            capture_s = time.perf_counter() - t0
            log(f"[locomo] captured {len(sessions)} session docs ({n_turns} turns) in {capture_s:.1f}s; indexing ...")
            await wait_indexed(client, progress=True)
            index_s = time.perf_counter() - t0
            emb = count_summary(counts)
            log(f"[locomo] indexed in {index_s:.1f}s; asking {len(qa)} questions")
            for k in KS:
                scores[("hybrid", k)] = (await _ask(client, qa, hubs, by_doc, "hybrid", k, count_tokens))[k]
            for p, rows in (await _ask(client, qa, hubs, by_doc, "vector", max(KS), count_tokens, KS[:-1])).items():
                scores[("vector", p)] = rows
            for method in ("hybrid", "vector"):
                doc_scores[method] = await _ask_docs(client, qa, hubs, by_doc, method)
    with Proc("serve", url, logs, embedder="none", worker="external") as ft:
        async with httpx.AsyncClient(base_url=ft.url, timeout=600) as client:
            for p, rows in (await _ask(client, qa, hubs, by_doc, "fulltext", max(KS), count_tokens, KS[:-1])).items():
                scores[("fulltext", p)] = rows
            doc_scores["fulltext"] = await _ask_docs(client, qa, hubs, by_doc, "fulltext")
    log("[locomo] bm25s reference ...")
    ref = bm25s_reference(url, qa, hubs, sessions, by_doc, count_tokens)
    for p in KS:
        scores[("bm25s (reference)", p)] = ref[f"k{p}"]
    doc_scores["bm25s (reference)"] = ref["sessions"]
    methods = (*METHODS, "bm25s (reference)")

    overall_rows = []
    for method in methods:
        row = [method]
        row += [mean(s["recall"] for s in scores[(method, k)]) for k in KS]
        row += [mean(s["tokens"] for s in scores[(method, k)]) for k in KS]
        overall_rows.append(row)
    overall = md_table(["method"] + [f"recall@{k}" for k in KS] + [f"tokens@{k}" for k in KS], overall_rows)
    cat_rows = []
    for cat, name in CATEGORIES.items():
        n = sum(1 for q in qa if q["category"] == cat)
        for method in METHODS:
            cat_rows.append(
                [f"{cat} {name}", n, method]
                + [mean(s["recall"] for s in scores[(method, k)] if s["category"] == cat) for k in KS]
            )
    by_cat = md_table(["category", "questions", "method"] + [f"recall@{k}" for k in KS], cat_rows)
    sess_rows = []
    for method in methods:
        chunk_level = scores[(method, max(KS))]
        sess_rows.append(
            [
                method,
                *(mean(s[f"session@{d}"] for s in doc_scores[method]) for d in DOC_KS),
                *(mean(s[f"session@{d}"] for s in chunk_level) for d in DOC_KS),
            ]
        )
    sess_table = md_table(
        [
            "method",
            "doc level: session recall@5",
            "session recall@10",
            "chunk level (k=20) mapped to sessions: recall@5",
            "recall@10",
        ],
        sess_rows,
    )
    r10 = {m: mean(s["recall"] for s in scores[(m, 10)]) for m in methods}
    t10 = mean(s["tokens"] for s in scores[("hybrid", 10)])
    best_single = max(r10["vector"], r10["fulltext"])
    goal = (
        f"Goal: evidence recall@10 >= 0.75 with < 1,500 returned tokens on average. Hybrid: recall@10 "
        f"{r10['hybrid']:.3f} with {t10:.0f} tokens -> **{'met' if r10['hybrid'] >= 0.75 and t10 < 1500 else 'missed'}**."
        f" Hybrid >= max(full text, vector) at k=10: {r10['hybrid']:.3f} vs {best_single:.3f} -> "
        f"**{'yes' if r10['hybrid'] >= best_single else 'no'}**."
    )
    errors = ""
    if SERVER_ERRORS:
        errors = f"\n**{len(SERVER_ERRORS)} capture POSTs answered 5xx and were retried** (`{SERVER_ERRORS[0]}`).\n"
        SERVER_ERRORS.clear()
    variant = (
        ""
        if window <= 1
        else (
            f"\n**Variant: {window} consecutive turns per chunk** (`--locomo-window {window}`): a"
            f" `## Turns D1:1-D1:{window}` section per {window} turns, each turn a paragraph opening with"
            f" `**<speaker> (<dia_id>):**` (written in bench/suite/locomo.py, not the chat-import renderer).\n"
        )
    )
    layout = {
        0: "as a chat import gives it: markdown from the chat-import renderer (`formats/mdutil.render_turns`)"
        " with the speakers and the session's date (`## <day>`, a `### <speaker>` section per turn), source"
        ' "chat", so the server chunks it as a conversation: windows of turns of up to 600 characters'
        " overlapping by one turn, breadcrumb `<A> and <B>, session <n> > <day>`",
        1: "markdown from the chat-import renderer without times (`formats/mdutil.render_turns`), one"
        " `## <speaker> (<dia_id>)` section per turn, so one chunk per turn (the earlier layout)",
    }.get(window, f"{window} turns per section (see above), so one chunk per {window} turns")
    suffix = {0: "", 1: " - 1 turn per chunk (the earlier layout)"}.get(window, f" - {window} turns per chunk")
    cache_note = (
        ", vectors of texts embedded before from the bench's disk cache, bench/embcache.py"
        if opts.extra.get("embed_cache")
        else ""
    )
    text = f"""## Conversation memory: LoCoMo ({len(samples)} conversations, {len(sessions)} session docs, {n_turns} turns){suffix}
{variant}
One hub per conversation, one doc per session through `POST /api/docs`, {layout}; indexed by the in-process worker ({emb["calls"]} embedding
calls, {emb["inputs"]} inputs; capture + indexing {index_s:.0f} s{cache_note}). {len(qa)} questions
(categories 1-4 with evidence), asked through `POST /api/hub/<hub>/recall` (level chunk): hybrid
once per k = 5, 10, 20 (its candidate pools depend on k, so its lists differ by k); vector and
full text once at k = 20, scored on their top 5 / 10 / 20 (their order does not depend on k).
Full text: a server with `MEMORYWIKI_EMBEDDER=none`. bm25s: k1 1.2, b 0.75, Snowball, its
English stopwords, over the same chunks (heading path + markdown), one index per hub.
Tokens: {tokenizer}; counted over each result's breadcrumb + markdown.
Published comparator: {PUBLISHED}.

{overall}

{by_cat}

Sessions (a session is a doc): `level: "doc"`, k = 10, against the chunk-level answer (k = 20)
mapped to sessions in the order of their best chunk; bm25s indexes whole sessions (title +
markdown). Published comparator: {PUBLISHED_SESSIONS}.

{sess_table}

{goal}
{errors}"""
    print(text)
    write_result(opts, "locomo.md" if window == 0 else f"locomo-window{window}.md", text + "\n" + machine_line() + "\n")
    if opts.smoke:
        pg.drop("bench_locomo")
    return {"recall@10": r10["hybrid"], "tokens@10": t10}


def run(opts: Options, pg: Postgres) -> dict:
    return asyncio.run(_main(opts, pg))
