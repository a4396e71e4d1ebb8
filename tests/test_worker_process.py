"""`memorywiki worker` as a separate process: it indexes what the server saved, and a
kill -9 in the middle of an embedding call leaves the work owed, never lost."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import psycopg
import pytest

from tests.polling import wait_until

pytestmark = pytest.mark.slow  # worker subprocesses

MEMORYWIKI = str(Path(sys.executable).parent / "memorywiki")


def _owed(database_url: str) -> list[tuple]:
    with psycopg.connect(database_url) as conn:
        return conn.execute(
            "SELECT id, claimed_by FROM docs WHERE source_hash IS DISTINCT FROM embedded_hash ORDER BY id"
        ).fetchall()


def _start_worker(settings, embedding_server) -> subprocess.Popen:
    env = {
        **os.environ,
        "DATABASE_URL": settings.database_url,
        "MEMORYWIKI_EMBEDDER": "openai",
        "MEMORYWIKI_OPENAI_MODEL": settings.openai_model,
        "MEMORYWIKI_EMBED_RETRIES": "0",
        "OPENAI_API_KEY": "test-key",
        "OPENAI_BASE_URL": embedding_server.base_url,
    }
    return subprocess.Popen(
        [MEMORYWIKI, "worker"], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )


def _saved(client, ids: list[str]) -> dict[str, tuple]:
    docs = {i: client.get(f"/api/docs/{i}").json() for i in ids}
    return {i: (doc["title"], doc["markdown"], doc["version"]) for i, doc in docs.items()}


@pytest.fixture
def external(make_client):
    """A server that leaves indexing to a separate worker process."""
    client = make_client(in_process_worker=False)
    token = client.post("/api/hubs", json={"slug": "ops"}).json()["owner_token"]
    auth = {"Authorization": f"Bearer {token}"}
    ids = []
    for i in range(4):
        body = {
            "hub": "ops",
            "title": f"Runbook {i}",
            "markdown": f"# Runbook {i}\n\n## Restart\n\nRestart service number {i} with care.\n",
        }
        response = client.post("/api/docs", json=body, headers=auth)
        assert response.status_code == 201
        ids.append(response.json()["id"])
    return client, ids


def test_worker_process_indexes_saved_docs(external, settings, embedding_server):
    client, ids = external
    assert client.get("/healthz").json()["owed"] == len(ids)
    worker = _start_worker(settings, embedding_server)
    try:
        wait_until(lambda: not _owed(settings.database_url), "the worker to index")
        result = client.post(
            "/api/hub/ops/recall", json={"question": "restart service number 2", "hybrid": False}
        ).json()
        assert result["mode"] == "vector"
        assert result["results"][0]["title"] == "Runbook 2"
        # the worker process curates too: every doc is enriched, extractively here
        wait_until(lambda: client.get("/healthz").json()["curation"]["owed_enrichments"] == 0, "the worker to enrich")
        assert client.get(f"/api/docs/{ids[0]}/enrichment").json()["status"] == "extractive"
    finally:
        worker.send_signal(signal.SIGTERM)
        assert worker.wait(timeout=15) == 0, worker.stdout.read()


def test_kill_9_mid_index_leaves_work_owed_and_a_restart_finishes_it(external, settings, embedding_server):
    client, ids = external
    # each doc as saved (title, markdown, version): the raw view would also show the enrichment
    # sections that the restarted worker may add once it has indexed, which is not a change to them
    before = _saved(client, ids)
    embedding_server.set_delay(30)
    worker = _start_worker(settings, embedding_server)
    try:
        wait_until(lambda: any(claimed for _, claimed in _owed(settings.database_url)), "a claim")
        wait_until(lambda: embedding_server.requests, "the embedding request to be in flight")
        worker.send_signal(signal.SIGKILL)
        worker.wait(timeout=10)
    finally:
        embedding_server.set_delay(0)
        if worker.poll() is None:
            worker.kill()

    # Nothing lost or half-written: every doc is intact and still owed.
    assert [doc_id for doc_id, _ in _owed(settings.database_url)] == sorted(ids)
    assert _saved(client, ids) == before

    # A new worker picks the claims up at once (the dead session's lease lapses with it).
    restarted = _start_worker(settings, embedding_server)
    try:
        wait_until(lambda: not _owed(settings.database_url), "the restarted worker to finish")
    finally:
        restarted.send_signal(signal.SIGTERM)
        restarted.wait(timeout=15)
    assert client.get("/healthz").json()["owed"] == 0
    assert _saved(client, ids) == before


# ---------------------------------------------------------------- the server's own child worker


def _gone(pid: int) -> bool:
    """Exited (a zombie not yet reaped by its new parent counts as exited)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return True
    return state in ("Z", "X")


def _database_backends(database_url: str) -> tuple[int, list[int]]:
    """(the CPU priority of a backend of this test's own, every client backend of the database).
    The priority is read while that connection is open: once closed, its backend exits."""
    with psycopg.connect(database_url) as conn:
        own = conn.execute("SELECT pg_backend_pid()").fetchone()[0]
        normal = os.getpriority(os.PRIO_PROCESS, own)
        pids = [
            r[0]
            for r in conn.execute(
                "SELECT pid FROM pg_stat_activity WHERE datname = current_database()"
                " AND backend_type = 'client backend' AND pid <> pg_backend_pid()"
            ).fetchall()
        ]
    return normal, pids


