"""Security basics: CSRF, rate limits, security headers.

Every refusal is a clear 4xx that changes nothing: a forged or missing CSRF token is 403
`csrf_failed`, a burst over a rate limit is 429 `rate_limited` with Retry-After.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from dataclasses import replace
from pathlib import Path

import httpx
import pytest
from memorywiki.server.app import create_app
from memorywiki.server.config import Settings, SettingsError
from memorywiki.server.web.csrf import AUTHORITY_COOKIES, COOKIE, READ_ONLY_ROUTES, CsrfTokens
from starlette.testclient import TestClient

from tests.device_id import assert_onnxruntime_writes_a_device_id, files_under, fresh_home, user_env
from tests.polling import wait_indexed

TEMPLATES = Path(__file__).resolve().parents[1] / "server" / "templates"
PASSWORD = "hunter2"
SESSION = AUTHORITY_COOKIES[0]  # the signed session cookie of a browser sign-in


class ClientAddress:
    """Test wrapper: the client address comes from an `x-test-client` header, as a proxy's
    forwarded address would, so one TestClient can speak for several clients."""

    def __init__(self, app):
        self.app = app
        self.state = app.state

    async def __call__(self, scope, receive, send):
        if scope["type"] == "http":
            for name, value in scope["headers"]:
                if name == b"x-test-client":
                    scope = {**scope, "client": (value.decode(), 1)}
        await self.app(scope, receive, send)


@pytest.fixture
def make_limited(settings):
    clients = []

    def make(**overrides):
        client = TestClient(ClientAddress(create_app(replace(settings, **overrides))))
        client.__enter__()
        clients.append(client)
        return client

    yield make
    for client in clients:
        client.__exit__(None, None, None)


def csrf_field(html: str) -> str:
    match = re.search(r'<input type="hidden" name="csrf_token" value="([^"]+)">', html)
    assert match, html
    return match.group(1)


def doc_count(client) -> int:
    return len(client.get("/api/hub/main").json()["docs"])


@pytest.fixture
def world(client):
    owner = {"Authorization": f"Bearer {client.post('/api/hubs', json={'slug': 'main'}).json()['owner_token']}"}
    locked = client.post(
        "/api/docs",
        json={"title": "Vault", "markdown": "The plan is **bold**.", "hub": "main", "password": PASSWORD},
        headers=owner,
    ).json()
    return {"owner": owner, "locked": locked["id"], "edit": {"Authorization": f"Bearer {locked['edit_token']}"}}


# ---- security headers ----------------------------------------------------------------------


def test_every_response_carries_the_security_headers(client, world):
    public = client.post(
        "/api/docs", json={"title": "Open", "markdown": "open text", "hub": "main"}, headers=world["owner"]
    ).json()["id"]
    responses = {
        "home": client.get("/", headers={"Accept": "text/html"}),
        "doc page": client.get(f"/{public}", headers={"Accept": "text/html"}),
        "password page": client.get(f"/{world['locked']}", headers={"Accept": "text/html"}),
        "hub page": client.get("/hub/main", headers={"Accept": "text/html"}),
        "error page": client.get("/hub/nohub", headers={"Accept": "text/html"}),
        "raw": client.get(f"/raw/{public}"),
        "api": client.get(f"/api/docs/{public}"),
        "api error": client.get("/api/docs/zzzzzzzzzz"),
        "stylesheet": client.get("/static/site.css"),
    }
    for what, r in responses.items():
        csp = r.headers.get("content-security-policy", "")
        assert "script-src 'self'" in csp and "style-src 'self'" in csp, what
        assert "frame-ancestors 'none'" in csp and "object-src 'none'" in csp, what
        assert "unsafe-inline" not in csp and "unsafe-eval" not in csp, what
        assert r.headers["x-content-type-options"] == "nosniff", what
        assert r.headers["referrer-policy"] == "no-referrer", what
        assert r.headers["x-frame-options"] == "DENY", what
    assert responses["stylesheet"].status_code == 200
    assert responses["stylesheet"].headers["content-type"].startswith("text/css")
    # the one stylesheet, its URL versioned by its content (server/web/assets.py)
    assert re.search(r'<link rel="stylesheet" href="/static/site\.css\?v=\w+">', responses["doc page"].text)


def test_no_template_has_inline_script_or_style():
    """What the CSP would block: inline <script>/<style>, style= and on...= attributes, javascript: URLs."""
    inline = re.compile(r"<script(?![^>]*\bsrc=)|<style|\sstyle\s*=|\son[a-z]+\s*=|javascript:", re.I)
    templates = sorted(TEMPLATES.glob("*.html"))
    assert len(templates) >= 6
    offenders = [f"{t.name}: {m.group(0)!r}" for t in templates for m in inline.finditer(t.read_text())]
    assert not offenders, offenders


# ---- CSRF ---------------------------------------------------------------------------------


def test_the_password_form_posts_with_its_token(client, world):
    page = client.get(f"/{world['locked']}", headers={"Accept": "text/html"})
    assert page.status_code == 401
    assert COOKIE in page.cookies  # the page gave the browser its nonce
    assert "HttpOnly" in page.headers["set-cookie"] and "SameSite=Strict" in page.headers["set-cookie"]
    token = csrf_field(page.text)
    r = client.post(
        f"/{world['locked']}", data={"password": PASSWORD, "csrf_token": token}, headers={"Accept": "text/html"}
    )
    assert r.status_code == 200 and "The plan is <strong>bold</strong>." in r.text
    wrong = client.post(
        f"/{world['locked']}", data={"password": "nope", "csrf_token": token}, headers={"Accept": "text/html"}
    )
    assert wrong.status_code == 401 and "That password is not right." in wrong.text
    # the same token in the header works too (a script of our own pages)
    r = client.post(f"/{world['locked']}", data={"password": PASSWORD}, headers={"X-CSRF-Token": token})
    assert r.status_code == 200


@pytest.mark.parametrize(
    "case", ["no token", "no cookie", "forged signature", "another key", "another browser's token", "garbage"]
)
def test_a_form_post_without_a_valid_token_is_refused(client, world, case):
    page = client.get(f"/{world['locked']}", headers={"Accept": "text/html"})
    token = csrf_field(page.text)
    nonce = client.cookies[COOKIE]
    data = {"password": PASSWORD, "csrf_token": token}
    if case == "no token":
        del data["csrf_token"]
    elif case == "no cookie":
        client.cookies.clear()
    elif case == "forged signature":
        data["csrf_token"] = token[:-4] + ("AAAA" if not token.endswith("AAAA") else "BBBB")
    elif case == "another key":
        data["csrf_token"] = CsrfTokens("not the server's key", 3600).issue(nonce)
    elif case == "another browser's token":
        other = TestClient(client.app)  # shares the running app, not the cookie jar
        data["csrf_token"] = csrf_field(other.get(f"/{world['locked']}", headers={"Accept": "text/html"}).text)
    elif case == "garbage":
        data["csrf_token"] = "x" * 500
    r = client.post(f"/{world['locked']}", data=data, headers={"Accept": "text/html"})
    assert r.status_code == 403, (case, r.status_code)
    assert "csrf_failed" in r.text and "The plan is" not in r.text
    api = client.post(f"/{world['locked']}", data=data)  # no Accept: the JSON error
    assert api.status_code == 403 and api.json()["error"]["code"] == "csrf_failed"


def test_an_expired_token_is_refused(make_client, world):
    client = make_client(csrf_max_age=-1)  # every token is older than that
    page = client.get(f"/{world['locked']}", headers={"Accept": "text/html"})
    r = client.post(f"/{world['locked']}", data={"password": PASSWORD, "csrf_token": csrf_field(page.text)})
    assert r.status_code == 403 and r.json()["error"]["code"] == "csrf_failed"


def test_an_api_write_is_checked_when_it_carries_the_session_cookie(client, world):
    """Only this server's authority cookies make an /api/ write a browser's, to be checked:
    the CSRF nonce and other sites' cookies grant nothing, so they need no token."""
    page = client.get(f"/{world['locked']}", headers={"Accept": "text/html"})
    token = csrf_field(page.text)
    before = doc_count(client)
    # the cookie jar sends only the mw_csrf nonce: no authority, nothing to forge
    assert client.post("/api/docs", json={"title": "Jar", "markdown": "x"}).status_code == 201
    client.cookies.set("sessionid", "another-app-on-localhost")
    assert client.post("/api/docs", json={"title": "Other", "markdown": "x"}).status_code == 201
    # a session cookie could carry authority: a write needs the page's token with it
    client.cookies.set(SESSION, "a-signed-session")
    r = client.post("/api/docs", json={"title": "Loose", "markdown": "x"})
    assert r.status_code == 403 and r.json()["error"]["code"] == "csrf_failed"
    assert "X-CSRF-Token" in r.json()["error"]["message"]
    r = client.post("/api/docs", json={"title": "Loose", "markdown": "x"}, headers={"X-CSRF-Token": "forged"})
    assert r.status_code == 403
    r = client.post("/api/docs", json={"title": "Loose", "markdown": "x"}, headers={"X-CSRF-Token": token})
    assert r.status_code == 201
    # a credential in a header is no cookie authentication: no token needed, cookie or not
    body = {"title": "From a browser", "markdown": "posted with cookies", "hub": "main"}
    assert client.post("/api/docs", json=body, headers=world["owner"]).status_code == 201
    assert doc_count(client) == before + 1
    # and a request with no cookie and no credential carries no authority to forge
    client.cookies.clear()
    assert client.post("/api/docs", json={"title": "Anon", "markdown": "x"}).status_code == 201


