"""Recall under indexing load: does a question wait behind a page being indexed?

For each server (this checkout, and with `--baseline REF` that commit's server first):
1. a fresh database, a hub `sci` of SciFact abstracts, indexed;
2. idle: hybrid recall (k = 10) at concurrency 2, questions never repeated (the question cache
   is off in this checkout's server, so every question is embedded);
3. load: a 5 MB page (POST /api/docs) and a 2,000-conversation ChatGPT export
   (POST /api/import/chatgpt) go into another hub, and the same recall runs while they are
   saved and indexed, until nothing is owed or the window closes;
4. indexing throughput: chunks of the load hub that got their vector in the window.
The baseline runs from `git archive` of its commit (bench/baseline.py) on the same machine,
minutes apart; both use the local embedder all-MiniLM-L6-v2 with their default settings.
"""

from __future__ import annotations

import asyncio
import json
import tempfile
import time
from pathlib import Path

import httpx
import psycopg

from ..baseline import baseline_env, describe
from ..common import (
    Options,
    Postgres,
    Proc,
    create_hub,
    load_beir,
    log,
    machine_line,
    md_table,
    pct,
    post_docs,
    wait_indexed,
    write_result,
)
from .micro import _conversation

K = 10
CONCURRENCY = 2
PAGE_BYTES = 4_900_000  # the largest page a default server accepts (5 MB body, JSON included)
CONVERSATIONS = 2000
WINDOW_S = 240.0
TIMEOUT_S = 60.0


def big_page(corpus: list[dict], size: int) -> str:
    """A long markdown page: sections of SciFact abstracts, about `size` bytes."""
    parts, total, i = [], 0, 0
    while total < size:
        d = corpus[i % len(corpus)]
        block = f"## {d['title'] or 'Section'} ({i})\n\n{d['text']}\n\n"
        parts.append(block)
        total += len(block.encode())
        i += 1
    return "# A very long page\n\n" + "".join(parts)[:size]


def export_file(folder: Path, n: int) -> Path:
    path = folder / "conversations.json"
    path.write_text("[" + ",".join(json.dumps(_conversation(i)) for i in range(n)) + "]")
    return path


async def recall_loop(
    client: httpx.AsyncClient,
    questions: list[str],
    start: int,
    stop_at,
    n_max: int,
    lat: list[float],
    errors: list[str],
    starts: list[float] | None = None,
) -> int:
    """Ask questions[start:] at CONCURRENCY until stop_at() or n_max asked; latencies in ms
    (and, in `starts`, when each was sent, by time.perf_counter())."""
    counter = iter(range(start, start + n_max))
    used = [start]

    async def runner():
        for i in counter:
            if stop_at():
                return
            body = {"question": questions[i % len(questions)], "k": K, "level": "chunk"}
            t0 = time.perf_counter()
            try:
                r = await client.post("/api/hub/sci/recall", json=body, timeout=TIMEOUT_S)
                if r.status_code != 200:
                    errors.append(f"HTTP {r.status_code}")
            except httpx.TimeoutException:
                errors.append("timeout")
            lat.append((time.perf_counter() - t0) * 1000)
            if starts is not None:
                starts.append(t0)
            used[0] = max(used[0], i + 1)

    await asyncio.gather(*(runner() for _ in range(CONCURRENCY)))
    return used[0]


def _chunks(url: str, slug: str) -> tuple[int, int]:
    with psycopg.connect(url) as conn:
        row = conn.execute(
            "SELECT count(*) FILTER (WHERE c.embedding IS NOT NULL), count(*) FROM chunks c"
            " JOIN hubs h ON h.id = c.hub_id WHERE h.slug = %s",
            (slug,),
        ).fetchone()
    return row[0], row[1]


