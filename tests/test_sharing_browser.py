"""Sharing in a browser (Debian's headless Chromium driven by Playwright, a live server, the real
database and a real SMTP server on loopback): a person a page is shared with asks for a link,
reads it from the mail, opens it, reads the page and signs out; the owner copies an access link
per address and manages members from the hub page. No script error, no CSP violation.

Skipped where Chromium is not installed, except in CI (CI=1), where that fails.
"""

from __future__ import annotations

import re
from dataclasses import replace

import httpx
import pytest

from tests.test_web_browser import Tab, tab  # noqa: F401  (tab: the fixture, shared)

pytestmark = pytest.mark.slow

ANN = "ann@example.com"


@pytest.fixture
def settings(settings, smtp_server):
    return replace(settings, smtp_url=smtp_server.url)


@pytest.fixture
def shared(live_server, smtp_server):
    with httpx.Client(base_url=live_server.url, timeout=30) as http:
        token = http.post("/api/hubs", json={"slug": "circle"}).json()["owner_token"]
        doc = http.post(
            "/api/docs",
            json={
                "hub": "circle",
                "title": "Ann's plan",
                "markdown": "The secret plan.",
                "allowed_emails": [ANN, "bob@example.com"],
            },
            headers={"Authorization": f"Bearer {token}"},
        ).json()
    assert doc["sharing"]["mailed"] == [ANN, "bob@example.com"]
    smtp_server.wait_for(ANN)  # the link mailed when the page was shared with her
    smtp_server.wait_for("bob@example.com")
    smtp_server.reset()
    return {"token": token, "id": doc["id"]}


def test_a_listed_person_signs_in_with_the_mailed_link_reads_and_signs_out(tab, live_server, shared, smtp_server):
    ann = tab()
    ann.page.goto(f"/{shared['id']}")
    assert "shared with specific people" in ann.page.locator("main").inner_text()
    assert "Ann's plan" not in ann.page.content()
    ann.page.get_by_label("Email").fill(ANN)
    ann.page.get_by_role("button", name="Send me a link").click()
    ann.page.locator("[data-mw=link-sent]").wait_for()

    link = re.search(r"https?://\S+/signin#mwl_[\w-]+", smtp_server.wait_for(ANN)[0].get_content()).group(0)
    assert link.startswith(live_server.url)
    ann.page.goto(link)
    ann.page.wait_for_url(f"{live_server.url}/{shared['id']}")  # the secret left the address bar
    assert "The secret plan." in ann.page.locator("article").inner_text()
    assert ANN in ann.page.locator("[data-mw=reader]").inner_text()
    cookie = next(c for c in ann.context.cookies() if c["name"] == "mw_session")
    assert cookie["httpOnly"] and "mwl_" not in cookie["value"]

    again = tab()  # the same link in another browser: used up, and it says so
    again.page.goto(link)
    error = again.page.locator("[data-mw=signin-error]")
    error.wait_for()
    assert "used already" in error.inner_text()

    ann.page.get_by_role("button", name="Sign out").click()
    ann.page.get_by_role("button", name="Send me a link").wait_for()
    assert "The secret plan." not in ann.page.content()


def test_the_owner_copies_an_access_link_and_manages_members(tab, live_server, shared):
    owner = tab()
    owner.page.goto(f"/hub/circle/signin#{shared['token']}")
    owner.page.locator("[data-mw-owner]").wait_for()
    owner.page.get_by_text("People and their access links").click()
    owner.page.locator(f"[data-access-link='{ANN}']").click()
    field = owner.page.get_by_label(f"Access link for {ANN}")
    owner.page.wait_for_function("(el) => el.value.includes('?access=')", arg=field.element_handle())
    access_link = field.input_value()

    reader = tab()  # the copied link opens the page for ann
    reader.page.goto(access_link)
    assert "The secret plan." in reader.page.locator("article").inner_text()

    owner.page.get_by_label("Add a member by name").fill("bob")
    owner.page.get_by_role("button", name="Add member").click()
    token = owner.page.get_by_label("The new member's token")
    token.wait_for()
    assert token.input_value().startswith("mwm_")
    remove = owner.page.get_by_role("button", name="Remove member bob")
    remove.wait_for()
    remove.click()
    owner.page.get_by_text("No members yet.").wait_for()

    owner.page.locator(f"[data-unshare='{ANN}']").click()
    owner.page.wait_for_load_state("load")
    owner.page.get_by_text("Shared with bob@example.com").wait_for()
    reader.page.goto(access_link)  # removing the address ended the link's access
    assert "The secret plan." not in reader.page.content()
