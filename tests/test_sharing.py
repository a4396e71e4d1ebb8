"""Pages shared with people, through a real SMTP server on loopback (aiosmtpd): a listed person
asks for a link, reads it from the mail, signs in as a reader and reads what is shared with
them (and nothing else); an unlisted one gets the same answer and no mail; links are single
use, bound to their address, expire; the outbox retries and /healthz shows failures."""

from __future__ import annotations

import re

import psycopg
import pytest
from memorywiki.server.web.sessions import COOKIE

from tests.polling import wait_until

ANN, BOB, EVE = "ann@example.com", "bob@example.com", "eve@example.com"
LINK = re.compile(r"(http://testserver/(\w+)/signin)#(mwl_[A-Za-z0-9_-]+)")


@pytest.fixture
def inbox(smtp_server):
    return smtp_server


@pytest.fixture
def mailing(make_client, inbox):
    return make_client(smtp_url=inbox.url, mail_retry_seconds=0.2, mail_retries=3)


def make_world(client, inbox=None):
    """A hub with pages shared with ann and bob. With `inbox` (the client mails), the sign-in
    links mailed when the pages were shared (two each) are waited for and dropped, so a test
    starts from an empty inbox."""
    token = client.post("/api/hubs", json={"slug": "club"}).json()["owner_token"]
    owner = {"Authorization": f"Bearer {token}"}

    def page(title, **extra):
        r = client.post(
            "/api/docs", json={"hub": "club", "title": title, "markdown": f"The {title} text.", **extra}, headers=owner
        )
        assert r.status_code == 201, r.text
        return r.json()["id"]

    world = {
        "owner": owner,
        "ann": page("Ann only", allowed_emails=["Ann@Example.com"]),
        "both": page("Ann and Bob", allowed_emails=[ANN, BOB]),
        "bob": page("Bob only", allowed_emails=[BOB]),
        "public": page("Open notes"),
        "draft": page("Draft", is_draft=True, allowed_emails=[ANN]),
    }
    if inbox is not None:
        inbox.wait_for(ANN, 2)
        inbox.wait_for(BOB, 2)
        client.get("/healthz")
        inbox.reset()
    return world


@pytest.fixture
def world(mailing, inbox):
    return make_world(mailing, inbox)


def csrf(client, path: str) -> str:
    page = client.get(path, headers={"Accept": "text/html"})
    return re.search(r'name="(?:csrf-token|csrf_token)" (?:content|value)="([^"]+)"', page.text).group(1)


def ask(client, doc_id, email):
    """Ask for a link as the page's script would: a browser holding a session sends the page's CSRF token."""
    headers = {"X-CSRF-Token": csrf(client, f"/{doc_id}/signin")} if client.cookies.get(COOKIE) else {}
    return client.post(f"/api/docs/{doc_id}/access/request", json={"email": email}, headers=headers)


def link_from(mail) -> tuple[str, str, str]:
    found = LINK.search(mail.get_content())
    assert found, mail.get_content()
    return found.group(1), found.group(2), found.group(3)


def follow(client, doc_id, secret):
    return client.post(
        f"/api/docs/{doc_id}/access/session",
        json={"link": secret},
        headers={"X-CSRF-Token": csrf(client, f"/{doc_id}/signin")},
    )


def signed_in_reader(client, inbox, doc_id, email=ANN):
    before = len(inbox.to(email))
    assert ask(client, doc_id, email).status_code == 202
    _, linked, secret = link_from(inbox.wait_for(email, before + 1)[-1])
    assert linked == doc_id
    r = follow(client, doc_id, secret)
    assert r.status_code == 200, r.text
    return secret


