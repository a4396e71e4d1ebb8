"""The connection pools hand out working connections: one that PostgreSQL dropped while it sat
idle in the pool (a restart, an administrator, an idle timeout) is replaced before a request
gets it, although the public pool no longer asks the server on every checkout (server/store/db.py)."""

from __future__ import annotations

import asyncio

import psycopg
from memorywiki.server.store.db import PUBLIC_ROLE, Database


def test_a_connection_dropped_while_idle_is_replaced_before_a_request_gets_it(database_url):
    async def run() -> None:
        db = Database(database_url, min_size=1, max_size=1)
        await db.open()
        try:
            for pool, role in ((db.public, PUBLIC_ROLE), (db.owner, None)):
                async with pool.connection() as conn:
                    pid = (await (await conn.execute("SELECT pg_backend_pid() AS pid")).fetchone())["pid"]
                with psycopg.connect(database_url, autocommit=True) as admin:  # waits until it is gone
                    assert admin.execute("SELECT pg_terminate_backend(%s, 10000)", (pid,)).fetchone()[0]
                async with pool.connection() as conn:
                    row = await (
                        await conn.execute("SELECT pg_backend_pid() AS pid, current_user AS who, 1 + 1 AS two")
                    ).fetchone()
                assert row["two"] == 2 and row["pid"] != pid
                if role:
                    assert row["who"] == role  # the fresh connection is privacy-gated like the old one
                async with pool.connection() as conn:  # and a healthy idle one is handed out as it is
                    again = (await (await conn.execute("SELECT pg_backend_pid() AS pid")).fetchone())["pid"]
                assert again == row["pid"]
        finally:
            await db.close()

    asyncio.run(run())


def test_a_public_checkout_asks_the_server_nothing_when_the_connection_is_healthy(database_url, tmp_path):
    """Recall checks a connection out of the public pool twice per question: a check query on
    each checkout was two round trips more per recall. The protocol trace of the connection
    (libpq's own) holds the statements the request ran, and nothing else."""

    async def run() -> list[str]:
        db = Database(database_url, min_size=1, max_size=1)
        await db.open()
        trace = open(tmp_path / "trace", "w")
        try:
            async with db.public.connection() as conn:
                conn.pgconn.trace(trace.fileno())
            for _ in range(3):
                async with db.public.connection() as conn:
                    assert (await (await conn.execute("SELECT %s::int AS one", (1,))).fetchone())["one"] == 1
            async with db.public.connection() as conn:
                conn.pgconn.untrace()
        finally:
            trace.close()
            await db.close()
        return (tmp_path / "trace").read_text().splitlines()

    sent = [line.split("\t")[3].strip() for line in asyncio.run(run()) if line.split("\t")[1:2] == ["F"]]
    assert sent.count("Sync") + sent.count("Query") == 3, sent  # one per statement, no check queries
