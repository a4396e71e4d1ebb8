"""The owner's view of a hub over HTTP: every live page with its visibility, the trash and
undelete, and the browser's sign-in session that the hub's pages use (signed cookie, CSRF,
rotation on sign-in, refusal after sign-out or expiry), on a real database."""

from __future__ import annotations

import io
import json
import re
import zipfile
from pathlib import Path

import psycopg
import pytest
from memorywiki.server.web.sessions import COOKIE

FIXTURES = Path(__file__).parent / "data" / "fixtures"
KINDS = {
    "public": {},
    "draft": {"is_draft": True},
    "password": {"password": "pw"},
    "people": {"allowed_emails": ["ann@example.com"]},
}


@pytest.fixture
def hub(client):
    token = client.post("/api/hubs", json={"slug": "mine"}).json()["owner_token"]
    owner = {"Authorization": f"Bearer {token}"}
    docs = {}
    for kind, extra in KINDS.items():
        r = client.post(
            "/api/docs",
            json={"hub": "mine", "title": f"The {kind} page", "markdown": f"About {kind}.", **extra},
            headers=owner,
        )
        assert r.status_code == 201, r.text
        docs[kind] = r.json()
    return {"token": token, "owner": owner, "docs": docs}


def csrf(client, slug: str = "mine") -> str:
    """The token a page of this server gives the browser (and the nonce cookie it goes with)."""
    page = client.get(f"/hub/{slug}/signin", headers={"Accept": "text/html"})
    assert page.status_code == 200
    return re.search(r'<meta name="csrf-token" content="([^"]+)"', page.text).group(1)


def sign_in(client, token: str, slug: str = "mine"):
    return client.post(f"/api/hub/{slug}/session", json={"token": token}, headers={"X-CSRF-Token": csrf(client, slug)})


def use_cookie(client, value: str) -> None:
    """This browser holds exactly this session cookie (as a thief who copied it would)."""
    client.cookies.clear()
    client.cookies.set(COOKIE, value)


def session_row(settings, **where) -> list[tuple]:
    with psycopg.connect(settings.database_url) as conn:
        return conn.execute(
            "SELECT kind, revoked_at IS NULL, expires_at > now() FROM sessions ORDER BY created_at"
        ).fetchall()


def test_the_owner_token_lists_every_live_page_with_its_visibility(client, hub):
    client.delete(f"/api/docs/{hub['docs']['public']['id']}", headers=hub["owner"])
    kept = client.post(
        "/api/docs", json={"hub": "mine", "title": "Kept", "markdown": "Still here."}, headers=hub["owner"]
    ).json()
    owned = client.get("/api/hub/mine", headers=hub["owner"])
    assert owned.status_code == 200 and owned.json()["view"] == "owner"
    assert owned.headers["cache-control"] == "private, no-store"
    seen = {d["id"]: d["visibility"] for d in owned.json()["docs"]}
    assert seen == {kept["id"]: "public", **{hub["docs"][k]["id"]: k for k in ("draft", "password", "people")}}
    people = next(d for d in owned.json()["docs"] if d["visibility"] == "people")
    assert people["allowed_emails"] == ["ann@example.com"]
    assert (owned.json()["total_docs"], owned.json()["trash"]) == (4, 1)

    for headers in ({}, {"Authorization": "Bearer mwo_not-the-token"}):  # a stranger sees what strangers see
        public = client.get("/api/hub/mine", headers=headers).json()
        assert public["view"] == "public" and [d["id"] for d in public["docs"]] == [kept["id"]]
        assert "visibility" not in public["docs"][0] and "trash" not in public
    # paging follows the owner's view with the token
    first = client.get("/api/hub/mine?per_page=3", headers=hub["owner"]).json()
    second = client.get(first["next"], headers=hub["owner"]).json()
    assert len(first["docs"]) == 3 and len(second["docs"]) == 1 and second["next"] is None


