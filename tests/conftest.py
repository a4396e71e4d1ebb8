"""Shared fixtures: one embedded PostgreSQL for the session, a fresh database per test."""

from __future__ import annotations

import itertools
import os
import warnings
from collections.abc import Iterator
from contextlib import contextmanager

import psycopg
import pytest

# Tests import the waiting helpers from tests.polling; wait_indexed stays importable from here.
from tests.polling import wait_indexed, wait_until  # noqa: F401

warnings.filterwarnings("ignore", message=".*XDG_RUNTIME_DIR.*")

# The secret detector compiles its rule catalog once per cache directory (about 13 s of CPU) and
# finds it in the user's cache directory after that. Tests that give a CLI or server a HOME of
# its own would compile it again on their first write, so every process the tests start shares
# the one cache that the user's real HOME names.
os.environ.setdefault(
    "KF_RULE_CACHE_DIR",
    os.path.join(os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "kingfisher", "rule-cache"),
)

_db_counter = itertools.count()


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config):
    """Keep the file order below under `-n N --dist loadfile`: pytest-xdist would otherwise hand
    out the files with the most tests first, which left the one-test bench and fuzz files, the
    longest of all, to the end of the run, with one worker busy and the other idle."""
    if hasattr(config.option, "loadscopereorder"):
        config.option.loadscopereorder = False


def pytest_addoption(parser):
    parser.addoption(
        "--fast",
        action="store_true",
        help="the fast tier: only the tests that need no PostgreSQL, server or browser and are not marked slow",
    )


# What a test of the fast tier never asks for, directly or through another fixture: PostgreSQL
# (and so the app, a live server, the fixtures built on them) and Chromium. The list is short
# because every heavy fixture stands on one of these.
HEAVY_FIXTURES = frozenset({"pg_server", "chromium"})


def in_fast_tier(item) -> bool:
    return not item.get_closest_marker("slow") and HEAVY_FIXTURES.isdisjoint(getattr(item, "fixturenames", ()))


def pytest_collection_modifyitems(config, items):
    """Files holding slow tests first (in their usual order, and their tests in theirs), so the
    long ones start early and the workers finish together on short files. With --fast, only the
    fast tier."""
    if config.getoption("fast"):
        dropped = [item for item in items if not in_fast_tier(item)]
        items[:] = [item for item in items if in_fast_tier(item)]
        config.hook.pytest_deselected(items=dropped)
    slow_files = {item.path for item in items if item.get_closest_marker("slow")}
    items.sort(key=lambda item: item.path not in slow_files)


@pytest.fixture(scope="session")
def pg_server(tmp_path_factory):
    """An embedded PostgreSQL 18 + pgvector cluster, stopped when the session ends."""
    from memorywiki.server.store.embedded import EmbeddedPostgres

    server = EmbeddedPostgres(tmp_path_factory.mktemp("pgdata"))
    server.start()
    # A throwaway cluster need not survive a power cut: without fsync the ~500 test databases
    # no longer make the shutdown checkpoint (and every CREATE DATABASE) wait on a busy disk.
    with psycopg.connect(server._server.get_uri(), autocommit=True) as conn:
        for setting in ("fsync", "full_page_writes", "synchronous_commit"):
            conn.execute(f"ALTER SYSTEM SET {setting} = off")
        conn.execute("SELECT pg_reload_conf()")
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


