"""Recall latency and throughput over HTTP vs the SQL floor, at hub sizes 1k / 10k / 100k / 1M (--large).

Hubs are built fast, straight in SQL (not through HTTP): one database per size, one hub,
docs of 10 chunks. Chunk text: the dataset's corpus (SciFact abstracts) first, then synthetic
distractors recombined from its sentence fragments (bench/common.py's synthetic_chunks).
Vectors: the real embedder's vectors of the first chunks (up to SAMPLE texts, embedded once
and cached), and for every other chunk a mixture of two of those real vectors plus Gaussian
noise, re-normalised ("perturbed real vectors": clustered like real data, unlike uniform random
unit vectors, which are the worst case for HNSW). The tsvector and BM25 postings are written
by the same SQL and triggers the server uses; the HNSW index is built after the load, with the
same expression as server/store/space.py.

Then, on uvicorn servers (subprocesses, loopback, access log off, no in-process worker), with a
lean keep-alive HTTP/1.1 client (its CPU would otherwise be taken from the server's two cores):
POST /api/hub/<hub>/recall, level chunk, k = 10, for vector, full text (a server with
MEMORYWIKI_EMBEDDER=none) and hybrid, at concurrency 1 and 16, after a warm-up.
"after" is this checkout (question cache off, so every question is embedded); "before" the
baseline commit's server (bench/baseline.py, `--baseline REF`; none by default), hybrid only;
"after, cache" asks every question twice in a row with the cache on; "after, rerank" adds the
rerank stage against a stand-in reranker (bench/suite/rerank_stub.py). Beside them the floor: the
endpoint's own SQL (recall.recall_chunks) on a psycopg pool configured like the server's public
pool, with the query vectors computed beforehand; and the query embedding alone (the same
embedder's question path, in the benchmark process).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import os
import re
import time
from pathlib import Path

import httpx
import numpy as np
import psycopg
from psycopg.rows import dict_row

from ..baseline import baseline_env, describe, functions_differ, knows_int8, lacks_migrations
from ..common import (
    CACHE,
    Options,
    Postgres,
    Proc,
    child_pids,
    fmt,
    load_beir,
    log,
    machine_line,
    make_bench_embedder,
    md_table,
    pct,
    process_cpu_s,
    synthetic_chunks,
    write_result,
)
from .rerank_stub import RerankStub

SAMPLE = 300  # real-embedded texts per run (cached)
CHUNKS_PER_DOC = 10
BATCH = 2000
K = 10
MODES = ("vector", "fulltext", "hybrid")
# 2: the docs record the chunker that made their rows; 3: no chunks.tsv (nothing reads it since
# migration 0110), the hub checked before each row (hub_state)
BUILD_VERSION = 3
# The baseline server predates the int8 space: it runs on a copy of the hub (before_copy), made
# up to this size (the 1M hub's copy would be ~20 GB more on disk).
BEFORE_COPY_MAX = 100000


# ---------------------------------------------------------------- synthetic text


def _synthetic(corpus: list[dict], n: int, seed: int = 7) -> list[tuple[str, str]]:
    return [(t, x) for _, t, x in synthetic_chunks(corpus, n, seed=seed)]


def chunk_texts(corpus: list[dict], n: int) -> list[tuple[str, str]]:
    real = [((d["title"] or d["_id"]).strip(), d["text"]) for d in corpus][:n]
    return real + _synthetic(corpus, n - len(real)) if n > len(real) else real


# ---------------------------------------------------------------- vectors


async def sample_vectors(embedder, texts: list[str], smoke: bool) -> np.ndarray:
    key = hashlib.sha256(("\n".join(texts) + embedder.name).encode()).hexdigest()[:16]
    path = CACHE / f"latency-sample-{key}.npy"
    if path.exists() and not smoke:
        return np.load(path)
    vecs = np.asarray(await embedder.embed(texts), dtype=np.float32)
    if not smoke:
        path.parent.mkdir(parents=True, exist_ok=True)
        np.save(path, vecs)
    return vecs


def make_vectors(base: np.ndarray, n: int, seed: int = 11) -> np.ndarray:
    """The first len(base) are real; the rest perturbed mixtures of two real ones, unit length."""
    rng = np.random.default_rng(seed)
    m, dim = base.shape
    out = np.empty((n, dim), dtype=np.float32)
    head = min(n, m)
    out[:head] = base[:head]
    for start in range(head, n, 50000):
        stop = min(n, start + 50000)
        a = base[rng.integers(0, m, stop - start)]
        b = base[rng.integers(0, m, stop - start)]
        noise = rng.standard_normal((stop - start, dim)).astype(np.float32) / np.sqrt(dim)
        v = a + 0.5 * b + 0.6 * noise
        out[start:stop] = v / np.linalg.norm(v, axis=1, keepdims=True)
    return out


# ---------------------------------------------------------------- build


def base_model(model: str) -> str:
    """The model whose weights the vectors come from: its int8 variant is the same model."""
    return model.removesuffix("-int8")


def record_space(url: str, model: str) -> None:
    """Record `model` as the hub's embedding space. A server whose embedder differs from the
    recorded one forgets every vector at start (server/store/space.py), so each server must
    find its own model recorded."""
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("UPDATE embedding_space SET model = %s WHERE model <> %s", (model, model))


def before_copy(pg: Postgres, name: str, model: str) -> str:
    """A copy of hub database `name` whose recorded space is `model` (the baseline server's),
    for a baseline that cannot share the hub: one that embeds with another model name than this
    checkout (int8 is newer than it; on the original it would forget the hub's vectors), or whose
    SQL functions differ. A file-level copy, done before any server connects."""
    copy = f"{name}_before"
    pg.drop(copy)
    with psycopg.connect(pg.url, autocommit=True) as conn:
        for attempt in range(30):  # an autovacuum worker on the template makes it busy for a moment
            try:
                conn.execute(f'CREATE DATABASE "{copy}" TEMPLATE "{name}" STRATEGY FILE_COPY')
                break
            except psycopg.errors.ObjectInUse:
                if attempt == 29:
                    raise
                time.sleep(1)
    url = pg.db_url(copy)
    record_space(url, model)
    return url


# Function files that only read (the search functions). Every server re-applies the function files
# at start, so a built hub runs the newest body of these as it is: they do not key the build (the
# 100k and 1M hubs take 10 and 23 minutes to build), unlike the migrations and the functions that
# write the stored rows (postings, counters, privacy, triggers).
READ_ONLY_FUNCTIONS = ("40_bm25_search.sql",)
# Migrations that change how rows are stored, not what they hold (or add what is derived from
# it), which a server applies to a built hub at its start (giving it the rows a fresh build
# has): they do not key the build either, and a baseline that predates them runs on a hub that
# has them (forget_in_place).
IN_PLACE_MIGRATIONS = ("0062_bm25_forward_index_uncompressed.sql", "0063_bm25_forward_index_tf_map.sql")


def forget_in_place(url: str, baseline: dict[str, str]) -> list[str]:
    """Unrecord the in-place migrations the baseline lacks, which this checkout's server applied
    to the hub, so that the baseline starts on it (a server refuses a database with migrations
    it does not have); the next start of this checkout's server records them again."""
    lacking = lacks_migrations(baseline, IN_PLACE_MIGRATIONS)
    if lacking:
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute("DELETE FROM schema_migrations WHERE name = ANY(%s)", (lacking,))
    return lacking


def data_schema() -> str:
    """A hash of the migration and function files that shape the rows a hub build writes."""
    from memorywiki.server.store.migrate import checksum, function_files, migration_files

    parts = [m.checksum for m in migration_files() if m.name not in IN_PLACE_MIGRATIONS]
    parts += [checksum(sql) for name, sql in function_files() if name not in READ_ONLY_FUNCTIONS]
    return hashlib.sha256("".join(parts).encode()).hexdigest()


def _chunker_version() -> str:
    from memorywiki.server.config import Settings

    return Settings.from_env().chunk_size.version


def build_hub(
    pg: Postgres, name: str, n: int, texts: list[tuple[str, str]], vectors: np.ndarray, model: str, smoke: bool
) -> tuple[str, float]:
    """Create (or reuse) database `name` holding one hub 'lat' with n chunks; return (url, build s)."""
    schema = data_schema()[:12]
    # Keyed by the model the sample vectors come from, not its int8 variant: the synthetic hub
    # serves an fp32 or an int8 server alike (same dimension, vectors within cosine 0.99 of each
    # other); the space recorded in the hub is set to the server's (record_space).
    signature = json.dumps(
        {"n": n, "model": base_model(model), "dim": int(vectors.shape[1]), "v": BUILD_VERSION, "schema": schema}
    )
    if not smoke and pg.exists(name):
        url = pg.db_url(name)
        try:
            with psycopg.connect(url) as conn:
                row = conn.execute("SELECT signature, build_s FROM bench_meta").fetchone()
            if row and row[0] == signature:
                hub_state(url, n)  # still the hub built: all its chunks there, nothing owed
                log(f"[latency] reusing {name} ({n} chunks)")
                record_space(url, model)
                return url, float(row[1])
        except (psycopg.Error, RuntimeError) as exc:
            log(f"[latency] not reusing {name}: {exc}")
    url = pg.fresh(name)
    dim = vectors.shape[1]
    t0 = time.perf_counter()
    with psycopg.connect(url) as conn:
        hub = conn.execute("INSERT INTO hubs (slug, owner_token_hash) VALUES ('lat', 'x') RETURNING id").fetchone()[0]
        for start in range(0, n, BATCH):
            stop = min(n, start + BATCH)
            doc_ids = [f"lat{i // CHUNKS_PER_DOC:07d}" for i in range(start, stop)]
            new_docs = sorted(set(doc_ids))
            titles = {
                f"lat{j // CHUNKS_PER_DOC:07d}": texts[j][0] for j in range(start, stop) if j % CHUNKS_PER_DOC == 0
            }
            with conn.transaction():
                conn.execute(
                    "INSERT INTO docs (id, hub_id, title, markdown, edit_token_hash, source_hash, embedded_hash)"
                    " SELECT d, %s, t, '', 'x', 'h', 'h' FROM unnest(%s::text[], %s::text[]) AS u(d, t)"
                    " ON CONFLICT (id) DO NOTHING",
                    (hub, new_docs, [titles.get(d, "Untitled") for d in new_docs]),
                )
                heads = [f"{titles.get(d) or texts[(int(d[3:]) * CHUNKS_PER_DOC)][0]}" for d in doc_ids]
                mds = [texts[j][1] for j in range(start, stop)]
                vecs = ["[" + ",".join(f"{x:.6f}" for x in vectors[j]) + "]" for j in range(start, stop)]
                conn.execute(
                    "INSERT INTO chunks (doc_id, hub_id, ordinal, heading_path, markdown, hash, embedding)"
                    " SELECT d, %s, o, h, m, md5(m), e::vector"
                    " FROM unnest(%s::text[], %s::int[], %s::text[], %s::text[], %s::text[]) AS u(d, o, h, m, e)",
                    (hub, doc_ids, [j % CHUNKS_PER_DOC for j in range(start, stop)], heads, mds, vecs),
                )
            if (stop // BATCH) % 10 == 0 or stop == n:
                log(f"    {name}: {stop}/{n} chunks ({time.perf_counter() - t0:.0f}s)")
        load_s = time.perf_counter() - t0
        # the chunker that "made" these rows is the server's own: else a server with no
        # in-process worker chunks the docs again from their (empty) markdown, and the hub is gone
        conn.execute("UPDATE docs SET chunker = %s WHERE hub_id = %s", (_chunker_version(), hub))
        conn.execute("INSERT INTO embedding_space (model, dim) VALUES (%s, %s)", (model, dim))
        conn.execute("SET maintenance_work_mem = '4GB'")  # the 1M-chunk graph (~2 GB) fits in memory
        conn.execute("SET max_parallel_maintenance_workers = 1")
        for table in ("chunks", "docs", "bundles"):
            conn.execute(
                f"CREATE INDEX IF NOT EXISTS {table}_embedding_hnsw ON {table} "
                f"USING hnsw ((embedding::vector({int(dim)})) vector_cosine_ops)"
            )
        build_s = time.perf_counter() - t0
        log(f"[latency] built {name}: {n} chunks, load {load_s:.0f}s, + HNSW {build_s - load_s:.0f}s")
        conn.execute("CREATE TABLE bench_meta (signature text, build_s float8)")
        conn.execute("INSERT INTO bench_meta VALUES (%s, %s)", (signature, build_s))
        conn.commit()
    with psycopg.connect(url, autocommit=True) as conn:  # what autovacuum would do after a bulk load
        conn.execute("VACUUM ANALYZE")
    hub_state(url, n)
    return url, build_s


# ---------------------------------------------------------------- the hub as measured

# What a server could still owe the hub, or do to it, while its rows are measured: docs another
# chunker made (a server with no in-process worker chunks them again, from the built docs' empty
# markdown, deleting their rows: store/chunks.py rechunk_stale), docs owed indexing, chunks
# queued for BM25 and not yet posted.
HUB_STATE = """
SELECT (SELECT count(*) FROM chunks c JOIN hubs h ON h.id = c.hub_id WHERE h.slug = 'lat') AS chunks,
       (SELECT count(*) FROM bm25_chunks b JOIN hubs h ON h.id = b.hub_id WHERE h.slug = 'lat') AS posted,
       (SELECT count(*) FROM docs WHERE chunker IS DISTINCT FROM %(chunker)s) AS stale,
       (SELECT count(*) FROM docs WHERE deleted_at IS NULL AND source_hash IS DISTINCT FROM embedded_hash) AS owed,
       (SELECT count(*) FROM bm25_queue) AS queued
"""
# Anything else PostgreSQL runs meanwhile, in any database: an autovacuum worker, or another
# session's statement (the servers' sessions are idle between rows).
OTHERS = """
SELECT count(*) FILTER (WHERE backend_type = 'autovacuum worker') AS autovacuum,
       count(*) FILTER (WHERE backend_type = 'client backend' AND state = 'active'
                          AND pid <> pg_backend_pid()) AS active
FROM pg_stat_activity
"""
QUIET_WAIT_S = 300


def hub_state(url: str, n: int) -> dict:
    """The hub as a row is about to measure it: it still holds its n chunks, all posted, no doc
    stale or owed, nothing queued (else RuntimeError: the row would measure another hub); and
    nothing else running on the cluster (no autovacuum worker, no other active statement),
    waited for up to QUIET_WAIT_S. Returns the counts and how long it waited for quiet."""
    with psycopg.connect(url, autocommit=True) as conn:
        cur = conn.cursor(row_factory=dict_row)
        state = cur.execute(HUB_STATE, {"chunker": _chunker_version()}).fetchone()
        assert state is not None
        if (state["chunks"], state["posted"], state["stale"], state["owed"], state["queued"]) != (n, n, 0, 0, 0):
            raise RuntimeError(f"the hub is not the one built ({n} chunks, all posted, nothing owed): {state}")
        t0 = time.perf_counter()
        waited = 0.0
        while True:
            others = cur.execute(OTHERS).fetchone()
            assert others is not None
            if not others["autovacuum"] and not others["active"]:
                break
            if time.perf_counter() - t0 > QUIET_WAIT_S:
                raise RuntimeError(f"PostgreSQL did not fall quiet in {QUIET_WAIT_S} s: {others}")
            time.sleep(0.5)
            waited = time.perf_counter() - t0
    return {**state, "waited_s": waited}


def checks_line(rows: list[dict]) -> str:
    """What the checks before each row found, for the results."""
    checked = [r["check"] for r in rows if r.get("check")]
    if not checked:
        return ""
    waited = [c["waited_s"] for c in checked]
    sizes = " / ".join(f"{n:,}" for n in sorted({c["chunks"] for c in checked}))
    return (
        f"Checked before each of the {len(checked)} rows (hub_state): the hub held its {sizes} chunks, every one "
        "posted for BM25, no doc another chunker made, none owed indexing, nothing queued; no "
        "autovacuum worker and no other statement running in PostgreSQL (waited for it before "
        f"{sum(w > 0 for w in waited)} of them, {sum(waited):.1f} s in all)."
    )


# ---------------------------------------------------------------- measure


class _Connection:
    """One keep-alive HTTP/1.1 connection that sends a JSON POST and reads the whole answer.

    The benchmark shares the two cores with the server it measures, so its client is kept as
    light as wrk's or hey's: httpx's async client spent 1.35 ms of CPU per recall at
    concurrency 16 (bench/results/findings.md), CPU the server then lacked, and
    its own time in each request counted as the server's overhead at concurrency 1."""

    def __init__(self, host: str, port: int) -> None:
        self.host, self.port = host, port
        self._streams: tuple[asyncio.StreamReader, asyncio.StreamWriter] | None = None
        self.head = b""  # the last answer's status line and headers

    async def post(self, path: str, body: bytes, headers: str = "") -> tuple[int, bytes]:
        """`headers`: more header lines, each ending in CRLF."""
        if self._streams is None:
            self._streams = await asyncio.open_connection(self.host, self.port)
        reader, writer = self._streams
        writer.write(
            f"POST {path} HTTP/1.1\r\nhost: {self.host}:{self.port}\r\ncontent-type: "
            f"application/json\r\ncontent-length: {len(body)}\r\n{headers}\r\n".encode()
            + body
        )
        head = self.head = await reader.readuntil(b"\r\n\r\n")
        status = int(head.split(b" ", 2)[1])
        length = re.search(rb"\r\ncontent-length: *(\d+)", head, re.IGNORECASE)
        if length is None:  # Starlette's JSON answers always say their length
            raise RuntimeError(f"answer without content-length: {head[:200]!r}")
        payload = await reader.readexactly(int(length.group(1)))
        if re.search(rb"\r\nconnection: *close", head, re.IGNORECASE):
            await self.close()
        return status, payload

    async def close(self) -> None:
        if self._streams is not None:
            self._streams[1].close()
            self._streams = None


def server_timing(head: bytes) -> dict[str, float]:
    """An answer's Server-Timing header as {phase: ms} (server/timing.py)."""
    found = re.search(rb"\r\nserver-timing: *([^\r]*)", head, re.IGNORECASE)
    phases = {}
    for entry in found.group(1).decode().split(",") if found else []:
        name, _, params = entry.strip().partition(";")
        duration = re.search(r"(?:^|;)dur=([0-9.]+)", params)
        if duration:
            phases[name] = float(duration.group(1))
    return phases


# The server's own account of a recall's waits (Server-Timing): the hub's lookup (with full
# text's candidates when hybrid), the wait for the question's vector, the recall statement.
WAITS = ("hub", "embed", "recall")


def _client(base_url: str) -> _Connection:
    host, port = base_url.split("://", 1)[1].rstrip("/").rsplit(":", 1)
    return _Connection(host, int(port))


async def _ask(conn: _Connection, question: str, mode: str, rerank: bool = False) -> float:
    """One recall over HTTP (ms), checked: a 200 in the expected mode (and reranked if asked);
    its headers stay in `conn.head`."""
    body = json.dumps(
        {
            "question": question,
            "k": K,
            "level": "chunk",
            "hybrid": mode == "hybrid",
            **({"rerank": True} if rerank else {}),
        }
    ).encode()
    t0 = time.perf_counter()
    status, payload = await conn.post("/api/hub/lat/recall", body)
    ms = (time.perf_counter() - t0) * 1000
    if status != 200:
        raise RuntimeError(f"recall answered {status}: {payload[:300]!r}")
    answer = json.loads(payload)
    if answer["mode"] != mode:
        raise RuntimeError(f"expected {mode}, server answered {answer['mode']}: {answer.get('vector_note')}")
    if rerank and not answer.get("reranked"):
        raise RuntimeError(f"not reranked: {answer.get('rerank_note')}")
    return ms


async def _statement(conn, hub_id: int, question: str, qvec, dim: int, mode: str) -> float:
    """The SQL floor of one recall (ms): `recall.recall_chunks` with the question's vector
    precomputed (unused in full text), both rankers in one statement when hybrid."""
    from memorywiki.server.store import recall

    if mode == "fulltext":
        qvec = None
    t0 = time.perf_counter()
    await recall.recall_chunks(
        conn,
        hub_id=hub_id,
        question=question,
        k=K,
        qvec=qvec,
        dim=dim if qvec is not None else None,
        hybrid=mode == "hybrid",
        k1=1.2,
        b=0.75,
    )
    return (time.perf_counter() - t0) * 1000


async def _embedding(embedder, question: str) -> float:
    """One question through the embedder's question path (ms), as the server's lane asks it."""
    t0 = time.perf_counter()
    await embedder.embed_questions([question])
    return (time.perf_counter() - t0) * 1000


async def http_run(
    base_url: str,
    questions: list[str],
    mode: str,
    concurrency: int,
    n: int,
    rerank: bool = False,
    outside: list[float] | None = None,
) -> tuple[list[float], float]:
    """Latencies (ms) and requests/s; `outside` gets each request's latency less the waits the
    server reports (WAITS): the time spent in HTTP and Python, the database and the model aside."""
    lat: list[float] = []
    counter = iter(range(n))

    async def runner():
        conn = _client(base_url)
        try:
            for i in counter:
                lat.append(await _ask(conn, questions[i % len(questions)], mode, rerank))
                if outside is not None:
                    waits = server_timing(conn.head)
                    outside.append(lat[-1] - sum(waits.get(name, 0.0) for name in WAITS))
        finally:
            await conn.close()

    t0 = time.perf_counter()
    await asyncio.gather(*(runner() for _ in range(concurrency)))
    return lat, n / (time.perf_counter() - t0)


async def sql_run(
    db, hub_id: int, questions: list[str], qvecs: list, dim: int, mode: str, concurrency: int, n: int
) -> tuple[list[float], float]:
    lat: list[float] = []
    counter = iter(range(n))

    async def runner():
        async with db.public.connection() as conn:
            for i in counter:
                j = i % len(questions)
                lat.append(await _statement(conn, hub_id, questions[j], qvecs[j], dim, mode))

    t0 = time.perf_counter()
    await asyncio.gather(*(runner() for _ in range(concurrency)))
    return lat, n / (time.perf_counter() - t0)


async def paired_run(
    base_url: str, db, hub_id: int, embedder, questions: list[str], qvecs: list, dim: int, mode: str, n: int
) -> list[float]:
    """Each request's overhead against its own floor, at concurrency 1: the question embedded
    (as `embed_ms` is), then its SQL statement run (as the floor is), then the same question
    asked over HTTP, one after the other, so that all three see the same moment of the machine
    and the same rhythm (the server, too, runs its statement right after a model pass)."""
    client = _client(base_url)
    overheads: list[float] = []
    try:
        async with db.public.connection() as conn:
            for i in range(n):
                j = i % len(questions)
                embed = await _embedding(embedder, questions[j]) if mode != "fulltext" else 0.0
                floor = await _statement(conn, hub_id, questions[j], qvecs[j], dim, mode)
                overheads.append(await _ask(client, questions[j], mode) - floor - embed)
    finally:
        await client.close()
    return overheads


def _plot(results: list[dict], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4.2))
    colors = {"vector": "tab:blue", "fulltext": "tab:orange", "hybrid": "tab:green"}
    sizes = sorted({r["size"] for r in results})
    for mode in MODES:
        rows = sorted((r for r in results if r["mode"] == mode and r["concurrency"] == 1), key=lambda r: r["size"])
        if not rows:
            continue
        xs = [r["size"] for r in rows]
        ax.plot(xs, [r["p95"] for r in rows], "-o", color=colors[mode], label=f"{mode} HTTP p95")
        ax.plot(xs, [r["p50"] for r in rows], "-", color=colors[mode], alpha=0.5, label=f"{mode} HTTP p50")
        ax.plot(xs, [r["floor_p50"] for r in rows], ":", color=colors[mode], label=f"{mode} SQL floor p50")
    ax.axhline(25, color="gray", linestyle="--", linewidth=1)
    ax.text(sizes[0], 26, "goal: hybrid p95 < 25 ms", fontsize=7, color="gray")
    ax.set_xscale("log")
    ax.set_xlabel("chunks in the hub")
    ax.set_ylabel("ms (concurrency 1, k=10)")
    ax.set_title("Recall latency vs hub size")
    ax.legend(fontsize=7, ncol=2)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def _cpu_s(server: Proc, pg_folder: Path | None) -> dict[str, float | None]:
    """CPU seconds used so far by each party to a recall on this machine: the server process,
    its children (the embedding child), PostgreSQL (the postmaster and its backends; None on a
    DATABASE_URL cluster) and this benchmark process (the HTTP client)."""
    postgres = None
    if pg_folder is not None:
        try:
            pid = int((pg_folder / "postmaster.pid").read_text().split()[0])
            postgres = process_cpu_s(pid) + sum(process_cpu_s(c) for c in child_pids(pid))
        except (OSError, ValueError, IndexError):
            pass
    own = server.cpu_s()
    return {"server": own["self"], "embedding": own["children"], "postgres": postgres, "client": sum(os.times()[:2])}


def _cpu_ms_per_request(before: dict, after: dict, n: int) -> dict[str, float | None]:
    return {
        k: (after[k] - before[k]) * 1000 / n if before[k] is not None and after[k] is not None else None for k in before
    }


async def _lane_stats(base_url: str) -> dict:
    async with httpx.AsyncClient(base_url=base_url, timeout=30) as client:
        return (await client.get("/healthz")).json().get("questions") or {}


async def _measure(
    opts: Options,
    url: str,
    size: int,
    questions: list[str],
    qvecs: list,
    dim: int,
    embed_ms: list[float],
    baseline: dict | None,
    rerank_url: str | None,
    before_url: str | None = None,
    pg_folder: Path | None = None,
    embedder=None,
) -> list[dict]:
    """Rows for one hub: this checkout's server ("after"), the baseline's ("before", hybrid only;
    on `before_url`, a copy of the hub, when given) and a server without an embedder (full
    text); each beside the SQL floor."""
    from memorywiki.server.store.db import Database

    n = opts.requests or (12 if opts.smoke else 200)
    logs = opts.out / ".logs"
    out = []
    # The question cache is off: every question in these rows is embedded (the benchmark asks the
    # same 300 questions in every row); the cache has a row of its own.
    after_env = {"MEMORYWIKI_QUESTION_CACHE": "0", **({"MEMORYWIKI_RERANK_URL": rerank_url} if rerank_url else {})}
    with contextlib.ExitStack() as stack:
        main = stack.enter_context(Proc("serve", url, logs, worker="external", extra_env=after_env))
        plain = stack.enter_context(Proc("serve", url, logs, embedder="none", worker="external"))
        cached = stack.enter_context(Proc("serve", url, logs, worker="external"))
        if baseline:
            forget_in_place(before_url or url, baseline)
        # the baseline's question cache off too, when it has one (a server ignores unknown settings)
        before = (
            stack.enter_context(
                Proc(
                    "serve",
                    before_url or url,
                    logs,
                    worker="external",
                    extra_env={**baseline, "MEMORYWIKI_QUESTION_CACHE": "0"},
                )
            )
            if baseline
            else None
        )
        runs = [("after", "vector", main), ("after", "fulltext", plain), ("after", "hybrid", main)]
        if before is not None:
            runs.append(("before", "hybrid", before))
        # warm-up: model loaded, pools filled, plans cached; at 1M chunks the HNSW graph (~2 GB)
        # is read from disk by the first questions, so more of them
        warm = 8 if opts.smoke else (40 if size < 1000000 else 300)
        for _, mode, server in runs:
            await http_run(server.url, questions, mode, 4, warm)
        db = Database(url, min_size=1, max_size=16)
        await db.open()
        try:
            async with db.public.connection() as conn:
                hub_id = (await (await conn.execute("SELECT id FROM hubs WHERE slug = 'lat'")).fetchone())["id"]
            await sql_run(db, hub_id, questions, qvecs, dim, "hybrid", 4, 20)  # warm-up
            floors: dict = {}
            for code, mode, server in runs:
                for conc in (1, 16):
                    check = await asyncio.to_thread(
                        hub_state, before_url if code == "before" and before_url else url, size
                    )
                    stats0 = await _lane_stats(server.url) if code == "after" else {}
                    cpu0 = _cpu_s(server, pg_folder)
                    outside: list[float] = []
                    lat, rps = await http_run(
                        server.url, questions, mode, conc, n, outside=outside if conc == 1 and code == "after" else None
                    )
                    cpu = _cpu_ms_per_request(cpu0, _cpu_s(server, pg_folder), n)
                    stats1 = await _lane_stats(server.url) if code == "after" else {}
                    if (mode, conc) not in floors:
                        await asyncio.to_thread(hub_state, url, size)
                        floors[mode, conc] = await sql_run(db, hub_id, questions, qvecs, dim, mode, conc, n)
                    flat, fqps = floors[mode, conc]
                    row = {
                        "size": size,
                        "code": code,
                        "mode": mode,
                        "concurrency": conc,
                        "n": n,
                        "p50": pct(lat, 50),
                        "p95": pct(lat, 95),
                        "p99": pct(lat, 99),
                        "rps": rps,
                        "floor_p50": pct(flat, 50),
                        "floor_p95": pct(flat, 95),
                        "floor_p99": pct(flat, 99),
                        "floor_qps": fqps,
                        "cpu_ms": cpu,
                        "outside_p50": pct(outside, 50) if outside else None,
                        "check": check,
                    }
                    passes = stats1.get("forward_passes", 0) - stats0.get("forward_passes", 0)
                    row["per_pass"] = (
                        (stats1.get("embedded", 0) - stats0.get("embedded", 0)) / passes if passes else None
                    )
                    emb = pct(embed_ms, 50) if mode != "fulltext" and code == "after" else None
                    row["overhead_p50"] = (
                        row["p50"] - row["floor_p50"] - emb
                        if emb is not None
                        else (row["p50"] - row["floor_p50"] if mode == "fulltext" else None)
                    )
                    if conc == 1 and code == "after" and embedder is not None:
                        paired = await paired_run(
                            server.url, db, hub_id, embedder, questions, qvecs, dim, mode, max(10, n // 2)
                        )
                        row["paired_p50"] = pct(paired, 50)
                    out.append(row)
                    log(
                        f"    {size:>8} {code:6} {mode:8} c={conc:<2} p50 {row['p50']:7.1f} p95 {row['p95']:7.1f} "
                        f"rps {rps:6.1f} | floor p50 {row['floor_p50']:6.1f} p95 {row['floor_p95']:6.1f}"
                    )
            # the question cache: every question asked twice in a row, the second time from the cache
            twice = [q for q in questions for _ in (0, 1)]
            await http_run(cached.url, questions[:50], "hybrid", 4, 50)
            check = await asyncio.to_thread(hub_state, url, size)
            cpu0 = _cpu_s(cached, pg_folder)
            lat, rps = await http_run(cached.url, twice, "hybrid", 16, min(n, len(twice)))
            cpu = _cpu_ms_per_request(cpu0, _cpu_s(cached, pg_folder), min(n, len(twice)))
            flat, fqps = floors["hybrid", 16]
            out.append(
                {
                    "size": size,
                    "code": "after, cache",
                    "mode": "hybrid",
                    "concurrency": 16,
                    "n": n,
                    "p50": pct(lat, 50),
                    "p95": pct(lat, 95),
                    "p99": pct(lat, 99),
                    "rps": rps,
                    "floor_p50": pct(flat, 50),
                    "floor_p95": pct(flat, 95),
                    "floor_p99": pct(flat, 99),
                    "floor_qps": fqps,
                    "per_pass": None,
                    "overhead_p50": None,
                    "cpu_ms": cpu,
                    "check": check,
                }
            )
            if rerank_url:  # interleaved with the same questions without rerank, so load drifts cancel out
                with_rr, without = [], []
                for i in range(n // 2):
                    lat, _ = await http_run(main.url, questions[i : i + 1], "hybrid", 1, 1)
                    without += lat
                    lat, _ = await http_run(main.url, questions[i : i + 1], "hybrid", 1, 1, rerank=True)
                    with_rr += lat
                flat, fqps = floors["hybrid", 1]
                out.append(
                    {
                        "size": size,
                        "code": "after, rerank",
                        "mode": "hybrid",
                        "concurrency": 1,
                        "n": n // 2,
                        "p50": pct(with_rr, 50),
                        "p95": pct(with_rr, 95),
                        "p99": pct(with_rr, 99),
                        "rps": None,
                        "floor_p50": pct(flat, 50),
                        "floor_p95": pct(flat, 95),
                        "floor_p99": pct(flat, 99),
                        "floor_qps": fqps,
                        "per_pass": None,
                        "overhead_p50": None,
                        "added_p50": pct(with_rr, 50) - pct(without, 50),
                        "added_p95": pct(with_rr, 95) - pct(without, 95),
                    }
                )
        finally:
            await db.close()
        out.append(
            {
                "size": size,
                "rss_server_mb": main.peak_rss_mb(),
                "rss_plain_mb": plain.peak_rss_mb(),
                "rss_before_mb": before.peak_rss_mb() if before else None,
            }
        )
    return out


async def _main(opts: Options, pg: Postgres) -> dict:
    data = load_beir(opts.dataset)
    sizes = opts.sizes or ([300] if opts.smoke else [1000, 10000, 100000] + ([1000000] if opts.large else []))
    embedder = make_bench_embedder()
    questions = list(data.queries.values())
    # query embedding alone, one question at a time, through the embedder's question path
    await embedder.embed_questions(questions[:2])
    embed_ms = [await _embedding(embedder, q) for q in questions[: (10 if opts.smoke else 100)]]
    qvecs = await embedder.embed(questions)
    dim = len(qvecs[0])
    biggest = max(sizes)
    texts = chunk_texts(data.corpus, biggest)
    sample_n = min(len(texts), 20 if opts.smoke else SAMPLE)
    log(f"[latency] embedding {sample_n} sample chunks with {embedder.name} ...")
    base = await sample_vectors(embedder, [f"{t}\n\n{m}" for t, m in texts[:sample_n]], opts.smoke)
    vectors = make_vectors(base, biggest)
    baseline, baseline_name = None, None
    ref = opts.extra.get("baseline")
    if ref and not opts.smoke and not opts.extra.get("build_only"):
        baseline, baseline_name = baseline_env(ref), describe(ref)
    # A baseline runs on a copy of each hub when it cannot share it: it predates the int8 space
    # (on the hub it would forget the vectors; the copy records the fp32 space), or its SQL
    # functions differ (each server re-applies its own at start: one would run the other's).
    before_model = embedder.name
    copy_why = ""
    if baseline and base_model(embedder.name) != embedder.name and not knows_int8(baseline):
        before_model, copy_why = base_model(embedder.name), "recorded in its fp32 space (the baseline has no int8)"
    elif baseline and functions_differ(baseline):
        copy_why = "(the baseline's SQL functions differ, and each server applies its own at start)"
    baseline_copies = bool(copy_why)

    results: list[dict] = []
    rss: list[dict] = []
    builds = {}
    with RerankStub() as rerank_url:
        for size in sizes:
            name = f"bench_lat_{size}"
            url, builds[size] = build_hub(pg, name, size, texts, vectors[:size], embedder.name, opts.smoke)
            if opts.extra.get("build_only"):
                continue
            before_url, size_baseline = None, baseline
            if baseline_copies:
                if size <= BEFORE_COPY_MAX:
                    before_url = before_copy(pg, name, before_model)
                else:
                    size_baseline = None
                    log(f"[latency] no 'before' rows at {size} chunks: the baseline would need a copy of the hub")
            try:
                rows = await _measure(
                    opts,
                    url,
                    size,
                    questions,
                    qvecs,
                    dim,
                    embed_ms,
                    size_baseline,
                    rerank_url,
                    before_url,
                    pg.folder,
                    embedder,
                )
            finally:
                if before_url:
                    pg.drop(f"{name}_before")
            results += [r for r in rows if "mode" in r]
            rss += [r for r in rows if "mode" not in r]
            if opts.smoke:
                pg.drop(name)

    if opts.extra.get("build_only"):
        return {"builds": builds}
    table_rows = []
    for r in results:
        table_rows.append(
            [
                f"{r['size']:,}",
                r["code"],
                r["mode"],
                r["concurrency"],
                r["p50"],
                r["p95"],
                r["p99"],
                r["rps"],
                r["floor_p50"],
                r["floor_p95"],
                r["floor_qps"],
                r["overhead_p50"] if r["concurrency"] == 1 else None,
                r.get("paired_p50"),
                r.get("outside_p50"),
                r["per_pass"],
            ]
        )
    table = md_table(
        [
            "chunks",
            "server",
            "mode",
            "conc",
            "HTTP p50 ms",
            "p95",
            "p99",
            "req/s",
            "SQL p50 ms",
            "p95",
            "q/s",
            "HTTP+Python overhead p50 ms",
            "paired p50 ms",
            "outside the waits p50 ms",
            "questions per embedding pass",
        ],
        table_rows,
        digits=1,
    )
    emb_line = (
        f"Query embedding alone ({embedder.name}, {getattr(embedder, 'backend', 'remote')}, one question per "
        f"call, in the benchmark process): p50 {pct(embed_ms, 50):.1f} ms, p95 {pct(embed_ms, 95):.1f} ms, "
        f"p99 {pct(embed_ms, 99):.1f} ms over {len(embed_ms)} questions."
    )
    build_line = ", ".join(f"{s:,} chunks {b:.0f} s" for s, b in builds.items())
    before_where = (
        f", on a copy of each hub up to {BEFORE_COPY_MAX:,} chunks {copy_why}"
        if baseline_copies
        else ", on the same hub"
        if baseline
        else ""
    )
    rss_line = ", ".join(
        f"{r['size']:,}: {fmt(r['rss_server_mb'], 0)} MB (after), "
        + (f"{fmt(r['rss_before_mb'], 0)} MB (before), " if r.get("rss_before_mb") else "")
        + f"{fmt(r['rss_plain_mb'], 0)} MB (no embedder)"
        for r in rss
    )

    def row(code, mode, conc, size=100000):
        return next(
            (r for r in results if (r["code"], r["mode"], r["concurrency"], r["size"]) == (code, mode, conc, size)),
            None,
        )

    goals = []
    c1, c16 = row("after", "hybrid", 1), row("after", "hybrid", 16)
    if c1 and c16:
        ones = {
            r["mode"]: r
            for r in results
            if r["concurrency"] == 1
            and r["code"] == "after"
            and r["size"] == c1["size"]
            and r["overhead_p50"] is not None
        }
        overheads = [r["overhead_p50"] for r in ones.values()]
        each = ", ".join(f"{mode} {r['overhead_p50']:.1f}" for mode, r in ones.items())
        goals.append(
            f"Goals at 100k chunks: hybrid p95 < 25 ms at concurrency 1: {c1['p95']:.1f} ms -> "
            f"**{'met' if c1['p95'] < 25 else 'missed'}**; >= 150 recalls/s at concurrency 16: "
            f"{c16['rps']:.0f}/s -> **{'met' if c16['rps'] >= 150 else 'missed'}** (the SQL alone: "
            f"{c16['floor_qps']:.0f}/s); HTTP + Python overhead < 3 ms over the SQL floor (p50, concurrency 1, "
            f"query embedding subtracted): {each} ms -> **{'met' if max(overheads) < 3 else 'missed'}**. "
            f"The vector and full-text rows measure the HTTP + Python path alone; a hybrid's question is "
            f"embedded while full text reads its candidates, so its figure subtracts an embedding it no "
            f"longer waits for in full (its HTTP p50 - SQL p50, nothing subtracted: "
            f"{c1['p50'] - c1['floor_p50']:.1f} ms)."
        )
        paired = {mode: r["paired_p50"] for mode, r in ones.items() if r.get("paired_p50") is not None}
        if paired:
            goals.append(
                "The same overhead request by request, each request against its own SQL statement and "
                "question embedding timed just before it (paired, p50, concurrency 1): "
                + ", ".join(f"{mode} {ms:.1f}" for mode, ms in paired.items())
                + f" ms -> **{'met' if max(paired.values()) < 3 else 'missed'}**"
                + (
                    " (a hybrid's figure subtracts an embedding it waits for only in part, as above)"
                    if "hybrid" in paired
                    else ""
                )
                + "."
            )
        outside = {mode: r["outside_p50"] for mode, r in ones.items() if r.get("outside_p50") is not None}
        if outside:
            goals.append(
                "Request by request, less the waits each answer's Server-Timing reports (HTTP and "
                "Python alone, p50, concurrency 1): "
                + ", ".join(f"{mode} {ms:.1f}" for mode, ms in outside.items())
                + f" ms -> **{'met' if max(outside.values()) < 3 else 'missed'}**."
            )
        b1, b16 = row("before", "hybrid", 1), row("before", "hybrid", 16)
        if b1 and b16:
            goals.append(
                f"Before/after at 100k, hybrid: p95 at concurrency 1 {b1['p95']:.1f} -> {c1['p95']:.1f} ms; "
                f"recalls/s at concurrency 16 {b16['rps']:.0f} -> {c16['rps']:.0f} "
                f"({c16['rps'] / b16['rps']:.1f}x)."
            )
    cpu_rows = [
        r
        for r in results
        if r.get("cpu_ms") and r["concurrency"] == 16 and r["code"] in ("after", "before", "after, cache")
    ]
    cpu_table = ""
    if cpu_rows:
        lines = []
        for r in cpu_rows:
            c = r["cpu_ms"]
            total = sum(v for v in c.values() if v is not None)
            lines.append(
                [
                    f"{r['size']:,}",
                    r["code"],
                    r["mode"],
                    c["server"],
                    c["embedding"] if r["mode"] != "fulltext" else None,
                    c["postgres"],
                    c["client"],
                    total,
                    2000 / total if total else None,
                    r["rps"],
                ]
            )
        cpu_table = (
            "Where the CPU goes at concurrency 16 (CPU ms per recall, user + system, from /proc, over the "
            "row's requests; the 2 cores run all four, so 2,000 / total is the most recalls/s this "
            'machine could serve with them; "after, cache" asks each question twice in a row, the '
            "second from the server's question cache, so half its recalls embed nothing):\n\n"
            + md_table(
                [
                    "chunks",
                    "server",
                    "mode",
                    "server process",
                    "embedding child",
                    "PostgreSQL",
                    "benchmark client",
                    "total",
                    "ceiling recalls/s",
                    "measured req/s",
                ],
                lines,
                digits=2,
            )
        )
    rerank_rows = [r for r in results if r["code"] == "after, rerank"]
    rerank_line = (
        (
            'Rerank stage (`"rerank": true`, 30 fused candidates to a stand-in reranker on loopback that '
            "answers at once, bench/suite/rerank_stub.py; each question asked without and with it, in turn): added "
            "p50 / p95 "
            + ", ".join(f"{r['size']:,} chunks: {r['added_p50']:+.1f} / {r['added_p95']:+.1f} ms" for r in rerank_rows)
            + ". That is the stage's own cost (30 candidates fetched and sent, one round trip, the re-sort); "
            "a real cross-encoder adds its inference time on top, and its quality cannot be measured here: "
            "no reranker model is available offline on this machine."
        )
        if rerank_rows
        else ""
    )
    text = f"""## Latency and throughput (recall, level chunk, k = {K})

Hubs built straight in SQL (one database per size; docs of {CHUNKS_PER_DOC} chunks; text = the
{data.name} corpus then synthetic distractors from its sentence fragments; vectors = real
{base_model(embedder.name)} vectors of {sample_n} chunks, the rest perturbed mixtures of two real vectors
plus Gaussian noise, re-normalised; one build serves the fp32 and the int8 space alike, the hub
recording the space of the server that runs on it). Build (load + HNSW): {build_line}.
HTTP: uvicorn (uvloop + httptools), access log off, loopback, a lean keep-alive HTTP/1.1 client
(asyncio streams) in the benchmark process; {results[0]["n"] if results else 0} requests per row after a warm-up.
Servers, each a process of its own on the same hub: **after** = this checkout (local embedder on
{getattr(embedder, "backend", "its embedder")}, question lane; its question cache off, since every row asks the same
300 questions); **before** = {baseline_name or "not run"} (the baseline commit's server with its default embedder), hybrid rows only{before_where};
**after, cache** = this checkout with its question cache on, each question asked twice in a row;
"fulltext" = a server without an embedder. "questions per embedding pass": the question lane's
micro-batches during that row (from /healthz). SQL floor: `recall.recall_chunks` on a psycopg pool
set up like the server's public pool, query vectors precomputed, both rankers in one statement.
Overhead = HTTP p50 - SQL p50 - query embedding p50 (after rows; full text: HTTP p50 - SQL p50): three
medians from three moments of the run. "Paired" is the same difference taken request by request: the
question embedded, its SQL statement run, then the same question asked over HTTP, one after the
other, so that the three see the same moment and the same rhythm; the median of those differences
(after rows at concurrency 1, half as many requests as a row). "Outside the waits" is measured request by request too:
its latency less what the server itself reports waiting for in its Server-Timing header (the hub's
lookup, with full text's candidates when hybrid; the question's vector; the recall statement), so
the median of the time spent in HTTP and Python alone, after rows at concurrency 1.
Peak RSS of the servers: {rss_line}.

{emb_line}

{table}

{cpu_table}

{chr(10).join(goals)}

{checks_line(results)}

{rerank_line}

![latency vs hub size](latency.png)
"""
    print(text)
    write_result(opts, "latency.md", text + "\n" + machine_line() + "\n")
    _plot([r for r in results if r["code"] == "after"], opts.out / "latency.png")
    return {"rows": results}


def run(opts: Options, pg: Postgres) -> dict:
    return asyncio.run(_main(opts, pg))
