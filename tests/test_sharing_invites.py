"""Sharing a page with addresses mails each newly added address its one-time sign-in link at
once, through a real SMTP server on loopback (aiosmtpd) and a live server: once per address,
not on every save; a removed then re-added address is mailed again; a draft's people when it is
published; nobody on an import. The link is built from the configured public URL, whatever
Host the request came with. Without SMTP the answer says plainly that no mail went. The CLI
shares through its real entry point."""

from __future__ import annotations

import re
import tomllib
import uuid
from dataclasses import replace

import httpx
import pytest
from memorywiki.cli.main import app
from typer.testing import CliRunner

from tests.conftest import serving
from tests.polling import wait_until

ANN, BOB, EVE = "ann@example.com", "bob@example.com", "eve@example.com"
LINK = re.compile(r"(\S+)/signin#(mwl_[\w-]+)")


@pytest.fixture
def mailing(settings, smtp_server):
    with serving(replace(settings, smtp_url=smtp_server.url, mail_retry_seconds=0.2)) as live:
        live.http = httpx.Client(base_url=live.url, timeout=30)
        yield live
        live.http.close()


def make_hub(http: httpx.Client, slug: str = "") -> dict:
    slug = slug or "h" + uuid.uuid4().hex[:8]
    token = http.post("/api/hubs", json={"slug": slug}).json()["owner_token"]
    return {"slug": slug, "owner": {"Authorization": f"Bearer {token}"}, "token": token}


def create(http: httpx.Client, hub: dict, title: str, **extra) -> httpx.Response:
    return http.post(
        "/api/docs",
        json={"hub": hub["slug"], "title": title, "markdown": f"The {title} text.", **extra},
        headers=hub["owner"],
    )


def settled(live) -> dict:
    """/healthz's mail counts once the outbox holds nothing left to send."""
    return wait_until(
        lambda: (m := httpx.get(f"{live.url}/healthz").json()["mail"])["pending"] == 0 and m["retrying"] == 0 and m,
        "the outbox to drain",
    )


def test_each_new_address_is_mailed_its_link_once(mailing, smtp_server):
    http = mailing.http
    hub = make_hub(http)
    r = create(http, hub, "Trip plans", allowed_emails=[ANN])
    assert r.status_code == 201, r.text
    doc_id = r.json()["id"]
    sharing = r.json()["sharing"]
    assert sharing["mail"] is True and sharing["mailed"] == [ANN] and sharing["not_mailed"] == []
    assert ANN in sharing["message"]
    mail = smtp_server.wait_for(ANN)[0]
    assert mail["Subject"] == "A page was shared with you on Memory.Wiki"
    assert "Trip plans" not in mail.as_string()  # the title never leaves in a mail
    url, secret = LINK.search(mail.get_content()).groups()
    assert url == f"{mailing.url}/{doc_id}"

    # the link signs ann in as a reader of the page
    reader = httpx.Client(base_url=mailing.url, timeout=30)
    page = reader.get(f"/{doc_id}/signin", headers={"Accept": "text/html"})
    token = re.search(r'name="csrf-token" content="([^"]+)"', page.text).group(1)
    signed = reader.post(f"/api/docs/{doc_id}/access/session", json={"link": secret}, headers={"X-CSRF-Token": token})
    assert signed.status_code == 200 and signed.json()["email"] == ANN
    assert "The Trip plans text." in reader.get(f"/{doc_id}.md").text
    reader.close()

    # adding bob mails bob alone; saving again, or the same list again, mails nobody
    owner = hub["owner"]
    r = http.patch(f"/api/docs/{doc_id}", json={"allowed_emails": [ANN, BOB]}, headers=owner)
    assert r.json()["sharing"]["mailed"] == [BOB]
    smtp_server.wait_for(BOB)
    r = http.patch(f"/api/docs/{doc_id}", json={"allowed_emails": [BOB, ANN], "title": "Trip"}, headers=owner)
    assert r.json()["sharing"]["mailed"] == [] and "told before" in r.json()["sharing"]["message"]
    r = http.patch(f"/api/docs/{doc_id}", json={"markdown": "New text."}, headers=owner)
    assert r.status_code == 200 and "sharing" not in r.json()
    assert settled(mailing)["sent"] == 2
    assert (len(smtp_server.to(ANN)), len(smtp_server.to(BOB))) == (1, 1)

    # removed, then added again: mailed again
    assert http.patch(f"/api/docs/{doc_id}", json={"allowed_emails": [BOB]}, headers=owner).status_code == 200
    r = http.patch(f"/api/docs/{doc_id}", json={"allowed_emails": [BOB, ANN]}, headers=owner)
    assert r.json()["sharing"]["mailed"] == [ANN]
    smtp_server.wait_for(ANN, 2)
    assert settled(mailing)["sent"] == 3 and smtp_server.to(EVE) == []