def owner_signed_in(client, world) -> str:
    """Sign the client in as the owner of hub main, as the sign-in page does; the page's CSRF token."""
    page = client.get("/hub/main/signin", headers={"Accept": "text/html"})
    csrf = re.search(r'name="csrf-token" content="([^"]+)"', page.text).group(1)
    token = world["owner"]["Authorization"][7:]
    signed = client.post("/api/hub/main/session", json={"token": token}, headers={"X-CSRF-Token": csrf})
    assert signed.status_code == 200, signed.text
    return csrf


@pytest.mark.parametrize(
    "extra",
    [
        {"Authorization": "Basic dXNlcjpwYXNzd29yZA=="},  # what a browser adds by itself behind HTTP basic auth
        {"X-Edit-Token": "mwe_junk"},
        {"Authorization": "Bearer mwo_junk"},
        {"X-Doc-Password": PASSWORD},
        {"X-Doc-Access": "mwa_junk"},
        {"Authorization": "Basic dXNlcjpwYXNzd29yZA==", "X-Edit-Token": "mwe_junk", "X-Doc-Password": "x"},
    ],
    ids=["basic", "junk-edit-token", "junk-bearer", "password", "access", "all-at-once"],
)
def test_a_session_cookie_never_authorizes_without_the_csrf_token(client, world, extra):
    """Whatever else comes with it, the session cookie grants nothing to a request without the
    page's CSRF token: it is refused (403 csrf_failed, or the 401/403 of its own junk token),
    and nothing changes."""
    csrf = owner_signed_in(client, world)
    assert client.get("/api/hub/main").json()["view"] == "owner"  # reads by cookie need no token
    before = client.get("/api/hub/main", headers=world["owner"]).json()
    attempts = [
        client.post("/api/docs", json={"hub": "main", "title": "Forged", "markdown": "x"}, headers=extra),
        client.post("/api/hub/main/members", json={"name": "eve"}, headers=extra),
        client.patch("/api/hub/main", json={"description": "forged"}, headers=extra),
        client.patch(f"/api/docs/{world['locked']}", json={"markdown": "defaced"}, headers=extra),
        client.delete(f"/api/docs/{world['locked']}", headers=extra),
    ]
    for r in attempts:
        assert r.status_code in (401, 403), r.text
        assert r.json()["error"]["code"] in ("csrf_failed", "unauthorized", "forbidden"), r.text
    assert client.get("/api/hub/main", headers=world["owner"]).json() == before
    assert client.get("/api/hub/main/members", headers=world["owner"]).json()["members"] == []
    doc = client.get(f"/api/docs/{world['locked']}", headers=world["edit"]).json()
    assert (doc["markdown"], doc["version"]) == ("The plan is **bold**.", 1)
    # with the page's token the cookie authorizes (a wrong bearer token beside it is refused as itself)
    r = client.post(
        "/api/docs",
        json={"hub": "main", "title": "Mine", "markdown": "x"},
        headers={**extra, "X-CSRF-Token": csrf},
    )
    assert r.status_code == (403 if "Bearer" in extra.get("Authorization", "") else 201), r.text