def test_a_listed_person_gets_a_link_and_reads_the_page_an_unlisted_one_gets_the_same_answer(mailing, world, inbox):
    page = mailing.get(f"/{world['ann']}", headers={"Accept": "text/html"})
    assert page.status_code == 401 and "shared with specific people" in page.text
    assert "Ann only" not in page.text and 'name="email"' in page.text

    listed, unlisted = ask(mailing, world["ann"], ANN), ask(mailing, world["ann"], EVE)
    assert (listed.status_code, listed.json()) == (unlisted.status_code, unlisted.json())
    assert listed.status_code == 202 and listed.json()["expires_in_minutes"] == 15
    mail = inbox.wait_for(ANN)[0]
    assert mail["To"] == ANN and "Memory.Wiki" in mail["From"] and "Ann only" not in mail.as_string()
    assert inbox.to(EVE) == []

    url, doc_id, secret = link_from(mail)
    assert url == f"http://testserver/{world['ann']}/signin"
    landing = mailing.get(f"/{doc_id}/signin", headers={"Accept": "text/html"})
    assert landing.status_code == 200 and "reader.js" in landing.text
    signed = follow(mailing, doc_id, secret)
    assert signed.status_code == 200 and signed.json()["kind"] == "reader" and signed.json()["email"] == ANN
    assert "httponly" in signed.headers["set-cookie"].lower()

    html = mailing.get(f"/{world['ann']}", headers={"Accept": "text/html"})
    assert html.status_code == 200 and "The Ann only text." in html.text and "signed in as <strong>" in html.text
    assert "The Ann only text." in mailing.get(f"/{world['ann']}.md").text
    assert mailing.get(f"/api/docs/{world['ann']}").json()["title"] == "Ann only"
    assert mailing.get(f"/{world['ann']}/history", headers={"Accept": "text/html"}).status_code == 200
    assert mailing.get(f"/api/docs/{world['ann']}/versions").status_code == 200
    # every page of the hub shared with ann opens; none other does
    assert mailing.get(f"/{world['both']}.md").status_code == 200
    for other in ("bob", "draft"):
        assert mailing.get(f"/{world[other]}.md").status_code == 404
        assert mailing.get(f"/api/docs/{world[other]}").status_code == 404
    # and the reader writes nothing
    assert (
        mailing.patch(
            f"/api/docs/{world['ann']}",
            json={"markdown": "x"},
            headers={"X-CSRF-Token": csrf(mailing, f"/{world['ann']}")},
        ).status_code
        == 401
    )

    again = follow(mailing, doc_id, secret)  # single use
    assert again.status_code == 403 and again.json()["error"]["code"] == "link_used"


def test_the_answer_is_the_same_for_any_page_and_a_link_is_bound_to_its_page(mailing, world, inbox):
    answers = {ask(mailing, d, ANN).text for d in (world["public"], world["draft"], "zzzzzzzzzz", world["bob"])}
    assert answers == {ask(mailing, world["ann"], EVE).text}
    assert ask(mailing, "../etc", ANN).status_code == 404
    mailing.get("/healthz")
    assert inbox.all() == []  # no page among those is shared with ann by mail
    ask(mailing, world["ann"], ANN)
    _, _, secret = link_from(inbox.wait_for(ANN)[0])
    wrong = follow(mailing, world["both"], secret)  # ann's link of one page opens no other page's way in
    assert wrong.status_code == 403 and wrong.json()["error"]["code"] == "unknown_link"
    made_up = follow(mailing, world["ann"], "mwl_" + "A" * 43)
    assert made_up.status_code == 403 and made_up.json()["error"]["code"] == "unknown_link"
    assert follow(mailing, world["ann"], secret).status_code == 200


def test_an_expired_link_opens_nothing(mailing, world, inbox, settings):
    ask(mailing, world["ann"], ANN)
    _, _, secret = link_from(inbox.wait_for(ANN)[0])
    with psycopg.connect(settings.database_url) as conn:
        conn.execute("UPDATE signin_links SET expires_at = now() - interval '1 second'")
    r = follow(mailing, world["ann"], secret)
    assert r.status_code == 403 and r.json()["error"]["code"] == "link_expired"
    assert mailing.get(f"/{world['ann']}.md").status_code == 404


def test_removing_an_address_ends_its_access_at_once(mailing, world, inbox):
    signed_in_reader(mailing, inbox, world["both"])
    assert mailing.get(f"/{world['both']}.md").status_code == 200
    ask(mailing, world["ann"], ANN)
    _, _, unused = link_from(inbox.wait_for(ANN, 2)[-1])
    assert (
        mailing.patch(f"/api/docs/{world['both']}", json={"allowed_emails": [BOB]}, headers=world["owner"]).status_code
        == 200
    )
    assert mailing.get(f"/{world['both']}.md").status_code == 404
    assert (
        mailing.patch(f"/api/docs/{world['ann']}", json={"allowed_emails": [BOB]}, headers=world["owner"]).status_code
        == 200
    )
    late = follow(mailing, world["ann"], unused)
    assert late.status_code == 403 and late.json()["error"]["code"] == "not_shared"


def test_signing_in_again_rotates_and_signing_out_ends_the_reader_session(mailing, world, inbox):
    signed_in_reader(mailing, inbox, world["ann"])
    first = mailing.cookies.get(COOKIE)
    signed_in_reader(mailing, inbox, world["ann"])
    second = mailing.cookies.get(COOKIE)
    assert first != second
    mailing.cookies.clear()
    mailing.cookies.set(COOKIE, first)  # the cookie copied before the second sign-in opens nothing
    assert mailing.get(f"/{world['ann']}.md").status_code == 404
    mailing.cookies.clear()
    mailing.cookies.set(COOKIE, second)
    assert mailing.get(f"/{world['ann']}.md").status_code == 200
    out = mailing.delete("/api/hub/club/session", headers={"X-CSRF-Token": csrf(mailing, f"/{world['ann']}")})
    assert out.status_code == 200 and out.json()["signed_out"] is True
    mailing.cookies.set(COOKIE, second)  # replayed after sign-out
    assert mailing.get(f"/{world['ann']}.md").status_code == 404
    assert "shared with specific people" in mailing.get(f"/{world['ann']}", headers={"Accept": "text/html"}).text


