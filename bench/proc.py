"""Launch the real server or worker for a benchmark, with an embedding-call counter.

    python -m bench.proc serve --port 8123
    python -m bench.proc worker

Both read the usual environment (DATABASE_URL, MEMORYWIKI_EMBEDDER, MEMORYWIKI_WORKER, ...)
and build exactly what `memorywiki serve` / `memorywiki worker` build. The only addition: when
MEMORYWIKI_BENCH_COUNTS names a file, the configured embedder is wrapped so that every call
appends one JSON line {role, pid, inputs, t} to it, before the call is made, and one more with
"done": true once it is answered. The benchmark reads that file to count embedding calls and
inputs per process (and which calls a killed process never got an answer for).
When MEMORYWIKI_BENCH_EMBED_CACHE names a folder, vectors already computed for the same text by
the same embedder come from that disk cache (bench/embcache.py); calls and inputs are still
counted as the server asked for them.

Differences from `memorywiki serve`: uvicorn's access log is off and log level is "warning"
(per-request logging would be measured as server cost otherwise).
"""

from __future__ import annotations

import argparse
import json
import os
import time
import warnings

warnings.filterwarnings("ignore", message=".*XDG_RUNTIME_DIR.*")


class CountingEmbedder:
    """Wraps an Embedder; records each call (inputs, time) to a JSON-lines file."""

    def __init__(self, inner, path: str, role: str):
        self.inner = inner
        self.name = inner.name
        self.path = path
        self.role = role

    async def _counted(self, call, texts: list[str], kind: str) -> list[list[float]]:
        row = {"role": self.role, "kind": kind, "pid": os.getpid(), "inputs": len(texts)}
        if texts:
            self._write({**row, "t": time.time()})
        vectors = await call(texts)
        if texts:  # answered: a process killed during the call leaves a call with no "done" line
            self._write({**row, "t": time.time(), "done": True})
        return vectors

    def _write(self, row: dict) -> None:
        with open(self.path, "a", encoding="utf-8") as fh:
            fh.write(json.dumps(row) + "\n")

    async def embed(self, texts: list[str]) -> list[list[float]]:
        return await self._counted(self.inner.embed, texts, "index")

    async def embed_questions(self, texts: list[str]) -> list[list[float]]:
        return await self._counted(self.inner.embed_questions, texts, "question")


def counting(make, role: str):
    path = os.environ.get("MEMORYWIKI_BENCH_COUNTS")
    cache = os.environ.get("MEMORYWIKI_BENCH_EMBED_CACHE")

    def make_counted(settings, **kw):
        embedder = make(settings, **kw)
        if embedder is not None and cache:
            from .embcache import CachedEmbedder, VectorCache

            embedder = CachedEmbedder(embedder, VectorCache(cache))
        if embedder is None or not path:
            return embedder
        return CountingEmbedder(embedder, path, role)

    return make_counted


def serve(port: int) -> None:
    import uvicorn
    from memorywiki.server import app as app_module
    from memorywiki.server.config import Settings

    app = app_module.create_app(Settings.from_env(), embedder_factory=counting(app_module.make_embedder, "server"))
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning", access_log=False, lifespan="on")


def worker() -> None:
    from memorywiki.server.embedding import factory
    from memorywiki.server.worker import run_worker

    run_worker(embedder_factory=counting(factory.make_embedder, "worker"))


def main() -> None:
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("serve")
    s.add_argument("--port", type=int, required=True)
    sub.add_parser("worker")
    args = parser.parse_args()
    if args.cmd == "serve":
        serve(args.port)
    else:
        worker()


if __name__ == "__main__":
    main()
