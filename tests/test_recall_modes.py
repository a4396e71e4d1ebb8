"""Recall says which mode ran and, when it could not use vectors, why, in plain words (issue 9, item 5).

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
    client.post("/api/docs", json={"title": "Secret", "markdown": "walrus plans", "hub": "zoo", "is_draft": True},
                headers=headers)
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
