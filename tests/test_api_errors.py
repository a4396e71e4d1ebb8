"""Bad input: every mistake is a 4xx JSON error, never a 500, and nothing saved is lost."""

from __future__ import annotations

import json

import pytest


@pytest.fixture
def seeded(client):
    r = client.post("/api/hubs", json={"slug": "main"})
    h = {"Authorization": f"Bearer {r.json()['owner_token']}"}
    doc = client.post(
        "/api/docs", json={"title": "Keep me", "markdown": "# Safe\n\nnarwhal tusk text\n", "hub": "main"}, headers=h
    ).json()
    return {"h": h, "doc": doc, "edit": {"Authorization": f"Bearer {doc['edit_token']}"}}


def assert_json_error(r, status=None):
    assert 400 <= r.status_code < 500, (r.status_code, r.text)
    if status is not None:
        assert r.status_code == status, r.text
    body = r.json()
    assert set(body) == {"error"}
    assert isinstance(body["error"]["code"], str) and body["error"]["code"]
    assert isinstance(body["error"]["message"], str) and body["error"]["message"]
    return body["error"]["code"]


def assert_intact(client, seeded):
    doc = client.get(f"/api/docs/{seeded['doc']['id']}").json()
    assert doc["title"] == "Keep me" and doc["markdown"] == "# Safe\n\nnarwhal tusk text\n" and doc["version"] == 1
    r = client.post("/api/hub/main/recall", json={"question": "narwhal", "hybrid": True})
    assert [x["doc_id"] for x in r.json()["results"]] == [seeded["doc"]["id"]]
    assert [d["id"] for d in client.get("/api/hub/main").json()["docs"]] == [seeded["doc"]["id"]]


MALFORMED = [
    b"",
    b"   ",
    b"{",
    b"{'a': 1}",
    b"[1, 2]",
    b'"text"',
    b"null",
    b"42",
    b"\xff\xfe\x00",
    b'{"title": "x", "markdown": "y"',
]


def test_malformed_json_everywhere(client, seeded):
    doc_id = seeded["doc"]["id"]
    endpoints = [
        ("POST", "/api/hubs", {}),
        ("POST", "/api/docs", seeded["h"]),
        ("PATCH", f"/api/docs/{doc_id}", seeded["edit"]),
        ("POST", "/api/bundles", seeded["h"]),
        ("POST", "/api/hub/main/recall", {}),
        ("POST", f"/api/docs/{doc_id}/access", seeded["edit"]),
    ]
    for method, url, headers in endpoints:
        for body in MALFORMED:
            r = client.request(method, url, content=body, headers={**headers, "Content-Type": "application/json"})
            assert_json_error(r, 400)
    assert_intact(client, seeded)


@pytest.mark.parametrize(
    "body",
    [
        {"markdown": "no title"},
        {"title": "no markdown"},
        {"title": "", "markdown": "x"},
        {"title": "   ", "markdown": "x"},
        {"title": 5, "markdown": "x"},
        {"title": "t", "markdown": ["x"]},
        {"title": "t", "markdown": "x", "hub": 3},
        {"title": "t", "markdown": "x", "is_draft": "yes"},
        {"title": "t", "markdown": "x", "is_draft": 1},
        {"title": "t", "markdown": "x", "password": 1234},
        {"title": "t", "markdown": "x", "allowed_emails": "a@b.co"},
        {"title": "t", "markdown": "x", "allowed_emails": ["not-an-email"]},
        {"title": "t", "markdown": "x", "source": {}},
        {"title": "t" * 501, "markdown": "x"},
        {"title": "t", "markdown": "nul \x00 byte"},
    ],
)
def test_create_doc_wrong_types(client, seeded, body):
    assert_json_error(client.post("/api/docs", json=body), 400)
    if set(body) not in ({"markdown"}, {"title"}):  # a PATCH may leave fields out; a bad value is still bad
        r = client.patch(f"/api/docs/{seeded['doc']['id']}", json=body, headers=seeded["edit"])
        assert_json_error(r, 400)
    assert_intact(client, seeded)


