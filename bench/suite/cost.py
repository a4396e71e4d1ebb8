"""Indexing throughput and embedding cost: what each kind of save costs in embedding calls.

A server and a separate worker (`MEMORYWIKI_WORKER=external` + the `memorywiki worker` code
path), both real processes, both with their embedder wrapped to log every call (bench/proc.py).
Docs: the dataset's abstracts grouped SECTIONS to a doc, one `## <title>` section each, so a doc
has several chunks and "edit one section" means something. Steps:

(a) bulk capture of every doc through POST /api/docs (8 in flight), then wait until nothing is
    owed: docs/s and chunks/s, embedding calls and inputs;
    then a bundle of the first 5 docs is created and embedded (its cost is reported apart);
(b) PATCH every doc with its unchanged markdown: must cost 0 embedding calls;
(c) PATCH one doc with one section edited: must cost exactly 1 chunk (+ the doc vector, when
    the indexer embeds doc vectors rather than deriving them from the chunk vectors);
(d) PATCH the bundle to add one doc: must cost exactly the bundle vector.
Peak RSS (VmHWM) of the server and of the worker.
"""

from __future__ import annotations

import asyncio
import time

import httpx
import psycopg

from ..common import (
    SERVER_ERRORS,
    Options,
    Postgres,
    Proc,
    count_summary,
    create_hub,
    load_beir,
    log,
    machine_line,
    md_table,
    post_docs,
    run_concurrent,
    wait_indexed,
    write_result,
)

SECTIONS = 8
ABSTRACTS = 800  # abstracts used (so ~100 docs); all of them with --large
SETTLE = 2.5  # seconds of quiet after the work is done, so late calls would be seen


def build_docs(corpus: list[dict], n: int) -> list[dict]:
    docs = []
    for i in range(0, min(n, len(corpus)), SECTIONS):
        part = corpus[i : i + SECTIONS]
        md = "\n\n".join(f"## {(d['title'] or d['_id']).strip()}\n\n{d['text'].strip()}" for d in part)
        docs.append({"title": f"Reading notes {i // SECTIONS + 1}", "markdown": md + "\n"})
    return docs


async def _bundle_done(url: str, bundle_id: str, timeout: float = 600) -> None:
    t0 = time.perf_counter()
    async with await psycopg.AsyncConnection.connect(url, autocommit=True) as conn:
        while time.perf_counter() - t0 < timeout:
            row = await (
                await conn.execute(
                    "SELECT embedded_hash IS NOT DISTINCT FROM source_hash FROM bundles WHERE id = %s", (bundle_id,)
                )
            ).fetchone()
            if row and row[0]:
                return
            await asyncio.sleep(0.2)
    raise TimeoutError("bundle not embedded")