def test_the_link_is_built_from_the_public_url_whatever_the_host(mailing, smtp_server):
    http = mailing.http
    hub = make_hub(http)
    r = http.post(
        "/api/docs",
        json={"hub": hub["slug"], "title": "Forged", "markdown": "x", "allowed_emails": [ANN]},
        headers={**hub["owner"], "Host": "evil.example.net", "X-Forwarded-Host": "evil.example.net"},
    )
    if r.status_code == 201:  # a server that trusts no such host refuses it before any route
        url, _ = LINK.search(smtp_server.wait_for(ANN)[0].get_content()).groups()
        assert url == f"{mailing.url}/{r.json()['id']}"
    else:
        assert 400 <= r.status_code < 500
    settled(mailing)
    assert all("evil.example.net" not in m.get_content() for _, _, m in smtp_server.all())


def test_a_draft_is_mailed_when_published_and_a_password_or_no_hub_is_said(mailing, smtp_server):
    http = mailing.http
    hub = make_hub(http)
    draft = create(http, hub, "Draft", is_draft=True, allowed_emails=[ANN]).json()
    assert draft["sharing"]["mailed"] == [] and "draft" in draft["sharing"]["message"]
    locked = create(http, hub, "Locked", password="hunter2", allowed_emails=[BOB]).json()
    assert locked["sharing"]["mailed"] == [] and "password" in locked["sharing"]["message"]
    loose = http.post("/api/docs", json={"title": "Loose", "markdown": "x", "allowed_emails": [EVE]}).json()
    assert loose["sharing"]["mailed"] == [] and "no hub" in loose["sharing"]["message"]
    assert settled(mailing)["sent"] == 0 and smtp_server.all() == []

    r = http.patch(f"/api/docs/{draft['id']}", json={"is_draft": False}, headers=hub["owner"])
    assert r.json()["sharing"]["mailed"] == [ANN]
    smtp_server.wait_for(ANN)
    assert settled(mailing)["sent"] == 1


def test_an_import_mails_nobody(mailing, smtp_server):
    http = mailing.http
    hub = make_hub(http)
    r = create(http, hub, "Imported", external_id="notes/imported.md", allowed_emails=[ANN])
    assert r.status_code == 201 and "sharing" not in r.json()
    # nor does a later save: the import brought the page with its people told
    r = http.patch(f"/api/docs/{r.json()['id']}", json={"title": "Imported again"}, headers=hub["owner"])
    assert r.status_code == 200 and "sharing" not in r.json()
    assert settled(mailing)["sent"] == 0 and smtp_server.all() == []


def test_a_client_sharing_with_many_addresses_is_held_to_its_budget(settings, smtp_server):
    with serving(replace(settings, smtp_url=smtp_server.url, rate_invite="2/hour")) as live:
        http = httpx.Client(base_url=live.url, timeout=30)
        hub = make_hub(http)
        many = [f"p{i}@example.com" for i in range(4)]
        r = create(http, hub, "Party", allowed_emails=many)
        sharing = r.json()["sharing"]
        assert sharing["mailed"] == many[:2] and sharing["not_mailed"] == many[2:]
        assert "not mailed yet" in sharing["message"]
        assert settled(live)["sent"] == 2
        http.close()


