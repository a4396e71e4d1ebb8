"""The scale-out bench's replica row: one primary and two streaming replicas on this machine.

After the scale-out run, its database (600 pages, embedded) is copied to two streaming replicas
(pg_basebackup from the embedded PostgreSQL's bin/, tests/replica_cluster.py). One server reads
the primary alone, then another spreads its public reads over the two replicas
(MEMORYWIKI_REPLICA_URLS); each gets the same recalls at concurrency 16. Measured: recalls/s,
p50/p95, the CPU seconds each PostgreSQL cluster and the server spent per recall, and the replica
lag /healthz saw during the run. One 2-core machine runs all of them, so the replicas take CPU
from the same cores the primary had: the gain of separate machines shows only as a projection
from the CPU per recall measured here.
"""

from __future__ import annotations

import asyncio
import os
import random
import time
from pathlib import Path

import httpx
import psutil
import psycopg

from ..common import Proc, log, md_table, pct

CONCURRENCY = 16
WORDS = (
    "harbour ferry lantern quarry glacier meltwater moraine orchard blossom telescope galaxy "
    "marathon volcano magma tundra lichen compiler parser espresso grinder"
).split()


def _tree_cpu(pid: int) -> float:
    """CPU seconds (user + system) of a process and its living children."""
    try:
        root = psutil.Process(pid)
        procs = [root, *root.children(recursive=True)]
    except psutil.Error:
        return 0.0
    total = 0.0
    for proc in procs:
        try:
            times = proc.cpu_times()
            total += times.user + times.system
        except psutil.Error:
            continue
    return total


def _postmaster(pgdata: Path) -> int:
    return int((pgdata / "postmaster.pid").read_text().split()[0])


def _replay_lag(primary_url: str) -> float:
    """The largest replay_lag the primary reports for its standbys (seconds; 0 when none)."""
    with psycopg.connect(primary_url, autocommit=True) as conn:
        row = conn.execute("SELECT max(extract(epoch FROM replay_lag)) FROM pg_stat_replication").fetchone()
    return float(row[0] or 0.0) if row else 0.0


async def _recalls(
    url: str, n: int, lags: list[float], auth: dict | None = None, primary_url: str | None = None
) -> dict:
    """`n` recalls at CONCURRENCY, and (with `auth`) one writer saving a page into hub "rw" every
    0.25 s and recalling it at once with its token. Latencies (ms), errors, writes, the writes
    its writer did not read back, and /healthz's replica lags sampled every 0.5 s."""
    rng = random.Random(7)
    questions = [" ".join(rng.choice(WORDS) for _ in range(3)) for _ in range(n)]
    latency: list[float] = []
    replay: list[float] = []
    out = {"errors": 0, "writes": 0, "unread": 0}
    running = True
    async with httpx.AsyncClient(base_url=url, timeout=60, limits=httpx.Limits(max_connections=64)) as http:

        async def one(question: str) -> None:
            t0 = time.perf_counter()
            r = await http.post("/api/hub/scale/recall", json={"question": question, "level": "chunk"})
            if r.status_code == 200:
                latency.append((time.perf_counter() - t0) * 1000)
            else:
                out["errors"] += 1

        async def client(k: int) -> None:
            for i in range(k, n, CONCURRENCY):
                await one(questions[i])

        async def writer() -> None:
            while running and auth:
                word = f"zq{out['writes']}x{int(time.time() * 1000) % 100000}"
                body = {"hub": "rw", "title": f"Write {word}", "markdown": f"# {word}\n\nthe {word} note\n"}
                r = await http.post("/api/docs", json=body, headers=auth)
                if r.status_code == 201:
                    out["writes"] += 1
                    got = await http.post("/api/hub/rw/recall", json={"question": word}, headers=auth)
                    if r.json()["id"] not in got.text:
                        out["unread"] += 1
                else:
                    out["errors"] += 1
                await asyncio.sleep(0.25)

        async def sample() -> None:
            while True:
                await asyncio.sleep(0.5)
                health = (await http.get("/healthz")).json()
                lags.extend(r["lag_seconds"] or 0.0 for r in health.get("replicas", []))
                if primary_url and health.get("replicas"):
                    replay.append(await asyncio.to_thread(_replay_lag, primary_url))

        side = [asyncio.create_task(sample()), asyncio.create_task(writer())]
        await asyncio.gather(*(client(k) for k in range(CONCURRENCY)))
        running = False
        await side[1]
        side[0].cancel()
    return {"latency": latency, "replay_lag": max(replay, default=None), **out}


