"""The question lane: how recall gets a question's vector.

Recall waits for this vector, so it has its own lane, apart from indexing:
- a repeated question is answered from a small LRU cache (agents ask the same thing often);
- questions that arrive while a forward pass runs wait for the next one, together: one pass
  for many questions costs little more than for one, so at concurrency 16 the embedder runs a
  few batched passes instead of 16 queued ones;
- it calls `embed_questions`, which the local embedder serves ahead of bulk indexing.
With nothing else in flight a question goes straight to the embedder: no timer, no added wait.
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict

from .base import Embedder


class QuestionLane:
    def __init__(self, embedder: Embedder, *, cache_size: int = 1024, max_batch: int = 32) -> None:
        if max_batch < 1:
            raise ValueError(f"question batch must be >= 1, got {max_batch}")
        self.embedder = embedder
        self.cache_size = max(0, cache_size)
        self.max_batch = max_batch
        self._cache: OrderedDict[str, list[float]] = OrderedDict()
        self._waiting: dict[str, asyncio.Future[list[float]]] = {}  # question -> its vector, once computed
        self._queue: list[str] = []
        self._drainer: asyncio.Task[None] | None = None
        # counters, for /healthz and the benchmarks
        self.questions = 0
        self.cache_hits = 0
        self.passes = 0
        self.embedded = 0

    def stats(self) -> dict[str, int]:
        return {
            "questions": self.questions,
            "cache_hits": self.cache_hits,
            "forward_passes": self.passes,
            "embedded": self.embedded,
            "waiting": len(self._queue),
        }

    async def embed(self, question: str) -> list[float]:
        """The question's vector; raises EmbedderError like the embedder."""
        self.questions += 1
        vector = self._cache.get(question)
        if vector is not None:
            self._cache.move_to_end(question)
            self.cache_hits += 1
            return vector
        future = self._waiting.get(question)  # the same question already on its way: share it
        if future is None:
            future = asyncio.get_running_loop().create_future()
            # A request that gave up (client gone) must not leave an unread error behind.
            future.add_done_callback(lambda f: f.cancelled() or f.exception())
            self._waiting[question] = future
            self._queue.append(question)
            if self._drainer is None:
                self._drainer = asyncio.create_task(self._drain())
        # shield: one caller giving up does not cancel the vector others wait for
        return await asyncio.shield(future)

    async def _drain(self) -> None:
        try:
            while self._queue:
                batch, self._queue = self._queue[: self.max_batch], self._queue[self.max_batch :]
                try:
                    vectors = await self.embedder.embed_questions(batch)
                except BaseException as exc:
                    for question in batch:
                        future = self._waiting.pop(question)
                        if not future.done():
                            future.set_exception(exc if isinstance(exc, Exception) else asyncio.CancelledError())
                    if not isinstance(exc, Exception):
                        raise
                    continue
                self.passes += 1
                self.embedded += len(batch)
                for question, vector in zip(batch, vectors, strict=True):
                    self._remember(question, vector)
                    future = self._waiting.pop(question)
                    if not future.done():
                        future.set_result(vector)
        finally:
            self._drainer = None
            for question in self._queue:  # only when cancelled at shutdown
                unanswered = self._waiting.pop(question, None)
                if unanswered is not None and not unanswered.done():
                    unanswered.cancel()
            self._queue = []

    def _remember(self, question: str, vector: list[float]) -> None:
        if not self.cache_size:
            return
        self._cache[question] = vector
        self._cache.move_to_end(question)
        while len(self._cache) > self.cache_size:
            self._cache.popitem(last=False)
