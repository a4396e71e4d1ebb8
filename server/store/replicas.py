"""Public reads from streaming replicas (MEMORYWIKI_REPLICA_URLS), with the primary behind them.

Every public read (recall, pages, twins, llms.txt, the graph, digests, related pages, search)
takes its connection from `Database.public`, a PublicReads: a replica that is fit, taken in
turn, else the primary's public pool. Writes, claims, NOTIFY and every owner, member or reader
read use the owner pool, on the primary only. Row-level security and the restricted role travel
with the data to a physical replica, so a replica's public pool is gated exactly as the primary's.

A replica is fit when its last check (every MEMORYWIKI_REPLICA_CHECK_SECONDS) found it
answering, in recovery (a standby: one promoted or pointed at another server is never read)
and no more than MEMORYWIKI_REPLICA_MAX_LAG seconds behind. The lag is measured on the primary's
clock: each check notes the primary's WAL insert position, and a replica that has replayed up
to R lags by the time since the primary first wrote past R. /healthz shows each replica's state.

Read-your-writes: a request that changed something records the primary's WAL position under
its client's keys (the sha256 of each credential it carried, and its address) in recent_writes,
before its answer leaves (web/replicas.py). A later request carrying any of those keys, to
whichever server, reads from a replica only once that replica has replayed past the position,
else from the primary. When the primary is unreachable the lookup is skipped: reads go on from
the replicas, and writes fail as they would without them.

A replica that dies mid-request fails that request (it was in flight); it is marked down at
once and later reads go to the others or to the primary without waiting for the next check.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import time
from collections import deque
from collections.abc import AsyncIterator, Callable, Coroutine
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

import psycopg
from psycopg.conninfo import conninfo_to_dict
from psycopg.rows import dict_row
from psycopg_pool import AsyncConnectionPool, PoolTimeout

from .connection import AnyConn, Conn

log = logging.getLogger("memorywiki.store")

ACQUIRE_TIMEOUT = 1.0  # seconds a read waits for a replica's connection before it reads the primary
CONNECT_TIMEOUT = 3  # seconds a check waits for a replica to answer


class ReplicaMismatch(RuntimeError):
    """A replica URL that names another cluster or database: the server will not start on it."""


def replica_name(url: str, index: int) -> str:
    """ "replica N (host:port/db)", never a password."""
    try:
        info = conninfo_to_dict(url)
    except psycopg.ProgrammingError:
        return f"replica {index + 1}"
    where = f"{info.get('host') or 'localhost'}:{info.get('port') or 5432}/{info.get('dbname') or ''}"
    return f"replica {index + 1} ({where})"


def lsn_int(lsn: str | None) -> int | None:
    """A WAL position ("16/B374D848") as a number, comparable."""
    if not lsn:
        return None
    high, _, low = str(lsn).partition("/")
    return (int(high, 16) << 32) + int(low, 16)


@dataclass
class ReadState:
    """A request's keys (sha256 of each credential, and the client's address) and, once looked
    up, the WAL position of its client's last write (0: none known)."""

    keys: tuple[str, ...]
    lsn: int | None = None


# the current request's ReadState, set by web/replicas.py (None outside a request: no write to wait for)
READER: ContextVar[ReadState | None] = ContextVar("memorywiki_reader", default=None)


@dataclass
class Replica:
    url: str
    name: str
    pool: AsyncConnectionPool[Conn]
    state: str = "starting"  # ok, lagging, down, read-write, starting
    error: str | None = None
    replay_lsn: int = 0
    lag_seconds: float | None = None
    checked_at: float = 0.0
    stale_pool: bool = True  # its pool must be opened afresh before it is read (at start, after down)
    probe: psycopg.Connection[Any] | None = None  # the checks' own connection, used from a thread
    served: int = 0

    @property
    def fit(self) -> bool:
        return self.state == "ok"

    def down(self, why: str) -> None:
        self.stale_pool = True
        if self.state != "down":
            log.warning("%s is down (%s): public reads go to the other replicas or the primary", self.name, why)
        self.state, self.error = "down", why

    def report(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "state": self.state,
            "lag_seconds": None if self.lag_seconds is None else round(self.lag_seconds, 3),
            "reads": self.served,
            **({"error": self.error} if self.error else {}),
        }


PROBE = """
SELECT pg_is_in_recovery() AS standby, pg_last_wal_replay_lsn()::text AS replay,
       (SELECT system_identifier FROM pg_control_system()) AS system, current_database() AS dbname
"""
PRIMARY = """
SELECT pg_current_wal_insert_lsn()::text AS lsn,
       (SELECT system_identifier FROM pg_control_system()) AS system, current_database() AS dbname
"""
LAST_WRITE = """
SELECT max(lsn)::text AS lsn FROM recent_writes
WHERE key = ANY(%s) AND at > now() - make_interval(secs => %s)
"""
RECORD = """
INSERT INTO recent_writes (key, lsn)
SELECT k, pg_current_wal_insert_lsn() FROM unnest(%s::text[]) AS k
ON CONFLICT (key) DO UPDATE SET lsn = excluded.lsn, at = now()
"""