def test_a_token_that_authorizes_by_itself_needs_no_csrf_token_and_the_cookie_adds_nothing(client, world):
    owner_signed_in(client, world)
    # the owner's bearer token: allowed, cookie or not
    r = client.post("/api/docs", json={"hub": "main", "title": "By token", "markdown": "x"}, headers=world["owner"])
    assert r.status_code == 201
    # the page's own edit token: allowed, and saved as the edit token's, not the owner's cookie
    edit = {"X-Edit-Token": world["edit"]["Authorization"][7:]}
    assert (
        client.patch(f"/api/docs/{world['locked']}", json={"markdown": "By edit token."}, headers=edit).status_code
        == 200
    )
    versions = client.get(f"/api/docs/{world['locked']}/versions", headers=world["owner"]).json()["versions"]
    assert versions[0]["via"] == "edit_token"
    # what only the owner may do, with an edit token and the cookie but no CSRF token: refused
    r = client.patch(f"/api/docs/{world['locked']}", json={"hub": None}, headers=edit)
    assert r.status_code == 403
    assert client.get(f"/api/docs/{world['locked']}", headers=world["owner"]).json()["hub"] == "main"


def test_a_refused_post_changes_nothing(client, world):
    client.get(f"/{world['locked']}", headers={"Accept": "text/html"})  # the browser has the nonce
    client.cookies.set(SESSION, "a-signed-session")
    r = client.patch(
        f"/api/docs/{world['locked']}", json={"markdown": "defaced"}, headers={"X-Edit-Token": ""}
    )  # an empty credential header is no credential
    assert r.status_code == 403 and r.json()["error"]["code"] == "csrf_failed"
    r = client.delete(f"/api/docs/{world['locked']}")
    assert r.status_code == 403 and r.json()["error"]["code"] == "csrf_failed"
    r = client.post(f"/api/docs/{world['locked']}/restore", json={"version": 1})
    assert r.status_code == 403 and r.json()["error"]["code"] == "csrf_failed"
    doc = client.get(f"/api/docs/{world['locked']}", headers=world["edit"]).json()
    assert (doc["markdown"], doc["version"]) == ("The plan is **bold**.", 1)


