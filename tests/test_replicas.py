"""Public reads from a real streaming replica (MEMORYWIKI_REPLICA_URLS): one replica of the tests'
embedded cluster per module (pg_basebackup, tests/replica_cluster.py), each test on a fresh
database the replica replays. Privacy holds on the replica; a writer reads its write at once
and a stranger within the lag; a replica that stops, lags or takes writes is skipped and
/healthz says so; a replica killed under load costs only the reads in flight."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace

import httpx
import psycopg
import pytest
from psycopg.conninfo import conninfo_to_dict

from tests.conftest import serving
from tests.polling import wait_until
from tests.replica_cluster import ReplicaCluster
from tests.test_privacy import assert_no_leak, private_ids, public_reads
from tests.test_privacy import world as world


@pytest.fixture(scope="module")
def replica(pg_server, template_db):
    cluster = ReplicaCluster(pg_server)
    yield cluster
    cluster.remove()


def dbname(url: str) -> str:
    return conninfo_to_dict(url)["dbname"]


@pytest.fixture
def settings(settings, replica):
    """The test's settings, its public reads on the replica (checked every 0.2 s)."""
    replica.replayed(dbname(settings.database_url), settings.database_url)
    return replace(
        settings,
        replica_urls=(replica.url(dbname(settings.database_url)),),
        replica_check_seconds=0.2,
        replica_max_lag=3.0,
        graph_max_distance=0.99,
    )


def replicas(client) -> list[dict]:
    return client.get("/healthz").json()["replicas"]


def wait_state(client, state: str, timeout: float = 20.0) -> None:
    seen: list[dict] = []

    def reached() -> bool:
        seen[:] = replicas(client)
        return seen[0]["state"] == state

    try:
        wait_until(reached, f"the replica to be {state}", timeout=timeout)
    except BaseException as exc:
        raise AssertionError(f"the replica is not {state}: {seen}") from exc


def recall(client, question: str, headers: dict | None = None) -> list[str]:
    r = client.post("/api/hub/priv/recall", json={"question": question, "k": 20}, headers=headers or {})
    assert r.status_code == 200, r.text
    return [hit["doc_id"] for hit in r.json()["results"]]


def test_a_thousand_public_reads_on_the_replica_find_nothing_private(client, world, replica, settings):
    replica.replayed(dbname(settings.database_url), settings.database_url)
    wait_state(client, "ok")
    before = replicas(client)[0]["reads"]
    reads = 0
    while reads < 1000:
        for label, text in public_reads(client, world, question="echidna aardwolf binturong caracal dugong"):
            assert_no_leak(text, world, f"{label} (replica)")
            reads += 1
    health = client.get("/healthz").json()
    served = health["replicas"][0]["reads"] - before
    # every public read of a stranger went to the replica (the owner's own view is not one)
    assert served >= 900, health
    assert health["replicas"][0]["state"] == "ok" and private_ids(world)


@contextmanager
def replay_paused(replica: ReplicaCluster, settings) -> Iterator[None]:
    """The replica receives the primary's WAL but replays none of it until the block ends."""
    with psycopg.connect(replica.url(dbname(settings.database_url)), autocommit=True) as conn:
        conn.execute("SELECT pg_wal_replay_pause()")
        try:
            yield
        finally:
            conn.execute("SELECT pg_wal_replay_resume()")


def test_a_writer_reads_its_write_at_once_and_a_stranger_within_the_lag(client, world, replica, settings):
    replica.replayed(dbname(settings.database_url), settings.database_url)
    wait_state(client, "ok")
    with replay_paused(replica, settings):
        r = client.post(
            "/api/docs",
            json={"hub": "priv", "title": "Okapi", "markdown": "# Okapi\n\nThe okapi lives in forests.\n"},
            headers=world["owner"],
        )
        assert r.status_code == 201, r.text
        doc = r.json()["id"]
        # the writer, at once: the replica has not replayed the save, so its reads go to the primary
        assert doc in recall(client, "okapi forests", world["owner"])
        client.cookies.clear()
        # a stranger reads the replica, which has not got it yet
        assert doc not in recall(client, "okapi forests")
    started = time.monotonic()
    wait_until(lambda: doc in recall(client, "okapi forests"), "a stranger to find the page", timeout=10)
    assert time.monotonic() - started < settings.replica_max_lag + 1


