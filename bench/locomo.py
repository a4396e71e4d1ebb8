"""Conversation memory on LoCoMo: evidence recall@k of chunk-level recall, and its token cost.

Capture: one hub per conversation, one doc per session, POSTed to a running server
(uvicorn subprocess) and indexed by its in-process worker. The session's markdown comes from
the chat-import renderer `memorywiki.formats.mdutil.render_turns` (the one the ChatGPT /
Claude converters use): one `## <speaker> (<dia_id>)` section per turn. Putting the dia_id in
the heading makes each turn its own chunk and the chunk -> turn mapping exact (a long turn split
in pieces repeats its heading, so every piece still maps). An image turn gets its BLIP caption
appended as `[shares a photo: ...]`. The doc title carries the session's date, so each chunk's
breadcrumb does too.

Questions: every QA pair of categories 1-4 with at least one resolved evidence id
(locomo10_qa_normalized.jsonl), asked through `POST /api/hub/<hub>/recall` (level chunk) with
k = 5, 10, 20: hybrid once per k (it fuses the top 4k of each ranker, so the k=5 list is not a
prefix of the k=20 list); vector and full text once at k=20, scored on their prefixes. Evidence recall = share of the question's evidence turns among the
retrieved chunks. Tokens = tokens of the returned breadcrumb + markdown.
"""

from __future__ import annotations

import asyncio
import json
import re
import time
from collections import defaultdict
from pathlib import Path

import httpx

from .common import (SERVER_ERRORS, Options, Postgres, Proc, count_summary, create_hub, log, machine_line,
                     md_table, post_docs, run_concurrent, wait_indexed, write_result)

KS = (5, 10, 20)
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
METHODS = ("hybrid", "vector", "fulltext")
TURN_ID = re.compile(r"^#{1,6} .*\((D\d+:\d+)\)\s*$|^\*\*[^*\n]+ \((D\d+:\d+)\):\*\*", re.M)


def turn_ids(markdown: str) -> list[str]:
    return [a or b for a, b in TURN_ID.findall(markdown)]
PUBLISHED = "recall@5 0.497 at turn level (a peer memory service, see shared/data/README.md)"


def session_docs(sample: dict, window: int = 1) -> list[dict]:
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
        pairs = []
        for t in turns:
            text = t.get("text", "").strip()
            if t.get("blip_caption"):
                text += f"\n\n[shares a photo: {t['blip_caption']}]"
            pairs.append((f"{t['speaker']} ({t['dia_id']})", text))
        if window <= 1:
            markdown = render_turns(pairs)
        else:
            parts = []
            for i in range(0, len(turns), window):
                group = turns[i:i + window]
                body = "\n\n".join(f"**{t['speaker']} ({t['dia_id']}):** {text}"
                                    for t, (_, text) in zip(group, pairs[i:i + window]))
                parts.append(f"## Turns {group[0]['dia_id']}-{group[-1]['dia_id']}\n\n{body}")
            markdown = "\n\n".join(parts) + "\n"
        docs.append({"title": f"{a} and {b}, session {n} ({date})" if date else f"{a} and {b}, session {n}",
                     "markdown": markdown, "source": "locomo"})
    return docs


def token_counter():
    """(count(text) -> int, description): MiniLM's WordPiece tokenizer offline, else words * 1.3."""
    try:
        from transformers import AutoTokenizer

        from memorywiki.server.embedders import packaged_model_dir

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


async def _ask(client, qa: list[dict], hubs: dict, method: str, k: int, count_tokens,
               prefixes: tuple[int, ...] = ()) -> dict[int, list[dict]]:
    """Ask every question at k; score the top-p prefixes too (vector and full text rank the same
    way whatever k is, so their top 5 at k=20 is their answer at k=5; hybrid is asked per k)."""
    async def one(q):
        r = await client.post(f"/api/hub/{hubs[q['sample_id']]}/recall",
                              json={"question": q["question"], "k": k, "level": "chunk",
                                    "hybrid": method == "hybrid"})
        r.raise_for_status()
        body = r.json()
        if body["mode"] != method:
            raise RuntimeError(f"expected mode {method}, got {body['mode']} ({body.get('vector_note')})")
        evidence = set(q["evidence"])
        scored = {}
        for p in (k, *prefixes):
            found: set[str] = set()
            tokens = 0
            for res in body["results"][:p]:
                found.update(turn_ids(res["markdown"]))
                tokens += count_tokens(res["heading_path"] + "\n" + res["markdown"])
            scored[p] = {"category": q["category"], "recall": len(evidence & found) / len(evidence), "tokens": tokens}
        return scored

    answers = await run_concurrent(qa, one, 4)
    return {p: [a[p] for a in answers] for p in (k, *prefixes)}


