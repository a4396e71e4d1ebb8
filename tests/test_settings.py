"""One settings object: read once from the environment, never written back; limits from it."""

from __future__ import annotations

import io
import os
from dataclasses import replace
from pathlib import Path

import pytest
from memorywiki.server.app import create_app
from memorywiki.server.config import Settings, SettingsError
from starlette.testclient import TestClient

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
        "openai",
        "text-embedding-3-large",
        "sk-test",
        "http://127.0.0.1:11434/v1",
        "/models/minilm",
    )
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


@pytest.mark.parametrize(
    "name, value, words",
    [
        ("MEMORYWIKI_EMBED_BATCH", "lots", "MEMORYWIKI_EMBED_BATCH must be a whole number, not 'lots'"),
        ("MEMORYWIKI_FETCH_TIMEOUT", "5s", "MEMORYWIKI_FETCH_TIMEOUT must be a number, not '5s'"),
    ],
)
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
        doc = client.post(
            "/api/docs",
            json={"title": "t", "markdown": "# t\n\nbody", "hub": "env"},
            headers={"Authorization": f"Bearer {token}"},
        ).json()
        # loading the model fails here (no sentence-transformers in the test env): a clear 503
        response = client.post(f"/api/embed/{doc['id']}")
        assert response.status_code == 503 and response.json()["error"]["code"] == "embedder_failed"
    assert dict(os.environ) == before


def test_openai_key_and_url_come_from_settings_not_the_environment(settings, monkeypatch, embedding_server):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")  # nothing listens there
    with TestClient(create_app(settings)) as client:
        token = client.post("/api/hubs", json={"slug": "s"}).json()["owner_token"]
        doc = client.post(
            "/api/docs",
            json={"title": "t", "markdown": "body", "hub": "s"},
            headers={"Authorization": f"Bearer {token}"},
        ).json()
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


@pytest.mark.parametrize(
    "entry",
    [
        "from memorywiki.server.app import run_server; run_server(port=1)",
        "from memorywiki.server.worker import run_worker; run_worker()",
    ],
)
def test_serve_and_worker_refuse_a_bad_setting_in_one_line(entry):
    import subprocess
    import sys

    env = {**os.environ, "MEMORYWIKI_FETCH_TIMEOUT": "5s"}
    result = subprocess.run([sys.executable, "-c", entry], env=env, capture_output=True, text=True, timeout=120)
    assert result.returncode == 1
    assert result.stderr.strip() in (
        "memorywiki serve: MEMORYWIKI_FETCH_TIMEOUT must be a number, not '5s'",
        "memorywiki worker: MEMORYWIKI_FETCH_TIMEOUT must be a number, not '5s'",
    )


@pytest.mark.parametrize(
    "value, in_process, child",
    [
        ("", True, None),
        ("auto", True, None),
        ("inprocess", True, False),
        ("process", True, True),
        ("external", False, None),
        (" Process ", True, True),
    ],
)
def test_where_indexing_runs(value, in_process, child):
    """MEMORYWIKI_WORKER: None = a child process only with the local embedder (decided at start)."""
    s = Settings.from_env({"MEMORYWIKI_WORKER": value})
    assert (s.in_process_worker, s.worker_process) == (in_process, child)


def test_a_bad_worker_value_is_a_clear_error():
    with pytest.raises(SettingsError) as err:
        Settings.from_env({"MEMORYWIKI_WORKER": "thread"})
    assert str(err.value) == "MEMORYWIKI_WORKER must be one of auto, inprocess, process, external, not 'thread'"


def test_every_setting_is_declared_once_with_one_line_of_help():
    from dataclasses import fields

    from memorywiki.server.setting import declared

    read = {f.name for f, _ in declared(Settings)}
    assert {f.name for f in fields(Settings)} - read == {"question_board"}  # set by the server for its children
    listed = [meta for _, meta in declared(Settings) if meta.listed]
    names = [meta.env for meta in listed]
    assert len(names) == len(set(names))
    assert all(meta.help and "\n" not in meta.help and len(meta.help) <= 100 for meta in listed)


def test_configuration_docs_are_generated_from_the_settings():
    """docs/configuration.md is regenerated with `python -m memorywiki.server.config --markdown`."""
    from memorywiki.server.config import configuration_markdown

    committed = (Path(__file__).resolve().parents[1] / "docs" / "configuration.md").read_text(encoding="utf-8")
    assert committed == configuration_markdown(), "docs/configuration.md is stale: regenerate it"
    assert "| `MEMORYWIKI_WORKER` | `auto` |" in committed and "| `OPENAI_API_KEY` | unset |" in committed
    assert "/root" not in committed and "/home" not in committed  # the same on every machine


@pytest.mark.parametrize(
    "name, value, words",
    [
        ("MEMORYWIKI_EMBEDDER", "Bert", "MEMORYWIKI_EMBEDDER must be one of openai, local, none, auto, not 'bert'"),
        ("MEMORYWIKI_RATE_EMBED", "often", "MEMORYWIKI_RATE_EMBED must be a rate such as 10/minute, not 'often'"),
        (
            "MEMORYWIKI_PG_SHARED_BUFFERS",
            "1MB",
            "MEMORYWIKI_PG_SHARED_BUFFERS must be auto, keep or a size of at least 128MB such as 1GB, not '1MB'",
        ),
        ("MEMORYWIKI_RERANK_FORMAT", "xml", "MEMORYWIKI_RERANK_FORMAT must be one of cohere, tei, not 'xml'"),
    ],
)
def test_a_bad_choice_is_named_with_its_choices(name, value, words):
    with pytest.raises(SettingsError) as err:
        Settings.from_env({name: value})
    assert str(err.value) == words