def test_a_replica_far_behind_is_skipped_and_recall_answers_from_the_primary(client, world, replica, settings):
    wait_state(client, "ok")
    with replay_paused(replica, settings):
        r = client.post(
            "/api/docs",
            json={"hub": "priv", "title": "Quokka", "markdown": "# Quokka\n\nThe quokka smiles on islands.\n"},
            headers=world["owner"],
        )
        doc = r.json()["id"]
        wait_state(client, "lagging", timeout=settings.replica_max_lag + 10)
        assert "behind" in replicas(client)[0]["error"]
        client.cookies.clear()
        assert doc in recall(client, "quokka islands")  # from the primary meanwhile
    wait_state(client, "ok")


def test_a_replica_url_that_takes_writes_is_never_read(make_client, settings):
    """The primary itself given as a replica: not in recovery, so skipped, and /healthz says why."""
    client = make_client(replica_urls=(settings.database_url,))
    assert replicas(client)[0]["state"] == "read-write"
    r = client.post("/api/hubs", json={"slug": "rw"})
    assert r.status_code == 201
    assert client.post("/api/hub/rw/recall", json={"question": "anything"}).status_code == 200
    assert replicas(client)[0]["reads"] == 0


def test_a_replica_url_of_another_database_stops_the_start(settings, replica):
    from memorywiki.server.app import create_app
    from starlette.testclient import TestClient

    app = create_app(replace(settings, replica_urls=(replica.url("postgres"),)))
    with pytest.raises(RuntimeError, match="names database 'postgres'"), TestClient(app):
        pass


def test_an_unreachable_replica_is_down_and_recall_answers_from_the_primary(make_client, settings):
    client = make_client(replica_urls=("postgresql://postgres@/nowhere?host=/tmp/no-such-dir",))
    health = replicas(client)[0]
    assert health["state"] == "down" and health["error"], health
    assert client.post("/api/hubs", json={"slug": "down"}).status_code == 201
    r = client.post("/api/hub/down/recall", json={"question": "anything"})
    assert r.status_code == 200, r.text


def test_killing_the_replica_mid_load_loses_only_the_reads_in_flight(settings, replica):
    """8 readers recall through a real server; the replica is killed halfway. What fails is at
    most what was in flight then; recall keeps answering from the primary, and once the replica
    is started again it is read again: nothing was promoted."""
    readers, per_reader = 8, 40
    with serving(settings) as live:
        with httpx.Client(base_url=live.url, timeout=30) as http:
            r = http.post("/api/hubs", json={"slug": "priv"})
            owner = {"Authorization": f"Bearer {r.json()['owner_token']}"}
            for i in range(5):
                body = f"# Page {i}\n\nThe pangolin {i} eats ants.\n"
                assert http.post("/api/docs", json={"hub": "priv", "title": f"P{i}", "markdown": body}, headers=owner)
            replica.replayed(dbname(settings.database_url), settings.database_url)
            wait_state(http, "ok")
        done, failures = [], []
        halfway = threading.Event()

        def reader() -> None:
            with httpx.Client(base_url=live.url, timeout=30) as http:
                for _ in range(per_reader):
                    try:
                        r = http.post("/api/hub/priv/recall", json={"question": "pangolin ants"})
                        (done if r.status_code == 200 else failures).append(r.status_code)
                    except httpx.HTTPError as exc:
                        failures.append(type(exc).__name__)
                    if len(done) >= readers * per_reader // 2:
                        halfway.set()

        threads = [threading.Thread(target=reader) for _ in range(readers)]
        for t in threads:
            t.start()
        halfway.wait(60)
        replica.kill()
        for t in threads:
            t.join(120)
        try:
            assert len(failures) <= readers, failures  # at most the reads in flight at the kill
            assert len(done) + len(failures) == readers * per_reader
            with httpx.Client(base_url=live.url, timeout=30) as http:
                wait_state(http, "down")
                r = http.post("/api/hub/priv/recall", json={"question": "pangolin ants"})
                assert r.status_code == 200 and r.json()["results"]
        finally:
            replica.start()  # for the module's other tests; nothing was promoted meanwhile
        with httpx.Client(base_url=live.url, timeout=30) as http:  # back, and read again
            wait_state(http, "ok", timeout=30)
            before = replicas(http)[0]["reads"]
            assert http.post("/api/hub/priv/recall", json={"question": "pangolin ants"}).status_code == 200
            assert replicas(http)[0]["reads"] > before