@pytest.mark.parametrize(
    "method,url,body,field",
    [
        # the fuzzer's case (a stateful run on CI): a NUL in a list item reached PostgreSQL as a 500
        (
            "POST",
            "/api/bundles",
            {"hub": "main", "title": "\ud986\ude9d", "doc_ids": ["\f\u00ee", "\u0000>"]},
            "'doc_ids[1]' must not contain NUL characters",
        ),
        (
            "POST",
            "/api/bundles",
            {"hub": "main", "title": "half \ud800", "doc_ids": []},
            "'title' must not contain unpaired UTF-16 surrogates",
        ),
        (
            "POST",
            "/api/docs",
            {"hub": "main", "title": "t", "markdown": "body \udfff"},
            "'markdown' must not contain unpaired UTF-16 surrogates",
        ),
        (
            "POST",
            "/api/docs",
            {"hub": "main", "title": "t", "markdown": "b", "allowed_emails": ["a\u0000@b.co"]},
            "'allowed_emails[0]' must not contain NUL characters",
        ),
        ("PATCH", "/api/docs/{doc}", {"title": "\udc00"}, "'title' must not contain unpaired UTF-16 surrogates"),
        ("POST", "/api/hub/main/recall", {"question": "narwhal \ud83d"}, "'question' must not contain unpaired"),
        ("POST", "/api/hubs", {"slug": "a\u0000b"}, "'slug' must not contain NUL characters"),
        (
            "POST",
            "/api/docs",
            {"hub": "main", "title": "t", "markdown": "b", "meta": {"k\udc00": 1}},
            "'meta.k\ufffd' must not contain unpaired UTF-16 surrogates",
        ),  # the message shows U+FFFD for it
    ],
)
def test_text_postgresql_cannot_store_is_a_400_naming_the_field(client, seeded, method, url, body, field):
    """A NUL or a lone surrogate anywhere in a body (a list item too) is the caller's mistake."""
    headers = seeded["edit"] if method == "PATCH" else seeded["h"]
    # sent as escaped JSON: encoded as UTF-8, a lone surrogate would not even leave the client
    r = client.request(
        method,
        url.format(doc=seeded["doc"]["id"]),
        content=json.dumps(body),
        headers={**headers, "Content-Type": "application/json"},
    )
    assert assert_json_error(r, 400) == "invalid_field"
    assert r.json()["error"]["message"].startswith(field)
    assert_intact(client, seeded)
    # a valid pair is one character, stored as sent
    r = client.post(
        "/api/docs",
        content=json.dumps({"hub": "main", "title": "pair \ud986\ude9d", "markdown": "b"}),
        headers={**seeded["h"], "Content-Type": "application/json"},
    )
    assert r.status_code == 201, r.text
    assert client.get(f"/api/docs/{r.json()['id']}").json()["title"] == "pair \U00071a9d"


def test_a_blank_external_id_is_no_id_so_each_save_makes_its_own_page(client, seeded):
    """Found by the fuzzer: the second save with `"external_id": ""` into a hub was a 500."""
    ids = []
    for i, blank in enumerate(["", "", "  "]):
        r = client.post(
            "/api/docs",
            json={"hub": "main", "title": f"Blank {i}", "markdown": f"text {i}", "external_id": blank},
            headers=seeded["h"],
        )
        assert r.status_code == 201, r.text
        ids.append(r.json()["id"])
    assert len(set(ids)) == 3
    r = client.post("/api/docs", json={"title": "No hub", "markdown": "text", "external_id": ""})
    assert r.status_code == 201, r.text  # no id, so it needs no hub


def test_an_unknown_field_named_with_a_lone_surrogate_is_still_a_400(client, seeded):
    """The error quotes the name it refuses; a lone surrogate there once broke the error itself (500)."""
    r = client.post("/api/docs", content='{"\\ud800x": 1}', headers={**seeded["h"], "Content-Type": "application/json"})
    assert assert_json_error(r, 400) == "unknown_field" and r.json()["error"]["unknown"] == ["\ufffdx"]


@pytest.mark.parametrize(
    "body,code",
    [
        ({}, "missing_field"),
        ({"question": ""}, None),
        ({"question": "   "}, None),
        ({"question": None}, "missing_field"),
        ({"question": 7}, None),
        ({"question": ["a"]}, None),
        ({"question": "x" * 4001}, "question_too_long"),
        ({"question": "ok", "k": 0}, "out_of_range"),
        ({"question": "ok", "k": 51}, "out_of_range"),
        ({"question": "ok", "k": -1}, "out_of_range"),
        ({"question": "ok", "k": "5"}, None),
        ({"question": "ok", "k": 2.5}, None),
        ({"question": "ok", "k": True}, None),
        ({"question": "ok", "k": 10**30}, "out_of_range"),
        ({"question": "ok", "level": "paragraph"}, "unknown_level"),
        ({"question": "ok", "level": 1}, None),
        ({"question": "ok", "level": "CHUNK"}, "unknown_level"),
        ({"question": "ok", "hybrid": "true"}, None),
        ({"question": "ok", "hybrid": 1}, None),
    ],
)
def test_recall_bad_input(client, seeded, body, code):
    got = assert_json_error(client.post("/api/hub/main/recall", json=body), 400)
    if code:
        assert got == code


def test_recall_accepts_the_edges(client, seeded):
    for body in (
        {"question": "x" * 4000},
        {"question": "narwhal", "k": 1},
        {"question": "narwhal", "k": 50},
        {"question": "narwhal", "k": None, "level": None, "hybrid": None},
    ):
        r = client.post("/api/hub/main/recall", json=body)
        assert r.status_code == 200, r.text


def test_unknown_hub(client, seeded):
    for slug in ("nohub", "HUB", "..", "%2e%2e", "a" * 300):
        r = client.post(f"/api/hub/{slug}/recall", json={"question": "narwhal"})
        assert_json_error(r, 404)
        assert_json_error(client.get(f"/api/hub/{slug}"), 404)
    assert client.get("/hub/nohub", headers={"Accept": "text/html"}).status_code == 404
    assert client.get("/raw/hub/nohub").status_code == 404