def test_another_apps_malformed_cookie_does_not_hide_the_nonce(client, world):
    """A browser sends every cookie of the host, whatever another app on it set; the form's
    token still matches the nonce among them."""
    page = client.get(f"/{world['locked']}", headers={"Accept": "text/html"})
    token, nonce = csrf_field(page.text), client.cookies[COOKIE]
    client.cookies.clear()
    jar = f'prefs={{"theme":"dark"}}; cart="unterminated; {COOKIE}={nonce}'
    r = client.post(
        f"/{world['locked']}",
        data={"password": PASSWORD, "csrf_token": token},
        headers={"Cookie": jar, "Accept": "text/html"},
    )
    assert r.status_code == 200 and "The plan is <strong>bold</strong>." in r.text


def test_the_csrf_key_is_shared_through_the_database(make_client, world, client):
    """Two servers on one database accept each other's tokens (no MEMORYWIKI_SECRET_KEY set)."""
    page = client.get(f"/{world['locked']}", headers={"Accept": "text/html"})
    token, nonce = csrf_field(page.text), client.cookies[COOKIE]
    second = make_client()
    second.cookies.set(COOKIE, nonce)
    r = second.post(f"/{world['locked']}", data={"password": PASSWORD, "csrf_token": token})
    assert r.status_code == 200
    keyed = make_client(secret_key="a key of my own, set in the environment")
    keyed.cookies.set(COOKIE, nonce)
    assert keyed.post(f"/{world['locked']}", data={"password": PASSWORD, "csrf_token": token}).status_code == 403