async def _main(opts: Options, pg: Postgres) -> dict:
    data = load_beir(opts.dataset)
    n_abs = len(data.corpus) if opts.large else min(len(data.corpus), 40 if opts.smoke else ABSTRACTS)
    docs = build_docs(data.corpus, n_abs)
    url = pg.fresh("bench_cost")
    logs = opts.out / ".logs"
    logs.mkdir(parents=True, exist_ok=True)
    counts = logs / "cost-embed-counts.jsonl"
    counts.unlink(missing_ok=True)
    steps: list[list] = []
    settle = 0.6 if opts.smoke else SETTLE
    res: dict = {}

    def delta(mark: int) -> dict:
        return count_summary(counts, mark)

    with (
        Proc("serve", url, logs, worker="external", counts=counts) as srv,
        Proc("worker", url, logs, worker="external", counts=counts) as wrk,
    ):
        async with httpx.AsyncClient(base_url=srv.url, timeout=600) as client:
            token = await create_hub(client, "cost")
            auth = {"Authorization": f"Bearer {token}"}
            t0 = time.perf_counter()
            created = await post_docs(client, token, "cost", docs, concurrency=8)
            capture_s = time.perf_counter() - t0
            log(f"[cost] captured {len(docs)} docs in {capture_s:.1f}s; indexing ...")
            await wait_indexed(client, progress=True)
            total_s = time.perf_counter() - t0
            await asyncio.sleep(settle)
            a = delta(0)
            with psycopg.connect(url) as conn:
                n_chunks = conn.execute("SELECT count(*) FROM chunks").fetchone()[0]
            res.update(docs=len(docs), chunks=n_chunks, capture_s=capture_s, total_s=total_s)
            # A doc vector is either embedded (one more input per doc) or derived from the chunk
            # vectors (no input): both are accepted, and the report says which was seen.
            doc_vec = (
                "embedded" if a["inputs"] == n_chunks + len(docs) else "from chunks" if a["inputs"] == n_chunks else "?"
            )
            steps.append(
                [
                    "(a) first index of the hub",
                    f"{len(docs)} docs, {n_chunks} chunks",
                    f"{n_chunks} chunks (+ {len(docs)} doc vectors if embedded)",
                    a["calls"],
                    a["inputs"],
                    "MISMATCH" if doc_vec == "?" else f"ok (doc vectors {doc_vec})",
                ]
            )

            mark = a["mark"]
            n_first = max(1, min(5, len(created) - 1))
            r = await client.post(
                "/api/bundles",
                headers=auth,
                json={
                    "hub": "cost",
                    "title": "First reading",
                    "description": "The first notes, in order",
                    "doc_ids": [c["id"] for c in created[:n_first]],
                },
            )
            r.raise_for_status()
            bundle_id = r.json()["id"]
            await _bundle_done(url, bundle_id)
            await asyncio.sleep(settle)
            bnd = delta(mark)
            steps.append(
                [
                    f"bundle of {n_first} docs created",
                    "1 bundle",
                    "1 bundle vector",
                    bnd["calls"],
                    bnd["inputs"],
                    "ok" if bnd["inputs"] == 1 else "MISMATCH",
                ]
            )

            # (b) re-save every doc unchanged
            mark = bnd["mark"]

            async def resave(pair):
                doc, made = pair
                r = await client.patch(
                    f"/api/docs/{made['id']}",
                    headers={"Authorization": f"Bearer {made['edit_token']}"},
                    json={"title": doc["title"], "markdown": doc["markdown"]},
                )
                r.raise_for_status()

            t1 = time.perf_counter()
            await run_concurrent(list(zip(docs, created, strict=False)), resave, 8)
            resave_s = time.perf_counter() - t1
            await wait_indexed(client)
            await asyncio.sleep(settle)
            b = delta(mark)
            steps.append(
                [
                    "(b) re-save every doc unchanged (PATCH)",
                    f"{len(docs)} docs",
                    "0",
                    b["calls"],
                    b["inputs"],
                    "ok" if b["calls"] == 0 else "MISMATCH",
                ]
            )

            # (c) edit one section of one doc
            mark = b["mark"]
            target = created[-1]
            sections = docs[-1]["markdown"].split("\n\n## ")
            pick = min(2, len(sections) - 1)
            sections[pick] = sections[pick].rstrip() + " This sentence was added by the benchmark."
            edited = "\n\n## ".join(sections)
            r = await client.patch(
                f"/api/docs/{target['id']}",
                headers={"Authorization": f"Bearer {target['edit_token']}"},
                json={"markdown": edited},
            )
            r.raise_for_status()
            await wait_indexed(client)
            await asyncio.sleep(settle)
            c = delta(mark)
            steps.append(
                [
                    "(c) edit one section of one doc",
                    f"1 of {len(sections)} sections",
                    "1 chunk (+ 1 doc vector if embedded), one call",
                    c["calls"],
                    c["inputs"],
                    "ok" if c["calls"] == 1 and c["inputs"] == (2 if doc_vec == "embedded" else 1) else "MISMATCH",
                ]
            )

            # (d) add a doc to the bundle
            mark = c["mark"]
            r = await client.patch(
                f"/api/bundles/{bundle_id}", headers=auth, json={"doc_ids": [x["id"] for x in created[: n_first + 1]]}
            )
            r.raise_for_status()
            await _bundle_done(url, bundle_id)
            await wait_indexed(client)
            await asyncio.sleep(settle)
            d = delta(mark)
            steps.append(
                [
                    "(d) add a doc to a bundle",
                    "1 bundle",
                    "1 bundle vector",
                    d["calls"],
                    d["inputs"],
                    "ok" if d["inputs"] == 1 and d["calls"] == 1 else "MISMATCH",
                ]
            )
        rss_server, rss_worker = srv.peak_rss_mb(), wrk.peak_rss_mb()
        embedder_name = (await _space(url)) or "?"

    errors = ""
    if SERVER_ERRORS:
        errors = f"\n**{len(SERVER_ERRORS)} capture POSTs answered 5xx and were retried** (`{SERVER_ERRORS[0]}`).\n"
        SERVER_ERRORS.clear()
    thr = md_table(
        ["phase", "docs", "chunks", "seconds", "docs/s", "chunks/s"],
        [
            [
                "capture only (POST /api/docs, 8 in flight; the worker already embedding)",
                len(docs),
                res["chunks"],
                capture_s,
                len(docs) / capture_s,
                res["chunks"] / capture_s,
            ],
            [
                "capture + indexing, until nothing is owed",
                len(docs),
                res["chunks"],
                total_s,
                len(docs) / total_s,
                res["chunks"] / total_s,
            ],
            [
                "re-save unchanged (PATCH, 8 in flight)",
                len(docs),
                res["chunks"],
                resave_s,
                len(docs) / resave_s,
                res["chunks"] / resave_s,
            ],
        ],
        digits=1,
    )
    calls = md_table(["step", "what changed", "expected embedding inputs", "calls", "inputs", "check"], steps)
    ok = all(s[-1].startswith("ok") for s in steps)
    goal = (
        f"Goal: zero embedding calls for unchanged saves, exactly the changed chunks for edits -> "
        f"**{'met' if ok else 'missed'}**."
    )
    text = f"""## Indexing throughput and embedding cost

Embedder `{embedder_name}`; a server and a separate worker process (`MEMORYWIKI_WORKER=external`),
each counting its own embedding calls. Docs: the first {n_abs} {data.name} abstracts, {SECTIONS} to a
doc, one `## <title>` section each.

{thr}

{calls}

Peak RSS (VmHWM): server {rss_server:.0f} MB, worker {rss_worker:.0f} MB (the worker holds the embedding
model; the server loads it only when it embeds a query).

{goal}
{errors}"""
    print(text)
    write_result(opts, "cost.md", text + "\n" + machine_line() + "\n")
    if opts.smoke:
        pg.drop("bench_cost")
    return {"steps": steps, "rss_server": rss_server, "rss_worker": rss_worker}


async def _space(url: str) -> str | None:
    async with await psycopg.AsyncConnection.connect(url) as conn:
        row = await (await conn.execute("SELECT model FROM embedding_space")).fetchone()
    return row[0] if row else None


def run(opts: Options, pg: Postgres) -> dict:
    return asyncio.run(_main(opts, pg))