@pytest.mark.parametrize(
    "doc_id",
    ["zzzzzzzzzz", "..%2F..%2Fetc%2Fpasswd", "%2e%2e", "a" * 500, "ABCDEFGHJK", "x'%20OR%201=1--", "%00", "0000000000"],
)
def test_unknown_or_odd_doc_ids(client, seeded, doc_id):
    for method, url, headers, body in [
        ("GET", f"/api/docs/{doc_id}", {}, None),
        ("PATCH", f"/api/docs/{doc_id}", seeded["edit"], {"title": "x"}),
        ("DELETE", f"/api/docs/{doc_id}", seeded["edit"], None),
        ("POST", f"/api/embed/{doc_id}", {}, None),
        ("POST", f"/api/docs/{doc_id}/access", seeded["edit"], {"email": "a@b.co"}),
    ]:
        r = client.request(method, url, headers=headers, json=body)
        assert_json_error(r, 404)
    assert client.get(f"/raw/{doc_id}").status_code == 404
    assert client.get(f"/{doc_id}", headers={"Accept": "text/html"}).status_code == 404
    assert client.get(f"/{doc_id}", headers={"Accept": "text/markdown"}).status_code == 404
    assert_intact(client, seeded)


def test_traversal_paths_do_not_escape(client, seeded):
    for path in ("/raw/../../etc/passwd", "/../../etc/passwd", "/raw/%2e%2e/%2e%2e/etc/passwd"):
        r = client.get(path)
        assert r.status_code == 404 or "root:" not in r.text


@pytest.mark.slow  # indexing the 4 MB doc at teardown takes seconds
def test_body_over_5mb_is_413(client, seeded):
    big = "x" * (5 * 1024 * 1024 + 10)
    r = client.post("/api/docs", json={"title": "big", "markdown": big})
    assert_json_error(r, 413)
    r = client.patch(f"/api/docs/{seeded['doc']['id']}", json={"markdown": big}, headers=seeded["edit"])
    assert_json_error(r, 413)

    # streamed without a Content-Length, the limit still holds
    def stream():
        payload = json.dumps({"title": "big", "markdown": big}).encode()
        for i in range(0, len(payload), 1 << 20):
            yield payload[i : i + (1 << 20)]

    r = client.post("/api/docs", content=stream(), headers={"Content-Type": "application/json"})
    assert_json_error(r, 413)
    r = client.post("/api/hub/main/recall", json={"question": "q", "pad": "x" * 100_000})
    assert_json_error(r, 413)
    assert_intact(client, seeded)
    # just under the limit is fine
    ok = client.post("/api/docs", json={"title": "large", "markdown": "y" * (4 * 1024 * 1024)})
    assert ok.status_code == 201, ok.text[:200]


def test_hub_and_bundle_bad_input(client, seeded):
    for body in ({}, {"slug": 5}, {"slug": None}, {"slug": ["a"]}):
        assert_json_error(client.post("/api/hubs", json=body), 400)
    for body in (
        {"hub": "main"},
        {"hub": "main", "title": ""},
        {"hub": "main", "title": "t", "doc_ids": "x"},
        {"hub": "main", "title": "t", "doc_ids": [1]},
        {"title": "t"},
    ):
        assert_json_error(client.post("/api/bundles", json=body, headers=seeded["h"]), 400)
    assert client.get("/api/hub/main").json()["bundles"] == []


def test_unknown_routes_and_methods_are_json_errors(client, seeded):
    assert_json_error(client.get("/api/nothing/here"), 404)
    assert_json_error(client.put(f"/api/docs/{seeded['doc']['id']}", json={}), 405)
    assert_json_error(client.get("/api/hub/main/recall"), 405)


@pytest.mark.parametrize(
    "url, status",
    [
        # found by the fuzzer (tests/test_fuzz.py): a NUL in a URL reached PostgreSQL, "²" reached int()
        ("/api/hub/a%00b", 404),
        ("/hub/a%00b", 404),
        ("/hub/a%00b/llms.txt", 404),
        ("/api/hub/a%00b/graph", 404),
        ("/hub/main?q=a%00b", 400),
        ("/api/social/cross-refs?hub=a%00b", 400),
        ("/hub/main?page=%C2%B2", 400),
        ("/api/hub/main?per_page=%C2%B2", 400),
    ],
)
def test_text_postgresql_cannot_hold_in_a_url_is_a_4xx(client, seeded, url, status):
    r = client.get(url, headers={"Accept": "application/json"})
    assert r.status_code == status, (url, r.status_code, r.text[:300])
    assert r.json()["error"]["code"] in ("unknown_hub", "invalid_query")
    history = client.get(f"/{seeded['doc']['id']}/history?a=%C2%B2", headers={"Accept": "application/json"})
    assert history.status_code == 400 and history.json()["error"]["code"] == "invalid_query"