def _measure(server: Proc, clusters: dict[str, int], n: int, auth: dict, primary_url: str) -> dict:
    """Recalls through `server`; CPU seconds of each cluster (by postmaster pid) and the server."""
    asyncio.run(_recalls(server.url, min(64, n), []))  # warm: plans, caches, the question lane
    before = {name: _tree_cpu(pid) for name, pid in clusters.items()}
    server_before = _tree_cpu(server.pid)
    lags: list[float] = []
    t0 = time.perf_counter()
    run = asyncio.run(_recalls(server.url, n, lags, auth, primary_url))
    seconds = time.perf_counter() - t0
    latency, errors = run["latency"], run["errors"]
    cpu = {name: (_tree_cpu(pid) - before[name]) / n * 1000 for name, pid in clusters.items()}
    return {
        "rate": n / seconds,
        "p50": pct(latency, 50),
        "p95": pct(latency, 95),
        "errors": errors,
        "writes": run["writes"],
        "unread": run["unread"],
        "cpu_ms": cpu,
        "server_cpu_ms": (_tree_cpu(server.pid) - server_before) / n * 1000,
        "lag_max": max(lags) if lags else None,
        "replay_lag": run["replay_lag"],
        "health": httpx.get(f"{server.url}/healthz", timeout=30).json(),
    }


def replica_row(pg, url: str, logs: Path, *, smoke: bool) -> str:
    """The section text: the primary alone, then two replicas; '' when the bench's PostgreSQL is not
    its own embedded cluster (a DATABASE_URL of yours: no pg_basebackup of it here)."""
    if pg._pg is None:
        return "\n### Read replicas\n\nSkipped: DATABASE_URL is set, and the bench builds replicas only of its own cluster.\n"
    from tests.replica_cluster import ReplicaCluster

    n = 200 if smoke else 1000
    replicas = [ReplicaCluster(pg._pg) for _ in range(2)]
    dbname = psycopg_dbname(url)
    try:
        for replica in replicas:
            replica.replayed(dbname, url)
        clusters = {"primary": pg._pg.get_pid()}
        alone = Proc("serve", url, logs, worker="external")
        try:
            token = httpx.post(f"{alone.url}/api/hubs", json={"slug": "rw"}, timeout=30).json()["owner_token"]
            auth = {"Authorization": f"Bearer {token}"}
            first = _measure(alone, clusters, n, auth, url)
        finally:
            alone.stop()
        clusters.update({f"replica {i + 1}": _postmaster(r.pgdata) for i, r in enumerate(replicas)})
        spread = Proc(
            "serve",
            url,
            logs,
            worker="external",
            extra_env={"MEMORYWIKI_REPLICA_URLS": ",".join(r.url(dbname) for r in replicas)},
        )
        try:
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline:
                states = [r["state"] for r in httpx.get(f"{spread.url}/healthz", timeout=30).json()["replicas"]]
                if states == ["ok", "ok"]:
                    break
                time.sleep(0.2)
            second = _measure(spread, clusters, n, auth, url)
        finally:
            spread.stop()
    finally:
        for replica in replicas:
            replica.remove()
    log(
        f"scaleout replicas: alone {first['rate']:.0f}/s p95 {first['p95']:.0f} ms; two replicas {second['rate']:.0f}/s"
    )
    return _text(first, second, n)


def psycopg_dbname(url: str) -> str:
    from psycopg.conninfo import conninfo_to_dict

    return str(conninfo_to_dict(url)["dbname"])