def test_flags_and_blank_values():
    s = Settings.from_env(
        {
            "MEMORYWIKI_CURATION": "off",
            "MEMORYWIKI_FETCH_ALLOW_LOOPBACK": "on",
            "MEMORYWIKI_LLM_MODEL": "  ",
            "MEMORYWIKI_EMBED_BATCH": " ",
            "MEMORYWIKI_LOCAL_BACKEND": " ONNX",
        }
    )
    assert (s.curation, s.fetch_allow_loopback, s.llm_model, s.embed_batch, s.local_backend) == (
        False,
        True,
        None,
        128,
        "onnx",
    )
    assert Settings.from_env({"MEMORYWIKI_CURATION": ""}).curation  # blank: the default


def test_config_server_lists_every_setting_with_secrets_masked():
    from memorywiki.cli.main import app
    from typer.testing import CliRunner

    env = {
        "OPENAI_API_KEY": "sk-very-secret",
        "MEMORYWIKI_WORKER": "external",
        "MEMORYWIKI_EMBED_BATCH": "64",
        "DATABASE_URL": "postgresql://mw:hunter2@db.internal:5432/wiki",
    }
    result = CliRunner().invoke(app, ["config", "--server"], env=env)
    assert result.exit_code == 0, result.output
    lines = {line.split()[0]: line.split() for line in result.output.splitlines() if line.strip()}
    assert lines["MEMORYWIKI_WORKER"][1:3] == ["external", "auto"]
    assert lines["MEMORYWIKI_EMBED_BATCH"][1:3] == ["64", "128"]
    assert lines["OPENAI_API_KEY"][1] == "(set)" and "sk-very-secret" not in result.output
    assert lines["DATABASE_URL"][1] == "postgresql://mw:****@db.internal:5432/wiki" and "hunter2" not in result.output
    assert lines["MEMORYWIKI_BM25_K1"][1:3] == ["-", "1.2"]
    from memorywiki.server.setting import declared

    assert {meta.env for _, meta in declared(Settings)} <= set(lines)


def test_config_server_names_a_bad_value_in_one_line():
    from memorywiki.cli.main import app
    from typer.testing import CliRunner

    result = CliRunner().invoke(app, ["config", "--server"], env={"MEMORYWIKI_FETCH_TIMEOUT": "5s"})
    assert result.exit_code == 1
    assert result.stderr.strip() == "error: MEMORYWIKI_FETCH_TIMEOUT must be a number, not '5s'"
    refused = CliRunner().invoke(app, ["config", "--server", "--set-hub", "x"])
    assert refused.exit_code == 1 and "takes no other option" in refused.stderr


def test_the_chunk_size_is_a_setting():
    from memorywiki.server.indexing.chunker import ChunkSize

    assert Settings.from_env({}).chunk_size == ChunkSize()
    s = Settings.from_env({"MEMORYWIKI_CHUNK_MAX_CHARS": "600", "MEMORYWIKI_CHUNK_OVERLAP_CHARS": "60"})
    assert s.chunk_size == ChunkSize(600, 60) and s.chunk_size.version != ChunkSize().version
    for env in (
        {"MEMORYWIKI_CHUNK_MAX_CHARS": "0"},
        {"MEMORYWIKI_CHUNK_MAX_CHARS": "600", "MEMORYWIKI_CHUNK_OVERLAP_CHARS": "400"},
    ):
        with pytest.raises(SettingsError, match="MEMORYWIKI_CHUNK_MAX_CHARS"):
            Settings.from_env(env)


def test_saves_cut_docs_at_the_configured_size(make_client, settings):
    """A server started with a smaller maximum cuts every save at it and records the size on the doc."""
    import psycopg
    from memorywiki.server.indexing.chunker import ChunkSize
    from memorywiki.server.store.chunks import use_chunk_size

    try:
        client = make_client(chunk_max_chars=300, in_process_worker=False)
        token = client.post("/api/hubs", json={"slug": "sized"}).json()["owner_token"]
        body = "\n".join(f"Line {i} of a note with no headings at all, long enough to count." for i in range(40))
        r = client.post(
            "/api/docs",
            json={"hub": "sized", "title": "Note", "markdown": body},
            headers={"Authorization": f"Bearer {token}"},
        )
        assert r.status_code == 201, r.text
        with psycopg.connect(settings.database_url) as conn:
            sizes = [
                n
                for (n,) in conn.execute(
                    "SELECT length(markdown) FROM chunks WHERE doc_id = %s", (r.json()["id"],)
                ).fetchall()
            ]
            chunker = conn.execute("SELECT chunker FROM docs WHERE id = %s", (r.json()["id"],)).fetchone()[0]
        assert len(sizes) > 5 and max(sizes) <= 300
        assert chunker == ChunkSize(300).version
    finally:
        use_chunk_size(ChunkSize())  # the process-wide size back to the default for the tests after
