"""Soak: 16 concurrent clients mix captures, section edits, recalls (all levels) and page
reads for 10 minutes against one server on the embedded default (no DATABASE_URL: the
server starts its own PostgreSQL under a fresh data dir), with its in-process worker.

Counted: every request and its answer (an error is any answer other than the one expected,
or no answer); lost writes (every acknowledged save, read back at the end with its edit
token, must hold exactly the last markdown acknowledged for it); the server's RSS sampled
through the run; p50/p95/p99 per route. httpx + asyncio, one client task per user, each with
its own random stream (seeded), so runs are comparable.

    python -m bench soak                      # 10 minutes, 16 clients
    python -m bench soak --soak-seconds 120   # shorter
"""

from __future__ import annotations

import asyncio
import functools
import random
import shutil
import tempfile
import time
from collections import defaultdict
from pathlib import Path

import httpx
import psutil

from ..common import CACHE, Options, Proc, fmt, log, machine_line, md_table, pct, write_result

CLIENTS = 16
WORDS = (
    "glacier meltwater moraine vaccine antibody espresso grinder compiler parser orchard blossom "
    "telescope galaxy marathon runner volcano magma tundra lichen harbour ferry lantern quarry"
).split()
MIX = (("capture", 20), ("edit", 20), ("recall", 40), ("read", 20))
LEVELS = ("chunk", "doc", "bundle")


def _sentence(rng: random.Random, n: int = 12) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n)).capitalize() + "."


def _doc(rng: random.Random, tag: str) -> tuple[str, list[str]]:
    sections = [f"## Part {i}\n\n{_sentence(rng)} {tag} {_sentence(rng)}\n" for i in range(3)]
    return f"Note {tag}", sections


class Stats:
    def __init__(self) -> None:
        self.latency: dict[str, list[float]] = defaultdict(list)
        self.errors: dict[str, int] = defaultdict(int)
        self.samples: list[str] = []

    def record(self, route: str, seconds: float, ok: bool, detail: str = "") -> None:
        self.latency[route].append(seconds * 1000)
        if not ok:
            self.errors[route] += 1
            if len(self.samples) < 10:
                self.samples.append(f"{route}: {detail[:200]}")


async def _call(stats: Stats, route: str, expected: int, send) -> httpx.Response | None:
    t0 = time.perf_counter()
    try:
        r = await send()
    except httpx.HTTPError as exc:
        stats.record(route, time.perf_counter() - t0, False, f"{type(exc).__name__}: {exc}")
        return None
    stats.record(route, time.perf_counter() - t0, r.status_code == expected, f"{r.status_code} {r.text}")
    return r if r.status_code == expected else None


async def _client(
    n: int,
    http: httpx.AsyncClient,
    auth: dict,
    deadline: float,
    stats: Stats,
    written: dict[str, dict],
    shared: list[str],
) -> None:
    rng = random.Random(1000 + n)
    mine: list[str] = []
    counter = 0
    actions, weights = zip(*MIX, strict=False)
    while time.monotonic() < deadline:
        action = rng.choices(actions, weights)[0]
        if action == "edit" and not mine:
            action = "capture"
        if action == "read" and not shared:
            action = "recall"
        if action == "capture":
            counter += 1
            title, sections = _doc(rng, f"c{n}-{counter}")
            markdown = "".join(sections)
            r = await _call(
                stats,
                "POST /api/docs",
                201,
                functools.partial(
                    http.post, "/api/docs", json={"hub": "soak", "title": title, "markdown": markdown}, headers=auth
                ),
            )
            if r is not None:
                body = r.json()
                written[body["id"]] = {"token": body["edit_token"], "sections": sections}
                mine.append(body["id"])
                shared.append(body["id"])
        elif action == "edit":
            doc_id = rng.choice(mine)
            entry = written[doc_id]
            sections = list(entry["sections"])
            i = rng.randrange(len(sections))
            sections[i] = f"## Part {i}\n\n{_sentence(rng)} edited {counter}\n"
            counter += 1
            r = await _call(
                stats,
                "PATCH /api/docs/{id} (a section)",
                200,
                functools.partial(
                    http.patch,
                    f"/api/docs/{doc_id}",
                    json={"markdown": "".join(sections)},
                    headers={"Authorization": f"Bearer {entry['token']}"},
                ),
            )
            if r is not None:
                entry["sections"] = sections
        elif action == "recall":
            level = rng.choice(LEVELS)
            question = " ".join(rng.choice(WORDS) for _ in range(4))
            await _call(
                stats,
                f"POST /api/hub/{{slug}}/recall ({level})",
                200,
                functools.partial(
                    http.post, "/api/hub/soak/recall", json={"question": question, "level": level, "k": 5}
                ),
            )
        else:
            doc_id = rng.choice(shared)
            kind = rng.choice(("page", "raw", "api"))
            path = {"page": f"/{doc_id}", "raw": f"/raw/{doc_id}", "api": f"/api/docs/{doc_id}"}[kind]
            route = {"page": "GET /{id} (HTML)", "raw": "GET /raw/{id}", "api": "GET /api/docs/{id}"}[kind]
            await _call(stats, route, 200, functools.partial(http.get, path, headers={"Accept": "text/html"}))