def test_recall_answers_whatever_cookies_the_client_holds(live_server, tmp_path):
    """Recall reads public pages and changes nothing: a client that loaded a page first (so
    holds the mw_csrf nonce), carries another app's cookies or even a session cookie gets its
    answer, over real HTTP, like any client without cookies."""
    base = live_server.url
    owner = {"Authorization": f"Bearer {httpx.post(f'{base}/api/hubs', json={'slug': 'jar'}).json()['owner_token']}"}
    doc = httpx.post(
        f"{base}/api/docs",
        headers=owner,
        json={
            "hub": "jar",
            "title": "Sourdough",
            "markdown": "## Starter\n\nFeed the sourdough starter twice a day.\n",
        },
    ).json()
    locked = httpx.post(
        f"{base}/api/docs",
        headers=owner,
        json={"hub": "jar", "title": "Vault", "markdown": "closed", "password": PASSWORD},
    ).json()
    wait_indexed(live_server, [doc["id"], locked["id"]])
    recall = f"{base}/api/hub/jar/recall"
    question = {"question": "how often do I feed the starter?", "k": 3}

    def answered(r: httpx.Response) -> None:
        assert r.status_code == 200, r.text
        assert r.json()["results"][0]["doc_id"] == doc["id"]

    # curl with a cookie jar, after loading a page (the password form sets the nonce)
    jar = tmp_path / "cookies.txt"
    if shutil.which("curl"):
        subprocess.run(
            ["curl", "-sS", "-c", str(jar), "-o", os.devnull, "-H", "Accept: text/html", f"{base}/{locked['id']}"],
            check=True,
            timeout=30,
        )
        assert COOKIE in jar.read_text()
        out = subprocess.run(
            [
                "curl",
                "-sS",
                "-b",
                str(jar),
                "-w",
                "\n%{http_code}",
                "-H",
                "Content-Type: application/json",
                "-d",
                json.dumps(question),
                recall,
            ],
            check=True,
            capture_output=True,
            text=True,
            timeout=30,
        ).stdout
        body, status = out.rsplit("\n", 1)
        assert status == "200", body
        assert json.loads(body)["results"][0]["doc_id"] == doc["id"]
    # an httpx.Client (or a requests.Session) that loaded a page keeps the nonce in its jar
    with httpx.Client() as session:
        session.get(f"{base}/{locked['id']}", headers={"Accept": "text/html"})
        assert COOKIE in session.cookies
        answered(session.post(recall, json=question))
    # the Cookie header a browser sends: every cookie of the host, whichever app set it
    nonce = "n" * 43
    for cookies in (
        f"{COOKIE}={nonce}",
        "sessionid=abc123; csrftoken=xyz",
        f'prefs={{"a":1}}; {COOKIE}={nonce}',
        f"{SESSION}=a-signed-session",
        f"{SESSION}=a-signed-session; {COOKIE}={nonce}",
    ):
        answered(httpx.post(recall, json=question, headers={"Cookie": cookies}))


def test_the_routes_that_only_read_are_named_by_their_real_paths(client):
    """READ_ONLY_ROUTES names routes of the app (a renamed route cannot drop out of it
    unnoticed), and the contract does not promise a csrf_failed they never give."""
    posts = {route.path for route in client.app.routes if "POST" in (getattr(route, "methods", None) or ())}
    assert READ_ONLY_ROUTES <= posts, READ_ONLY_ROUTES - posts
    spec = client.get("/openapi.json").json()
    for path in READ_ONLY_ROUTES:
        assert "403" not in spec["paths"][path]["post"]["responses"], path
    assert "403" in spec["paths"]["/api/docs"]["post"]["responses"]
    assert "403" in spec["paths"]["/{doc_id}"]["post"]["responses"]  # the password form


# ---- rate limits ----------------------------------------------------------------------------


def test_wrong_passwords_are_rate_limited_per_client(make_limited):
    client = make_limited(rate_password="3/minute")
    owner = {"Authorization": f"Bearer {client.post('/api/hubs', json={'slug': 'main'}).json()['owner_token']}"}
    doc_id = client.post(
        "/api/docs",
        json={"title": "Vault", "markdown": "secret text", "hub": "main", "password": PASSWORD},
        headers=owner,
    ).json()["id"]
    page = client.get(f"/{doc_id}", headers={"Accept": "text/html"})
    token = csrf_field(page.text)
    for _ in range(3):
        r = client.post(f"/{doc_id}", data={"password": "guess", "csrf_token": token}, headers={"Accept": "text/html"})
        assert r.status_code == 401
    # the budget is spent: even the right password is not checked now
    r = client.post(f"/{doc_id}", data={"password": PASSWORD, "csrf_token": token}, headers={"Accept": "text/html"})
    assert r.status_code == 429 and "Too many attempts" in r.text and "secret text" not in r.text
    assert 1 <= int(r.headers["retry-after"]) <= 60
    r = client.get(f"/api/docs/{doc_id}", headers={"X-Doc-Password": PASSWORD})
    assert r.status_code == 429
    error = r.json()["error"]
    assert error["code"] == "rate_limited" and "wrong passwords" in error["message"]
    assert error["retry_after"] == int(r.headers["retry-after"])
    # another client is not slowed by this one
    r = client.get(f"/api/docs/{doc_id}", headers={"X-Doc-Password": PASSWORD, "X-Test-Client": "10.0.0.2"})
    assert r.status_code == 200 and r.json()["markdown"] == "secret text"