async def record_write(conn: Conn, keys: list[str]) -> None:
    """The primary's WAL position now, as these keys' last write (the write has committed)."""
    await conn.execute(RECORD, (keys,))


async def forget_old_writes(conn: Conn, seconds: float) -> None:
    await conn.execute("DELETE FROM recent_writes WHERE at < now() - make_interval(secs => %s)", (seconds,))


@dataclass
class PublicReads:
    """What `Database.public` is: `connection()` gives a public (restricted-role) connection from
    a fit replica, or from the primary's public pool."""

    primary: AsyncConnectionPool[Conn]
    side: AsyncConnectionPool[Conn] | None = None  # the primary's side pool, for recent_writes
    replicas: list[Replica] = field(default_factory=list)
    max_lag: float = 10.0
    check_seconds: float = 1.0
    configure: Callable[[AnyConn], Coroutine[Any, Any, None]] | None = None
    check: Callable[[Conn], Coroutine[Any, Any, None]] | None = None  # as a connection leaves a replica's pool
    primary_reads: int = 0
    primary_up: bool = True  # as the last check found it: while it is down, no lookup waits on it
    _turn: itertools.count[int] = field(default_factory=itertools.count)
    _history: deque[tuple[float, int]] = field(default_factory=deque)  # (when, primary's WAL position)
    _checker: asyncio.Task[None] | None = None

    async def _last_write(self) -> int:
        """The WAL position of this request's client's last write (0: none, or none found)."""
        reader = READER.get()
        if reader is None or not reader.keys or self.side is None or not self.primary_up:
            return 0
        if reader.lsn is None:
            reader.lsn = 0
            try:
                async with self.side.connection(timeout=ACQUIRE_TIMEOUT) as conn:
                    row = await (await conn.execute(LAST_WRITE, (list(reader.keys), self.max_lag * 2))).fetchone()
                reader.lsn = lsn_int(row["lsn"] if row else None) or 0
            except (psycopg.Error, PoolTimeout) as exc:  # the primary is away: the replicas still read
                log.debug("recent writes not read (%s)", type(exc).__name__)
        return reader.lsn

    async def pick(self) -> Replica | None:
        """A fit replica that has replayed this client's last write, in turn; None: the primary."""
        fit = [r for r in self.replicas if r.fit]
        if not fit:
            return None
        wrote = await self._last_write()
        if wrote:
            fit = [r for r in fit if r.replay_lsn >= wrote]
            if not fit:
                return None
        return fit[next(self._turn) % len(fit)]

    @contextlib.asynccontextmanager
    async def connection(self) -> AsyncIterator[Conn]:
        replica = await self.pick() if self.replicas else None
        async with contextlib.AsyncExitStack() as stack:
            conn: Conn | None = None
            if replica is not None:
                try:
                    conn = await stack.enter_async_context(replica.pool.connection(timeout=ACQUIRE_TIMEOUT))
                    replica.served += 1
                except PoolTimeout:
                    pass  # busy or dying: this read goes to the primary; the next check says which
                except psycopg.OperationalError as exc:
                    replica.down(_why(exc))
            if conn is None:
                replica = None
                self.primary_reads += 1
                conn = await stack.enter_async_context(self.primary.connection())
            try:
                yield conn
            except psycopg.OperationalError as exc:
                if replica is not None and (conn.broken or conn.closed):
                    replica.down(_why(exc))  # in flight: this read fails, the next ones go elsewhere
                raise

    def report(self) -> list[dict[str, Any]]:
        return [r.report() for r in self.replicas]

    # -- opening, checking, closing ---------------------------------------------------------

    async def open(self, primary_url: str) -> None:
        """Check every replica once (a replica of another cluster or database stops the start),
        open the pools of those that answer, and start checking them in the background."""
        await self.primary.open(wait=True)
        if not self.replicas:
            return
        system, dbname = await _primary_identity(primary_url)
        for replica in self.replicas:
            await self._check(replica, system=system, dbname=dbname)
        self._checker = asyncio.create_task(self._check_loop(primary_url, system, dbname))

    async def close(self) -> None:
        if self._checker is not None:
            self._checker.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._checker
        for replica in self.replicas:
            if replica.probe is not None:
                await asyncio.to_thread(replica.probe.close)
            await replica.pool.close()
        await self.primary.close()

    async def _check_loop(self, primary_url: str, system: int | None, dbname: str) -> None:
        probe: AnyConn | None = None
        while True:
            await asyncio.sleep(self.check_seconds)
            try:
                if probe is None or probe.closed or probe.broken:
                    probe = await psycopg.AsyncConnection.connect(
                        primary_url, autocommit=True, connect_timeout=CONNECT_TIMEOUT
                    )
                row = await (await probe.execute(PRIMARY)).fetchone()
                self.primary_up = True
                self._history.append((time.monotonic(), lsn_int(row[0] if row else None) or 0))
                if self.side is not None and len(self._history) % 30 == 0:
                    async with self.side.connection(timeout=ACQUIRE_TIMEOUT) as conn:
                        await forget_old_writes(conn, self.max_lag * 2)
            except (psycopg.Error, PoolTimeout, OSError) as exc:  # the primary restarts: keep serving
                self.primary_up = False
                log.debug("the primary's WAL position was not read (%s)", type(exc).__name__)
            while self._history and self._history[0][0] < time.monotonic() - self.max_lag * 3:
                self._history.popleft()
            for replica in self.replicas:
                try:
                    await self._check(replica, system=system, dbname=dbname)
                except ReplicaMismatch as exc:
                    replica.state, replica.error = "down", str(exc)
                except Exception as exc:  # a check must never end the loop
                    replica.down(f"check failed: {type(exc).__name__}")

    def lag(self, replayed: int) -> float:
        """Seconds since the primary first wrote past `replayed`, as the checks saw it (0: none)."""
        for when, position in self._history:
            if position > replayed:
                return time.monotonic() - when
        return 0.0

    async def _check(self, replica: Replica, *, system: int | None, dbname: str) -> None:
        try:
            row = await asyncio.to_thread(_probe, replica)
        except (psycopg.Error, OSError) as exc:
            replica.down(_why(exc))
            return
        assert row is not None
        standby, replay, their_system, their_db = row
        if system is not None and their_system != system:
            raise ReplicaMismatch(
                f"MEMORYWIKI_REPLICA_URLS: {replica.name} is not a replica of the primary's cluster "
                f"(system identifier {their_system}, the primary's {system}); fix or remove that URL"
            )
        if their_db != dbname:
            raise ReplicaMismatch(
                f"MEMORYWIKI_REPLICA_URLS: {replica.name} names database {their_db!r}, the primary's is "
                f"{dbname!r}; a replica URL names the same database"
            )
        replica.checked_at = time.monotonic()
        if not standby:
            if replica.state != "read-write":
                log.warning("%s accepts writes (promoted, or not a standby): it is no longer read", replica.name)
            replica.state, replica.error, replica.lag_seconds = "read-write", "not in recovery: accepts writes", None
            replica.stale_pool = True
            return
        replica.replay_lsn = lsn_int(replay) or 0
        replica.lag_seconds = self.lag(replica.replay_lsn)
        if replica.lag_seconds > self.max_lag:
            if replica.state != "lagging":
                log.warning(
                    "%s lags %.1f s behind the primary: skipped until it catches up", replica.name, replica.lag_seconds
                )
            replica.state, replica.error = "lagging", f"{replica.lag_seconds:.1f} s behind (bound {self.max_lag:g} s)"
            return
        if replica.stale_pool:
            await self._reopen(replica)
            if replica.state == "down":
                return
        replica.state, replica.error = "ok", None

    async def _reopen(self, replica: Replica) -> None:
        """A fresh pool for a replica that (re)appears: the old one's connections are dead."""
        old = replica.pool
        replica.pool = AsyncConnectionPool(
            replica.url,
            connection_class=Conn,
            configure=self.configure,
            kwargs={"row_factory": dict_row, "autocommit": True, "connect_timeout": CONNECT_TIMEOUT},
            check=self.check or AsyncConnectionPool.check_connection,
            min_size=old.min_size,
            max_size=old.max_size,
            open=False,
            timeout=ACQUIRE_TIMEOUT,
            reconnect_timeout=10.0,
        )
        with contextlib.suppress(Exception):
            await old.close(timeout=0.5)
        try:
            await replica.pool.open(wait=True, timeout=CONNECT_TIMEOUT * 2)
        except (PoolTimeout, psycopg.Error) as exc:
            replica.down(f"its pool did not open: {type(exc).__name__}")
            return
        replica.stale_pool = False
        log.info("%s reads public pages", replica.name)


def _probe(replica: Replica) -> Any:
    """One check's query on the replica (in a thread: an asynchronous connect to a standby that
    had just restarted kept failing with "starting up" long after it accepted connections)."""
    if replica.probe is None or replica.probe.closed or replica.probe.broken:
        replica.probe = psycopg.connect(replica.url, autocommit=True, connect_timeout=CONNECT_TIMEOUT)
    return replica.probe.execute(PROBE).fetchone()


def _why(exc: BaseException) -> str:
    lines = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {lines[0] if lines else ''}"[:200]


async def _primary_identity(url: str) -> tuple[int | None, str]:
    async with await psycopg.AsyncConnection.connect(url, autocommit=True) as conn:
        row = await (await conn.execute(PRIMARY)).fetchone()
    assert row is not None
    return row[1], row[2]


def replicas_for(urls: tuple[str, ...], max_size: int) -> list[Replica]:
    """One Replica per URL, its pool a placeholder until its first good check opens the real one."""
    return [
        Replica(
            url=url,
            name=replica_name(url, i),
            pool=AsyncConnectionPool(url, connection_class=Conn, open=False, min_size=1, max_size=max_size),
        )
        for i, url in enumerate(urls)
    ]