def _rss_mb(pid: int) -> float:
    return psutil.Process(pid).memory_info().rss / 1024 / 1024


def _postgres_pss_mb(data_dir: Path) -> float:
    """The embedded PostgreSQL's postmaster (found by its data dir) and all its backends, as
    PSS: RSS would count the shared buffers once per backend that touched them."""
    for proc in psutil.process_iter(attrs=["name", "cmdline"]):
        try:
            if proc.info["name"] == "postgres" and str(data_dir) in " ".join(proc.info["cmdline"] or ()):
                family = [proc, *proc.children(recursive=True)]
                return sum(p.memory_full_info().pss for p in family) / 1024 / 1024
        except psutil.Error:
            continue
    return float("nan")


async def _setup(send, tries: int = 4) -> httpx.Response:
    """A setup request, retried as the API asks on a 503 (Retry-After): the soak's errors are
    counted under load, not while its hub is being filled."""
    for attempt in range(tries):
        r = await send()
        if r.status_code != 503 or attempt == tries - 1:
            break
        log(f"[soak] setup: {r.status_code} {r.text[:200]}; retrying after {r.headers.get('retry-after', '1')} s")
        await asyncio.sleep(float(r.headers.get("retry-after", "1")))
    r.raise_for_status()
    return r


async def _soak(url: str, pid: int, data_dir: Path, seconds: float) -> dict:
    stats, written, shared = Stats(), {}, []
    limits = httpx.Limits(max_connections=CLIENTS * 2)
    async with httpx.AsyncClient(base_url=url, timeout=60, limits=limits) as http:
        token = (await http.post("/api/hubs", json={"slug": "soak"})).json()["owner_token"]
        auth = {"Authorization": f"Bearer {token}"}
        rng = random.Random(7)
        seeded = []
        for i in range(30):  # something to recall and read from the first second
            title, sections = _doc(rng, f"seed-{i}")
            r = await _setup(
                lambda title=title, sections=sections: http.post(
                    "/api/docs", json={"hub": "soak", "title": title, "markdown": "".join(sections)}, headers=auth
                )
            )
            written[r.json()["id"]] = {"token": r.json()["edit_token"], "sections": sections}
            seeded.append(r.json()["id"])
        shared.extend(seeded)
        for b in range(3):
            body = {
                "hub": "soak",
                "title": f"Bundle {WORDS[b]}",
                "description": _sentence(rng),
                "doc_ids": seeded[b * 10 : (b + 1) * 10],
            }
            await _setup(lambda body=body: http.post("/api/bundles", headers=auth, json=body))
        rss = [(0.0, _rss_mb(pid), _postgres_pss_mb(data_dir))]
        t0 = time.monotonic()
        deadline = t0 + seconds

        async def sample() -> None:
            while time.monotonic() < deadline:
                await asyncio.sleep(min(15.0, max(seconds / 10, 0.5)))
                rss.append((time.monotonic() - t0, _rss_mb(pid), _postgres_pss_mb(data_dir)))

        sampler = asyncio.create_task(sample())
        await asyncio.gather(*(_client(n, http, auth, deadline, stats, written, shared) for n in range(CLIENTS)))
        elapsed = time.monotonic() - t0
        await sampler
        rss.append((elapsed, _rss_mb(pid), _postgres_pss_mb(data_dir)))

        settle_start = time.monotonic()
        while (await http.get("/healthz")).json()["owed"] and time.monotonic() - settle_start < 300:
            await asyncio.sleep(0.5)
        settle = time.monotonic() - settle_start
        owed = (await http.get("/healthz")).json()["owed"]

        lost = []
        for doc_id, entry in written.items():
            r = await http.get(f"/api/docs/{doc_id}", headers={"Authorization": f"Bearer {entry['token']}"})
            if r.status_code != 200 or r.json()["markdown"] != "".join(entry["sections"]):
                lost.append(doc_id)
    return {
        "stats": stats,
        "elapsed": elapsed,
        "rss": rss,
        "written": len(written),
        "lost": lost,
        "owed": owed,
        "settle": settle,
    }


def _growth(rss: list[tuple[float, float, float]]) -> str:
    """Server RSS growth in each half of the run: warm-up shows in the first, a leak in both."""
    half = rss[-1][0] / 2
    mid = min(rss, key=lambda sample: abs(sample[0] - half))
    return (
        f"+{rss[-1][1] - rss[0][1]:.1f} MB in all, +{mid[1] - rss[0][1]:.1f} MB in the first half, "
        f"+{rss[-1][1] - mid[1]:.1f} MB in the second"
    )


