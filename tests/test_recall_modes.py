"""Recall says which mode ran and, when it could not use vectors, why, in plain words.

Hybrid is the default for the API, as for the CLI and MCP; a hub whose pages are only partly
indexed still fuses, finding the rest by full text.
"""

from __future__ import annotations

import pytest

from tests.polling import wait_indexed

PAGES = {
    "Walruses": "Walruses haul out onto ice floes with their tusks.\n",
    "Otters": "Sea otters crack shellfish open with stones.\n",
    "Penguins": "Emperor penguins huddle against the antarctic wind.\n",
}


def fill_hub(client, slug: str = "zoo") -> tuple[dict, dict[str, str]]:
    r = client.post("/api/hubs", json={"slug": slug})
    assert r.status_code == 201, r.text
    headers = {"Authorization": f"Bearer {r.json()['owner_token']}"}
    ids = {}
    for title, markdown in PAGES.items():
        r = client.post("/api/docs", json={"title": title, "markdown": markdown, "hub": slug}, headers=headers)
        assert r.status_code == 201, r.text
        ids[title] = r.json()["id"]
    return headers, ids


def ask(client, slug: str = "zoo", **body) -> dict:
    r = client.post(f"/api/hub/{slug}/recall", json={"question": "walruses on the ice", **body})
    assert r.status_code == 200, r.text
    return r.json()


def test_hybrid_is_the_default_and_says_so(client):
    _, ids = fill_hub(client)
    wait_indexed(client, ids.values())
    body = ask(client)
    assert body["mode"] == "hybrid" and body["vector"] == "ok" and "vector_note" not in body
    top = body["results"][0]
    assert top["doc_id"] == ids["Walruses"] and top["vector_rank"] == 1 and top["fts_rank"] == 1
    vector_only = ask(client, hybrid=False)
    assert vector_only["mode"] == "vector" and "vector_note" not in vector_only
    assert all(r["fts_rank"] is None for r in vector_only["results"])
    for level in ("chunk", "doc"):
        assert ask(client, level=level)["mode"] == "hybrid"


def test_no_embedder_answers_from_full_text_and_says_why(make_client):
    client = make_client(embedder="none")
    _, ids = fill_hub(client)
    for level in ("chunk", "doc", "bundle"):
        body = ask(client, level=level)
        assert body["mode"] == "fulltext" and body["vector"] == "unavailable"
        assert body["vector_note"] == "no embedder configured: answering from full text"
    assert [r["doc_id"] for r in ask(client)["results"]] == [ids["Walruses"]]


def test_vectors_not_ready_counts_the_hubs_public_pages_still_indexing(make_client):
    client = make_client(in_process_worker=False)  # nothing gets indexed unless asked
    headers, ids = fill_hub(client)
    # neither a draft nor another hub's pages count: they are not this hub's public pages
    client.post(
        "/api/docs",
        json={"title": "Secret", "markdown": "walrus plans", "hub": "zoo", "is_draft": True},
        headers=headers,
    )
    fill_hub(client, "other")
    body = ask(client)
    assert body["mode"] == "fulltext" and body["vector"] == "unavailable"
    assert body["vector_note"] == "vectors not ready yet: 3 pages still indexing"
    assert [r["doc_id"] for r in body["results"]] == [ids["Walruses"]]  # full text still answers

    # once one page has vectors, hybrid fuses: the pages still owed are found by their words
    assert client.post(f"/api/embed/{ids['Otters']}").status_code == 200
    body = ask(client)
    assert body["mode"] == "hybrid" and "vector_note" not in body
    [walruses] = [r for r in body["results"] if r["doc_id"] == ids["Walruses"]]
    assert walruses["fts_rank"] == 1 and walruses["vector_rank"] is None


def test_an_empty_hub_on_a_fresh_server_is_not_ready_either(make_client):
    client = make_client(in_process_worker=False)
    client.post("/api/hubs", json={"slug": "zoo"})
    body = ask(client)
    assert body["vector_note"] == "vectors not ready yet: answering from full text" and body["results"] == []


def test_an_unreachable_embedder_is_named(client, embedding_server):
    _, ids = fill_hub(client)
    wait_indexed(client, ids.values())
    embedding_server.set_failing(True)
    try:
        body = ask(client)
    finally:
        embedding_server.set_failing(False)
    assert body["mode"] == "fulltext"
    assert body["vector_note"] == "the embedder is unreachable: answering from full text"
    assert body["results"][0]["doc_id"] == ids["Walruses"]


@pytest.mark.parametrize("level", ["chunk", "doc"])
def test_reindexing_after_an_embedder_change_says_how_much_is_left(make_client, level):
    before = make_client(in_process_worker=False)
    _, ids = fill_hub(before)
    for doc_id in ids.values():
        assert before.post(f"/api/embed/{doc_id}").status_code == 200
    assert ask(before, level=level)["mode"] == "hybrid"

    # a server started with another embedder forgets the old vectors: everything is owed again
    after = make_client(in_process_worker=False, openai_model="another-embed")
    for client in (after, before):
        body = ask(client, level=level)
        assert body["mode"] == "fulltext"
        assert body["vector_note"] == "re-indexing after an embedder change: 3 pages left"

    assert after.post(f"/api/embed/{ids['Otters']}").status_code == 200
    assert ask(after, level=level)["mode"] == "hybrid"
    # the old server's embedder no longer matches the stored vectors
    body = ask(before, level=level)
    assert body["mode"] == "fulltext"
    assert body["vector_note"] == "re-indexing after an embedder change: 2 pages left"


def server_timing(response) -> dict[str, float]:
    """The Server-Timing header as {phase: milliseconds}, in the header's order."""
    phases = {}
    for entry in response.headers["server-timing"].split(", "):
        name, *params = entry.split(";")
        assert name not in phases
        durations = [float(p.removeprefix("dur=")) for p in params if p.startswith("dur=")]
        assert len(durations) == 1 and durations[0] >= 0, entry
        assert any(p.startswith('desc="') and p.endswith('"') for p in params), entry
        phases[name] = durations[0]
    return phases


def test_a_recall_says_where_its_time_went(client, make_client):
    """Server-Timing on each recall: the hub's lookup, the wait for the question's vector, the
    recall statement and the whole request in the application (browsers' developer tools show
    it; the bench reads it to tell HTTP and Python from the database and the model)."""
    _, ids = fill_hub(client)
    wait_indexed(client, ids.values())
    for level in ("chunk", "doc", "bundle"):
        r = client.post("/api/hub/zoo/recall", json={"question": "walruses on the ice", "level": level})
        assert r.status_code == 200, r.text
        phases = server_timing(r)
        assert list(phases) == ["hub", "embed", "recall", "app"], level
        assert phases["app"] >= phases["hub"] + phases["embed"] + phases["recall"]
    no_model = make_client(embedder="none")
    fill_hub(no_model, "aquarium")
    r = no_model.post("/api/hub/aquarium/recall", json={"question": "walruses on the ice"})
    assert list(server_timing(r)) == ["hub", "recall", "app"]  # nothing to wait for
    assert "server-timing" not in no_model.post("/api/hub/nowhere/recall", json={"question": "x"}).headers
