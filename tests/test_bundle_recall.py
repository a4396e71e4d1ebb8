"""`level: "bundle"` finds a bundle the moment it is made or edited, as pages are found: full
text over its title, description and public members' titles, fused with the bundles' vectors
once they exist, and a `vector_note` when vectors were not used."""

from __future__ import annotations

import pytest


@pytest.fixture
def manual(make_client):
    """No background worker: only explicit refreshes embed, so a bundle stays without a vector."""
    return make_client(in_process_worker=False)


def _hub(client) -> dict[str, str]:
    token = client.post("/api/hubs", json={"slug": "reading"}).json()["owner_token"]
    return {"Authorization": f"Bearer {token}"}


def _doc(client, owner, title, markdown, **extra) -> str:
    r = client.post("/api/docs", json={"hub": "reading", "title": title, "markdown": markdown, **extra}, headers=owner)
    assert r.status_code == 201, r.text
    return r.json()["id"]


def _bundle(client, owner, title, doc_ids, description="") -> str:
    r = client.post(
        "/api/bundles",
        json={"hub": "reading", "title": title, "description": description, "doc_ids": doc_ids},
        headers=owner,
    )
    assert r.status_code == 201, r.text
    return r.json()["id"]


def _ask(client, question, **body) -> dict:
    r = client.post("/api/hub/reading/recall", json={"question": question, "level": "bundle", **body})
    assert r.status_code == 200, r.text
    return r.json()


def test_a_new_bundle_is_found_at_once_and_fused_once_vectors_exist(manual):
    owner = _hub(manual)
    tulips = _doc(manual, owner, "Tulip bulbs", "Plant tulip bulbs in autumn.")
    roses = _doc(manual, owner, "Pruning roses", "Prune roses in late winter.")
    tax = _doc(manual, owner, "Quarterly tax", "File the quarterly tax forms.")
    garden = _bundle(manual, owner, "Garden", [tulips, roses], "Flowers through the year")
    for doc_id in (tulips, roses, tax):
        assert manual.post(f"/api/embed/{doc_id}").status_code == 200
    assert manual.post(f"/api/embed/bundle/{garden}").json() == {"embedded": {"bundle": True}}

    # saved a moment ago, not embedded: found by its member's title ("quarterly tax")
    money = _bundle(manual, owner, "Money", [tax])
    body = _ask(manual, "quarterly tax")
    assert body["mode"] == "hybrid" and body["fusion"] == "zscore" and "vector_note" not in body
    top = body["results"][0]
    assert top["bundle_id"] == money and top["fts_rank"] == 1 and top["vector_rank"] is None
    assert top["bundle_url"].endswith(f"/b/{money}") and top["rrf_score"] > 0

    # edited: the new description is found at once
    r = manual.patch(f"/api/bundles/{garden}", json={"description": "bulbs and orchards"}, headers=owner)
    assert r.status_code == 200, r.text
    assert _ask(manual, "orchards")["results"][0]["bundle_id"] == garden

    # once embedded, both rankers place it, and the fusion orders by `score`
    assert manual.post(f"/api/embed/bundle/{money}").json() == {"embedded": {"bundle": True}}
    both = _ask(manual, "quarterly tax")
    first = both["results"][0]
    assert first["bundle_id"] == money and first["vector_rank"] is not None and first["fts_rank"] == 1
    assert [r["score"] for r in both["results"]] == sorted((r["score"] for r in both["results"]), reverse=True)
    rrf = _ask(manual, "quarterly tax", fusion="rrf")
    assert rrf["fusion"] == "rrf" and rrf["results"][0]["score"] == pytest.approx(rrf["results"][0]["rrf_score"])
    vector_only = _ask(manual, "quarterly tax", hybrid=False)
    assert vector_only["mode"] == "vector" and all(r["vector_rank"] is not None for r in vector_only["results"])


def test_bundle_recall_without_vectors_says_so_and_keeps_private_titles_out(make_client):
    client = make_client(embedder="none")
    owner = _hub(client)
    public = _doc(client, owner, "Tulip bulbs", "Plant tulip bulbs in autumn.")
    secret = _doc(client, owner, "Quokkazyx budget", "Internal numbers.", is_draft=True)
    bundle = _bundle(client, owner, "Garden", [public, secret])
    body = _ask(client, "tulip")
    assert body["mode"] == "fulltext" and body["vector"] == "unavailable" and body["vector_note"]
    assert [r["bundle_id"] for r in body["results"]] == [bundle]
    assert _ask(client, "quokkazyx")["results"] == [], "a private member's title finds nothing"
