"""Every JSON endpoint refuses fields it does not know, by name.

`{"question": "x", "top_k": 3}` used to answer 200 with k=5: a typo passed silently with the
default in its place. An empty `markdown` gets the same answer from the API as from the CLI.
"""

from __future__ import annotations

import pytest
from memorywiki.server.app import create_app
from starlette.routing import Route


@pytest.fixture
def world(client):
    r = client.post("/api/hubs", json={"slug": "main"})
    owner = {"Authorization": f"Bearer {r.json()['owner_token']}"}
    doc = client.post(
        "/api/docs", json={"title": "Keep me", "markdown": "narwhal tusk text\n", "hub": "main"}, headers=owner
    ).json()
    loose = client.post("/api/docs", json={"title": "Loose", "markdown": "x", "allowed_emails": ["a@b.co"]}).json()
    bundle = client.post(
        "/api/bundles", json={"hub": "main", "title": "B", "doc_ids": [doc["id"]]}, headers=owner
    ).json()
    return {
        "owner": owner,
        "doc": doc,
        "edit": {"Authorization": f"Bearer {doc['edit_token']}"},
        "loose": loose,
        "bundle": bundle,
    }


# (method, path template, credentials, a valid body, the fields the endpoint accepts)
ENDPOINTS = [
    ("POST", "/api/hubs", None, {"slug": "fresh"}, ["slug"]),
    (
        "POST",
        "/api/docs",
        "owner",
        {"title": "t", "markdown": "x", "hub": "main"},
        [
            "title",
            "markdown",
            "hub",
            "source",
            "meta",
            "is_draft",
            "password",
            "allowed_emails",
            "external_id",
            "dedupe",
            "password_hash",
            "created_at",
            "updated_at",
        ],
    ),
    (
        "PATCH",
        "/api/docs/{doc}",
        "edit",
        {"title": "renamed"},
        ["title", "markdown", "hub", "source", "meta", "is_draft", "password", "allowed_emails"],
    ),
    ("POST", "/api/docs/{loose}/access", "loose", {"email": "a@b.co"}, ["email"]),
    ("POST", "/api/docs/{doc}/restore", "edit", {"version": 1}, ["version"]),
    (
        "POST",
        "/api/bundles",
        "owner",
        {"hub": "main", "title": "t"},
        ["hub", "title", "description", "doc_ids", "external_id", "created_at", "updated_at"],
    ),
    ("PATCH", "/api/bundles/{bundle}", "owner", {"title": "t"}, ["title", "description", "doc_ids"]),
    (
        "POST",
        "/api/hub/main/recall",
        None,
        {"question": "narwhal"},
        ["question", "k", "level", "hybrid", "rerank", "fusion", "max_tokens"],
    ),
    (
        "POST",
        "/api/capture",
        "owner",
        {"url": "http://127.0.0.1:9/x", "hub": "main"},
        ["url", "title", "hub", "is_draft", "source", "dedupe"],
    ),
    ("POST", "/api/hub/main/suggestions/{suggestion}/accept", "owner", {"title": "t"}, ["title", "description"]),
    ("POST", "/api/bundles/suggest", None, {"hub": "main", "intent": "narwhal"}, ["hub", "intent", "k"]),
    ("PATCH", "/api/hub/main", "owner", {"listed": True}, ["listed", "description", "redact_secrets"]),
    ("POST", "/api/render", None, {"markdown": "# x"}, ["markdown"]),
    ("POST", "/api/hub/main/lookup", "owner", {"external_ids": ["file:a.md"]}, ["external_ids"]),
    ("POST", "/api/hub/main/members", "owner", {"name": "bob"}, ["name"]),
    (
        "PUT",
        "/api/hub/main/agent-sessions/claude-code/s-1",
        "owner",
        {"title": "t", "transcript": "## User\n\nhi\n"},
        ["title", "transcript", "project", "cwd", "git_branch", "started_at", "note"],
    ),
    (
        "POST",
        "/api/hub/main/agent-context",
        "owner",
        {"kind": "start"},
        ["kind", "project", "prompt", "max_tokens", "tool", "session_id"],
    ),
    ("POST", "/api/docs/{loose}/access/request", None, {"email": "a@b.co"}, ["email"]),
]
# Routes that take no JSON body (multipart uploads, the password form, explicit re-embedding,
# undelete, the form asking for a sign-in link), and the sign-ins (an owner's, a reader's with a
# mailed link), which the CSRF check answers before it reads a body.
NOT_JSON = {
    ("POST", "/api/capture/file"),
    ("POST", "/api/import/{kind}"),
    ("POST", "/{doc_id}"),
    ("POST", "/api/embed/{doc_id}"),
    ("POST", "/api/embed/bundle/{bundle_id}"),
    ("POST", "/api/hub/{slug}/suggestions/{suggestion_id}/dismiss"),
    ("POST", "/api/docs/{doc_id}/undelete"),
    ("POST", "/api/hub/{slug}/session"),
    ("POST", "/{doc_id}/access"),
    ("POST", "/api/docs/{doc_id}/access/session"),
}


