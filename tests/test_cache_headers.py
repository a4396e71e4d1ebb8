"""Nothing that depends on a credential is cacheable: every GET route of the app (enumerated
from its router, so a new route cannot be missed), asked with each kind of credential, answers
`Cache-Control: private, no-store` and varies on the cookie and the credential headers; asked
with none, a public answer keeps its caching. The few routes that never read a credential give
everyone the same answer."""

from __future__ import annotations

import re

import pytest
from starlette.routing import Mount

from tests.credential_matrix import CREDENTIAL_FREE

ANN = "ann@example.com"
PASSWORD = "hunter2"
LINK = re.compile(r"/(\w+)/signin#(mwl_[A-Za-z0-9_-]+)")
CSRF = re.compile(r'name="csrf-token" content="([^"]+)"')


def csrf(client) -> str:
    return CSRF.search(client.get("/new-hub", headers={"Accept": "text/html"}).text).group(1)


@pytest.fixture
def site(make_client, smtp_server):
    fast = "100000/minute"  # refused tokens are counted: the walk sends many on purpose
    client = make_client(smtp_url=smtp_server.url, rate_token_failures=fast, rate_password=fast)
    token = client.post("/api/hubs", json={"slug": "walk"}).json()["owner_token"]
    owner = {"Authorization": f"Bearer {token}"}

    def page(**extra):
        body = {"hub": "walk", "title": "A page", "markdown": "Some text.", "dedupe": False, **extra}
        r = client.post("/api/docs", json=body, headers=owner)
        assert r.status_code == 201, r.text
        return r.json()

    public, draft = page(), page(is_draft=True)
    locked, people = page(password=PASSWORD), page(allowed_emails=[ANN])
    member = client.post("/api/hub/walk/members", json={"name": "bob"}, headers=owner).json()["token"]
    access = client.post(f"/api/docs/{people['id']}/access", json={"email": ANN}, headers=owner).json()
    bundle = client.post(
        "/api/bundles", json={"hub": "walk", "title": "B", "doc_ids": [public["id"]]}, headers=owner
    ).json()["id"]
    # the reader: a link mailed to ann, followed in a browser of her own
    client.post(f"/api/docs/{people['id']}/access/request", json={"email": ANN})
    doc_id, secret = LINK.search(smtp_server.wait_for(ANN)[0].get_content()).groups()
    return {
        "client": client,
        "owner": owner,
        "public": public["id"],
        "bundle": bundle,
        "docs": {"draft": draft, "locked": locked, "people": people},
        "member": member,
        "access": access["access_token"],
        "link": (doc_id, secret),
    }


def signed_in_browser(make_client, site, kind: str):
    """A browser of its own with a session cookie: the owner's, or ann's as a reader."""
    browser = make_client()
    if kind == "owner":
        token = site["owner"]["Authorization"][7:]
        r = browser.post("/api/hub/walk/session", json={"token": token}, headers={"X-CSRF-Token": csrf(browser)})
    else:
        doc_id, secret = site["link"]
        r = browser.post(
            f"/api/docs/{doc_id}/access/session", json={"link": secret}, headers={"X-CSRF-Token": csrf(browser)}
        )
    assert r.status_code == 200, r.text
    return browser


def get_routes(app) -> list[str]:
    out = []
    for route in app.routes:
        if isinstance(route, Mount):
            continue
        if "GET" in route.methods:
            out.append(route.path)
    return out


def fill(path: str, site, doc_id: str) -> str:
    return path.format(doc_id=doc_id, slug="walk", bundle_id=site["bundle"], version=1)


def vary(r) -> set[str]:
    return {v.strip().lower() for v in r.headers.get("vary", "").split(",") if v.strip()}


