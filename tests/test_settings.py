"""One settings object: read once from the environment, never written back; limits from it."""

from __future__ import annotations

import io
import os
from dataclasses import replace
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from memorywiki.server.app import create_app
from memorywiki.server.config import Settings, SettingsError

ENV = {
    "DATABASE_URL": "postgresql://db/x",
    "MEMORYWIKI_DATA_DIR": "/srv/mw",
    "MEMORYWIKI_PUBLIC_URL": "https://wiki.example",
    "MEMORYWIKI_EMBEDDER": " OpenAI ",
    "MEMORYWIKI_OPENAI_MODEL": "text-embedding-3-large",
    "OPENAI_API_KEY": "sk-test",
    "OPENAI_BASE_URL": "http://127.0.0.1:11434/v1",
    "MEMORYWIKI_LOCAL_MODEL": "/models/minilm",
    "MEMORYWIKI_EMBED_BATCH": "64",
    "MEMORYWIKI_EMBED_TIMEOUT": "12.5",
    "MEMORYWIKI_EMBED_RETRIES": "0",
    "MEMORYWIKI_WORKER": "external",
    "MEMORYWIKI_MAX_BODY_BYTES": "1000",
    "MEMORYWIKI_MAX_QUERY_BYTES": "500",
    "MEMORYWIKI_MAX_UPLOAD_BYTES": "2000",
    "MEMORYWIKI_MAX_EXPORT_BYTES": "3000",
    "MEMORYWIKI_FETCH_MAX_BYTES": "4000",
    "MEMORYWIKI_FETCH_TIMEOUT": "2",
    "MEMORYWIKI_FETCH_ALLOW_LOOPBACK": "yes",
    "MEMORYWIKI_BM25_K1": "0.9",
    "MEMORYWIKI_BM25_B": "0.4",
    "MEMORYWIKI_GRAPH_MAX_DISTANCE": "0.3",
    "MEMORYWIKI_GRAPH_MAX_NEIGHBOURS": "7",
    "MEMORYWIKI_AUTOSAVE_SECONDS": "2.5",
    "MEMORYWIKI_WORKER_MAX_BACKOFF": "7",
    "MEMORYWIKI_DB_TIMEOUT": "3.5",
    "MEMORYWIKI_LOCAL_FLOOR_QUESTIONS": "4",
    "MEMORYWIKI_LOCAL_FLOOR_MS": "250",
    "MEMORYWIKI_LOCAL_FLOOR_BATCH": "2",
    "MEMORYWIKI_WORKER_NICE": "3",
}


def test_every_variable_is_read():
    s = Settings.from_env(ENV)
    assert (s.database_url, s.data_dir, s.public_url) == ("postgresql://db/x", Path("/srv/mw"), "https://wiki.example")
    assert (s.embedder, s.openai_model, s.openai_api_key, s.openai_base_url, s.local_model_dir) == (
        "openai", "text-embedding-3-large", "sk-test", "http://127.0.0.1:11434/v1", "/models/minilm")
    assert (s.embed_batch, s.embed_timeout, s.embed_max_retries, s.in_process_worker) == (64, 12.5, 0, False)
    assert (s.max_body_bytes, s.max_query_bytes, s.max_upload_bytes, s.max_export_bytes) == (1000, 500, 2000, 3000)
    assert (s.fetch_max_bytes, s.fetch_timeout, s.fetch_allow_loopback) == (4000, 2.0, True)
    assert (s.bm25_k1, s.bm25_b) == (0.9, 0.4)
    assert (s.graph_max_distance, s.graph_max_neighbours, s.autosave_seconds) == (0.3, 7, 2.5)
    assert (s.edge_rule.max_distance, s.edge_rule.max_neighbours) == (0.3, 7)
    assert (s.worker_max_backoff, s.db_timeout) == (7.0, 3.5)
    assert (s.local_floor_questions, s.local_floor_ms, s.local_floor_batch, s.worker_nice) == (4, 250.0, 2, 3)
    assert "sk-test" not in repr(s)  # the key stays out of logs


def test_defaults_and_overrides():
    s = Settings.from_env({})
    assert s == Settings(data_dir=s.data_dir)
    assert not s.fetch_allow_loopback and s.in_process_worker and s.embedder == "auto"
    assert Settings.from_env(ENV, embedder="none", database_url=None).embedder == "none"
    assert Settings.from_env(ENV, database_url=None).database_url == "postgresql://db/x"  # None: not an override


def test_the_local_model_runs_int8_unless_told_otherwise():
    """int8 is the default (half the CPU per question at the same quality); an fp32 index is
    kept by MEMORYWIKI_LOCAL_INT8=0."""
    assert Settings.from_env({}).local_quantize
    assert Settings.from_env({"MEMORYWIKI_LOCAL_INT8": "1"}).local_quantize
    assert not Settings.from_env({"MEMORYWIKI_LOCAL_INT8": "0"}).local_quantize
    assert not Settings.from_env({"MEMORYWIKI_LOCAL_INT8": "off"}).local_quantize


