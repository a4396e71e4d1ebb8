"""Bundles: create (owner token), patch re-embeds the bundle alone, explicit embed, pages."""

from __future__ import annotations

import pytest

from tests.polling import wait_indexed


@pytest.fixture
def manual(make_client):
    """No background worker: embedding happens only when asked, so counts are exact."""
    return make_client(in_process_worker=False)


def setup_hub(client):
    r = client.post("/api/hubs", json={"slug": "reading"})
    h = {"Authorization": f"Bearer {r.json()['owner_token']}"}
    ids = []
    for i, title in enumerate(["First steps", "Second steps", "Third steps"]):
        r = client.post(
            "/api/docs",
            json={"title": title, "markdown": f"# Step {i}\n\nbody of {title}\n", "hub": "reading"},
            headers=h,
        )
        ids.append(r.json()["id"])
    return h, ids


def test_create_bundle_needs_the_owner_token(manual):
    h, ids = setup_hub(manual)
    body = {"hub": "reading", "title": "Path", "description": "in order", "doc_ids": ids}
    assert manual.post("/api/bundles", json=body).status_code == 401
    assert manual.post("/api/bundles", json=body, headers={"Authorization": "Bearer x"}).status_code == 403
    r = manual.post("/api/bundles", json={**body, "hub": "nope"}, headers=h)
    assert r.status_code == 404 and r.json()["error"]["code"] == "unknown_hub"
    r = manual.post("/api/bundles", json={**body, "doc_ids": [ids[0], "zzzzzzzzzz"]}, headers=h)
    assert r.status_code == 400 and "zzzzzzzzzz" in r.json()["error"]["message"]
    r = manual.post("/api/bundles", json={**body, "doc_ids": [ids[0], ids[0]]}, headers=h)
    assert r.status_code == 400
    # a doc from another hub cannot be pulled in
    other = manual.post("/api/docs", json={"title": "Loose", "markdown": "x"}).json()
    r = manual.post("/api/bundles", json={**body, "doc_ids": [other["id"]]}, headers=h)
    assert r.status_code == 400
    assert manual.get("/api/hub/reading").json()["bundles"] == []

    r = manual.post("/api/bundles", json=body, headers=h)
    assert r.status_code == 201, r.text
    bundle = r.json()
    assert bundle["url"] == f"http://testserver/b/{bundle['id']}"
    listed = manual.get("/api/hub/reading").json()["bundles"]
    assert [(b["id"], b["title"], b["description"]) for b in listed] == [(bundle["id"], "Path", "in order")]


def test_bundle_pages_list_members_in_reading_order(manual):
    h, ids = setup_hub(manual)
    order = [ids[2], ids[0], ids[1]]
    bundle = manual.post(
        "/api/bundles",
        json={"hub": "reading", "title": "Backwards", "description": "odd order", "doc_ids": order},
        headers=h,
    ).json()
    raw = manual.get(f"/raw/b/{bundle['id']}")
    assert raw.status_code == 200 and raw.headers["content-type"].startswith("text/markdown")
    text = raw.text
    assert text.startswith("---\n") and "# Backwards" in text and "odd order" in text
    positions = [text.index(f"body of {t}") for t in ("Third steps", "First steps", "Second steps")]
    assert positions == sorted(positions)
    assert "1. [Third steps]" in text and "2. [First steps]" in text and "3. [Second steps]" in text
    html = manual.get(f"/b/{bundle['id']}", headers={"Accept": "text/html"})
    assert html.status_code == 200 and html.headers["content-type"].startswith("text/html")
    positions = [html.text.index(t) for t in ("Third steps", "First steps", "Second steps")]
    assert positions == sorted(positions)
    md = manual.get(f"/b/{bundle['id']}", headers={"Accept": "text/markdown"})
    assert md.text == text
    assert manual.get("/b/zzzzzzzzzz").status_code == 404
    assert manual.get("/raw/b/..%2F..%2Fetc").status_code == 404

    # re-ordering through PATCH shows up at once
    r = manual.patch(f"/api/bundles/{bundle['id']}", json={"doc_ids": ids}, headers=h)
    assert r.status_code == 200, r.text
    text = manual.get(f"/raw/b/{bundle['id']}").text
    positions = [text.index(f"body of {t}") for t in ("First steps", "Second steps", "Third steps")]
    assert positions == sorted(positions)


