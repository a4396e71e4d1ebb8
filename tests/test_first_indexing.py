"""The first indexing of a fresh database no longer deadlocks concurrent saves.

The benchmarks saw 12 of 40 saves answer HTTP 500: the worker built the HNSW indexes (SHARE
locks until commit) in the middle of saves holding ROW EXCLUSIVE on docs and wanting chunks.
Now the indexes are built CONCURRENTLY by the worker, and a save that PostgreSQL still picks
as a deadlock victim is run once more (Database.write).
"""

from __future__ import annotations

import asyncio
import threading
from collections import Counter

import httpx
import psycopg
import pytest

from tests.polling import wait_indexed, wait_until

SAVES = 200


def _body(i: int) -> dict:
    return {
        "hub": "rush",
        "title": f"Note {i}",
        "markdown": f"## Part one\n\nnarwhal {i} swims north.\n\n## Part two\n\nitem {i} of the rush.\n",
    }


@pytest.mark.slow
async def test_200_concurrent_saves_while_the_first_indexing_runs(live_server, settings, embedding_server):
    """Half the saves go first; the other half are sent the moment the worker's first
    embedding request arrives, so they are in flight while the first vectors are written
    and the space and its indexes come into being."""
    # idle connections expire on the client before uvicorn's 5 s keep-alive closes them, so a
    # request never goes out on a connection the server is closing (a ReadError, not a 5xx)
    async with httpx.AsyncClient(
        base_url=live_server.url, timeout=120, limits=httpx.Limits(max_connections=SAVES, keepalive_expiry=2)
    ) as http:
        token = (await http.post("/api/hubs", json={"slug": "rush"})).json()["owner_token"]
        auth = {"Authorization": f"Bearer {token}"}
        first = [asyncio.create_task(http.post("/api/docs", json=_body(i), headers=auth)) for i in range(SAVES // 2)]
        while not embedding_server.requests:
            await asyncio.sleep(0.01)
        second = [
            asyncio.create_task(http.post("/api/docs", json=_body(i), headers=auth)) for i in range(SAVES // 2, SAVES)
        ]
        responses = await asyncio.gather(*first, *second)
        statuses = Counter(r.status_code for r in responses)
        assert statuses == {201: SAVES}, [r.text for r in responses if r.status_code != 201][:3]
        ids = [r.json()["id"] for r in responses]
        for i, doc_id in enumerate(ids):  # every acknowledged save reads back as it was sent
            doc = (await http.get(f"/api/docs/{doc_id}")).json()
            assert (doc["title"], doc["markdown"]) == (f"Note {i}", _body(i)["markdown"])

    with psycopg.connect(settings.database_url) as conn:
        recorded = conn.execute("SELECT created_at FROM embedding_space").fetchone()[0]
        before, after = conn.execute(
            "SELECT count(*) FILTER (WHERE created_at < %s), count(*) FILTER (WHERE created_at > %s) FROM docs",
            (recorded, recorded),
        ).fetchone()
    # the embedding space was first recorded in the middle of the saves, not before or after
    assert before > 0 and after > 0, (before, after)

    wait_indexed(live_server, ids, timeout=180)

    def indexes_valid():
        with psycopg.connect(settings.database_url) as conn:
            return (
                conn.execute(
                    "SELECT count(*) FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid"
                    " WHERE c.relname LIKE '%%_embedding_hnsw' AND i.indisvalid"
                ).fetchone()[0]
                == 3
            )

    wait_until(indexes_valid, "the three HNSW indexes")
    recall = httpx.post(f"{live_server.url}/api/hub/rush/recall", json={"question": "narwhal 117 swims"}).json()
    assert recall["mode"] == "hybrid" and recall["results"][0]["title"] == "Note 117"


def test_a_save_chosen_as_deadlock_victim_is_retried_once(live_server, settings):
    """A real deadlock: a side transaction holds chunks and then asks for docs while a save
    holds docs and waits for chunks. PostgreSQL aborts the save (its deadlock_timeout is the
    shorter); the server runs it again and answers 201, not 500."""
    token = httpx.post(f"{live_server.url}/api/hubs", json={"slug": "locks"}).json()["owner_token"]
    auth = {"Authorization": f"Bearer {token}"}
    answer: dict = {}

    def save() -> None:
        answer["response"] = httpx.post(
            f"{live_server.url}/api/docs",
            headers=auth,
            timeout=60,
            json={"hub": "locks", "title": "Victim", "markdown": "saved after one retry\n"},
        )

    with psycopg.connect(settings.database_url) as side:
        side.execute("SET deadlock_timeout = '20s'")  # so the save's backend detects the cycle
        side.execute("LOCK TABLE chunks IN SHARE MODE")
        thread = threading.Thread(target=save)
        thread.start()

        def save_waits_for_chunks() -> bool:
            with psycopg.connect(settings.database_url, autocommit=True) as probe:
                return (
                    probe.execute(
                        "SELECT count(*) FROM pg_locks l JOIN pg_class c ON c.oid = l.relation"
                        " WHERE c.relname = 'chunks' AND NOT l.granted"
                    ).fetchone()[0]
                    > 0
                )

        wait_until(save_waits_for_chunks, "the save to wait for the chunks table")
        side.execute("LOCK TABLE docs IN SHARE MODE")  # the cycle: returns once the save is aborted
        side.commit()  # ...and lets its retry through
        thread.join(timeout=60)

    response = answer["response"]
    assert response.status_code == 201, response.text
    doc = httpx.get(f"{live_server.url}/api/docs/{response.json()['id']}").json()
    assert doc["title"] == "Victim" and doc["markdown"] == "saved after one retry\n"
    with psycopg.connect(settings.database_url) as conn:
        assert conn.execute("SELECT count(*) FROM docs WHERE title = 'Victim'").fetchone()[0] == 1


async def test_an_index_build_a_crash_interrupted_is_rebuilt(database_url):
    """A concurrent build killed midway leaves an INVALID index that IF NOT EXISTS would keep
    and the planner ignores; the next build drops it and builds it again."""
    from memorywiki.server.store.space import build_indexes

    assert await build_indexes(database_url) is False  # no space recorded yet: nothing to build
    with psycopg.connect(database_url, autocommit=True) as conn:
        conn.execute("INSERT INTO embedding_space (model, dim) VALUES ('openai:test-embed', 256)")
    assert await build_indexes(database_url) is True
    with psycopg.connect(database_url, autocommit=True) as conn:
        conn.execute("UPDATE pg_index SET indisvalid = false WHERE indexrelid = 'chunks_embedding_hnsw'::regclass")
    assert await build_indexes(database_url) is True
    with psycopg.connect(database_url, autocommit=True) as conn:
        rows = conn.execute(
            "SELECT c.relname, i.indisvalid, pg_get_indexdef(i.indexrelid) FROM pg_index i"
            " JOIN pg_class c ON c.oid = i.indexrelid WHERE c.relname LIKE '%_embedding_hnsw'"
            " ORDER BY 1"
        ).fetchall()
    assert [(name, valid) for name, valid, _ in rows] == [
        ("bundles_embedding_hnsw", True),
        ("chunks_embedding_hnsw", True),
        ("docs_embedding_hnsw", True),
    ]
    assert all("vector(256)" in definition and "hnsw" in definition for _, _, definition in rows)
