"""Connection pools: one for writes and owner reads, one locked to the public role."""

from __future__ import annotations

import asyncio
import functools
import logging
import os
import select
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TypeVar

import psycopg
from pgvector.psycopg import register_vector_async
from psycopg import sql
from psycopg.rows import dict_row
from psycopg_pool import AsyncConnectionPool

from ..config import Settings
from .chunks import use_chunk_size
from .connection import AnyConn, Conn
from .embedded import EmbeddedPostgres
from .migrate import migrate
from .replicas import PublicReads, replicas_for

log = logging.getLogger("memorywiki.store")

T = TypeVar("T")

# Failures where PostgreSQL rolled the whole transaction back and running it again may well
# succeed (SQLSTATE 40P01, 40001): a deadlock with another save, a serialization failure.
RETRYABLE = (psycopg.errors.DeadlockDetected, psycopg.errors.SerializationFailure)

PUBLIC_ROLE = "memorywiki_public"


class PrivacyRoleMissing(RuntimeError):
    """Public reads must run as the restricted role; without it the server will not start."""


async def _configure_owner(conn: Conn, *, nice: int = 0) -> None:
    await register_vector_async(conn)
    if nice > 0:
        await lower_backend_priority(conn, nice)
    await conn.commit()


LOCAL_HOSTS = ("localhost", "127.0.0.1", "::1")


async def lower_backend_priority(conn: AnyConn, by: int) -> bool:
    """Lower the CPU priority of this connection's PostgreSQL backend by `by` (to 19 at most),
    when it runs on this machine as this user (the embedded database, a local one): then the
    work done there for background jobs (vector index inserts, graph edges) takes the CPU only
    when requests leave it. Elsewhere nothing changes; whether it did is returned."""
    host = conn.info.host or ""
    if not (host.startswith("/") or host in LOCAL_HOSTS):
        return False
    row = await (await conn.execute("SELECT pg_backend_pid() AS pid")).fetchone()
    if row is None:
        return False
    pid = row["pid"] if isinstance(row, dict) else row[0]
    try:
        if not Path(f"/proc/{pid}/comm").read_text().startswith("postgres"):
            return False  # a server in another namespace: that pid is not its backend
        os.setpriority(os.PRIO_PROCESS, pid, min(19, os.getpriority(os.PRIO_PROCESS, pid) + by))
    except OSError:  # another user's server, or no /proc
        return False
    return True


async def _configure_public(conn: AnyConn) -> None:
    await register_vector_async(conn)
    await conn.execute("SET hnsw.iterative_scan = relaxed_order")
    cur = await conn.execute(
        "SELECT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = %s) AND pg_has_role(current_user, %s, 'MEMBER') AS ok",
        (PUBLIC_ROLE, PUBLIC_ROLE),
    )
    row = await cur.fetchone()
    if not (row and (row["ok"] if isinstance(row, dict) else row[0])):
        raise PrivacyRoleMissing(
            f"the database role {PUBLIC_ROLE} is missing or not granted to {conn.info.user}; "
            "public reads would not be privacy-gated. Run the migrations as a role with CREATEROLE, "
            f"or create it by hand: CREATE ROLE {PUBLIC_ROLE} NOLOGIN; GRANT {PUBLIC_ROLE} TO {conn.info.user};"
        )
    await conn.execute(sql.SQL("SET ROLE {}").format(sql.Identifier(PUBLIC_ROLE)))
    await conn.commit()


def _has_input(conn: Conn) -> bool:
    """Whether the server sent something to an idle connection (or closed it): nothing else
    ever does, so this is how a connection broken by a PostgreSQL restart shows, locally."""
    try:
        poller = select.poll()
        poller.register(conn.fileno(), select.POLLIN | select.POLLPRI)
        return bool(poller.poll(0))
    except (OSError, ValueError, psycopg.Error):
        return True  # cannot tell: ask the server


async def check_without_round_trip(conn: Conn) -> None:
    """The public pool's check as a connection leaves it, with no round trip when nothing is wrong.

    An idle connection is never written to by PostgreSQL unless it is going away: on a restart
    or a terminated backend the server sends its goodbye and closes the socket, which the client
    sees without asking. Only then (or when closed) does this query the server as psycopg_pool's
    own check does; that fails, and the pool connects afresh. The query on every checkout cost a
    round trip per checkout, two per recall. (Tried for both pools before and withdrawn over
    chunks embedded twice by the scale-out bench; the cause turned out to be the bench's own
    count, 5138b1d. The owner pool keeps the query all the same: its requests are not the
    latency-bound ones.)"""
    if conn.closed or _has_input(conn):
        await AsyncConnectionPool.check_connection(conn)


