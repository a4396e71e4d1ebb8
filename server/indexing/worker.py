"""The indexing loop: claims owed docs and bundles and indexes them, in the server's process or
in the background worker's (server/worker.py)."""

from __future__ import annotations

import logging

import psycopg

from ..config import Settings
from ..embedding.base import Embedder, EmbedderError
from ..store.chunks import rechunk_stale
from ..store.db import Database
from ..store.graph import EdgeRule
from ..store.space import build_indexes
from .edges import settle_graph
from .indexer import LOCK_CONFLICTS, claim_owed, index_bundle, index_docs, release_with_error
from .loop import OwedWork

log = logging.getLogger("memorywiki.worker")


class Worker(OwedWork):
    """Claims owed docs and bundles and indexes them until stopped (the loop: indexing/loop.py)."""

    job = "indexing"
    outage_errors = (psycopg.OperationalError, EmbedderError)
    channel = "memorywiki_owed"

    def __init__(
        self,
        db: Database,
        embedder: Embedder,
        *,
        batch: int = 32,
        idle_seconds: float = 1.0,
        retry_seconds: float = 1.0,
        max_backoff: float = 60.0,
        edges: EdgeRule = EdgeRule(),
        slice_inputs: int | None = None,
        pass_inputs: int | None = None,
    ):
        super().__init__(db, idle_seconds=idle_seconds, retry_seconds=retry_seconds, max_backoff=max_backoff)
        self.embedder = embedder
        self.batch = batch
        self.edges = edges
        self.slice_inputs = slice_inputs  # inputs embedded per batch at most (indexer.index_docs)
        self.pass_inputs = pass_inputs  # texts per embedding call, written while the next embeds
        self._indexes_ready = False  # the space's HNSW indexes are known to be in place
        self._graph_settled = False  # no doc's graph reach is out of date (checked at start)
        # until a look finds none: every save records its chunker, so stale rows come only from
        # before this process started
        self._rechunk_pending = True

    @classmethod
    def from_settings(cls, settings: Settings, db: Database, embedder: Embedder) -> Worker:
        return cls(
            db,
            embedder,
            batch=max(1, settings.embed_batch // 4),
            edges=settings.edge_rule,
            max_backoff=settings.worker_max_backoff,
            slice_inputs=settings.index_slice,
            # two local passes a call: the writes of one call overlap the next call's
            # model work, and similar lengths share each pass (indexer._embed_and_store)
            pass_inputs=max(1, 2 * settings.local_batch),
        )

    def what_failed(self, exc: Exception) -> str:
        return "embedder failed" if isinstance(exc, EmbedderError) else "database unavailable"

    async def settle_graph(self) -> int:
        """With nothing owed: measure a batch of docs whose graph reach is out of date (at
        start, after an upgrade or a settings change, and after indexing); how many were."""
        if self._graph_settled:
            return 0
        found, measured = await settle_graph(self.db, self.edges, self.batch)
        self._graph_settled = found == 0
        return measured

    async def run_once(self) -> int:
        """Index one batch of owed work; return how many items were claimed (or re-chunked)."""
        if not self._indexes_ready:
            # At start (repairing a build that a crash interrupted) and after the batch that
            # recorded the embedding space: off the save path.
            self._indexes_ready = await build_indexes(self.db.url)
        if self._rechunk_pending:
            # Docs chunked by other rules or sizes (an upgrade, a new MEMORYWIKI_CHUNK_MAX_CHARS):
            # their rows are made again first, a batch at a time, and what changed becomes owed.
            rechunked = await self.db.write(lambda conn: rechunk_stale(conn, self.batch))
            if rechunked:
                return len(rechunked)
            self._rechunk_pending = False
        doc_ids, bundle_ids = await claim_owed(self.db, self.batch, await self.session_pid())
        if not doc_ids and not bundle_ids:
            return await self.settle_graph()
        try:
            if doc_ids:
                self._graph_settled = False  # their hubs changed size: other docs' reach may be stale
                await index_docs(
                    self.db,
                    self.embedder,
                    doc_ids,
                    self.edges,
                    slice_inputs=self.slice_inputs,
                    pass_inputs=self.pass_inputs,
                )
            for bundle_id in bundle_ids:
                await index_bundle(self.db, self.embedder, bundle_id)
        except EmbedderError as exc:
            # the claims lapse when the next try is due, for this worker or another
            await release_with_error(self.db, doc_ids, bundle_ids, str(exc), self.lease())
            raise
        except LOCK_CONFLICTS as exc:
            # a lock conflict, not an outage: let the claims go so the work is retried soon
            await release_with_error(self.db, doc_ids, bundle_ids, repr(exc), self.retry_seconds)
            raise
        except psycopg.OperationalError:
            raise  # the database went away: the claims lapse with their lease
        except Exception as exc:  # keep the claims short: retry soon, not when the lease ends
            await release_with_error(self.db, doc_ids, bundle_ids, repr(exc), self.retry_seconds)
            raise
        return len(doc_ids) + len(bundle_ids)