def _priority(pid: int) -> int:
    """A backend's CPU priority; one that has exited since it was listed counts as normal."""
    try:
        return os.getpriority(os.PRIO_PROCESS, pid)
    except ProcessLookupError:
        return -20


def test_the_server_can_index_in_a_child_process(make_client, settings):
    """MEMORYWIKI_WORKER=process (the default with the local embedder): indexing runs in a
    child process at a lower CPU priority, its PostgreSQL backends too (the database is local),
    and it stops with the server."""
    client = make_client(worker_process=True)
    health = client.get("/healthz").json()
    assert health["worker"] == "process"
    child = client.app.state.mw.worker_process.pid
    assert child != os.getpid() and not _gone(child)
    assert os.getpriority(os.PRIO_PROCESS, child) > os.getpriority(os.PRIO_PROCESS, 0)
    token = client.post("/api/hubs", json={"slug": "kids"}).json()["owner_token"]
    doc = client.post(
        "/api/docs",
        json={"hub": "kids", "title": "Runbook", "markdown": "Restart the pump."},
        headers={"Authorization": f"Bearer {token}"},
    ).json()
    wait_until(lambda: client.get("/healthz").json()["owed"] == 0, "the child worker to index")
    assert (
        client.post("/api/hub/kids/recall", json={"question": "restart pump"}).json()["results"][0]["doc_id"]
        == doc["id"]
    )
    normal, backends = _database_backends(settings.database_url)
    niced = [pid for pid in backends if _priority(pid) > normal]
    assert niced, "no backend of the database runs below the server's priority"
    client.__exit__(None, None, None)
    assert _gone(child)


def test_the_child_worker_stops_when_its_server_is_killed(settings):
    """A kill -9 of the server sends its child nothing: the child notices and exits, so no
    orphan keeps indexing (or holding the model in memory) after the server is gone."""
    import json
    from dataclasses import asdict

    payload = json.dumps({k: str(v) if isinstance(v, Path) else v for k, v in asdict(settings).items()})
    parent = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import json, sys, time\n"
            "from pathlib import Path\n"
            "from memorywiki.server.config import Settings\n"
            "from memorywiki.server.worker import WorkerProcess\n"
            "data = json.loads(sys.argv[1]); data['data_dir'] = Path(data['data_dir'])\n"
            "child = WorkerProcess(Settings(**data), data['database_url'])\n"
            "child.start(); print(child.pid, flush=True); time.sleep(120)\n",
            payload,
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        child = int(parent.stdout.readline())
        wait_until(
            lambda: "memorywiki.server.worker" in Path(f"/proc/{child}/cmdline").read_text(),
            "the child worker to start",
        )
        parent.send_signal(signal.SIGKILL)
        parent.wait(timeout=10)
        wait_until(lambda: _gone(child), "the orphaned child worker to exit")
    finally:
        if parent.poll() is None:
            parent.kill()


def test_the_servers_child_curates_and_the_server_process_does_none_of_it(make_client, chat_server):
    """Curation goes with the indexing into the child: enriching a 5 MB page is seconds of CPU
    (pure Python when extractive) that, in the server's process, held up every request
    (bench/results/underload.md). With the child stopped (SIGSTOP), the server's own process
    leaves the doc's enrichment owed and never asks the chat model; resumed, the child does it,
    through the model (LLM mode works there: the settings, key included, reach it)."""
    import json
    import time

    from tests.test_curation import DOC, VALID

    client = make_client(
        worker_process=True,
        llm_model="test-chat",
        llm_base_url=chat_server.base_url,
        curation_vector_grace=0.0,
        curation_retry_seconds=0.2,
    )
    assert client.get("/healthz").json()["curation"]["runs_in"] == "process"
    chat_server.script(json.dumps(VALID))
    child = client.app.state.mw.worker_process.pid
    os.kill(child, signal.SIGSTOP)
    try:
        token = client.post("/api/hubs", json={"slug": "cur"}).json()["owner_token"]
        doc = client.post(
            "/api/docs",
            json={"hub": "cur", "title": "Recall on PostgreSQL", "markdown": DOC},
            headers={"Authorization": f"Bearer {token}"},
        ).json()["id"]
        # a curator in this process would claim the doc within a round (1 s idle, no vector
        # grace) and ask the model; give it several rounds
        deadline = time.monotonic() + 4.0
        while time.monotonic() < deadline:
            assert chat_server.calls == 0, "the server's own process asked the chat model"
            assert client.get("/healthz").json()["curation"]["owed_enrichments"] == 1
            time.sleep(0.2)
    finally:
        os.kill(child, signal.SIGCONT)
    wait_until(
        lambda: client.get(f"/api/docs/{doc}/enrichment").json().get("status") == "model",
        "the child to enrich the doc through the chat model",
    )
    assert chat_server.calls == 1
    assert client.get("/healthz").json()["curation"]["enriched_by_model"] == 1
