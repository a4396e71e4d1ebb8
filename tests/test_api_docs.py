"""HTTP contract of hubs and docs: create, read, update (optimistic locking), soft delete, pages."""

from __future__ import annotations

import re
import threading

import psycopg
import pytest


def make_hub(client, slug="notes"):
    r = client.post("/api/hubs", json={"slug": slug})
    assert r.status_code == 201, r.text
    return r.json()


def auth(token):
    return {"Authorization": f"Bearer {token}"}


def make_doc(client, token=None, **fields):
    body = {"title": "A page", "markdown": "# Intro\n\nSome text.\n"}
    body.update(fields)
    r = client.post("/api/docs", json=body, headers=auth(token) if token else {})
    assert r.status_code == 201, r.text
    return r.json()


def assert_error(r, status, code=None):
    assert r.status_code == status, r.text
    err = r.json()["error"]
    assert isinstance(err["message"], str) and err["message"]
    if code is not None:
        assert err["code"] == code
    return err


# ----------------------------------------------------------------------------- hubs


def test_create_hub_returns_owner_token_and_url(client):
    hub = make_hub(client, "research")
    assert hub["slug"] == "research"
    assert hub["url"] == "http://testserver/hub/research"
    assert len(hub["owner_token"]) >= 32
    assert_error(client.post("/api/hubs", json={"slug": "research"}), 409, "hub_taken")
    # the first owner still owns it: the 409 issued no new token
    doc = make_doc(client, hub["owner_token"], hub="research")
    assert doc["id"]


@pytest.mark.parametrize(
    "slug", ["", "-lead", "trail-", "has space", "UPPER!", "a" * 64, "api", "raw", "a/b", "../x", "ü"]
)
def test_invalid_hub_slugs_are_400(client, slug):
    assert_error(client.post("/api/hubs", json={"slug": slug}), 400)


def test_hub_slug_is_normalised_to_lowercase(client):
    hub = make_hub(client, "MyNotes")
    assert hub["slug"] == "mynotes"
    assert_error(client.post("/api/hubs", json={"slug": "mynotes"}), 409)


# ----------------------------------------------------------------------------- create


def test_hubless_doc_needs_no_token_and_gets_short_url_safe_id(client):
    ids = set()
    for i in range(5):
        doc = make_doc(client, title=f"Doc {i}")
        assert re.fullmatch(r"[A-Za-z0-9_-]{6,16}", doc["id"]), doc["id"]
        assert doc["url"] == f"http://testserver/{doc['id']}"
        assert doc["edit_token"]
        ids.add(doc["id"])
    assert len(ids) == 5
    r = client.get(f"/api/docs/{doc['id']}")
    assert r.status_code == 200
    assert r.json()["title"] == "Doc 4"
    assert r.json()["hub"] is None


def test_doc_in_hub_needs_owner_token(client):
    hub = make_hub(client)
    body = {"title": "T", "markdown": "x", "hub": "notes"}
    assert_error(client.post("/api/docs", json=body), 401)
    assert_error(client.post("/api/docs", json=body, headers=auth("mwo_wrong")), 403)
    other = make_hub(client, "other")
    assert_error(client.post("/api/docs", json=body, headers=auth(other["owner_token"])), 403)
    assert_error(client.post("/api/docs", json={**body, "hub": "nohub"}, headers=auth(hub["owner_token"])), 404)
    # nothing was created by the refused requests
    assert client.get("/api/hub/notes").json()["docs"] == []
    doc = make_doc(client, hub["owner_token"], hub="notes", title="T", markdown="x", source="claude")
    got = client.get(f"/api/docs/{doc['id']}").json()
    assert got["hub"] == "notes" and got["source"] == "claude" and got["markdown"] == "x"
    assert [d["id"] for d in client.get("/api/hub/notes").json()["docs"]] == [doc["id"]]


def test_edit_token_of_a_doc_does_not_own_the_hub(client):
    hub = make_hub(client)
    doc = make_doc(client, hub["owner_token"], hub="notes")
    r = client.post("/api/docs", json={"title": "T", "markdown": "x", "hub": "notes"}, headers=auth(doc["edit_token"]))
    assert_error(r, 403)


# ----------------------------------------------------------------------------- read / patch