def test_a_primary_restart_while_the_replica_serves(tmp_path, settings):
    """A primary of its own, stopped under a server that reads a replica of it: public recall goes
    on from the replica, a save is refused (503, nothing acknowledged and lost), and once the
    primary is back the save goes through and its writer reads it at once."""
    from tests.test_outages import SeparatePostgres

    pg = SeparatePostgres(tmp_path / "pg")
    own = None
    try:
        own = ReplicaCluster(pg._server)
        own.replayed("memorywiki", pg.url)
        ours = replace(settings, database_url=pg.url, replica_urls=(own.url("memorywiki"),), db_timeout=3.0)
        with serving(ours) as live, httpx.Client(base_url=live.url, timeout=30) as http:
            r = http.post("/api/hubs", json={"slug": "ops"})
            owner = {"Authorization": f"Bearer {r.json()['owner_token']}"}
            body = {"hub": "ops", "title": "Runbook", "markdown": "# Runbook\n\nrestart the walrus gently\n"}
            assert http.post("/api/docs", json=body, headers=owner).status_code == 201

            def indexed() -> bool:
                health = http.get("/healthz").json()
                return health["owed"] == 0 and health["space"] is not None

            wait_until(indexed, "the page to be indexed")  # a recall before that asks the primary why not
            own.replayed("memorywiki", pg.url)
            wait_state(http, "ok")
            pg.stop()
            try:
                wait_until(lambda: not live.app.state.mw.db.public.primary_up, "the check to see the primary down")
                for _ in range(20):  # strangers read on, from the replica
                    r = http.post("/api/hub/ops/recall", json={"question": "walrus"})
                    assert r.status_code == 200 and r.json()["results"], r.text
                later = {"hub": "ops", "title": "Later", "markdown": "# Later\n\nthe narwhal waits\n"}
                r = http.post("/api/docs", json=later, headers=owner)
                assert r.status_code == 503 and r.headers["retry-after"], r.text
            finally:
                pg.start()

            def saved() -> bool:
                return http.post("/api/docs", json=later, headers=owner).status_code == 201

            wait_until(saved, "the save once the primary is back", timeout=60, interval=0.5)
            r = http.post("/api/hub/ops/recall", json={"question": "narwhal"}, headers=owner)
            assert r.status_code == 200 and r.json()["results"], r.text
    finally:
        if own is not None:
            own.remove()
        pg.close()


@pytest.mark.parametrize("value", ["localhost:5432", "postgresql://u@h:notaport/db", "mysql://h/db"])
def test_a_replica_url_that_is_no_postgresql_url_is_a_settings_error(value):
    from memorywiki.server.config import Settings, SettingsError

    with pytest.raises(SettingsError, match="MEMORYWIKI_REPLICA_URLS"):
        Settings.from_env({"MEMORYWIKI_REPLICA_URLS": value})