def test_trash_and_undelete(client, hub):
    draft = hub["docs"]["draft"]
    assert client.delete(f"/api/docs/{draft['id']}", headers=hub["owner"]).status_code == 200
    assert client.get("/api/hub/mine/trash").status_code == 401
    assert client.get("/api/hub/mine/trash", headers={"Authorization": "Bearer nope"}).status_code == 403
    assert client.get("/api/hub/nowhere/trash", headers=hub["owner"]).status_code == 404
    trash = client.get("/api/hub/mine/trash", headers=hub["owner"]).json()
    assert [(d["id"], d["visibility"]) for d in trash["docs"]] == [(draft["id"], "draft")]
    assert trash["total_docs"] == 1 and trash["docs"][0]["deleted_at"]

    # the doc's own edit token cannot bring it back: the hub's owner decides
    r = client.post(f"/api/docs/{draft['id']}/undelete", headers={"Authorization": f"Bearer {draft['edit_token']}"})
    assert r.status_code == 403
    r = client.post(f"/api/docs/{draft['id']}/undelete", headers=hub["owner"])
    assert r.status_code == 200, r.text
    body = r.json()
    assert (body["version"], body["restored_from"], body["changed"], body["is_draft"]) == (3, 1, True, True)
    assert client.get("/api/hub/mine/trash", headers=hub["owner"]).json()["docs"] == []
    versions = client.get(f"/api/docs/{draft['id']}/versions", headers=hub["owner"]).json()["versions"]
    assert [(v["version"], v["action"], v["deleted"]) for v in versions] == [
        (3, "restore", False),
        (2, "delete", True),
        (1, "create", False),
    ]
    r = client.post(f"/api/docs/{draft['id']}/undelete", headers=hub["owner"])
    assert r.status_code == 409 and r.json()["error"]["code"] == "not_deleted"
    assert client.post("/api/docs/zzzzzzzzzz/undelete", headers=hub["owner"]).status_code == 404
    r = client.post(f"/api/docs/{draft['id']}/undelete", json={"version": 1}, headers=hub["owner"])
    assert r.status_code == 400 and r.json()["error"]["code"] == "unknown_field"
    # a page of no hub comes back with its own edit token
    loose = client.post("/api/docs", json={"title": "Loose", "markdown": "No hub."}).json()
    mine = {"Authorization": f"Bearer {loose['edit_token']}"}
    client.delete(f"/api/docs/{loose['id']}", headers=mine)
    assert client.post(f"/api/docs/{loose['id']}/undelete", headers=mine).status_code == 200


def test_sign_in_sets_a_signed_httponly_lax_cookie_holding_no_token(client, hub, settings):
    r = sign_in(client, hub["token"])
    assert r.status_code == 200, r.text
    assert (r.json()["kind"], r.json()["signed_in"]) == ("owner", True)
    cookie = r.headers["set-cookie"]
    assert cookie.startswith(f"{COOKIE}=") and "HttpOnly" in cookie and "SameSite=lax" in cookie
    assert "Secure" not in cookie  # plain http here; https gets Secure
    assert hub["token"] not in cookie and hub["token"].split("_", 1)[1] not in cookie
    assert session_row(settings) == [("owner", True, True)]
    with psycopg.connect(settings.database_url) as conn:  # the database holds a hash, never the id
        (id_hash,) = conn.execute("SELECT id_hash FROM sessions").fetchone()
    assert re.fullmatch(r"[0-9a-f]{64}", id_hash) and id_hash not in cookie

    owned = client.get("/api/hub/mine")  # the cookie alone is the owner's view
    assert owned.json()["view"] == "owner" and owned.json()["total_docs"] == 4
    draft = hub["docs"]["draft"]["id"]
    assert client.get(f"/api/docs/{draft}").json()["is_draft"] is True
    assert "About draft." in client.get(f"/{draft}", headers={"Accept": "text/html"}).text
    status = client.get("/api/hub/mine/session").json()
    assert (status["signed_in"], status["kind"]) == (True, "owner")
    # a write with the cookie needs the page's CSRF token; with it, the cookie proves the owner
    r = client.patch("/api/hub/mine", json={"description": "Mine."})
    assert r.status_code == 403 and r.json()["error"]["code"] == "csrf_failed"
    r = client.patch("/api/hub/mine", json={"description": "Mine."}, headers={"X-CSRF-Token": csrf(client)})
    assert r.status_code == 200 and r.json()["description"] == "Mine."
    versions = client.get(f"/api/docs/{draft}/versions").json()["versions"]
    r = client.delete(f"/api/docs/{draft}", headers={"X-CSRF-Token": csrf(client)})
    assert r.status_code == 200
    assert client.get("/api/hub/mine/trash").json()["docs"][0]["id"] == draft
    assert len(client.get(f"/api/docs/{draft}/versions").json()["versions"]) == len(versions) + 1