def test_bundle_embedding_is_one_input_and_patch_reembeds_only_the_bundle(manual, embedding_server):
    h, ids = setup_hub(manual)
    for doc_id in ids:
        assert manual.post(f"/api/embed/{doc_id}").status_code == 200
    bundle = manual.post(
        "/api/bundles", json={"hub": "reading", "title": "Path", "description": "d", "doc_ids": ids}, headers=h
    ).json()
    embedding_server.reset()
    r = manual.post(f"/api/embed/bundle/{bundle['id']}")
    assert r.status_code == 200 and r.json() == {"embedded": {"bundle": True}}
    assert (embedding_server.calls, embedding_server.inputs) == (1, 1)

    embedding_server.reset()
    assert manual.post(f"/api/embed/bundle/{bundle['id']}").json() == {"skipped": "unchanged"}
    assert embedding_server.calls == 0

    assert manual.patch(f"/api/bundles/{bundle['id']}", json={"description": "new words"}, headers=h).status_code == 200
    # the docs stay indexed; only the bundle is owed
    for doc_id in ids:
        assert manual.post(f"/api/embed/{doc_id}").json() == {"skipped": "unchanged"}
    assert embedding_server.calls == 0
    r = manual.post(f"/api/embed/bundle/{bundle['id']}")
    assert r.json() == {"embedded": {"bundle": True}}
    assert (embedding_server.calls, embedding_server.inputs) == (1, 1)
    # a renamed member changes the bundle's text too
    embedding_server.reset()
    manual.patch(f"/api/docs/{ids[0]}", json={"title": "Renamed"}, headers=h)
    assert manual.post(f"/api/embed/bundle/{bundle['id']}").json() == {"embedded": {"bundle": True}}
    assert embedding_server.inputs == 1


def test_worker_reembeds_a_patched_bundle_by_itself(client, embedding_server):
    h, ids = setup_hub(client)
    bundle = client.post(
        "/api/bundles", json={"hub": "reading", "title": "Garden", "description": "tulips", "doc_ids": ids}, headers=h
    ).json()

    def top_bundle(question):
        r = client.post("/api/hub/reading/recall", json={"question": question, "level": "bundle"})
        return r.json()["results"][:1]

    wait_indexed(client, ids, bundle_ids=[bundle["id"]])
    assert top_bundle("tulips")[0]["description"] == "tulips"
    inputs = embedding_server.inputs
    client.patch(f"/api/bundles/{bundle['id']}", json={"title": "Orchard", "description": "apples"}, headers=h)
    # owed until the worker re-embeds it (asking /healthz at once raced a quick worker): the
    # embedding server sees exactly the bundle's one new text
    wait_indexed(client, bundle_ids=[bundle["id"]])
    assert embedding_server.inputs == inputs + 1
    # the recall answer reflects the new text, and its vector was rebuilt from it
    res = top_bundle("orchard apples")[0]
    assert res["title"] == "Orchard" and res["description"] == "apples" and res["similarity"] > 0.3


def test_patch_bundle_auth_and_validation(manual):
    h, ids = setup_hub(manual)
    bundle = manual.post("/api/bundles", json={"hub": "reading", "title": "Path", "doc_ids": ids}, headers=h).json()
    url = f"/api/bundles/{bundle['id']}"
    assert manual.patch(url, json={"title": "X"}).status_code == 401
    doc_token = manual.post("/api/docs", json={"title": "t", "markdown": "m"}).json()["edit_token"]
    assert manual.patch(url, json={"title": "X"}, headers={"Authorization": f"Bearer {doc_token}"}).status_code == 403
    assert manual.patch(url, json={"title": ""}, headers=h).status_code == 400
    assert manual.patch(url, json={"doc_ids": "nope"}, headers=h).status_code == 400
    assert manual.patch("/api/bundles/zzzzzzzzzz", json={"title": "X"}, headers=h).status_code == 404
    assert "# Path" in manual.get(f"/raw/b/{bundle['id']}").text
    assert manual.post("/api/embed/bundle/zzzzzzzzzz").status_code == 404
