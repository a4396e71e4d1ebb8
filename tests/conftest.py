"""Shared fixtures: one embedded PostgreSQL for the session, a fresh database per test."""

from __future__ import annotations

import itertools
import os
import warnings
from pathlib import Path

import psycopg
import pytest

warnings.filterwarnings("ignore", message=".*XDG_RUNTIME_DIR.*")

SHARED = Path(__file__).resolve().parents[1].parent / "shared"
_db_counter = itertools.count()


@pytest.fixture(scope="session")
def pg_server(tmp_path_factory):
    """An embedded PostgreSQL 18 + pgvector cluster, stopped when the session ends."""
    from memorywiki.server.store.embedded import EmbeddedPostgres

    server = EmbeddedPostgres(tmp_path_factory.mktemp("pgdata"))
    server.start()
    yield server
    server.stop()


@pytest.fixture(scope="session")
def template_db(pg_server) -> str:
    """A migrated database that each test clones (CREATE DATABASE ... TEMPLATE is fast)."""
    import asyncio

    from memorywiki.server.store.migrate import migrate

    url = pg_server.database_url("mw_template")
    asyncio.run(migrate(url))
    return "mw_template"


@pytest.fixture
def database_url(pg_server, template_db) -> str:
    """A fresh, migrated database for one test."""
    name = f"mw_test_{os.getpid()}_{next(_db_counter)}"
    with psycopg.connect(pg_server._server.get_uri(), autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}" TEMPLATE "{template_db}"')
    return pg_server._server.get_uri(name)