def test_patch_with_edit_token_or_owner_token(client):
    hub = make_hub(client)
    doc = make_doc(client, hub["owner_token"], hub="notes", title="One", markdown="first")
    url = f"/api/docs/{doc['id']}"

    assert_error(client.patch(url, json={"title": "X"}), 401)
    assert_error(client.patch(url, json={"title": "X"}, headers=auth("nope")), 403)
    other = make_doc(client)
    assert_error(client.patch(url, json={"title": "X"}, headers=auth(other["edit_token"])), 403)
    assert client.get(url).json()["title"] == "One"

    r = client.patch(url, json={"title": "Two"}, headers=auth(doc["edit_token"]))
    assert r.status_code == 200, r.text
    assert r.json()["title"] == "Two" and r.json()["version"] == 2
    r = client.patch(url, json={"markdown": "second", "source": "cursor"}, headers=auth(hub["owner_token"]))
    assert r.status_code == 200, r.text
    got = client.get(url).json()
    assert (got["title"], got["markdown"], got["source"], got["version"]) == ("Two", "second", "cursor", 3)


def test_if_match_stale_version_is_409(client):
    doc = make_doc(client, markdown="v1")
    url, h = f"/api/docs/{doc['id']}", auth(doc["edit_token"])
    version = client.get(url).json()["version"]
    r = client.patch(url, json={"markdown": "from A"}, headers={**h, "If-Match": str(version)})
    assert r.status_code == 200, r.text
    r = client.patch(url, json={"markdown": "from B"}, headers={**h, "If-Match": str(version)})
    assert_error(r, 409, "version_conflict")
    got = client.get(url).json()
    assert got["markdown"] == "from A" and got["version"] == version + 1
    # the quoted ETag form works too, and a garbage If-Match is a 400, not a write
    r = client.patch(url, json={"markdown": "from C"}, headers={**h, "If-Match": f'"{version + 1}"'})
    assert r.status_code == 200
    assert_error(client.patch(url, json={"markdown": "zzz"}, headers={**h, "If-Match": "abc"}), 400)
    assert client.get(url).json()["markdown"] == "from C"