def test_every_get_route_with_every_credential_is_private_no_store(site, make_client):
    client = site["client"]
    docs = site["docs"]
    owner_browser = signed_in_browser(make_client, site, "owner")
    reader_browser = signed_in_browser(make_client, site, "reader")
    stranger = make_client()
    # (how the credential travels, the page its doc routes are asked about)
    credentials = {
        "owner token": (client, site["owner"], {}, docs["draft"]["id"]),
        "owner session": (owner_browser, {}, {}, docs["draft"]["id"]),
        "member token": (client, {"Authorization": f"Bearer {site['member']}"}, {}, docs["draft"]["id"]),
        "reader session": (reader_browser, {}, {}, docs["people"]["id"]),
        "edit token": (client, {"X-Edit-Token": docs["draft"]["edit_token"]}, {}, docs["draft"]["id"]),
        "password": (client, {"X-Doc-Password": PASSWORD}, {}, docs["locked"]["id"]),
        "access link": (client, {}, {"access": site["access"]}, docs["people"]["id"]),
        "access header": (client, {"X-Doc-Access": site["access"]}, {}, docs["people"]["id"]),
        "any Authorization": (client, {"Authorization": "Basic dXNlcjpwdw=="}, {}, site["public"]),
    }
    routes = get_routes(client.app)
    assert len(routes) > 40  # the walk covers the app, not a hand-picked few
    blind = {r.split(" ", 1)[1] for r in CREDENTIAL_FREE if r.startswith("GET ")}
    checked = 0
    for path in routes:
        for accept in ("text/html", "text/markdown"):  # the API answers JSON to both
            for name, (browser, headers, params, doc_id) in credentials.items():
                url = fill(path, site, doc_id)
                r = browser.get(url, headers={**headers, "Accept": accept}, params=params)
                where = f"{name} GET {url} ({accept}): {r.status_code} {r.headers.get('cache-control')}"
                assert r.status_code < 500, where
                if path in blind:  # the same answer as for anyone (the health check's counts move)
                    anonymous = stranger.get(url, headers={"Accept": accept})
                    assert r.status_code == anonymous.status_code, where
                    assert path == "/healthz" or r.content == anonymous.content, where
                    assert "no-store" not in r.headers.get("cache-control", ""), where
                    continue
                cache = {d.strip() for d in r.headers.get("cache-control", "").split(",")}
                assert {"private", "no-store"} <= cache, where
                assert {"cookie", "authorization", "x-edit-token", "x-doc-password", "x-doc-access"} <= vary(r), where
                checked += 1
    assert checked > 40 * 9


def test_public_answers_keep_their_caching_and_vary_on_credentials(site, make_client):
    stranger = make_client()  # no cookie at all
    for url, accept in (
        (f"/{site['public']}", "text/html"),
        (f"/{site['public']}.md", "text/markdown"),
        (f"/api/docs/{site['public']}", "application/json"),
        ("/hub/walk", "text/html"),
        ("/hub/walk.md", "text/markdown"),
        ("/api/hub/walk", "application/json"),
        ("/llms.txt", "text/plain"),
        (f"/b/{site['bundle']}", "text/html"),
    ):
        r = stranger.get(url, headers={"Accept": accept})
        assert r.status_code == 200, url
        assert "no-store" not in r.headers.get("cache-control", ""), url
        assert {"cookie", "authorization"} <= vary(r), url  # a shared cache keeps it apart from a signed-in one
    # a page that carries a CSRF token is this browser's own, credential or not
    form = stranger.get(f"/{site['docs']['locked']['id']}", headers={"Accept": "text/html"})
    assert form.status_code == 401 and "no-store" in form.headers["cache-control"]
    # the stylesheet is the same for everyone: cached whatever the request carries
    css = stranger.get("/static/site.css", headers={"Cookie": "mw_session=x", **site["owner"]})
    assert "no-store" not in css.headers.get("cache-control", "")


def test_the_findings_of_a_signed_in_browser_are_no_longer_cacheable(site, make_client):
    """The answers the owner's and a reader's browsers got, signed in by cookie, that a proxy
    or the Back button could keep."""
    docs = site["docs"]
    for kind, doc in (("owner", docs["draft"]), ("reader", docs["people"])):
        browser = signed_in_browser(make_client, site, kind)
        for url in (
            f"/{doc['id']}.md",
            f"/raw/{doc['id']}",
            f"/{doc['id']}/history",
            f"/api/docs/{doc['id']}",
            f"/api/docs/{doc['id']}/versions",
            f"/api/docs/{doc['id']}/enrichment",
            f"/api/docs/{doc['id']}/related",
        ):
            r = browser.get(url, headers={"Accept": "text/html"})
            assert r.status_code == 200, (kind, url, r.text[:200])
            assert r.headers["cache-control"] == "private, no-store", (kind, url)
            assert "cookie" in vary(r), (kind, url)