def _text(first: dict, second: dict, n: int) -> str:
    def cpu(row: dict, name: str) -> float | str:
        return row["cpu_ms"].get(name, "")

    names = ["primary", "replica 1", "replica 2"]
    rows = [
        ["primary alone", first["rate"], first["p50"], first["p95"], *(cpu(first, x) for x in names), first["server_cpu_ms"], "", f"{first['writes']} / {first['unread']}", first["errors"]],
        ["primary + 2 replicas", second["rate"], second["p50"], second["p95"], *(cpu(second, x) for x in names), second["server_cpu_ms"], f"{second['lag_max'] or 0:.1f} / {second['replay_lag'] or 0:.3f}", f"{second['writes']} / {second['unread']}", second["errors"]],
    ]  # fmt: skip
    db_per_recall = sum(second["cpu_ms"][x] for x in names)
    replica_share = (second["cpu_ms"]["replica 1"] + second["cpu_ms"]["replica 2"]) / max(db_per_recall, 1e-9)
    app = second["server_cpu_ms"]
    cores = psutil.cpu_count() or 2
    # a machine per replica, its own app server beside it: what one such machine recalls per
    # second if its cores go to its replica's and its server's share of a recall
    per_machine = cores * 1000 / max(app + db_per_recall * replica_share, 1e-9)
    primary_alone = cores * 1000 / max(first["server_cpu_ms"] + first["cpu_ms"]["primary"], 1e-9)
    health = second["health"]
    header = ["setup", "recalls/s", "p50 ms", "p95 ms", "primary CPU ms/recall", "replica 1 CPU ms/recall", "replica 2 CPU ms/recall", "server CPU ms/recall", "max replica lag s: /healthz / replay_lag", "writes / not read back at once", "errors"]  # fmt: skip
    return f"""
### Read replicas: one primary and two streaming replicas, on this one machine

The scale-out database (its pages indexed) copied to two streaming replicas with pg_basebackup
(`-R -X stream`, from the embedded PostgreSQL's bin/). {n} recalls (chunk level, hybrid, three
words each) at concurrency {CONCURRENCY} through one server (`MEMORYWIKI_WORKER=external`): first
reading the primary alone, then with `MEMORYWIKI_REPLICA_URLS` naming both replicas. CPU is each
cluster's processes' user + system seconds over the run, per recall; the lag is the largest
/healthz showed, sampled every 0.5 s (its resolution is the check interval, 1 s), and beside it
the largest `replay_lag` the primary's `pg_stat_replication` showed at the same moments.
Meanwhile one writer saves a page every 0.25 s into another hub and recalls it at once with its
token: a write it did not read back would break read-your-writes.

{md_table(header, rows, 1)}

Public reads the second server sent to the primary: {health.get("public_reads_on_primary")} (the
writer's reads of what it had just saved, until a replica had replayed it, and the warm-up's
before the replicas' first check);
replicas at the end: {", ".join(f"{r['name'].split(' (')[0]} {r['state']}, {r['reads']} reads" for r in health.get("replicas", []))}.

**What this machine cannot show.** All three clusters and the server share this machine's
{cores} cores, so a replica's recall takes CPU from the primary's cores: recalls/s cannot rise
here, and the row with replicas pays for the checks and the record of writes besides. The gain of
separate machines is a projection from the CPU per recall measured above: on a machine of
{cores} cores of its own, a replica plus an app server beside it spends about
{app + db_per_recall * replica_share:.1f} ms of CPU per recall ({app:.1f} ms the server's, the rest
PostgreSQL's), so it serves about {per_machine:.0f} recalls/s when CPU-bound, and N such machines
about N times that, while the primary keeps only writes and owner reads
({second["cpu_ms"]["primary"]:.1f} ms of primary CPU per recall was left on it here: the
writer's saves, and the lookup of each reader's last write). The primary alone on
this machine projects to {primary_alone:.0f} recalls/s by the same count. Measured on one machine,
not on several: the projection leaves out the network between them.

Machine load at the end of the run: a load average of {os.getloadavg()[0]:.1f} on its {cores} cores.
"""