def run(opts: Options, pg=None) -> dict:
    seconds = float(opts.extra.get("soak_seconds") or (8 if opts.smoke else 600))
    data_dir = Path(tempfile.mkdtemp(prefix="mw-soak-")) if opts.smoke else CACHE / "soak-data"
    shutil.rmtree(data_dir, ignore_errors=True)
    data_dir.mkdir(parents=True, exist_ok=True)
    logs = CACHE / "logs" if not opts.smoke else data_dir / "logs"
    server = Proc("serve", "", logs, extra_env={"MEMORYWIKI_DATA_DIR": str(data_dir)})
    try:
        log(f"soak: {CLIENTS} clients for {seconds:.0f} s against {server.url} (embedded PostgreSQL in {data_dir})")
        result = asyncio.run(_soak(server.url, server.pid, data_dir, seconds))
        embedder = httpx.get(f"{server.url}/healthz").json()["embedder"]
    finally:
        server.stop()
        if opts.smoke:
            shutil.rmtree(data_dir, ignore_errors=True)
    stats: Stats = result["stats"]
    total = sum(len(v) for v in stats.latency.values())
    errors = sum(stats.errors.values())
    rows = [
        [route, len(ms), stats.errors.get(route, 0), pct(ms, 50), pct(ms, 95), pct(ms, 99), len(ms) / result["elapsed"]]
        for route, ms in sorted(stats.latency.items())
    ]
    rows.append(
        [
            "all",
            total,
            errors,
            pct([x for v in stats.latency.values() for x in v], 50),
            pct([x for v in stats.latency.values() for x in v], 95),
            pct([x for v in stats.latency.values() for x in v], 99),
            total / result["elapsed"],
        ]
    )
    rss = result["rss"]
    rss.sort(key=lambda sample: sample[0])
    rss_rows = [[f"{t:.0f}", server_mb, pg_mb] for t, server_mb, pg_mb in rss]
    verdict = "**met**" if errors == 0 and not result["lost"] else "**missed**"
    text = (
        f"""## Soak: {CLIENTS} clients, {result["elapsed"] / 60:.1f} minutes of mixed load

One `memorywiki serve` on the embedded default (its own PostgreSQL under a fresh data dir, in-process
worker), embedder `{embedder}`. {CLIENTS} httpx clients (asyncio), each looping over a seeded random mix:
captures 20 % (`POST /api/docs`, 3 sections), section edits 20 % (`PATCH` one section of a doc the
client saved), recalls 40 % (levels chunk/doc/bundle in turn at random, hybrid, k = 5), page reads 20 %
(HTML page, `/raw/`, `GET /api/docs/{{id}}`). Seeded first: 30 docs and 3 bundles. An error is any answer
other than the one expected (201 / 200) or no answer.

| route | requests | errors | p50 ms | p95 ms | p99 ms | req/s |
|---|---|---|---|---|---|---|
"""
        + "\n".join(
            "| " + " | ".join(fmt(v, 1) if isinstance(v, float) else str(v) for v in row) + " |" for row in rows
        )
        + f"""

Lost writes: **{len(result["lost"])}** of {result["written"]} acknowledged docs (each read back with its
edit token at the end, compared with the last markdown acknowledged for it). Indexing owed
{result["settle"]:.0f} s after the load stopped: {result["owed"]}.

Server RSS (the `serve` process) and PostgreSQL PSS (all its processes, shared memory counted once),
sampled through the run:
start {fmt(rss[0][1], 1)} MB, end {fmt(rss[-1][1], 1)} MB (max {fmt(max(r[1] for r in rss), 1)} MB);
PostgreSQL start {fmt(rss[0][2], 1)} MB, end {fmt(rss[-1][2], 1)} MB.

{md_table(["second", "server RSS MB", "PostgreSQL PSS MB"], rss_rows, 1)}

Goal: 0 errors, 0 lost writes, server RSS flat: {errors} errors, {len(result["lost"])} lost -> {verdict};
server RSS {_growth(rss)} (judge flatness by the second half: the first includes warm-up).
"""
        + ("\nFirst errors:\n\n" + "\n".join(f"- `{s}`" for s in stats.samples) + "\n" if stats.samples else "")
        + f"""
{machine_line()}
"""
    )
    write_result(opts, "soak.md", text)
    log(
        f"soak: {total} requests, {errors} errors, {len(result['lost'])} lost writes, "
        f"RSS {rss[0][1]:.0f} -> {rss[-1][1]:.0f} MB"
    )
    if errors or result["lost"]:
        raise SystemExit(f"soak: {errors} errors, {len(result['lost'])} lost writes (see {opts.out / 'soak.md'})")
    return result