def test_refused_tokens_are_rate_limited_and_change_nothing(make_limited):
    client = make_limited(rate_token_failures="3/minute")
    owner = {"Authorization": f"Bearer {client.post('/api/hubs', json={'slug': 'main'}).json()['owner_token']}"}
    doc = client.post("/api/docs", json={"title": "T", "markdown": "original", "hub": "main"}, headers=owner).json()
    wrong = {"Authorization": "Bearer mwe_guessed"}
    # three kinds of refused token: an edit, a write to a hub, a private read
    assert client.patch(f"/api/docs/{doc['id']}", json={"markdown": "x"}, headers=wrong).status_code == 403
    assert (
        client.post("/api/docs", json={"title": "t", "markdown": "x", "hub": "main"}, headers=wrong).status_code == 403
    )
    assert client.get("/api/docs/zzzzzzzzzz", headers=wrong).status_code == 404
    for attempt in (wrong, owner):  # then nothing is checked, not even the right token
        r = client.patch(f"/api/docs/{doc['id']}", json={"markdown": "changed"}, headers=attempt)
        assert r.status_code == 429 and r.json()["error"]["code"] == "rate_limited"
        assert "refused tokens" in r.json()["error"]["message"] and int(r.headers["retry-after"]) >= 1
    assert client.get(f"/api/docs/{doc['id']}").json()["markdown"] == "original"
    assert len(client.get("/api/hub/main").json()["docs"]) == 1
    # public reads without a token still work, and so does another client with the right token
    assert client.get(f"/api/docs/{doc['id']}").status_code == 200
    r = client.patch(
        f"/api/docs/{doc['id']}", json={"markdown": "changed"}, headers={**owner, "X-Test-Client": "10.9.9.9"}
    )
    assert r.status_code == 200


def test_the_right_token_is_never_slowed(make_limited):
    client = make_limited(rate_token_failures="2/minute")
    owner = {"Authorization": f"Bearer {client.post('/api/hubs', json={'slug': 'main'}).json()['owner_token']}"}
    for i in range(6):
        r = client.post("/api/docs", json={"title": f"T{i}", "markdown": f"text {i}", "hub": "main"}, headers=owner)
        assert r.status_code == 201


def test_reembedding_is_rate_limited(make_limited):
    client = make_limited(rate_embed="2/minute")
    doc = client.post("/api/docs", json={"title": "T", "markdown": "text"}).json()
    assert [client.post(f"/api/embed/{doc['id']}").status_code for _ in range(2)] == [200, 200]
    r = client.post(f"/api/embed/{doc['id']}")
    assert r.status_code == 429 and r.json()["error"]["code"] == "rate_limited"
    assert "re-index requests" in r.json()["error"]["message"] and r.headers["retry-after"]
    assert client.post("/api/embed/bundle/zzzzzzzzzz").status_code == 429
    assert client.post(f"/api/embed/{doc['id']}", headers={"X-Test-Client": "10.0.0.3"}).status_code == 200


def test_rate_limits_are_settings():
    s = Settings.from_env(
        {
            "MEMORYWIKI_RATE_PASSWORD": "5 per hour",
            "MEMORYWIKI_RATE_TOKEN_FAILURES": "7/minute",
            "MEMORYWIKI_RATE_EMBED": "100/day",
            "MEMORYWIKI_CSRF_MAX_AGE": "600",
            "MEMORYWIKI_SECRET_KEY": "k",
        }
    )
    assert (s.rate_password, s.rate_token_failures, s.rate_embed, s.csrf_max_age) == (
        "5 per hour",
        "7/minute",
        "100/day",
        600,
    )
    assert "'k'" not in repr(s)
    with pytest.raises(SettingsError, match="MEMORYWIKI_RATE_EMBED must be a rate such as 10/minute"):
        Settings.from_env({"MEMORYWIKI_RATE_EMBED": "lots"})


# ---- no device id from onnxruntime ------------------------------------------------------------


def test_the_quick_start_check_leaves_no_onnxruntime_device_id(tmp_path):
    """scripts/serve.sh checks its install on every start by importing what serving needs; that
    check ran `import onnxruntime`, which wrote a device id into the user's ~/.cache before the
    server (which never loads it) even started. The check must find onnxruntime, not load it."""
    import subprocess
    import sys

    serve_sh = (TEMPLATES.parents[1] / "scripts" / "serve.sh").read_text()
    check = re.search(r'mw_install "onnx" "[^"]*" \\\n\s*"([^"]+)"', serve_sh)
    assert check, "serve.sh no longer checks its install with mw_install: update this test"
    home = fresh_home(tmp_path)
    subprocess.run(
        [sys.executable, "-c", check.group(1)], env={**user_env(), "HOME": str(home)}, check=True, timeout=120
    )
    assert files_under(home) == []