async def one_server(
    opts: Options, pg: Postgres, label: str, extra_env: dict, worker: str, data, page: str, export: Path
) -> dict:
    name = f"bench_load_{label}"
    url = pg.fresh(name, migrate=label != "before")  # an older server migrates its own database
    smoke = opts.smoke
    n_docs = 20 if smoke else 300
    n_idle = 20 if smoke else 200
    window = 30.0 if smoke else WINDOW_S
    questions = list(data.queries.values())
    questions = [f"{q}" if r == 0 else f"{q} ({r})" for r in range(20) for q in questions]  # never repeated
    out: dict = {"label": label}
    with Proc("serve", url, opts.out / ".logs", worker=worker, extra_env=extra_env) as server:
        async with httpx.AsyncClient(base_url=server.url, timeout=TIMEOUT_S) as client:
            token = await create_hub(client, "sci")
            load_token = await create_hub(client, "load")
            docs = [{"title": d["title"] or d["_id"], "markdown": d["text"]} for d in data.corpus[:n_docs]]
            await post_docs(client, token, "sci", docs)
            await wait_indexed(client, timeout=1800)
            health = (await client.get("/healthz")).json()
            out["worker"] = health.get("worker")
            warm: list[float] = []  # the model loaded, pools filled, plans cached; not measured
            used = await recall_loop(client, questions, 0, lambda: False, 10, warm, [])
            idle: list[float] = []
            idle_errors: list[str] = []
            used = await recall_loop(client, questions, used, lambda: False, n_idle, idle, idle_errors)

            # the load: both captures at once, recall alongside until indexed or the window closes
            auth = {"Authorization": f"Bearer {load_token}"}
            t0 = time.perf_counter()
            page_task = asyncio.create_task(
                client.post(
                    "/api/docs",
                    json={"hub": "load", "title": "A very long page", "markdown": page},
                    headers=auth,
                    timeout=600,
                )
            )
            with export.open("rb") as fh:
                body = fh.read()
            import_task = asyncio.create_task(
                client.post(
                    "/api/import/chatgpt",
                    files={"file": ("conversations.json", body, "application/json")},
                    data={"hub": "load"},
                    headers=auth,
                    timeout=1800,
                )
            )
            done = {"flag": False}
            saved_at: dict[str, float] = {}
            page_task.add_done_callback(lambda _: saved_at.setdefault("page", time.perf_counter() - t0))
            import_task.add_done_callback(lambda _: saved_at.setdefault("import", time.perf_counter() - t0))

            async def watch():
                while time.perf_counter() - t0 < window:
                    await asyncio.sleep(1.0)
                    if page_task.done() and import_task.done():
                        owed = (await client.get("/healthz", timeout=TIMEOUT_S)).json()["owed"]
                        if owed == 0:
                            out["indexed_all_s"] = time.perf_counter() - t0
                            break
                done["flag"] = True

            loaded: list[float] = []
            load_errors: list[str] = []
            starts: list[float] = []
            watcher = asyncio.create_task(watch())
            await recall_loop(client, questions, used, lambda: done["flag"], 10**6, loaded, load_errors, starts)
            await watcher
            elapsed = time.perf_counter() - t0
            embedded, total = await asyncio.to_thread(_chunks, url, "load")
            # the slowest loaded recalls, and when in the window they were sent: what they waited for
            slowest = sorted(zip(loaded, starts, strict=False), reverse=True)[:5]
            out["slowest"] = [(ms, start - t0) for ms, start in slowest]
            out["saved_at"] = saved_at
            # p95 of the loaded recalls by 30 s of the window: which part of the load costs what
            slices: dict[int, list[float]] = {}
            for ms, start in zip(loaded, starts, strict=False):
                slices.setdefault(int((start - t0) // 30), []).append(ms)
            out["p95_by_slice"] = [(i * 30, pct(v, 95), len(v)) for i, v in sorted(slices.items())]
            out.update(
                idle=idle,
                loaded=loaded,
                idle_errors=idle_errors,
                load_errors=load_errors,
                window_s=elapsed,
                embedded=embedded,
                chunks=total,
                page_saved=page_task.done(),
                import_saved=import_task.done(),
            )
            for task in (page_task, import_task):
                if task.done() and not task.cancelled() and task.exception() is None:
                    if task.result().status_code >= 300:
                        out.setdefault("capture_errors", []).append(task.result().text[:200])
                else:
                    task.cancel()
        out["rss_server_mb"] = server.peak_rss_mb()
    pg.drop(name)
    return out


async def _main(opts: Options, pg: Postgres) -> dict:
    data = load_beir(opts.dataset)
    ref = opts.extra.get("baseline")
    page = big_page(data.corpus, 50_000 if opts.smoke else PAGE_BYTES)
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        export = export_file(Path(tmp), 20 if opts.smoke else CONVERSATIONS)
        configs = [
            (
                "after",
                {"MEMORYWIKI_QUESTION_CACHE": "0"},
                "auto",
                "this checkout: question lane, indexing and curation in a child process (nice 5) whose "
                "indexing passes yield to questions with a floor (one chunk at least every 8 questions "
                "answered or 500 ms)",
            )
        ]
        # "before" rows only when asked for (--baseline REF); the smoke run never has them
        if ref and not opts.smoke:
            configs.insert(
                0,
                (
                    "before",
                    baseline_env(ref),
                    "inprocess",
                    f"{describe(ref)}: one lock for every encode, indexing in the server process",
                ),
            )
        for label, env, worker, what in configs:
            log(f"[underload] {label}: {what}")
            r = await one_server(opts, pg, label, env, worker, data, page, export)
            r["what"] = what
            results.append(r)
            log(
                f"    idle p95 {pct(r['idle'], 95):.0f} ms, loaded p95 {pct(r['loaded'], 95):.0f} ms, "
                f"{r['embedded']}/{r['chunks']} chunks in {r['window_s']:.0f}s"
            )
    rows = []
    for r in results:
        for phase in ("idle", "loaded"):
            lat = r[phase]
            errors = r[f"{'idle' if phase == 'idle' else 'load'}_errors"]
            rows.append(
                [
                    r["label"],
                    r["worker"],
                    phase,
                    len(lat),
                    pct(lat, 50),
                    pct(lat, 95),
                    pct(lat, 99),
                    max(lat) if lat else None,
                    sum(1 for x in lat if x > 1000),
                    len(errors),
                    (
                        f"{r['embedded']:,} of {r['chunks']:,} in {r['window_s']:.0f} s "
                        f"({r['embedded'] / r['window_s']:.1f}/s)"
                    )
                    if phase == "loaded"
                    else "",
                ]
            )
    table = md_table(
        [
            "server",
            "indexing",
            "phase",
            "recalls",
            "p50 ms",
            "p95 ms",
            "p99 ms",
            "max ms",
            "over 1 s",
            "errors / timeouts",
            "load chunks embedded",
        ],
        rows,
        digits=1,
    )
    after = next(r for r in results if r["label"] == "after")
    ratio = pct(after["loaded"], 95) / pct(after["idle"], 95)
    over = sum(1 for x in after["loaded"] if x > 1000)
    goal = (
        f"Goals: p95 under load within 3x of idle: {pct(after['loaded'], 95):.0f} ms vs "
        f"{pct(after['idle'], 95):.0f} ms idle = {ratio:.1f}x -> **{'met' if ratio <= 3 else 'missed'}**; "
        f"no request over 1 s: {over} over 1 s -> **{'met' if over == 0 else 'missed'}**"
    )
    before = next((r for r in results if r["label"] == "before"), None)
    rate = after["embedded"] / after["window_s"]
    if before is not None and before["embedded"]:
        share = rate / (before["embedded"] / before["window_s"])
        goal += (
            f"; indexing not starved: {rate:.1f} chunks/s under load, {share:.0%} of the before server's "
            f"{before['embedded'] / before['window_s']:.1f}/s (which it got by starving recall) -> "
            f"**{'met' if share >= 0.5 else 'missed'}** (we call >= 50 % not starved)."
        )
    else:
        goal += f"; indexing under load: {rate:.1f} chunks/s."
    slow = "\n".join(
        f"- {r['label']}: "
        + ", ".join(f"{ms:.0f} ms sent at {at:.1f} s" for ms, at in r["slowest"][:3])
        + "; "
        + ", ".join(f"{what} saved at {at:.1f} s" for what, at in sorted(r["saved_at"].items(), key=lambda x: x[1]))
        for r in results
    )
    by_slice = "\n".join(
        f"- {r['label']}: " + ", ".join(f"{at}-{at + 30} s {p:.0f} ms" for at, p, _ in r["p95_by_slice"])
        for r in results
    )
    finished = "; ".join(
        f"{r['label']}: "
        + (
            f"all indexed after {r['indexed_all_s']:.0f} s"
            if "indexed_all_s" in r
            else f"still indexing when the {r['window_s']:.0f} s window closed"
        )
        for r in results
    )
    text = f"""## Recall under indexing load

Hybrid recall (k = {K}, concurrency {CONCURRENCY}, a hub of {20 if opts.smoke else 300} SciFact abstracts, every
question different) on an idle server, then while a {len(page.encode()) / 1e6:.1f} MB page and a
{20 if opts.smoke else CONVERSATIONS:,}-conversation ChatGPT export (POST /api/import/chatgpt) are saved and
indexed into another hub, until nothing is owed or {WINDOW_S if not opts.smoke else 30:.0f} s have passed (requests time out
after {TIMEOUT_S:.0f} s). Local embedder all-MiniLM-L6-v2, each server with its defaults:
{"; ".join(f"**{r['label']}** = {r['what']}" for r in results)}. The question cache of this checkout's server is
off here, so every question is embedded.

{table}

{finished}.

{goal}

The slowest loaded recalls, by when in the window they were sent (the saves' answers for comparison):
{slow}

Loaded p95 by 30 s of the window (when each recall was sent):
{by_slice}

{machine_line()}
"""
    print(text)
    write_result(opts, "underload.md", text)
    return {"results": results}


def run(opts: Options, pg: Postgres) -> dict:
    return asyncio.run(_main(opts, pg))