def test_sign_in_is_always_csrf_checked_and_refuses_wrong_tokens(client, hub):
    r = client.post("/api/hub/mine/session", json={"token": hub["token"]})
    assert r.status_code == 403 and r.json()["error"]["code"] == "csrf_failed" and "set-cookie" not in r.headers
    r = client.post("/api/hub/mine/session", json={"token": hub["token"]}, headers=hub["owner"])
    assert r.status_code == 403 and r.json()["error"]["code"] == "csrf_failed"  # a header credential is no pass here
    token = csrf(client)
    for body, status, code in [
        ({"token": "mwo_wrong"}, 403, "wrong_token"),
        ({"token": hub["token"][:-1]}, 403, "wrong_token"),
        ({"token": ""}, 400, "invalid_field"),
        ({}, 400, "missing_field"),
        ({"token": hub["token"], "hub": "x"}, 400, "unknown_field"),
    ]:
        r = client.post("/api/hub/mine/session", json=body, headers={"X-CSRF-Token": token})
        assert (r.status_code, r.json()["error"]["code"]) == (status, code), (body, r.text)
        assert "set-cookie" not in {k.lower() for k in r.headers}
    r = client.post("/api/hub/mine/session", json={"token": "mwo_wrong"}, headers={"X-CSRF-Token": token})
    assert "does not open hub 'mine'" in r.json()["error"]["message"]
    r = client.post("/api/hub/nowhere/session", json={"token": hub["token"]}, headers={"X-CSRF-Token": token})
    assert r.status_code == 404
    # another hub's owner token opens only its own hub
    other = client.post("/api/hubs", json={"slug": "theirs"}).json()["owner_token"]
    assert sign_in(client, other).status_code == 403
    assert client.get("/api/hub/mine").json()["view"] == "public"


def test_sign_out_then_a_replayed_cookie_is_refused(client, hub, settings):
    sign_in(client, hub["token"])
    stolen = client.cookies[COOKIE]
    r = client.delete("/api/hub/mine/session", headers={"X-CSRF-Token": csrf(client)})
    assert r.status_code == 200 and r.json()["signed_out"] is True
    assert f'{COOKIE}=""' in r.headers["set-cookie"] and "Max-Age=0" in r.headers["set-cookie"]
    assert session_row(settings) == [("owner", False, True)]
    assert client.delete("/api/hub/mine/session", headers={"X-CSRF-Token": csrf(client)}).json()["signed_out"] is False

    use_cookie(client, stolen)  # the thief replays the cookie taken before the sign-out
    listing = client.get("/api/hub/mine").json()
    assert listing["view"] == "public" and len(listing["docs"]) == 1
    draft = hub["docs"]["draft"]["id"]
    assert client.get(f"/api/docs/{draft}").status_code == 404
    assert client.get(f"/{draft}", headers={"Accept": "text/html"}).status_code == 404
    token = csrf(client)
    for method, url, body in [
        ("PATCH", "/api/hub/mine", {"listed": True}),
        ("DELETE", f"/api/docs/{draft}", None),
        ("GET", "/api/hub/mine/trash", None),
    ]:
        r = client.request(method, url, json=body, headers={"X-CSRF-Token": token})
        assert r.status_code == 401 and r.json()["error"]["code"] == "session_ended", (method, url, r.text)
        assert "was signed out" in r.json()["error"]["message"] and "/hub/mine/signin" in r.json()["error"]["message"]
    page = client.get("/hub/mine", headers={"Accept": "text/html"}).text
    assert "was signed out" in page and "The draft page" not in page
    assert client.get("/api/hub/mine/session").json()["ended"] == "signed_out"


def test_sign_in_rotates_and_an_expired_session_says_so(client, hub, settings):
    sign_in(client, hub["token"])
    before = client.cookies[COOKIE]
    sign_in(client, hub["token"])
    after = client.cookies[COOKIE]
    assert after != before
    assert session_row(settings) == [("owner", False, True), ("owner", True, True)]  # the old one revoked
    use_cookie(client, before)
    assert client.get("/api/hub/mine").json()["view"] == "public"
    use_cookie(client, after)
    assert client.get("/api/hub/mine").json()["view"] == "owner"
    with psycopg.connect(settings.database_url) as conn:
        conn.execute("UPDATE sessions SET expires_at = now() - interval '1 second'")
    assert client.get("/api/hub/mine").json()["view"] == "public"
    r = client.patch("/api/hub/mine", json={"listed": True}, headers={"X-CSRF-Token": csrf(client)})
    assert r.status_code == 401 and "expired" in r.json()["error"]["message"]
    assert "expired" in client.get("/hub/mine", headers={"Accept": "text/html"}).text