async def _main(opts: Options, pg: Postgres) -> dict:
    samples, qa = load(opts.locomo)
    window = int(opts.extra.get("locomo_window") or 1)
    count_tokens, tokenizer = token_counter()
    url = pg.fresh("bench_locomo")
    logs = opts.out / ".logs"
    counts = logs / "locomo-embed-counts.jsonl"
    logs.mkdir(parents=True, exist_ok=True)
    counts.unlink(missing_ok=True)
    hubs: dict[str, str] = {}
    n_docs = n_turns = 0
    scores: dict[tuple[str, int], list[dict]] = {}

    with Proc("serve", url, logs, counts=counts) as srv:
        async with httpx.AsyncClient(base_url=srv.url, timeout=600) as client:
            t0 = time.perf_counter()
            for sample in samples:
                slug = re.sub(r"[^a-z0-9-]+", "-", f"locomo-{sample['sample_id']}".lower()).strip("-")[:63]
                hubs[sample["sample_id"]] = slug
                token = await create_hub(client, slug)
                docs = session_docs(sample, window)
                n_docs += len(docs)
                n_turns += sum(len(turn_ids(d["markdown"])) for d in docs)
                await post_docs(client, token, slug, docs, concurrency=4)
            capture_s = time.perf_counter() - t0
            log(f"[locomo] captured {n_docs} session docs ({n_turns} turns) in {capture_s:.1f}s; indexing ...")
            await wait_indexed(client, progress=True)
            index_s = time.perf_counter() - t0
            emb = count_summary(counts)
            log(f"[locomo] indexed in {index_s:.1f}s; asking {len(qa)} questions x {len(KS)} k x 2 methods")
            for k in KS:
                scores[("hybrid", k)] = (await _ask(client, qa, hubs, "hybrid", k, count_tokens))[k]
            for p, rows in (await _ask(client, qa, hubs, "vector", max(KS), count_tokens, KS[:-1])).items():
                scores[("vector", p)] = rows
    with Proc("serve", url, logs, embedder="none", worker="external") as ft:
        async with httpx.AsyncClient(base_url=ft.url, timeout=600) as client:
            for p, rows in (await _ask(client, qa, hubs, "fulltext", max(KS), count_tokens, KS[:-1])).items():
                scores[("fulltext", p)] = rows

    def mean(xs):
        return sum(xs) / len(xs) if xs else float("nan")

    overall_rows = []
    for method in METHODS:
        row = [method]
        row += [mean([s["recall"] for s in scores[(method, k)]]) for k in KS]
        row += [mean([s["tokens"] for s in scores[(method, k)]]) for k in KS]
        overall_rows.append(row)
    overall = md_table(["method"] + [f"recall@{k}" for k in KS] + [f"tokens@{k}" for k in KS], overall_rows)
    cat_rows = []
    for cat, name in CATEGORIES.items():
        n = sum(1 for q in qa if q["category"] == cat)
        for method in METHODS:
            cat_rows.append([f"{cat} {name}", n, method] +
                            [mean([s["recall"] for s in scores[(method, k)] if s["category"] == cat]) for k in KS])
    by_cat = md_table(["category", "questions", "method"] + [f"recall@{k}" for k in KS], cat_rows)
    r10 = mean([s["recall"] for s in scores[("hybrid", 10)]])
    t10 = mean([s["tokens"] for s in scores[("hybrid", 10)]])
    best = max(METHODS, key=lambda m: mean([s["recall"] for s in scores[(m, 10)]]))
    goal = (f"Goal: evidence recall@10 >= 0.75 with < 1,500 returned tokens on average. Hybrid: recall@10 "
            f"{r10:.3f} with {t10:.0f} tokens -> **{'met' if r10 >= 0.75 and t10 < 1500 else 'missed'}** "
            f"(best method at k=10: {best}).")
    errors = ""
    if SERVER_ERRORS:
        errors = f"\n**{len(SERVER_ERRORS)} capture POSTs answered 5xx and were retried** (`{SERVER_ERRORS[0]}`).\n"
        SERVER_ERRORS.clear()
    variant = "" if window <= 1 else (
        f"\n**Variant: {window} consecutive turns per chunk** (`--locomo-window {window}`): a"
        f" `## Turns D1:1-D1:{window}` section per {window} turns, each turn a paragraph opening with"
        f" `**<speaker> (<dia_id>):**` (written in bench/locomo.py, not the chat-import renderer).\n")
    layout = ("markdown from the chat-import renderer (`server/capture/mdutil.render_turns`), one "
              "`## <speaker> (<dia_id>)` section per turn, so one chunk per turn" if window <= 1 else
              f"{window} turns per section (see above), so one chunk per {window} turns")
    text = f"""## Conversation memory: LoCoMo ({len(samples)} conversations, {n_docs} session docs, {n_turns} turns){" - " + str(window) + " turns per chunk" if window > 1 else ""}
{variant}
One hub per conversation, one doc per session through `POST /api/docs`, {layout}; indexed by the in-process worker ({emb['calls']} embedding
calls, {emb['inputs']} inputs; capture + indexing {index_s:.0f} s). {len(qa)} questions
(categories 1-4 with evidence), asked through `POST /api/hub/<hub>/recall` (level chunk): hybrid
once per k = 5, 10, 20 (it fuses the top 4k of each ranker, so its lists differ by k); vector and
full text once at k = 20, scored on their top 5 / 10 / 20 (their order does not depend on k).
Full text: a server with `MEMORYWIKI_EMBEDDER=none`.
Tokens: {tokenizer}; counted over each result's breadcrumb + markdown.
Published comparator: {PUBLISHED}.

{overall}

{by_cat}

{goal}
{errors}"""
    print(text)
    write_result(opts, "locomo.md" if window <= 1 else f"locomo-window{window}.md", text + "\n" + machine_line() + "\n")
    if opts.smoke:
        pg.drop("bench_locomo")
    return {"recall@10": r10, "tokens@10": t10}


def run(opts: Options, pg: Postgres) -> dict:
    return asyncio.run(_main(opts, pg))