class Database:
    """`owner` may touch every table; `public` runs as the restricted role, which row-level
    security and column grants limit to public rows and columns (migrations/0006_privacy.sql)."""

    def __init__(
        self,
        url: str,
        *,
        min_size: int = 1,
        max_size: int = 10,
        timeout: float = 10.0,
        backend_nice: int = 0,
        replica_urls: tuple[str, ...] = (),
        replica_max_lag: float = 10.0,
        replica_check_seconds: float = 1.0,
    ):
        """`backend_nice`: how much lower the owner pool's backends run (lower_backend_priority),
        for a process that only does background work. `replica_urls`: streaming replicas the
        public reads go to (store/replicas.py)."""
        self.url = url
        # check: a connection is tested as it leaves the pool, so after PostgreSQL restarts a
        # request gets a fresh connection instead of a dead one. timeout: how long a request
        # waits for a connection (then 503 with Retry-After, server/errors.py).
        self.owner = AsyncConnectionPool(
            url,
            connection_class=Conn,
            configure=functools.partial(_configure_owner, nice=backend_nice),
            kwargs={"row_factory": dict_row},
            check=AsyncConnectionPool.check_connection,
            min_size=min_size,
            max_size=max_size,
            open=False,
            timeout=timeout,
        )
        # Public reads autocommit: each of them is one statement (READ COMMITTED gives every
        # statement its own snapshot anyway), so a BEGIN and a COMMIT around it were two more
        # round trips per connection use. A block that needs a transaction opens one
        # (`async with conn.transaction()`).
        primary_public = AsyncConnectionPool(
            url,
            connection_class=Conn,
            configure=_configure_public,
            kwargs={"row_factory": dict_row, "autocommit": True},
            check=check_without_round_trip,
            min_size=min_size,
            max_size=max_size,
            open=False,
            timeout=timeout,
        )
        # Statements a request makes beside its own transaction, on the primary: the shared rate
        # limits and the record of a client's last write. Never nested inside each other, so a
        # few connections; apart from `owner`, so a request holding one never waits on itself.
        self.side = AsyncConnectionPool(
            url,
            connection_class=Conn,
            kwargs={"row_factory": dict_row, "autocommit": True},
            check=check_without_round_trip,
            min_size=1,
            max_size=4,
            open=False,
            timeout=timeout,
        )
        # Public reads: from a fit replica when there are any, else this primary's public pool.
        self.public = PublicReads(
            primary_public,
            side=self.side,
            replicas=replicas_for(replica_urls, max_size),
            max_lag=replica_max_lag,
            check_seconds=replica_check_seconds,
            configure=_configure_public,
            check=check_without_round_trip,
        )

    async def open(self) -> None:
        applied = await migrate(self.url)
        if applied:
            log.info("applied migrations: %s", ", ".join(applied))
        await self.owner.open(wait=True)
        async with self.owner.connection() as conn:  # fail fast, with the reason, not a pool timeout
            await _configure_public(conn)
            await conn.execute("RESET ROLE")
        await self.side.open(wait=True)
        try:
            await self.public.open(self.url)
        except BaseException:  # a replica URL that names another cluster: nothing stays open
            await self.close()
            raise

    async def close(self) -> None:
        await self.public.close()
        await self.side.close()
        await self.owner.close()

    async def write(self, work: Callable[[Conn], Awaitable[T]]) -> T:
        """Run `work(conn)` in one owner transaction, once more if PostgreSQL aborted it as a
        deadlock or serialization victim: the one place saves retry. `work` must be safe to
        run twice (it is: the first run was rolled back entirely)."""
        for attempt in (1, 2):
            try:
                async with self.owner.connection() as conn:
                    async with conn.transaction():
                        return await work(conn)
            except RETRYABLE as exc:
                if attempt == 2:
                    raise
                log.warning("transaction aborted (%s), retrying once", exc.sqlstate)
        raise AssertionError("unreachable")


async def open_database(
    settings: Settings, *, backend_nice: int = 0, replicas: bool = True
) -> tuple[Database, EmbeddedPostgres | None]:
    """DATABASE_URL when set, else the embedded PostgreSQL under the data dir (returned, so the
    caller stops it). `backend_nice`: see Database. `replicas`: public reads from
    MEMORYWIKI_REPLICA_URLS (a server's); a worker reads the primary only."""
    use_chunk_size(settings.chunk_size)  # every save and re-chunk of this process cuts this way
    embedded = None
    url = settings.database_url
    if not url:
        embedded = EmbeddedPostgres(settings.data_dir, shared_buffers=settings.pg_shared_buffers)
        await asyncio.to_thread(embedded.start)
        url = await asyncio.to_thread(embedded.database_url, "memorywiki")
    db = Database(
        url,
        timeout=settings.db_timeout,
        backend_nice=backend_nice,
        replica_urls=settings.replica_urls if replicas else (),
        replica_max_lag=settings.replica_max_lag,
        replica_check_seconds=settings.replica_check_seconds,
    )
    try:
        await db.open()
    except BaseException:
        if embedded is not None:
            await asyncio.to_thread(embedded.stop)
        raise
    return db, embedded