def test_concurrent_patches_with_same_if_match_never_lose_an_update(live_server):
    import httpx

    doc = httpx.post(f"{live_server.url}/api/docs", json={"title": "race", "markdown": "base"}).json()
    url = f"{live_server.url}/api/docs/{doc['id']}"
    h = {"Authorization": f"Bearer {doc['edit_token']}", "If-Match": "1"}
    barrier = threading.Barrier(6)
    results = {}

    def patch(i):
        barrier.wait()
        results[i] = httpx.patch(url, json={"markdown": f"writer {i}"}, headers=h, timeout=20)

    threads = [threading.Thread(target=patch, args=(i,)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    codes = sorted(r.status_code for r in results.values())
    assert codes == [200] + [409] * 5, codes
    winner = next(i for i, r in results.items() if r.status_code == 200)
    final = httpx.get(url).json()
    assert final["markdown"] == f"writer {winner}" and final["version"] == 2


def test_owner_view_shows_privacy_fields_public_view_does_not(client):
    doc = make_doc(client, markdown="hello")
    url = f"/api/docs/{doc['id']}"
    public = client.get(url).json()
    assert "is_draft" not in public and "allowed_emails" not in public and "has_password" not in public
    owner = client.get(url, headers=auth(doc["edit_token"])).json()
    assert owner["is_draft"] is False and owner["has_password"] is False and owner["allowed_emails"] == []
    assert not any("hash" in key for key in owner)


def test_moving_a_doc_into_a_hub_needs_both_credentials(client):
    hub = make_hub(client)
    doc = make_doc(client)
    url = f"/api/docs/{doc['id']}"
    # the edit token alone cannot put a doc into someone's hub
    assert_error(client.patch(url, json={"hub": "notes"}, headers=auth(doc["edit_token"])), 403)
    # and the hub's owner token is not an edit credential for a hubless doc
    assert_error(client.patch(url, json={"hub": "notes"}, headers=auth(hub["owner_token"])), 403)
    assert client.get(url).json()["hub"] is None
    # with both (the edit token in X-Edit-Token) the move works, and the doc shows in the hub
    moved = client.patch(
        url, json={"hub": "notes"}, headers={**auth(hub["owner_token"]), "X-Edit-Token": doc["edit_token"]}
    )
    assert moved.status_code == 200, moved.text
    assert client.get(url).json()["hub"] == "notes"
    assert [d["id"] for d in client.get("/api/hub/notes").json()["docs"]] == [doc["id"]]


# ----------------------------------------------------------------------------- delete


def test_soft_delete_hides_everywhere_but_keeps_the_row(client, settings):
    hub = make_hub(client)
    doc = make_doc(client, hub["owner_token"], hub="notes", title="Gone soon", markdown="# Zebra\n\nquagga stripes\n")
    doc_id, url = doc["id"], f"/api/docs/{doc['id']}"
    assert_error(client.delete(url), 401)
    assert_error(client.delete(url, headers=auth("bad")), 403)
    assert client.get(url).status_code == 200

    r = client.delete(url, headers=auth(doc["edit_token"]))
    assert r.status_code == 200, r.text
    assert_error(client.get(url), 404)
    assert_error(client.get(url, headers=auth(doc["edit_token"])), 404)
    assert client.get(f"/raw/{doc_id}").status_code == 404
    assert client.get(f"/{doc_id}").status_code == 404
    assert client.get(f"/{doc_id}", headers={"Accept": "text/markdown"}).status_code == 404
    assert_error(client.patch(url, json={"title": "back"}, headers=auth(doc["edit_token"])), 404)
    assert_error(client.delete(url, headers=auth(doc["edit_token"])), 404)
    assert client.get("/api/hub/notes").json()["docs"] == []
    r = client.post("/api/hub/notes/recall", json={"question": "quagga stripes"})
    assert r.status_code == 200 and r.json()["results"] == []

    with psycopg.connect(settings.database_url) as conn:
        row = conn.execute("SELECT title, deleted_at FROM docs WHERE id = %s", (doc_id,)).fetchone()
    assert row is not None and row[0] == "Gone soon" and row[1] is not None


# ----------------------------------------------------------------------------- pages


def test_raw_view_has_front_matter_then_body(client):
    hub = make_hub(client)
    doc = make_doc(
        client,
        hub["owner_token"],
        hub="notes",
        title='Quote "this": yes',
        markdown="# Heading\n\nBody text.\n",
        source="chatgpt",
    )
    r = client.get(f"/raw/{doc['id']}")
    assert r.status_code == 200
    assert r.headers["content-type"].startswith("text/markdown")
    text = r.text
    assert text.startswith("---\n")
    head, body = text[4:].split("\n---\n", 1)
    import yaml

    meta = yaml.safe_load(head)
    assert meta["title"] == 'Quote "this": yes'
    assert meta["url"] == doc["url"]
    assert meta["hub"] == "notes"
    assert meta["source"] == "chatgpt"
    assert meta["updated"]
    body, _, curation = body.partition("\n---\n\n")  # the body, then the curation block
    assert body.strip() == "# Heading\n\nBody text."
    assert "## Bundles containing this document" not in curation  # in no bundle: no empty section
    bare = client.get(f"/raw/{doc['id']}?curation=0").text
    assert bare.split("\n---\n", 1)[1].strip() == "# Heading\n\nBody text.", "?curation=0: the doc as saved"


def test_doc_page_is_html_and_markdown_on_accept(client):
    doc = make_doc(client, title="Page", markdown="# Hello\n\nA *styled* paragraph.\n")
    r = client.get(f"/{doc['id']}", headers={"Accept": "text/html"})
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/html")
    assert "<em>styled</em>" in r.text
    r = client.get(f"/{doc['id']}", headers={"Accept": "text/markdown"})
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/markdown")
    assert r.text.startswith("---\n") and "A *styled* paragraph." in r.text
    assert client.get("/notadoc42", headers={"Accept": "text/html"}).status_code == 404


def test_user_markdown_is_rendered_safely(client):
    evil = (
        "# Title\n\n<script>alert(1)</script>\n\n<img src=x onerror=alert(2)>\n\n"
        "[click](javascript:alert(3)) [data](data:text/html;base64,PHNjcmlwdD4=)"
        " [vb](vbscript:msgbox) [JaVa](JAVASCRIPT:alert(4))\n\n"
        '<a href="javascript:alert(5)">raw link</a>\n\n<iframe src="https://evil"></iframe>\n'
    )
    doc = make_doc(client, title="<script>alert('t')</script>", markdown=evil)
    r = client.get(f"/{doc['id']}", headers={"Accept": "text/html"})
    assert r.status_code == 200
    html = r.text.lower()
    assert "<script>alert" not in html
    assert "<img" not in html and "<iframe" not in html
    targets = re.findall(r"""(?:href|src|action)\s*=\s*["']?([^"'\s>]*)""", html)
    assert targets  # the page has its own links, so the scan is looking at something
    assert not [t for t in targets if t.strip().startswith(("javascript:", "data:", "vbscript:"))]
    assert not re.search(r"<[a-z]+[^>]*\son[a-z]+\s*=", html)  # no event-handler attributes
    assert "&lt;script&gt;" in html  # shown as text, not dropped silently


def test_healthz(client):
    r = client.get("/healthz")
    assert r.status_code == 200
    body = r.json()
    assert body["status"] == "ok" and body["embedder"] and body["owed"] == 0
