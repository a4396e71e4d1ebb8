"""The optional rerank stage (`"rerank": true`): the fused candidates re-scored by a reranker
behind the Cohere / Jina / TEI `/rerank` API (a local stub, tests/rerank_server.py). Off by
default; a reranker that is missing, down or answering nonsense never fails a recall."""

from __future__ import annotations

import pytest
from memorywiki.server.config import Settings

from tests.polling import wait_indexed
from tests.rerank_server import RerankServer

DOCS = [
    ("Rocket fuel", "Rocket fuel is a mixture of fuel and oxidizer; the rocket fuel mixture burns fast."),
    ("Launch pads", "A rocket stands on the launch pad before the fuel is loaded."),
    ("Treasure", "The old map leads to gold buried under the oak."),
]
QUESTION = "rocket fuel mixture"


@pytest.fixture(scope="module")
def reranker():
    server = RerankServer().start()
    yield server
    server.stop()


@pytest.fixture
def stub(reranker):
    reranker.requests.clear()
    reranker.failing = reranker.garbage = False
    yield reranker
    reranker.failing = reranker.garbage = False


def hub(client, slug="rr") -> list[str]:
    token = client.post("/api/hubs", json={"slug": slug}).json()["owner_token"]
    auth = {"Authorization": f"Bearer {token}"}
    ids = [
        client.post("/api/docs", json={"hub": slug, "title": t, "markdown": m}, headers=auth).json()["id"]
        for t, m in DOCS
    ]
    bundle = client.post(
        "/api/bundles",
        json={"hub": slug, "title": "Gold rush", "description": "gold and fuel", "doc_ids": ids[:1]},
        headers=auth,
    ).json()
    wait_indexed(client, ids, [bundle["id"]])
    return ids


def ask(client, **body):
    response = client.post("/api/hub/rr/recall", json={"question": QUESTION, **body})
    assert response.status_code == 200, response.text
    return response.json()


def test_rerank_reorders_the_fused_candidates(make_client, stub):
    client = make_client(
        rerank_url=stub.base_url + "/v1/rerank", rerank_model="rerank-english-v3.0", rerank_api_key="rk-test"
    )
    hub(client)
    fused = ask(client, k=3)
    assert next(r["title"] for r in fused["results"]) == "Rocket fuel" and "reranked" not in fused
    assert stub.requests == []  # off unless asked for
    body = ask(client, k=1, rerank=True)
    assert body["reranked"] is True and "rerank_note" not in body
    [top] = body["results"]
    assert top["title"] == "Treasure" and top["rerank_score"] > 1  # the stub's "gold" bonus wins
    [request] = stub.requests
    sent = request["body"]
    assert sent["query"] == QUESTION and sent["model"] == "rerank-english-v3.0"
    assert len(sent["documents"]) == sent["top_n"] == 3  # every fused candidate, not just k
    assert any(d.startswith("Treasure") for d in sent["documents"])  # breadcrumb + text
    assert request["authorization"] == "Bearer rk-test"


def test_the_tei_format_sends_texts(make_client, stub):
    client = make_client(rerank_url=stub.base_url + "/rerank", rerank_format="tei")
    hub(client)
    body = ask(client, k=2, rerank=True)
    assert body["reranked"] is True and body["results"][0]["title"] == "Treasure"
    assert "texts" in stub.requests[0]["body"] and "documents" not in stub.requests[0]["body"]
    assert stub.requests[0]["authorization"] is None


@pytest.mark.parametrize("level, title", [("doc", "Treasure"), ("bundle", "Gold rush")])
def test_rerank_at_doc_and_bundle_level(make_client, stub, level, title):
    client = make_client(rerank_url=stub.base_url + "/rerank")
    hub(client)
    body = ask(client, k=1, level=level, rerank=True)
    assert body["reranked"] is True and body["results"][0]["title"] == title


@pytest.mark.parametrize(
    "trouble, note",
    [
        ("failing", "the reranker is unreachable"),
        ("garbage", "the reranker is unreachable"),
        ("stopped", "the reranker is unreachable"),
    ],
)
def test_a_broken_reranker_keeps_the_fused_order(make_client, stub, trouble, note):
    url = stub.base_url + "/rerank"
    if trouble == "stopped":
        stopped = RerankServer().start()
        url = stopped.base_url + "/rerank"
        stopped.stop()
    else:
        setattr(stub, trouble, True)
    client = make_client(rerank_url=url, rerank_timeout=5.0)
    hub(client)
    body = ask(client, k=2, rerank=True)
    assert body["reranked"] is False and body["rerank_note"].startswith(note)
    assert [r["title"] for r in body["results"]] == [r["title"] for r in ask(client, k=2)["results"]]
    assert all("rerank_score" not in r for r in body["results"])


def test_rerank_without_a_reranker_says_so(client):
    hub(client)
    body = ask(client, k=2, rerank=True)
    assert body["reranked"] is False
    assert body["rerank_note"] == "no reranker configured (MEMORYWIKI_RERANK_URL): results in fused order"
    assert len(body["results"]) == 2


def test_rerank_must_be_a_boolean(client):
    hub(client)
    response = client.post("/api/hub/rr/recall", json={"question": QUESTION, "rerank": "yes"})
    assert response.status_code == 400 and "rerank" in response.json()["error"]["message"]


def test_rerank_settings():
    s = Settings.from_env(
        {
            "MEMORYWIKI_RERANK_URL": "http://127.0.0.1:8080/rerank",
            "MEMORYWIKI_RERANK_MODEL": "bge",
            "MEMORYWIKI_RERANK_API_KEY": "secret",
            "MEMORYWIKI_RERANK_FORMAT": "TEI",
            "MEMORYWIKI_RERANK_CANDIDATES": "40",
            "MEMORYWIKI_RERANK_TIMEOUT": "3",
        }
    )
    assert (s.rerank_url, s.rerank_model, s.rerank_format, s.rerank_candidates, s.rerank_timeout) == (
        "http://127.0.0.1:8080/rerank",
        "bge",
        "tei",
        40,
        3.0,
    )
    assert "secret" not in repr(s)
    assert Settings.from_env({}).rerank_url is None