@pytest.mark.parametrize("name, value, words", [
    ("MEMORYWIKI_EMBED_BATCH", "lots", "MEMORYWIKI_EMBED_BATCH must be a whole number, not 'lots'"),
    ("MEMORYWIKI_FETCH_TIMEOUT", "5s", "MEMORYWIKI_FETCH_TIMEOUT must be a number, not '5s'"),
])
def test_a_bad_value_is_a_clear_error(name, value, words):
    with pytest.raises(SettingsError) as err:
        Settings.from_env({name: value})
    assert str(err.value) == words


def _start_and_stop(settings: Settings) -> None:
    with TestClient(create_app(settings)) as client:
        assert client.get("/healthz").status_code == 200


def test_startup_leaves_the_environment_alone(settings, tmp_path):
    """openai and local embedders alike: the server reads os.environ once and never writes it
    (the local embedder used to set HF_HUB_OFFLINE and friends when loading its model)."""
    before = dict(os.environ)
    _start_and_stop(settings)
    model_dir = tmp_path / "minilm"
    model_dir.mkdir()
    local = replace(settings, embedder="local", local_model_dir=str(model_dir), in_process_worker=False)
    with TestClient(create_app(local)) as client:
        token = client.post("/api/hubs", json={"slug": "env"}).json()["owner_token"]
        doc = client.post("/api/docs", json={"title": "t", "markdown": "# t\n\nbody", "hub": "env"},
                          headers={"Authorization": f"Bearer {token}"}).json()
        # loading the model fails here (no sentence-transformers in the test env): a clear 503
        response = client.post(f"/api/embed/{doc['id']}")
        assert response.status_code == 503 and response.json()["error"]["code"] == "embedder_failed"
    assert dict(os.environ) == before


def test_openai_key_and_url_come_from_settings_not_the_environment(settings, monkeypatch, embedding_server):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")  # nothing listens there
    with TestClient(create_app(settings)) as client:
        token = client.post("/api/hubs", json={"slug": "s"}).json()["owner_token"]
        doc = client.post("/api/docs", json={"title": "t", "markdown": "body", "hub": "s"},
                          headers={"Authorization": f"Bearer {token}"}).json()
        response = client.post(f"/api/embed/{doc['id']}")
        assert response.status_code == 200, response.text


def test_body_limits_come_from_settings(make_client):
    client = make_client(max_body_bytes=2000, max_query_bytes=300, max_upload_bytes=1500)
    token = client.post("/api/hubs", json={"slug": "lim"}).json()["owner_token"]
    auth = {"Authorization": f"Bearer {token}"}
    response = client.post("/api/docs", json={"title": "t", "markdown": "x" * 2100}, headers=auth)
    assert response.status_code == 413
    assert response.json()["error"] == {"code": "too_large", "message": "request body is over 2,000 bytes"}
    assert client.post("/api/docs", json={"title": "t", "markdown": "x" * 1500}, headers=auth).status_code == 201

    response = client.post("/api/hub/lim/recall", json={"question": "q" * 400})
    assert response.status_code == 413 and "300 bytes" in response.json()["error"]["message"]

    files = {"file": ("notes.txt", io.BytesIO(b"words " * 400), "text/plain")}
    response = client.post("/api/capture/file", data={"hub": "lim"}, files=files, headers=auth)
    assert response.status_code == 413 and response.json()["error"]["code"] == "too_large"


def test_the_default_query_limit_is_said_in_kilobytes(client):
    """It used to say "over 0 MB" (whole megabytes of a 64 KB limit)."""
    response = client.post("/api/hub/any/recall", json={"question": "q", "pad": "x" * 70_000})
    assert response.status_code == 413
    assert response.json()["error"]["message"] == "request body is over 64 KB"


@pytest.mark.parametrize("entry", ["from memorywiki.server.app import run_server; run_server(port=1)",
                                   "from memorywiki.server.indexing.worker import run_worker; run_worker()"])
def test_serve_and_worker_refuse_a_bad_setting_in_one_line(entry):
    import subprocess
    import sys

    env = {**os.environ, "MEMORYWIKI_FETCH_TIMEOUT": "5s"}
    result = subprocess.run([sys.executable, "-c", entry], env=env, capture_output=True, text=True, timeout=120)
    assert result.returncode == 1
    assert result.stderr.strip() in ("memorywiki serve: MEMORYWIKI_FETCH_TIMEOUT must be a number, not '5s'",
                                     "memorywiki worker: MEMORYWIKI_FETCH_TIMEOUT must be a number, not '5s'")


@pytest.mark.parametrize("value, in_process, child", [
    ("", True, None), ("auto", True, None), ("inprocess", True, False), ("process", True, True),
    ("external", False, None), (" Process ", True, True),
])
def test_where_indexing_runs(value, in_process, child):
    """MEMORYWIKI_WORKER: None = a child process only with the local embedder (decided at start)."""
    s = Settings.from_env({"MEMORYWIKI_WORKER": value})
    assert (s.in_process_worker, s.worker_process) == (in_process, child)


def test_a_bad_worker_value_is_a_clear_error():
    with pytest.raises(SettingsError) as err:
        Settings.from_env({"MEMORYWIKI_WORKER": "thread"})
    assert str(err.value) == "MEMORYWIKI_WORKER must be one of auto, inprocess, process, external, not 'thread'"
