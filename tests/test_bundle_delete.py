"""Deleting a bundle, against a live server: only its hub's owner may (the owner token, or the
owner signed in with the page's CSRF token), every other credential is refused and changes
nothing; the CLI does it through its real entry point. And a bundle that holds no public page
is on no public surface (hub page, its markdown, llms.txt, llms-full.txt, the bundle's own URL,
bundle recall, graph, digest), while its owner still sees it, marked."""

from __future__ import annotations

import re
import tomllib
import uuid
from dataclasses import replace

import httpx
import pytest
from memorywiki.cli.main import app
from typer.testing import CliRunner

from tests.polling import wait_indexed

ANN = "ann@example.com"
PRIVATE = "private, no-store"


@pytest.fixture
def settings(settings, smtp_server):
    """Mail on, so a reader can sign in with a mailed link as a person would."""
    return replace(settings, smtp_url=smtp_server.url)


@pytest.fixture
def http(live_server):
    with httpx.Client(base_url=live_server.url, timeout=30) as client:
        yield client


def csrf(client: httpx.Client, path: str) -> str:
    page = client.get(path, headers={"Accept": "text/html"})
    return re.search(r'name="csrf-token" content="([^"]+)"', page.text).group(1)


def make_hub(http: httpx.Client, slug: str) -> dict:
    token = http.post("/api/hubs", json={"slug": slug}).json()["owner_token"]
    owner = {"Authorization": f"Bearer {token}"}

    def page(title: str, **extra) -> dict:
        r = http.post(
            "/api/docs", json={"hub": slug, "title": title, "markdown": f"All about {title}.", **extra}, headers=owner
        )
        assert r.status_code == 201, r.text
        return r.json()

    return {"slug": slug, "token": token, "owner": owner, "page": page}


def bundle(http: httpx.Client, hub: dict, title: str, doc_ids: list[str]) -> str:
    r = http.post(
        "/api/bundles",
        json={"hub": hub["slug"], "title": title, "description": f"{title} described", "doc_ids": doc_ids},
        headers=hub["owner"],
    )
    assert r.status_code == 201, r.text
    return r.json()["id"]


def owner_session(live_server, hub: dict) -> httpx.Client:
    """A browser-like client signed in as the hub's owner (session cookie)."""
    client = httpx.Client(base_url=live_server.url, timeout=30)
    r = client.post(
        f"/api/hub/{hub['slug']}/session",
        json={"token": hub["token"]},
        headers={"X-CSRF-Token": csrf(client, f"/hub/{hub['slug']}/signin")},
    )
    assert r.status_code == 200, r.text
    return client


def reader_session(live_server, smtp_server, doc_id: str) -> httpx.Client:
    """A client signed in as ann, a reader, with the link mailed when the page was shared with her."""
    mail = smtp_server.wait_for(ANN)[-1]
    secret = re.search(r"/signin#(mwl_[\w-]+)", mail.get_content()).group(1)
    client = httpx.Client(base_url=live_server.url, timeout=30)
    r = client.post(
        f"/api/docs/{doc_id}/access/session",
        json={"link": secret},
        headers={"X-CSRF-Token": csrf(client, f"/{doc_id}/signin")},
    )
    assert r.status_code == 200 and r.json()["kind"] == "reader", r.text
    return client


def live(http: httpx.Client, hub: dict, bundle_id: str) -> bool:
    """Whether the owner still has the bundle."""
    return any(
        b["id"] == bundle_id for b in http.get(f"/api/hub/{hub['slug']}", headers=hub["owner"]).json()["bundles"]
    )


def test_only_the_hubs_owner_deletes_a_bundle(http, live_server, smtp_server):
    hub = make_hub(http, "shelf")
    other = make_hub(http, "elsewhere")
    public = hub["page"]("Reading list")["id"]
    shared = hub["page"]("For Ann", allowed_emails=[ANN])
    member = http.post("/api/hub/shelf/members", json={"name": "bob"}, headers=hub["owner"]).json()["token"]
    target = bundle(http, hub, "Course", [public])
    path = f"/api/bundles/{target}"

    refused = {
        "anonymous": (http, {}, 401),
        "the page's edit token": (http, {"Authorization": f"Bearer {shared['edit_token']}"}, 403),
        "a member's token": (http, {"Authorization": f"Bearer {member}"}, 403),
        "another hub's owner token": (http, other["owner"], 403),
        "a made-up token": (http, {"Authorization": "Bearer mwo_not-a-token"}, 403),
    }
    reader = reader_session(live_server, smtp_server, shared["id"])
    refused["a reader signed in"] = (reader, {"X-CSRF-Token": csrf(reader, f"/{shared['id']}")}, 401)
    owner = owner_session(live_server, hub)
    refused["the owner's session without its CSRF token"] = (owner, {}, 403)
    for who, (client, headers, status) in refused.items():
        r = client.delete(path, headers=headers)
        assert r.status_code == status, (who, r.status_code, r.text)
        assert set(r.json()) == {"error"} and r.json()["error"]["code"], who
        assert live(http, hub, target), f"{who} deleted the bundle"
    assert owner.delete(path).json()["error"]["code"] == "csrf_failed"

    # the owner signed in, with the page's CSRF token
    r = owner.delete(path, headers={"X-CSRF-Token": csrf(owner, "/hub/shelf")})
    assert r.status_code == 200 and r.json() == {"id": target, "deleted": True}
    assert r.headers["cache-control"] == PRIVATE
    assert not live(http, hub, target)
    assert http.get(f"/b/{target}").status_code == 404
    assert http.delete(path, headers=hub["owner"]).status_code == 404  # gone: nothing left to delete
    assert http.get(f"/{public}.md").status_code == 200  # its page stays

    # the owner token
    second = bundle(http, hub, "Second course", [public])
    r = http.delete(f"/api/bundles/{second}", headers=hub["owner"])
    assert r.status_code == 200 and r.headers["cache-control"] == PRIVATE
    assert not live(http, hub, second)
    for bad in ("zzzzzzzzzz", "not an id!"):
        assert http.delete(f"/api/bundles/{bad}", headers=hub["owner"]).status_code == 404
    for client in (reader, owner):
        client.close()