def test_a_made_up_or_altered_cookie_opens_nothing(client, hub):
    sign_in(client, hub["token"])
    real = client.cookies[COOKIE]
    for fake in (real[:-2] + ("AA" if not real.endswith("AA") else "BB"), "WyJ4eHgiXQ.forged", "garbage"):
        use_cookie(client, fake)
        assert client.get("/api/hub/mine").json()["view"] == "public", fake
        r = client.patch("/api/hub/mine", json={"listed": True}, headers={"X-CSRF-Token": csrf(client)})
        assert r.status_code == 401 and r.json()["error"]["code"] == "unauthorized"


def test_one_browser_signed_in_to_two_hubs(client, hub):
    other = client.post("/api/hubs", json={"slug": "theirs"}).json()["owner_token"]
    sign_in(client, hub["token"])
    sign_in(client, other, "theirs")
    assert client.get("/api/hub/mine").json()["view"] == "owner"
    assert client.get("/api/hub/theirs").json()["view"] == "owner"
    client.delete("/api/hub/theirs/session", headers={"X-CSRF-Token": csrf(client, "theirs")})
    assert client.get("/api/hub/theirs").json()["view"] == "public"
    assert client.get("/api/hub/mine").json()["view"] == "owner"  # still signed in to the other one
    # owning one hub's session is no key to another's pages
    theirs = client.post(
        "/api/docs",
        json={"hub": "theirs", "title": "T", "markdown": "Their draft.", "is_draft": True},
        headers={"Authorization": f"Bearer {other}"},
    ).json()
    assert client.get(f"/api/docs/{theirs['id']}").status_code == 404
    r = client.delete(f"/api/docs/{theirs['id']}", headers={"X-CSRF-Token": csrf(client)})
    assert r.status_code == 401 and r.json()["error"]["code"] == "unauthorized"  # signing out took it off the cookie


def test_the_hub_page_shows_the_owner_everything_and_strangers_the_public_pages(client, hub):
    stranger = client.get("/hub/mine", headers={"Accept": "text/html"}).text
    assert "The public page" in stranger and "The draft page" not in stranger and "owner sign-in" in stranger
    sign_in(client, hub["token"])
    page = client.get("/hub/mine", headers={"Accept": "text/html"})
    assert page.headers["cache-control"] == "private, no-store"
    for kind in KINDS:
        assert f"The {kind} page" in page.text and f'<span class="badge {kind}"' in page.text
    assert "Shared with ann@example.com" in page.text and "Sign out" in page.text and "Trash" in page.text
    assert "hub-owner.js" in page.text
    # the hub's markdown twin and llms.txt stay public, cookie or not
    for url in ("/hub/mine.md", "/hub/mine/llms.txt", "/raw/hub/mine"):
        text = client.get(url).text
        assert "The public page" in text and "The draft page" not in text, url


def _export(conversations: list[dict]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("conversations.json", json.dumps(conversations))
    return buffer.getvalue()


def test_an_import_streams_its_progress(client, hub):
    conversation = json.loads((FIXTURES / "chatgpt-export" / "native-conversation-v1.json").read_text())
    conversations = []
    for i in range(3):
        c = json.loads(json.dumps(conversation))
        c["id"] = c["conversation_id"] = f"conversation-{i}"
        c["title"] = f"Conversation {i}"
        conversations.append(c)
    ndjson = {**hub["owner"], "Accept": "application/x-ndjson"}
    r = client.post(
        "/api/import/chatgpt",
        files={"file": ("export.zip", _export(conversations))},
        data={"hub": "mine"},
        headers=ndjson,
    )
    assert r.status_code == 200 and r.headers["content-type"].startswith("application/x-ndjson")
    lines = [json.loads(line) for line in r.text.splitlines()]
    assert lines[0] == {"total": 3}
    assert [line["done"] for line in lines[1:-1]] == [1, 2, 3]
    result = lines[-1]["result"]
    assert (result["created"], len(result["docs"])) == (3, 3)
    assert client.get("/api/hub/mine", headers=hub["owner"]).json()["total_docs"] == 7
    # failures before the first line keep their status: nothing was saved
    for files, headers, status in [
        ({"file": ("export.zip", b"not a zip at all")}, ndjson, 422),
        (
            {"file": ("export.zip", _export(conversations))},
            {"Authorization": "Bearer mwo_wrong", "Accept": "application/x-ndjson"},
            403,
        ),
    ]:
        r = client.post("/api/import/chatgpt", files=files, data={"hub": "mine"}, headers=headers)
        assert r.status_code == status and "error" in r.json(), r.text
    assert client.get("/api/hub/mine", headers=hub["owner"]).json()["total_docs"] == 7