@contextmanager
def fresh_database(pg_server, template_db) -> Iterator[str]:
    """A migrated database of its own, dropped when the block ends."""
    name = f"mw_test_{os.getpid()}_{next(_db_counter)}"
    with psycopg.connect(pg_server._server.get_uri(), autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}" TEMPLATE "{template_db}"')
    try:
        yield pg_server._server.get_uri(name)
    finally:
        # ~500 test databases of ~8 MB each filled the disk of a busy machine and took the
        # cluster down mid-suite: each goes when its test is done (FORCE: a pool may linger)
        with psycopg.connect(pg_server._server.get_uri(), autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture
def database_url(pg_server, template_db) -> Iterator[str]:
    """A fresh, migrated database for one test."""
    with fresh_database(pg_server, template_db) as url:
        yield url


@pytest.fixture(scope="session")
def embedding_server():
    """The local OpenAI-compatible embeddings server; the real openai client talks to it."""
    from tests.embedding_server import start_embedding_server

    server = start_embedding_server()
    yield server
    server.stop()


@pytest.fixture
def settings(database_url, embedding_server):
    """Settings for an app on a fresh database, embedding through the test server."""
    from memorywiki.server.config import Settings

    embedding_server.set_failing(False)
    embedding_server.reset()
    return Settings(
        database_url=database_url,
        embedder="openai",
        openai_model="test-embed",
        openai_api_key="test-key",
        openai_base_url=embedding_server.base_url,
        embed_timeout=5.0,
        embed_max_retries=0,
        public_url="http://testserver",
        suggest_debounce=0.0,
    )


@pytest.fixture
def make_client(settings):
    """Build a TestClient (lifespan included) for these settings, with overrides."""
    from dataclasses import replace

    from memorywiki.server.app import create_app
    from starlette.testclient import TestClient

    clients = []

    def make(**overrides):
        client = TestClient(create_app(replace(settings, **overrides)))
        client.__enter__()
        clients.append(client)
        return client

    yield make
    for client in reversed(clients):
        client.__exit__(None, None, None)


@pytest.fixture
def client(make_client):
    return make_client()


@contextmanager
def serving(settings, *, public_url: bool = True, **uvicorn_options):
    """A real uvicorn server for these settings on 127.0.0.1 and a free port, until the block ends
    (`uvicorn_options`: e.g. the log configuration). `public_url`: the server's own URL becomes
    MEMORYWIKI_PUBLIC_URL; False leaves the settings' as it is (None: links follow the Host).
    uvicorn reads no forwarded headers: the app does, from the proxies its settings trust, as
    under `memorywiki serve`."""
    import socket
    import threading
    from dataclasses import replace

    import httpx
    import uvicorn
    from memorywiki.server.app import create_app

    sock = socket.socket()
    # uvicorn leaves a socket it is handed as it is; without TCP_NODELAY every response
    # would wait ~40 ms for the client's delayed ACK.
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    url = f"http://127.0.0.1:{port}"
    app = create_app(replace(settings, public_url=url) if public_url else settings)
    options = {"log_level": "warning", "proxy_headers": False, **uvicorn_options}
    server = uvicorn.Server(uvicorn.Config(app, lifespan="on", **options))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()

    def healthy() -> bool:
        try:
            return httpx.get(f"{url}/healthz", timeout=1).status_code == 200
        except httpx.HTTPError:
            return False

    wait_until(healthy, "the test server to start")

    class Live:
        pass

    live = Live()
    live.url = url
    live.app = app
    try:
        yield live
    finally:
        server.should_exit = True
        thread.join(timeout=15)
        sock.close()


@pytest.fixture
def live_server(settings):
    """A real uvicorn server on 127.0.0.1 and a free port, for CLI and MCP tests."""
    with serving(settings) as live:
        yield live


@pytest.fixture
def second_live_server(pg_server, template_db, settings):
    """Another real server, on a fresh database of its own (a move from one server to another)."""
    from dataclasses import replace

    with fresh_database(pg_server, template_db) as url, serving(replace(settings, database_url=url)) as live:
        yield live


@pytest.fixture(scope="session")
def chromium() -> str:
    """The Chromium binary for browser tests. Outside CI a missing browser skips them with a
    one-line reason; in CI (CI=1, set by .ci/run) it fails them, so they cannot silently vanish."""
    import shutil

    path = shutil.which("chromium") or shutil.which("chromium-browser")
    if path is None:
        if os.environ.get("CI"):
            pytest.fail(
                "chromium is not installed, and CI must run the browser tests (.ci/run installs it)", pytrace=False
            )
        pytest.skip("chromium is not installed (Debian: apt-get install chromium)")
    return path


@pytest.fixture(scope="session")
def smtp_server_session():
    """A real SMTP server on loopback (aiosmtpd, tests/smtp_server.py) that keeps the mail it gets."""
    from tests.smtp_server import SmtpServer

    server = SmtpServer()
    yield server
    server.stop()


@pytest.fixture
def smtp_server(smtp_server_session):
    """The SMTP server, its inbox emptied and refusals cleared for this test."""
    smtp_server_session.reset()
    yield smtp_server_session
    smtp_server_session.reset()


@pytest.fixture(scope="session")
def chat_server_session():
    """The local OpenAI-compatible chat server (tests/chat_server.py) for curation tests."""
    from tests.chat_server import start_chat_server

    server = start_chat_server()
    yield server
    server.stop()


@pytest.fixture
def chat_server(chat_server_session):
    """The chat server, its script, counters and outage flag reset for this test."""
    chat_server_session.reset()
    yield chat_server_session
    chat_server_session.reset()


# Debian's chromium, driven by Playwright (never `playwright install`: nothing is downloaded).
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
]


@pytest.fixture(scope="module")
def browser(chromium):
    """A headless Chromium under Playwright for one test module (module scope: Playwright's
    own event loop is gone before another module's async tests run)."""
    from playwright.sync_api import sync_playwright

    playwright = sync_playwright().start()
    instance = playwright.chromium.launch(executable_path=chromium, args=CHROMIUM_FLAGS)
    yield instance
    instance.close()
    playwright.stop()