def test_without_smtp_the_answer_says_no_mail_went(live_server, smtp_server):
    http = httpx.Client(base_url=live_server.url, timeout=30)
    hub = make_hub(http)
    r = create(http, hub, "Quiet", allowed_emails=[ANN])
    sharing = r.json()["sharing"]
    assert sharing["mail"] is False and sharing["mailed"] == [] and sharing["not_mailed"] == [ANN]
    assert "MEMORYWIKI_SMTP_URL" in sharing["message"] and "access link" in sharing["message"]
    again = http.patch(f"/api/docs/{r.json()['id']}", json={"allowed_emails": [ANN, BOB]}, headers=hub["owner"])
    assert (
        again.json()["sharing"]["not_mailed"] == [BOB] and "MEMORYWIKI_SMTP_URL" in again.json()["sharing"]["message"]
    )
    editor = http.get(f"/{r.json()['id']}/edit", headers={"Accept": "text/html"}).text
    assert "This server sends no mail (MEMORYWIKI_SMTP_URL is not set)" in editor
    assert smtp_server.all() == []
    http.close()


runner = CliRunner()


def cli(*args: str, ok: bool = True):
    result = runner.invoke(app, list(args))
    assert "Traceback" not in result.output, result.output
    if ok:
        assert result.exit_code == 0, f"exit {result.exit_code}: {result.output}"
    return result


def test_the_cli_shares_a_page_and_says_who_was_mailed(mailing, smtp_server, tmp_path, monkeypatch):
    for name in ("MEMORYWIKI_TOKEN", "MEMORYWIKI_HUB", "XDG_CONFIG_HOME", "MEMORYWIKI_DEBUG"):
        monkeypatch.delenv(name, raising=False)
    config = tmp_path / "config.toml"
    monkeypatch.setenv("MEMORYWIKI_CONFIG", str(config))
    monkeypatch.setenv("MEMORYWIKI_URL", mailing.url)
    monkeypatch.setenv("HOME", str(tmp_path))
    slug = "cli" + uuid.uuid4().hex[:8]
    cli("hub", "create", slug)
    token = tomllib.loads(config.read_text())["hubs"][slug]["owner_token"]
    doc = mailing.http.post(
        "/api/docs",
        json={"hub": slug, "title": "Budget", "markdown": "Numbers."},
        headers={"Authorization": f"Bearer {token}"},
    ).json()

    shared = cli("share", doc["url"], "Ann@Example.com", BOB)
    assert shared.stdout == f"{ANN}\n{BOB}\n"
    assert f"mailed a one-time sign-in link to {ANN}, {BOB}" in shared.stderr
    smtp_server.wait_for(ANN)
    smtp_server.wait_for(BOB)

    assert cli("share", doc["id"]).stdout == f"{ANN}\n{BOB}\n"  # no address: who it is shared with
    removed = cli("share", doc["id"], "--remove", BOB, "--json")
    assert '"allowed_emails": [\n    "ann@example.com"\n  ]' in removed.stdout
    public = cli("share", doc["id"], "--remove", ANN)
    assert public.stdout == "" and "anyone may read it" in public.stderr
    bad = cli("share", doc["id"], "not an address", ok=False)
    assert bad.exit_code == 1 and "not an email address" in bad.stderr
    assert settled(mailing)["sent"] == 2

    monkeypatch.setenv("MEMORYWIKI_CONFIG", str(tmp_path / "empty.toml"))  # no token for it
    refused = cli("share", doc["id"], EVE, ok=False)
    assert refused.exit_code == 1 and refused.stderr.startswith("error: ")
    assert smtp_server.to(EVE) == []