@pytest.mark.slow
def test_capturing_files_leaves_no_onnxruntime_device_id(database_url, tmp_path):
    """markitdown loads onnxruntime (through magika), which on load writes a persistent device
    id (and an event store it uploads) under ~/.cache, unless its environment says not to."""
    import httpx

    from tests.processes import Server

    assert_onnxruntime_writes_a_device_id(tmp_path)
    home = fresh_home(tmp_path)
    env = {**user_env(), "DATABASE_URL": database_url, "MEMORYWIKI_EMBEDDER": "none", "HOME": str(home)}
    server = Server(env, tmp_path / "serve.log")
    try:
        data = Path(__file__).parent / "data" / "capture"
        for name, mime in (("report.pdf", "application/pdf"), ("notes.docx", None), ("article.html", "text/html")):
            files = {"file": (name, (data / name).read_bytes(), mime or "application/octet-stream")}
            r = httpx.post(f"{server.url}/api/capture/file", files=files, timeout=120)
            assert r.status_code == 201, r.text
            assert httpx.get(f"{server.url}/api/docs/{r.json()['id']}").json()["markdown"].strip()
    finally:
        status = server.stop(timeout=60)
    assert status == 0, server.output()
    assert not [p for p in files_under(home) if "onnxruntime" in p.lower() or p.endswith("deviceid")], files_under(home)


# ---- tokens are stored only as hashes ---------------------------------------------------------


def test_no_table_holds_a_plaintext_token(client, settings):
    """After creating hubs, docs (with and without a hub), access tokens, edits, a delete and a
    restore, no column of any table holds a token a client was given, only its sha256."""
    import hashlib

    import psycopg

    given: list[str] = []
    owners = {}
    for slug in ("alpha", "beta"):
        token = client.post("/api/hubs", json={"slug": slug}).json()["owner_token"]
        owners[slug] = {"Authorization": f"Bearer {token}"}
        given.append(token)
    docs = []
    for i, body in enumerate(
        [{"hub": "alpha"}, {"hub": "beta", "is_draft": True}, {}, {"allowed_emails": ["reader@example.com"]}]
    ):
        headers = owners.get(body.get("hub"), {})
        r = client.post("/api/docs", json={"title": f"Doc {i}", "markdown": f"text {i}", **body}, headers=headers)
        assert r.status_code == 201, r.text
        docs.append(r.json())
        given.append(r.json()["edit_token"])
    restricted = docs[3]
    r = client.post(
        f"/api/docs/{restricted['id']}/access",
        json={"email": "reader@example.com"},
        headers={"Authorization": f"Bearer {restricted['edit_token']}"},
    )
    given.append(r.json()["access_token"])
    edit = {"Authorization": f"Bearer {docs[0]['edit_token']}"}
    client.patch(f"/api/docs/{docs[0]['id']}", json={"markdown": "edited"}, headers=edit)
    client.delete(f"/api/docs/{docs[0]['id']}", headers=edit)
    client.post(f"/api/docs/{docs[0]['id']}/restore", json={"version": 1}, headers=owners["alpha"])
    assert len(given) == 7 and all(len(t) > 40 for t in given)

    with psycopg.connect(settings.database_url, autocommit=True) as conn:
        tables = [
            r[0]
            for r in conn.execute(
                "SELECT table_name FROM information_schema.tables"
                " WHERE table_schema = 'public' AND table_type = 'BASE TABLE' ORDER BY 1"
            ).fetchall()
        ]
        assert {"hubs", "docs", "access_tokens", "doc_versions", "chunks"} <= set(tables)
        dump = "\n".join(
            str(row) for table in tables for row in conn.execute(f'SELECT t::text FROM "{table}" t').fetchall()
        )
    for token in given:
        secret = token.split("_", 1)[1]  # the random part, without its mwo_/mwe_/mwa_ prefix
        assert secret not in dump, token[:8]
        assert hashlib.sha256(token.encode()).hexdigest() in dump  # what is kept: the hash
