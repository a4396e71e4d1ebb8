"""The sharing flows in a browser (Debian's headless Chromium driven by Playwright, a live
server, the real database and a real SMTP server on loopback): a reader signed in from her
mailed link is offered no edit, restore or editor she cannot use; the owner shares a page with
an address from the hub page and from the editor and is told who was mailed; the owner deletes
a bundle from the hub page after a confirmation. No script error, no CSP violation.

Skipped where Chromium is not installed, except in CI (CI=1), where that fails.
"""

from __future__ import annotations

import re
from dataclasses import replace

import httpx
import pytest

from tests.test_owner_browser import make_hub, signed_in
from tests.test_web_browser import Tab, tab  # noqa: F401  (tab: the fixture, shared)

pytestmark = pytest.mark.slow

ANN = "ann@example.com"


@pytest.fixture
def settings(settings, smtp_server):
    return replace(settings, smtp_url=smtp_server.url, autosave_seconds=0.5)


def test_a_reader_is_offered_no_control_she_cannot_use(tab, live_server, smtp_server):
    hub = make_hub(live_server, "readers", {"Ann's plan": {"markdown": "The first plan.", "allowed_emails": [ANN]}})
    doc_id = hub["ids"]["Ann's plan"]
    with httpx.Client(base_url=live_server.url, timeout=30) as http:  # a second version, for the history
        assert http.patch(f"/api/docs/{doc_id}", json={"markdown": "The plan."}, headers=hub["owner"]).is_success
    link = re.search(r"https?://\S+/signin#mwl_[\w-]+", smtp_server.wait_for(ANN)[0].get_content()).group(0)

    ann = tab()
    ann.page.goto(link)
    ann.page.wait_for_url(f"{live_server.url}/{doc_id}")
    article = ann.page.locator("article")
    assert "The plan." in article.inner_text()
    assert ann.page.get_by_role("link", name="history").is_visible()
    assert ann.page.get_by_role("link", name="edit", exact=True).count() == 0

    ann.page.get_by_role("link", name="history").click()
    ann.page.wait_for_url(f"**/{doc_id}/history")
    assert "signed in as" in ann.page.locator("[data-mw=reader]").inner_text()
    assert ann.page.get_by_role("button", name="Restore").count() == 0
    assert ann.page.get_by_role("link", name="edit", exact=True).count() == 0
    assert ann.page.get_by_role("button", name="Compare").is_visible()  # reading the history still works

    ann.page.goto(f"/{doc_id}/edit")  # typed by hand: the editor is not offered either
    assert ANN in ann.page.locator("[data-mw=reader]").inner_text()
    assert ann.page.locator("textarea").count() == 0
    assert ann.page.get_by_role("button", name="Save now").count() == 0
    ann.page.get_by_role("link", name="Read the page").click()
    ann.page.wait_for_url(f"{live_server.url}/{doc_id}")

    owner = signed_in(tab, hub)  # the owner, signed in, keeps every control
    owner.page.goto(f"/{doc_id}")
    assert owner.page.get_by_role("link", name="edit", exact=True).is_visible()
    owner.page.goto(f"/{doc_id}/history")
    assert owner.page.get_by_role("button", name="Restore").count() == 1


def test_the_owner_shares_a_page_from_the_hub_page_and_is_told_who_was_mailed(tab, live_server, smtp_server):
    hub = make_hub(live_server, "sharers", {"Budget": {}})
    owner = signed_in(tab, hub)
    owner.page.get_by_text("Share with people").click()
    assert "Each new address is mailed a one-time sign-in link" in owner.page.locator("[data-people]").inner_text()
    owner.page.get_by_label("Share Budget with an address").fill("Ann@Example.com")
    owner.page.get_by_role("button", name="Share", exact=True).click()
    status = owner.page.locator("[data-mw=owner-status]")
    status.get_by_text(f"mailed a one-time sign-in link to {ANN}").wait_for()
    assert "Shared with ann@example.com" in owner.page.locator("ul.pages").inner_text()
    assert smtp_server.wait_for(ANN)[0]["To"] == ANN
    with httpx.Client(base_url=live_server.url, timeout=30) as http:
        assert http.get(f"/{hub['ids']['Budget']}.md").status_code == 404  # people-only now


def test_the_editor_says_who_was_mailed(tab, live_server, smtp_server):
    hub = make_hub(live_server, "editors", {"Roadmap": {}})
    owner = signed_in(tab, hub)
    owner.page.goto(f"/{hub['ids']['Roadmap']}/edit")
    note = owner.page.locator("[data-mw=mail-note]")
    assert "mailed a one-time sign-in link" in note.inner_text()
    owner.page.locator("[data-mw=status][data-state=saved]").wait_for()
    owner.page.get_by_label("Only these emails may read it").fill(ANN)
    said = owner.page.locator("[data-mw=sharing]")
    said.get_by_text(f"Mailed a one-time sign-in link to {ANN}").wait_for()
    smtp_server.wait_for(ANN)


def test_the_owner_deletes_a_bundle_after_confirming(tab, live_server):
    hub = make_hub(live_server, "shelves", {"Chapter one": {}, "Secret chapter": {"is_draft": True}})
    with httpx.Client(base_url=live_server.url, timeout=30) as http:

        def bundle(title: str, pages: list[str]) -> str:
            r = http.post(
                "/api/bundles",
                json={"hub": "shelves", "title": title, "doc_ids": [hub["ids"][p] for p in pages]},
                headers=hub["owner"],
            )
            return r.json()["id"]

        course = bundle("Course", ["Chapter one"])
        hidden = bundle("Hidden set", ["Secret chapter"])
        owner = signed_in(tab, hub)
        row = owner.page.locator(f"li[data-bundle='{hidden}']")
        assert "hidden: no public page" in row.inner_text()
        assert "hidden" not in owner.page.locator(f"li[data-bundle='{course}']").inner_text()

        owner.page.once("dialog", lambda dialog: dialog.dismiss())
        owner.page.get_by_role("button", name="Delete bundle Course").click()
        assert owner.page.get_by_role("button", name="Delete bundle Course").is_enabled()
        assert http.get(f"/b/{course}").status_code == 200  # not confirmed: nothing deleted

        asked = []
        owner.page.once("dialog", lambda dialog: (asked.append(dialog.message), dialog.accept()))
        owner.page.get_by_role("button", name="Delete bundle Course").click()
        owner.page.get_by_role("button", name="Delete bundle Course").wait_for(state="detached")
        assert "Course" in asked[0] and "cannot be brought back" in asked[0]
        assert http.get(f"/b/{course}").status_code == 404
        assert [b["id"] for b in http.get("/api/hub/shelves", headers=hub["owner"]).json()["bundles"]] == [hidden]
        assert http.get(f"/{hub['ids']['Chapter one']}.md").status_code == 200  # its page stays
