"""Long-term chat memory on LongMemEval-S: session recall as LongMemEval defines it, evidence
turns in the chunks an agent reads, and their tokens.

    python -m bench longmemeval                     # the default sample (--questions 60)
    python -m bench longmemeval --questions 0       # every question with an answer location
    python -m bench longmemeval --data DIR --cache DIR --out DIR

Data: LongMemEval-S (Wu et al., ICLR 2025; MIT), one JSON file per question, as kept in git in
hussainzs/Memoria, `evaluations/data/lme_jsons/<n sessions>_<question id>.json` (the files with
38-58 sessions are LongMemEval-S; 1-6 the oracle set; 460-490 LongMemEval-M, not in git). With
the repository mirrored (`git clone --bare`), the S files are brought by:

    mkdir -p DIR && git -C MIRROR ls-tree --name-only HEAD evaluations/data/lme_jsons/ \\
      | grep -E '/[3-5][0-9]_' | while read f; do git -C MIRROR show HEAD:$f > DIR/${f##*/}; done

DIR defaults to bench/.cache/longmemeval/s; a `longmemeval_s*.json` (the released file, a list
of the 500 questions) in DIR is read instead when present.

Capture: each question's haystack is written as a ChatGPT data export (conversations.json, one
conversation per session, each message dated with the session's timestamp) and uploaded through
`POST /api/import/chatgpt` into a hub of its own, so every session is a page made by the
ChatGPT export reader (formats/chatgpt.py) and chunked as a conversation.

Resumable: the hubs live in the database `bench_lme` of the bench's PostgreSQL (kept between
runs) and `--cache`/state.json records which questions are built; vectors go through the
bench's disk cache (bench/embcache.py, `--cache`/vectors), so a run stopped midway continues
where it was, and a rebuild embeds only texts it has not seen. `--fresh` starts over.

Questions: a fixed sample (`--questions N`, seed `--seed`): per question type, the questions in
a seeded shuffle, N split across the types in proportion to their size (largest remainder, at
least one each), so a larger N holds every question of a smaller one. The 30 abstention
questions (`_abs`) have no answer location and are left out, as LongMemEval's retrieval
evaluation leaves them out.

Metrics:
- session level (LongMemEval's retrieval metrics, src/retrieval/eval_utils.py): over the ranked
  sessions, recall_any@k = 1 if any answer session is in the top k, recall_all@k = 1 if every
  one is, NDCG@k with binary relevance and LongMemEval's DCG (rel_1 + sum_{i>=2} rel_i/log2 i).
  Sessions ranked by `level: "doc"` recall (k = 10; a session is a page).
- turn level: the turns marked `has_answer`; the top 10 chunks of `level: "chunk"` recall
  (k = 10); any evidence turn among them (the question answered from what an agent reads), the
  share of evidence turns among them, tokens (all-MiniLM-L6-v2's tokenizer, breadcrumb +
  markdown of each chunk). Which turns a chunk holds is found from its span in the page's
  markdown (see bench/suite/locomo.py).
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import json
import math
import os
import random
import re
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from ..common import (
    CACHE,
    RESULTS,
    SERVER_ERRORS,
    Options,
    Postgres,
    Proc,
    create_hub,
    log,
    machine_line,
    md_table,
    run_concurrent,
    wait_indexed,
    write_result,
)

DATA = CACHE / "longmemeval" / "s"
STATE = CACHE / "longmemeval" / "state"
DB = "bench_lme"
TYPES = (
    "single-session-user",
    "single-session-assistant",
    "single-session-preference",
    "multi-session",
    "knowledge-update",
    "temporal-reasoning",
)
SESSION_KS = (5, 10)
CHUNK_K = 10
# Published session-level retrieval on LongMemEval-S (recall_any@5, recall_any@10, NDCG@10),
# as issue 37 quotes them.
PUBLISHED = (
    ("BM25 + all-MiniLM-L6-v2 (published, same stack)", 0.952, 0.986, 0.879),
    ("BM25 alone (published)", 0.862, 0.946, None),
    ("best published hybrid", 0.984, None, None),
)
GOAL_TURN = 0.97
GOAL_TOKENS = 1500
GOAL_ALL5 = 0.97
SOURCE = (
    "LongMemEval-S (Wu et al., ICLR 2025; MIT): one JSON file per question, as kept in git in\n"
    "hussainzs/Memoria, evaluations/data/lme_jsons/ (the files <38-58>_<id>.json), or the released\n"
    "longmemeval_s.json (https://huggingface.co/datasets/xiaowu0162/longmemeval-cleaned).\n"
    "See the docstring of bench/suite/longmemeval.py for the commands that bring them."
)


# --------------------------------------------------------------------------- data


def load(folder: Path) -> list[dict[str, Any]]:
    """Every question of LongMemEval-S in `folder`: a released longmemeval_s*.json, else one file
    per question (`<sessions>_<id>.json`)."""
    folder = Path(folder)
    released = sorted(folder.glob("longmemeval_s*.json"))
    if released:
        return list(json.loads(released[0].read_text()))
    out = []
    for path in sorted(folder.glob("*.json")):
        if path.name.startswith("_"):
            continue
        q = json.loads(path.read_text())
        if isinstance(q, dict) and "haystack_sessions" in q:
            out.append(q)
    return out


def sample(questions: list[dict[str, Any]], n: int, seed: int = 37) -> list[dict[str, Any]]:
    """n questions with an answer location, stratified by type (see the module's docstring);
    n <= 0 or past the total: all of them."""
    usable = [q for q in questions if not q["question_id"].endswith("_abs")]
    by_type: dict[str, list[dict[str, Any]]] = {}
    for q in sorted(usable, key=lambda q: q["question_id"]):
        by_type.setdefault(q["question_type"], []).append(q)
    for t, qs in by_type.items():
        random.Random(f"{seed}:{t}").shuffle(qs)
    total = sum(len(qs) for qs in by_type.values())
    if n <= 0 or n >= total:
        n = total
    share = {t: n * len(qs) / total for t, qs in by_type.items()}
    take = {t: max(1, math.floor(s)) for t, s in share.items()}
    for t in sorted(share, key=lambda t: (take[t] - share[t], t)):
        if sum(take.values()) >= n:
            break
        take[t] += 1
    # interleaved, each type at its share of the positions: any prefix (a run stopped midway)
    # is itself close to stratified
    chosen = [((i + 0.5) / take[t], t, q) for t in sorted(by_type) for i, q in enumerate(by_type[t][: take[t]])]
    return [q for _, _, q in sorted(chosen, key=lambda x: (x[0], x[1]))]


def session_time(text: str) -> dt.datetime:
    """LongMemEval's "2023/05/23 (Tue) 03:13" (UTC assumed)."""
    m = re.match(r"(\d{4})/(\d{2})/(\d{2})\s*(?:\(\w+\))?\s*(\d{1,2}):(\d{2})", text)
    if not m:
        raise ValueError(f"not a LongMemEval timestamp: {text!r}")
    y, mo, d, h, mi = (int(x) for x in m.groups())
    return dt.datetime(y, mo, d, h, mi, tzinfo=dt.UTC)


def chatgpt_export(q: dict[str, Any]) -> list[dict[str, Any]]:
    """The question's haystack as a ChatGPT export's conversations.json: a conversation per
    session (id = the session's id, no title: the reader takes the first user line), its
    messages a chain in the mapping, each dated with the session's time plus a second per turn."""
    convs = []
    for sid, turns, date in zip(q["haystack_session_ids"], q["haystack_sessions"], q["haystack_dates"], strict=True):
        t0 = session_time(date).timestamp()
        mapping: dict[str, Any] = {"root": {"id": "root", "message": None, "parent": None, "children": []}}
        parent = "root"
        for i, turn in enumerate(turns):
            node = f"m{i}"
            mapping[node] = {
                "id": node,
                "parent": parent,
                "children": [],
                "message": {
                    "id": node,
                    "author": {"role": turn["role"]},
                    "create_time": t0 + i,
                    "content": {"content_type": "text", "parts": [turn["content"]]},
                    "metadata": {},
                    "recipient": "all",
                },
            }
            mapping[parent]["children"].append(node)
            parent = node
        convs.append(
            {
                "id": sid,
                "conversation_id": sid,
                "title": "",
                "create_time": t0,
                "update_time": t0 + len(turns),
                "mapping": mapping,
                "current_node": parent,
            }
        )
    return convs


@dataclass
class Page:
    """One session as the ChatGPT reader renders it, and where each turn sits in it."""

    session: str
    markdown: str
    turns: list[tuple[int, int, int]] = field(default_factory=list)  # (turn index, start, end)

    def turns_in(self, chunk: str) -> set[int] | None:
        """The turns a chunk's markdown covers (None: not found in the page). A long turn cut in
        pieces repeats its speaker heading on each piece: tried without it too."""
        candidates = [chunk]
        head, _, rest = chunk.partition("\n\n")
        if rest and head.lstrip().startswith("#"):
            candidates.append(rest)
        for text in candidates:
            start = self.markdown.find(text)
            if start >= 0:
                end = start + len(text)
                return {i for i, a, b in self.turns if a < end and b > start}
        return None


def pages(q: dict[str, Any], convs: list[dict[str, Any]]) -> dict[str, Page]:
    """session id -> Page, rendered by the export reader's own renderer."""
    from memorywiki.formats.chatgpt import render_conversation
    from memorywiki.formats.mdutil import demote_headings, strip_citations

    out = {}
    for conv, turns in zip(convs, q["haystack_sessions"], strict=True):
        _, markdown, _ = render_conversation(conv)
        page = Page(conv["conversation_id"], markdown)
        pos = 0
        for i, turn in enumerate(turns):
            text = strip_citations(turn["content"]).strip()
            if not text:
                continue
            for candidate in (demote_headings(text, 4), text, text[:200]):
                start = markdown.find(candidate, pos)
                if start >= 0:
                    page.turns.append((i, start, start + len(candidate)))
                    pos = start + len(candidate)
                    break
        out[page.session] = page
    return out


def evidence_turns(q: dict[str, Any]) -> set[tuple[str, int]]:
    return {
        (sid, i)
        for sid, turns in zip(q["haystack_session_ids"], q["haystack_sessions"], strict=True)
        for i, t in enumerate(turns)
        if t.get("has_answer")
    }


# --------------------------------------------------------------------------- metrics


def dcg(relevances: list[float], k: int) -> float:
    """LongMemEval's DCG: the first relevance as is, the i-th (i >= 2) over log2(i)."""
    rel = relevances[:k]
    if not rel:
        return 0.0
    return rel[0] + sum(r / math.log2(i) for i, r in enumerate(rel[1:], start=2))


def session_metrics(ranked: list[str], answers: set[str], corpus: list[str], ks=SESSION_KS) -> dict[str, float]:
    """recall_any@k, recall_all@k, ndcg_any@k as LongMemEval's evaluate_retrieval gives them
    for a ranking of the corpus's sessions (sessions not returned rank below every returned one)."""
    out: dict[str, float] = {}
    relevance = [1.0 if s in answers else 0.0 for s in corpus]
    ideal = sorted(relevance, reverse=True)
    ranked_rel = [1.0 if s in answers else 0.0 for s in ranked]
    for k in ks:
        top = set(ranked[:k])
        out[f"recall_any@{k}"] = float(any(s in top for s in answers))
        out[f"recall_all@{k}"] = float(all(s in top for s in answers))
        best = dcg(ideal, k)
        out[f"ndcg_any@{k}"] = dcg(ranked_rel, k) / best if best else 0.0
    return out


def chunk_metrics(
    results: list[dict[str, Any]], by_doc: dict[str, Page], evidence: set[tuple[str, int]], count_tokens
) -> dict[str, float]:
    """Any evidence turn among the chunks, the share of evidence turns, tokens, unplaced chunks."""
    found: set[tuple[str, int]] = set()
    tokens = 0
    unplaced = 0
    for res in results:
        page = by_doc.get(res["doc_id"])
        turns = page.turns_in(res["markdown"]) if page else None
        if turns is None:
            unplaced += 1
        elif page is not None:
            found |= {(page.session, i) for i in turns}
        tokens += count_tokens(res["heading_path"] + "\n" + res["markdown"])
    hit = evidence & found
    return {
        "turn_any": float(bool(hit)) if evidence else float("nan"),
        "turn_recall": len(hit) / len(evidence) if evidence else float("nan"),
        "tokens": float(tokens),
        "unplaced": float(unplaced),
    }


def mean(xs) -> float:
    xs = [x for x in xs if x == x]
    return sum(xs) / len(xs) if xs else float("nan")


# --------------------------------------------------------------------------- build (resumable)


class State:
    """Which questions have a hub in the database: {qid: {slug, token, docs: {doc id: session}}}."""

    def __init__(self, folder: Path, variant: str):
        folder.mkdir(parents=True, exist_ok=True)
        self.path = folder / f"{variant}.json"
        self.hubs: dict[str, dict[str, Any]] = json.loads(self.path.read_text()) if self.path.exists() else {}

    def save(self) -> None:
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text(json.dumps(self.hubs))
        tmp.replace(self.path)


def slug_for(qid: str, attempt: int = 0) -> str:
    base = re.sub(r"[^a-z0-9-]+", "-", f"lme-{qid}".lower()).strip("-")[:56]
    return f"{base}-{attempt}" if attempt else base


async def build_one(client: httpx.AsyncClient, q: dict[str, Any], state: State) -> None:
    qid = q["question_id"]
    attempt = int(state.hubs.get(qid, {}).get("attempt", -1)) + 1  # a half-built hub is left behind
    slug = slug_for(qid, attempt)
    state.hubs[qid] = {"attempt": attempt, "slug": slug, "done": False}
    token = await create_hub(client, slug)
    convs = chatgpt_export(q)
    body = json.dumps(convs).encode()
    r = await client.post(
        "/api/import/chatgpt",
        files={"file": ("conversations.json", body, "application/json")},
        data={"hub": slug},
        headers={"Authorization": f"Bearer {token}"},
    )
    if r.status_code >= 500:
        SERVER_ERRORS.append(f"POST /api/import/chatgpt -> {r.status_code} {r.text[:120]}")
    r.raise_for_status()
    answer = r.json()
    skipped = {s["id"] for s in answer.get("skipped", [])}
    kept = [c["conversation_id"] for c in convs if c["conversation_id"] not in skipped]
    if len(kept) != len(answer["docs"]):
        raise RuntimeError(f"{qid}: {len(answer['docs'])} pages for {len(kept)} sessions")
    docs = {d["id"]: sid for d, sid in zip(answer["docs"], kept, strict=True)}
    state.hubs[qid] = {"attempt": attempt, "slug": slug, "token": token, "docs": docs, "done": True}
    state.save()


# --------------------------------------------------------------------------- ask


async def recall(
    client: httpx.AsyncClient, slug: str, question: str, level: str, k: int, hybrid: bool, max_tokens: int | None = None
) -> dict:
    ask: dict[str, Any] = {"question": question, "k": k, "level": level, "hybrid": hybrid}
    if max_tokens:
        ask["max_tokens"] = max_tokens
    r = await client.post(f"/api/hub/{slug}/recall", json=ask)
    r.raise_for_status()
    return r.json()


async def ask(client, qs, state, rendered, count_tokens, modes: tuple[str, ...]) -> dict[str, list[dict]]:
    """Per mode ("hybrid", "vector", "fulltext"): one row of metrics per question."""
    out: dict[str, list[dict]] = {}
    for mode in modes:

        async def one(q, mode=mode):
            hub = state.hubs[q["question_id"]]
            docs: dict[str, str] = hub["docs"]
            row: dict[str, Any] = {"qid": q["question_id"], "type": q["question_type"]}
            body = await recall(client, hub["slug"], q["question"], "doc", max(SESSION_KS), mode == "hybrid")
            if body["mode"] != mode:
                raise RuntimeError(f"expected mode {mode}, got {body['mode']} ({body.get('vector_note')})")
            ranked = [docs[res["doc_id"]] for res in body["results"]]
            row.update(session_metrics(ranked, set(q["answer_session_ids"]), q["haystack_session_ids"]))
            body = await recall(client, hub["slug"], q["question"], "chunk", CHUNK_K, mode == "hybrid")
            by_doc = {doc: rendered[q["question_id"]][sid] for doc, sid in docs.items()}
            row.update(chunk_metrics(body["results"], by_doc, evidence_turns(q), count_tokens))
            row["server_tokens"] = body.get("tokens")
            # the same question with the goal's budget: chunks in rank order while they fit it
            body = await recall(
                client, hub["slug"], q["question"], "chunk", CHUNK_K, mode == "hybrid", max_tokens=GOAL_TOKENS
            )
            budget = chunk_metrics(body["results"], by_doc, evidence_turns(q), count_tokens)
            row["budget_turn_any"] = budget["turn_any"]
            row["budget_tokens"] = budget["tokens"]
            row["budget_chunks"] = float(len(body["results"]))
            chunk_sessions = list(dict.fromkeys(docs[res["doc_id"]] for res in body["results"]))
            row["chunk_session_any@5"] = float(bool(set(chunk_sessions[:5]) & set(q["answer_session_ids"])))
            return row

        out[mode] = await run_concurrent(qs, one, 2)
    return out


# --------------------------------------------------------------------------- report


def table_by_type(rows: list[dict], keys: list[str], labels: list[str]) -> str:
    lines = []
    for t in (*TYPES, "all"):
        sub = [r for r in rows if t == "all" or r["type"] == t]
        if not sub:
            continue
        lines.append([t, len(sub), *(mean(r[k] for r in sub) for k in keys)])
    return md_table(["question type", "questions", *labels], lines)


def report(
    opts: Options, qs: list[dict], total: int, scores: dict[str, list[dict]], notes: dict[str, Any], variant: str
) -> str:
    hyb = scores["hybrid"]
    sess_keys = ["recall_any@5", "recall_any@10", "ndcg_any@10", "recall_all@5", "recall_all@10"]
    sess = table_by_type(hyb, sess_keys, sess_keys)
    turn = table_by_type(
        hyb,
        [
            "turn_any",
            "turn_recall",
            "tokens",
            "budget_turn_any",
            "budget_chunks",
            "budget_tokens",
            "chunk_session_any@5",
        ],
        [
            "evidence turn in top 10 chunks",
            "evidence turns found",
            "tokens (10 chunks)",
            f"evidence turn within max_tokens {GOAL_TOKENS}",
            "chunks",
            "tokens",
            "answer session in chunks' top 5",
        ],
    )
    beside = []
    for mode, rows in scores.items():
        beside.append(
            [f"Memory.Wiki {mode} (this run)"]
            + [mean(r[k] for r in rows) for k in ("recall_any@5", "recall_any@10", "ndcg_any@10", "recall_all@5")]
            + [mean(r[k] for r in rows) for k in ("turn_any", "tokens", "budget_turn_any", "budget_tokens")]
        )
    for name, a5, a10, n10 in PUBLISHED:
        beside.append([name, a5, a10, n10, None, None, None, None, None])
    beside_t = md_table(
        [
            "system",
            "recall_any@5",
            "recall_any@10",
            "NDCG@10",
            "recall_all@5",
            "evidence turn in top 10 chunks",
            "tokens",
            f"evidence turn within {GOAL_TOKENS} tokens",
            "tokens",
        ],
        beside,
    )
    turn_any = mean(r["turn_any"] for r in hyb)
    tokens = mean(r["tokens"] for r in hyb)
    budget_any = mean(r["budget_turn_any"] for r in hyb)
    all5 = mean(r["recall_all@5"] for r in hyb)
    met = "met" if turn_any >= GOAL_TURN and tokens <= GOAL_TOKENS else "missed"
    goals = (
        f"Goals: an evidence turn in the top 10 chunks for >= {GOAL_TURN} of the questions within "
        f"{GOAL_TOKENS:,} tokens: {turn_any:.3f} with {tokens:.0f} tokens -> **{met}** (asked with "
        f"`max_tokens: {GOAL_TOKENS}`: {budget_any:.3f}); session recall_all@5 >= "
        f"{GOAL_ALL5}: {all5:.3f} -> **{'met' if all5 >= GOAL_ALL5 else 'missed'}**."
    )
    misses = [r for r in hyb if r["turn_any"] == 0.0]
    miss_lines = "\n".join(f"- {r['qid']} ({r['type']})" for r in misses[:30]) or "- none"
    errors = ""
    if SERVER_ERRORS:
        errors = f"\n**{len(SERVER_ERRORS)} requests answered 5xx** (`{SERVER_ERRORS[0]}`).\n"
    sample_note = (
        f"**{len(qs)} of the {total} questions with an answer location** (a seeded sample stratified by "
        f"question type, `--questions {len(qs)} --seed {notes['seed']}`; the figures are NOT on all 500)"
        if len(qs) < total
        else f"all {total} questions with an answer location"
    )
    return f"""## Long-term chat memory: LongMemEval-S ({variant})

Command: `{opts.command}`. Data: {notes["data"]} ({notes["loaded"]} questions in the copy, the
30 abstention questions left out as LongMemEval's retrieval evaluation does); {sample_note}.
Each question's haystack (~50 sessions) uploaded as a ChatGPT export through
`POST /api/import/chatgpt` into a hub of its own: {notes["sessions"]} sessions, indexed by the
server's in-process worker (embedder `{os.environ.get("MEMORYWIKI_EMBEDDER", "local")}`; vectors
through the bench's disk cache, so times are not measured here). Sessions ranked by
`level: "doc"` recall (k = 10), chunks by `level: "chunk"` recall (k = 10).
Turn-level: {notes["unplaced"]} of {notes["chunks"]} returned chunks could not be placed in their page.
Tokens: {notes["tokenizer"]}, breadcrumb + markdown of each chunk.

### Beside the published figures (session level, LongMemEval's metrics)

{beside_t}

### Session level by question type (hybrid)

{sess}

### Turn level by question type (hybrid, top 10 chunks)

{turn}

{goals}

Questions with no evidence turn in the top 10 chunks (hybrid, first 30):
{miss_lines}
{errors}
{machine_line()}
"""


# --------------------------------------------------------------------------- main


def wordpiece_counter():
    """all-MiniLM-L6-v2's tokenizer through `tokenizers` alone (no transformers), or None."""
    try:
        from memorywiki.server.embedding.local import packaged_model_dir
        from tokenizers import Tokenizer

        tok = Tokenizer.from_file(str(packaged_model_dir() / "tokenizer.json"))
        tok.no_truncation()
    except Exception:
        return None

    def count(text: str) -> int:
        return len(tok.encode(text, add_special_tokens=False).ids)

    return count, "all-MiniLM-L6-v2's WordPiece tokenizer (bert-base-uncased vocabulary), offline"


def parse(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m bench longmemeval", description=__doc__.split("\n\n")[0])
    p.add_argument("--data", type=Path, default=DATA, help="folder of LongMemEval-S question files")
    p.add_argument("--questions", type=int, default=60, help="the sample's size (0: all)")
    p.add_argument("--seed", type=int, default=37)
    p.add_argument("--cache", type=Path, default=STATE, help="state and vector cache (resumable runs)")
    p.add_argument("--out", type=Path, default=RESULTS)
    p.add_argument("--pg-dir", type=Path, default=CACHE / "pg")
    p.add_argument("--variant", default="default", help="name of this layout (own database, state, result file)")
    p.add_argument("--build-only", action="store_true", help="build (and index) the hubs, ask nothing")
    p.add_argument("--no-build", action="store_true", help="ask only the sample's questions built before")
    p.add_argument("--fresh", action="store_true", help="drop the variant's hubs and start over")
    p.add_argument("--no-fulltext", action="store_true", help="skip the full-text-only server")
    p.add_argument("--server-env", action="append", default=[], help="KEY=VALUE for the server (a variant)")
    return p.parse_args(argv)


async def _main(args: argparse.Namespace, pg: Postgres, questions: list[dict[str, Any]]) -> int:
    from .locomo import token_counter

    started = time.time()
    qs = sample(questions, args.questions, args.seed)
    if args.no_build:
        built = State(args.cache, args.variant).hubs
        qs = [q for q in qs if built.get(q["question_id"], {}).get("done")]
    total = sum(1 for q in questions if not q["question_id"].endswith("_abs"))
    variant = args.variant
    db = DB if variant == "default" else f"{DB}_{re.sub(r'[^a-z0-9_]', '_', variant.lower())}"
    state = State(args.cache, variant)
    if args.fresh or not pg.exists(db):
        pg.fresh(db)
        state.hubs = {}
        state.save()
    url = pg.db_url(db)
    os.environ["MEMORYWIKI_BENCH_EMBED_CACHE"] = str((args.cache / "vectors").resolve())
    extra_env = dict(kv.split("=", 1) for kv in args.server_env)
    logs = args.out / ".logs"
    rendered = {q["question_id"]: pages(q, chatgpt_export(q)) for q in qs}
    count_tokens, tokenizer = token_counter()
    if "no tokenizer" in tokenizer:
        count_tokens, tokenizer = wordpiece_counter() or (count_tokens, tokenizer)
    modes = ("hybrid", "vector")
    with Proc("serve", url, logs, extra_env=extra_env) as srv:
        async with httpx.AsyncClient(base_url=srv.url, timeout=900) as client:
            todo = [q for q in qs if not state.hubs.get(q["question_id"], {}).get("done")]
            log(f"[lme] {len(qs)} questions, {len(qs) - len(todo)} built before; building {len(todo)}")
            t0 = time.perf_counter()
            for n, q in enumerate(todo, 1):
                await build_one(client, q, state)
                await wait_indexed(client)  # one hub at a time: a stopped run loses at most one
                log(f"[lme] built {n}/{len(todo)} ({q['question_id']}) {time.perf_counter() - t0:.0f}s")
            await wait_indexed(client)
            if args.build_only:
                return 0
            scores = await ask(client, qs, state, rendered, count_tokens, modes)
    if not args.no_fulltext:
        with Proc("serve", url, logs, embedder="none", worker="external", extra_env=extra_env) as ft:
            async with httpx.AsyncClient(base_url=ft.url, timeout=900) as client:
                scores.update(await ask(client, qs, state, rendered, count_tokens, ("fulltext",)))
    rows = scores["hybrid"]
    notes = {
        "seed": args.seed,
        "data": f"`{args.data}`",
        "loaded": len(questions),
        "sessions": sum(len(q["haystack_sessions"]) for q in qs),
        "unplaced": int(sum(r["unplaced"] for r in rows)),
        "chunks": len(rows) * CHUNK_K,
        "tokenizer": tokenizer,
    }
    opts = Options(out=args.out, command="python -m bench longmemeval " + " ".join(sys.argv[2:]))
    text = report(opts, qs, total, scores, notes, variant)
    print(text)
    name = "longmemeval.md" if variant == "default" else f"longmemeval-{variant}.md"
    write_result(opts, name, text)
    from .report import write_index

    write_index(opts, {"longmemeval" if variant == "default" else f"longmemeval-{variant}": time.time() - started})
    (args.out / ".logs").mkdir(parents=True, exist_ok=True)
    (args.out / ".logs" / f"longmemeval-{variant}.json").write_text(json.dumps(scores))
    return 0


def main(argv: list[str]) -> int:
    args = parse(argv)
    questions = load(args.data) if Path(args.data).is_dir() else []
    if not questions:
        print(f"bench: LongMemEval-S is not in {args.data}.\n{SOURCE}", file=sys.stderr)
        return 2
    pg = Postgres(args.pg_dir)
    try:
        return asyncio.run(_main(args, pg, questions))
    finally:
        pg.close()