def test_a_bundle_with_no_public_page_is_on_no_public_surface(http, live_server):
    hub = make_hub(http, "quiet")
    draft = hub["page"]("Zanzibar planning", is_draft=True)["id"]
    public = hub["page"]("Zanzibar itinerary")["id"]
    emptied = bundle(http, hub, "Quokka emptied", [public])
    private = bundle(http, hub, "Quokka private", [draft])
    shown = bundle(http, hub, "Quokka shown", [public, draft])
    assert http.patch(f"/api/bundles/{emptied}", json={"doc_ids": []}, headers=hub["owner"]).status_code == 200
    wait_indexed(live_server, doc_ids=[draft, public], bundle_ids=[emptied, private, shown])

    hidden = ("Quokka emptied", "Quokka private")
    surfaces = {
        "hub page": http.get("/hub/quiet", headers={"Accept": "text/html"}).text,
        "hub markdown": http.get("/hub/quiet.md").text,
        "hub API": http.get("/api/hub/quiet").text,
        "llms.txt": http.get("/hub/quiet/llms.txt").text,
        "llms-full.txt": http.get("/hub/quiet/llms-full.txt").text,
        "graph": http.get("/api/hub/quiet/graph").text,
        "graph markdown": http.get("/hub/quiet/graph.md").text,
        "digest": http.get("/api/hub/quiet/digest").text,
        "the page's own": http.get(f"/{public}", headers={"Accept": "text/html"}).text,
        "bundle recall": http.post(
            "/api/hub/quiet/recall", json={"question": "Quokka Zanzibar", "level": "bundle", "k": 10}
        ).text,
    }
    assert "Quokka shown" in surfaces["hub page"] and "Quokka shown" in surfaces["hub markdown"]
    assert "Quokka shown" in surfaces["llms.txt"] and "Quokka shown" in surfaces["bundle recall"]
    for name, text in surfaces.items():
        for title in hidden:
            assert title not in text, f"{title} shows on the {name}"
    for bundle_id in (emptied, private):
        for path in (f"/b/{bundle_id}", f"/b/{bundle_id}.md", f"/raw/b/{bundle_id}"):
            assert http.get(path).status_code == 404, path
    assert http.get(f"/b/{shown}.md").status_code == 200

    # the owner still sees them, marked as hidden
    owned = {b["title"]: b["public"] for b in http.get("/api/hub/quiet", headers=hub["owner"]).json()["bundles"]}
    assert owned == {"Quokka emptied": False, "Quokka private": False, "Quokka shown": True}

    # a page made public again brings its bundle back
    assert http.patch(f"/api/docs/{draft}", json={"is_draft": False}, headers=hub["owner"]).status_code == 200
    assert "Quokka private" in http.get("/hub/quiet.md").text
    assert http.get(f"/b/{private}").status_code == 200


runner = CliRunner()


def cli(*args: str, ok: bool = True):
    result = runner.invoke(app, list(args))
    assert "Traceback" not in result.output, result.output
    if ok:
        assert result.exit_code == 0, f"exit {result.exit_code}: {result.output}"
    return result


def test_the_cli_deletes_a_bundle_with_the_owner_token(http, live_server, tmp_path, monkeypatch):
    for name in ("MEMORYWIKI_TOKEN", "MEMORYWIKI_HUB", "XDG_CONFIG_HOME", "MEMORYWIKI_DEBUG"):
        monkeypatch.delenv(name, raising=False)
    config = tmp_path / "config.toml"
    monkeypatch.setenv("MEMORYWIKI_CONFIG", str(config))
    monkeypatch.setenv("MEMORYWIKI_URL", live_server.url)
    monkeypatch.setenv("HOME", str(tmp_path))
    slug = "cli" + uuid.uuid4().hex[:8]
    cli("hub", "create", slug)
    token = tomllib.loads(config.read_text())["hubs"][slug]["owner_token"]
    hub = {"slug": slug, "owner": {"Authorization": f"Bearer {token}"}}
    page = http.post(
        "/api/docs", json={"hub": slug, "title": "Notes", "markdown": "Some notes."}, headers=hub["owner"]
    ).json()["id"]
    url = http.post("/api/bundles", json={"hub": slug, "title": "Set", "doc_ids": [page]}, headers=hub["owner"]).json()[
        "url"
    ]

    stranger = make_hub(http, "x" + uuid.uuid4().hex[:8])
    refused = cli("bundle", "delete", url, "--hub", stranger["slug"], ok=False)
    assert refused.exit_code == 1 and "no owner token for hub" in refused.stderr
    assert live(http, hub, url.rsplit("/", 1)[-1])

    done = cli("bundle", "delete", url)
    assert done.stdout == f"deleted bundle {url.rsplit('/', 1)[-1]}\n"
    assert not live(http, hub, url.rsplit("/", 1)[-1])
    again = cli("bundle", "delete", url, ok=False)
    assert again.exit_code == 1 and again.stderr.startswith("error: ") and "bundle" in again.stderr
    assert http.get(f"/{page}.md").status_code == 200
