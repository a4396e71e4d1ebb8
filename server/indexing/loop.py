"""The owed-work loop that the indexer and the curator share.

Owed work is derived from the data and claimed with SKIP LOCKED leases marked with the pid of
a session this loop holds open, so a crash leaves work owed, never lost. A round that finds a
dependency down (the database, the embedder, the chat model) releases what it claimed until
the next try and raises; the loop then waits retry_seconds, twice that, up to max_backoff,
and a wake-up does not cut that wait short, so an outage costs a try now and then, not a busy
loop. The first failure is logged, then the 2nd, 4th, 8th... in a row, and once the work resumes.

Two loops in one process share its CPU: one may yield to the other (`yields_to`), starting a
round only while the other has no work in hand, or once YIELD_FLOOR_S have passed, so it still
moves on during a long import. The curator yields to the indexer: a page is searchable first,
enriched after.
"""

from __future__ import annotations

import asyncio
import logging

import psycopg
from psycopg import sql

from ..store.connection import Conn
from ..store.db import Database

YIELD_FLOOR_S = 30.0  # the longest a yielding loop waits for the other's work to run out


class OwedWork:
    """Rounds of owed work until stopped; a subclass says what a round is (`run_once`)."""

    job = "work"  # what the log lines call it
    log = logging.getLogger("memorywiki.worker")
    outage_errors: tuple[type[Exception], ...] = (psycopg.OperationalError,)
    channel: str | None = None  # a NOTIFY channel that wakes the loop when work is committed

    def __init__(
        self, db: Database, *, idle_seconds: float = 1.0, retry_seconds: float = 1.0, max_backoff: float = 60.0
    ) -> None:
        self.db = db
        self.idle_seconds = idle_seconds
        self.retry_seconds = retry_seconds
        self.max_backoff = max_backoff
        self.wake = asyncio.Event()
        self.failures = 0  # rounds in a row that found a dependency down
        self.yields_to: OwedWork | None = None  # a loop whose rounds go first (see the module's doc)
        self._idle = asyncio.Event()  # set while this loop has no work in hand
        self._idle.set()
        self._stopping = False
        self._session: Conn | None = None

    async def run_once(self) -> int:
        """One round: claim owed work and do it; how many items were claimed."""
        raise NotImplementedError

    def what_failed(self, exc: Exception) -> str:
        return "database unavailable"

    def stop(self) -> None:
        self._stopping = True
        self.wake.set()

    def backoff(self, failures: int | None = None) -> float:
        """Seconds to wait before the next try after `failures` (by default: the current
        count of) failed rounds in a row."""
        n = self.failures if failures is None else failures
        return min(self.retry_seconds * 2 ** (n - 1), self.max_backoff) if n > 0 else 0.0

    def lease(self) -> float:
        """How long work claimed by a round that found a dependency down is left alone: until
        the loop tries again."""
        return self.backoff(self.failures + 1)

    async def session_pid(self) -> int:
        """The backend pid that marks this loop's claims (its session is held open)."""
        if self._session is None or self._session.closed:
            self._session = await psycopg.AsyncConnection.connect(self.db.url, autocommit=True)
        return self._session.info.backend_pid

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None

    @property
    def busy(self) -> bool:
        """Whether its last round found work (and no dependency down)."""
        return not self._idle.is_set()

    def _set_busy(self, busy: bool) -> None:
        if busy:
            self._idle.clear()
        else:
            self._idle.set()

    async def _wait_turn(self) -> None:
        """Until the loop this one yields to has no work in hand (or this one is stopped), for
        YIELD_FLOOR_S at most."""
        other = self.yields_to
        if other is None:
            return
        loop = asyncio.get_running_loop()
        deadline = loop.time() + YIELD_FLOOR_S
        while other.busy and not self._stopping:
            left = deadline - loop.time()
            if left <= 0:
                return
            self.wake.clear()  # the round that follows clears it anyway; stop() sets it
            waits = [asyncio.ensure_future(other._idle.wait()), asyncio.ensure_future(self.wake.wait())]
            try:
                await asyncio.wait(waits, timeout=left, return_when=asyncio.FIRST_COMPLETED)
            finally:
                for waiting in waits:
                    waiting.cancel()

    def _failed(self, exc: Exception) -> None:
        self._set_busy(False)
        self.failures += 1
        if self.failures & (self.failures - 1) == 0:  # the 1st, 2nd, 4th, 8th... in a row
            first_line = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            self.log.warning(
                "%s (failed try %d in a row), work stays owed; next try in %.0f s: %s",
                self.what_failed(exc),
                self.failures,
                self.backoff(),
                first_line,
            )

    def _resumed(self) -> None:
        if self.failures:
            self.log.info("%s resumed after %d failed tries", self.job, self.failures)
        self.failures = 0

    async def run(self) -> None:
        listener = asyncio.create_task(self._listen()) if self.channel else None
        try:
            while not self._stopping:
                await self._wait_turn()
                if self._stopping:
                    break
                self.wake.clear()  # a wake-up from here on ends the idle wait below
                try:
                    claimed = await self.run_once()
                except self.outage_errors as exc:
                    self._failed(exc)
                    await self._sleep(self.backoff(), wake_cuts=False)
                    continue
                except Exception:  # keep the loop alive; the work stays owed
                    self._set_busy(False)
                    self.log.exception("%s round failed, work stays owed", self.job)
                    await self._sleep(self.retry_seconds, wake_cuts=False)
                    continue
                self._resumed()
                self._set_busy(claimed > 0)
                if claimed == 0:
                    await self._sleep(self.idle_seconds)
        finally:
            self._set_busy(False)
            if listener is not None:
                listener.cancel()
            await self.close()

    async def _sleep(self, seconds: float, *, wake_cuts: bool = True) -> None:
        """Wait `seconds`, or less when stopped (or woken, if `wake_cuts`)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + seconds
        while not self._stopping:
            left = deadline - loop.time()
            if left <= 0:
                return
            if not wake_cuts:
                self.wake.clear()
            try:
                await asyncio.wait_for(self.wake.wait(), left)
            except TimeoutError:
                return
            if wake_cuts:
                return

    async def _listen(self) -> None:
        """Wake up as soon as any process commits owed work (NOTIFY on `channel`)."""
        channel = self.channel
        while channel is not None and not self._stopping:
            try:
                async with await psycopg.AsyncConnection.connect(self.db.url, autocommit=True) as conn:
                    await conn.execute(sql.SQL("LISTEN {}").format(sql.Identifier(channel)))
                    async for _ in conn.notifies():
                        self.wake.set()
            except asyncio.CancelledError:
                raise
            except Exception:
                await asyncio.sleep(self.retry_seconds)