def test_the_form_asks_for_a_link_with_csrf_and_answers_the_same(mailing, world, inbox):
    token = csrf(mailing, f"/{world['ann']}")
    forged = mailing.post(f"/{world['ann']}/access", data={"email": ANN})
    assert forged.status_code == 403
    pages = [mailing.post(f"/{world['ann']}/access", data={"email": e, "csrf_token": token}) for e in (ANN, EVE)]
    assert [p.status_code for p in pages] == [202, 202] and pages[0].text == pages[1].text
    assert "on its way" in pages[0].text
    inbox.wait_for(ANN)
    assert inbox.to(EVE) == []
    # the reader's session endpoint needs the page's token whatever the request carries
    assert mailing.post(f"/api/docs/{world['ann']}/access/session", json={"link": "mwl_x"}).status_code == 403


@pytest.mark.parametrize(
    "email",
    [
        "ann@example.com\r\nBcc: eve@example.com",
        "ann@example.com\nX: y",
        "Ann <ann@example.com>",
        "ann@example.com, eve@example.com",
        "not-an-address",
        "@example.com",
        "ann@",
        "a" * 250 + "@example.com",
        "ann@exa mple.com",
    ],
)
def test_a_malformed_address_is_a_clear_400_and_mails_nobody(mailing, world, inbox, email):
    r = ask(mailing, world["ann"], email)
    assert r.status_code == 400 and r.json()["error"]["code"] == "invalid_email"
    mailing.get("/healthz")
    assert inbox.all() == []


def test_link_requests_are_rate_limited_per_address_and_per_client(make_client, inbox):
    client = make_client(smtp_url=inbox.url, rate_link_address="3/hour", rate_link_client="6/hour")
    world = make_world(client, inbox)
    codes = [ask(client, world["ann"], ANN).status_code for _ in range(4)]
    assert codes == [202, 202, 202, 429]
    assert "for this address" in ask(client, world["ann"], ANN).json()["error"]["message"]
    # 6 per client, every request counted (listed or not, refused or not): the 6th passes, then none
    codes = [ask(client, world["ann"], f"x{i}@example.com").status_code for i in range(3)]
    assert codes == [202, 429, 429]
    assert len(inbox.wait_for(ANN, 3)) == 3


def test_without_smtp_the_visitor_is_told_to_ask_the_owner(client):
    world = make_world(client)
    page = client.get(f"/{world['ann']}", headers={"Accept": "text/html"})
    assert (
        page.status_code == 401 and "ask its owner for an access link" in page.text and 'name="email"' not in page.text
    )
    r = ask(client, world["ann"], ANN)
    assert r.status_code == 202 and r.json()["mail"] is False and "ask the page's owner" in r.json()["message"]
    assert client.get("/healthz").json()["mail"]["configured"] is False


def test_a_refused_mail_is_retried_then_given_up_and_healthz_shows_it_without_addresses(make_client, inbox):
    client = make_client(smtp_url=inbox.url, mail_retry_seconds=0.1, mail_retries=3)
    world = make_world(client, inbox)
    inbox.refuse("451 4.3.0 try again later")
    ask(client, world["ann"], ANN)
    health = wait_until(lambda: (h := client.get("/healthz").json()["mail"])["retrying"] and h, "a retried mail")
    assert health["configured"] is True and "451" in health["last_error"]
    inbox.refuse(None)  # the server is back: the retry delivers
    inbox.wait_for(ANN)
    # the four sign-in links mailed when the pages were shared, and this one
    assert wait_until(lambda: client.get("/healthz").json()["mail"]["sent"] == 5, "the mail to be sent")

    inbox.refuse("550 5.1.1 <ann@example.com>: no such user")  # refused for good: given up at once
    ask(client, world["ann"], ANN)
    health = wait_until(lambda: (h := client.get("/healthz").json()["mail"])["failed"] and h, "a given-up mail")
    assert health["pending"] == 0 and health["last_error"].startswith("SMTPRecipientsRefused 550")
    text = str(health)
    assert "ann@" not in text and "mwl_" not in text


def test_an_smtp_server_that_is_down_is_retried_and_shown(make_client, settings):
    client = make_client(smtp_url="smtp://127.0.0.1:9", mail_retry_seconds=0.1, mail_retries=2)
    world = make_world(client)
    r = ask(client, world["ann"], ANN)
    assert r.status_code == 202  # the request never waits on SMTP
    # the four sign-in links mailed when the pages were shared, and this one: all given up
    health = wait_until(lambda: (h := client.get("/healthz").json()["mail"])["failed"] == 5 and h, "given-up mails")
    assert health["last_error"] and "ann@" not in health["last_error"]
    with psycopg.connect(settings.database_url) as conn:
        assert {r[0] for r in conn.execute("SELECT body FROM mail_outbox")} == {""}  # no link is kept