def request(client, world, method, path, credentials, body):
    path = path.format(
        doc=world["doc"]["id"], loose=world["loose"]["id"], bundle=world["bundle"]["id"], suggestion="zzzzzzzzzz"
    )
    headers = {}
    if credentials == "loose":
        headers = {"Authorization": f"Bearer {world['loose']['edit_token']}"}
    elif credentials:
        headers = world[credentials]
    return client.request(method, path, json=body, headers=headers)


def test_every_json_endpoint_is_covered_here():
    routes = {
        (method, route.path)
        for route in create_app().routes
        if isinstance(route, Route)
        for method in (route.methods or ())
        if method in ("POST", "PATCH", "PUT")
    }
    covered = {
        (
            method,
            path.replace("{doc}", "{doc_id}")
            .replace("{loose}", "{doc_id}")
            .replace("{bundle}", "{bundle_id}")
            .replace("{suggestion}", "{suggestion_id}")
            .replace("/hub/main", "/hub/{slug}")
            .replace("/claude-code/s-1", "/{tool}/{session_id}"),
        )
        for method, path, *_ in ENDPOINTS
    }
    assert routes - NOT_JSON == covered


@pytest.mark.parametrize(
    "method, path, credentials, body, accepted", ENDPOINTS, ids=[f"{m} {p}" for m, p, *_ in ENDPOINTS]
)
def test_unknown_fields_are_refused_by_name(client, world, method, path, credentials, body, accepted):
    r = request(client, world, method, path, credentials, {**body, "colour": "red", "Title": "x"})
    assert r.status_code == 400, r.text
    error = r.json()["error"]
    assert error["code"] == "unknown_field"
    assert error["unknown"] == ["Title", "colour"]
    assert error["accepted"] == accepted
    assert "'Title', 'colour'" in error["message"] and ", ".join(accepted) in error["message"]
    # nothing happened: the doc, the bundle and the hub list are as they were
    assert client.get(f"/api/docs/{world['doc']['id']}").json()["title"] == "Keep me"
    assert client.get("/api/hub/main").json()["bundles"][0]["title"] == "B"
    assert len(client.get("/api/hub/main").json()["docs"]) == 1


def test_a_misnamed_recall_field_is_refused_with_the_accepted_ones(client, world):
    r = client.post("/api/hub/main/recall", json={"question": "x", "top_k": 3})
    assert r.status_code == 400
    error = r.json()["error"]
    assert error == {
        "code": "unknown_field",
        "unknown": ["top_k"],
        "accepted": ["question", "k", "level", "hybrid", "rerank", "fusion", "max_tokens"],
        "message": "unknown field 'top_k'; accepted fields: question, k, level, hybrid, rerank, fusion, max_tokens",
    }


@pytest.mark.parametrize("markdown", ["", "   ", "\n\n\t\n"])
def test_an_empty_page_is_refused_on_create_and_edit(client, world, markdown):
    r = client.post("/api/docs", json={"title": "Empty", "markdown": markdown, "hub": "main"}, headers=world["owner"])
    assert r.status_code == 400 and r.json()["error"] == {
        "code": "empty_markdown",
        "message": "'markdown' is empty: a page needs some text",
    }
    r = client.patch(f"/api/docs/{world['doc']['id']}", json={"markdown": markdown}, headers=world["edit"])
    assert r.status_code == 400 and r.json()["error"]["code"] == "empty_markdown"
    assert client.get(f"/api/docs/{world['doc']['id']}").json()["markdown"] == "narwhal tusk text\n"
    assert len(client.get("/api/hub/main").json()["docs"]) == 1


def test_a_page_that_is_only_its_title_is_empty_too(client, world):
    r = client.post("/api/docs", json={"title": "Lonely", "markdown": "# Lonely\n\n"})
    assert r.status_code == 400 and r.json()["error"] == {
        "code": "empty_markdown",
        "message": "'markdown' holds nothing but its title: a page needs some text",
    }
