"""Owning a hub with only a browser (Debian's headless Chromium driven by Playwright, against a
live server and the real database): claim it, sign in on other browsers with the link or the
token, see every page with its visibility, run it (settings, delete and undelete, bundles made
and reordered, a suggestion accepted, a chat export imported with progress), sign out, and a
replayed cookie opens nothing. Every page must run without a script error or a CSP violation.

Skipped where Chromium is not installed, except in CI (CI=1), where that fails.
"""

from __future__ import annotations

import io
import json
import os
import zipfile
from dataclasses import replace
from pathlib import Path

import httpx
import pytest

from tests.polling import wait_curated, wait_until
from tests.test_web_browser import Tab, tab  # noqa: F401  (tab: the fixture, shared)

pytestmark = pytest.mark.slow

FIXTURES = Path(__file__).parent / "data" / "fixtures"
AUTOSAVE = 1.0


@pytest.fixture
def settings(settings):
    return replace(settings, autosave_seconds=AUTOSAVE)


def api(live_server) -> httpx.Client:
    return httpx.Client(base_url=live_server.url, timeout=30)


def make_hub(live_server, slug: str, pages: dict[str, dict] | None = None) -> dict:
    """A hub made through the API, with pages {title: extra fields}; its token and page ids."""
    with api(live_server) as http:
        token = http.post("/api/hubs", json={"slug": slug}).json()["owner_token"]
        owner = {"Authorization": f"Bearer {token}"}
        ids = {}
        for title, extra in (pages or {}).items():
            r = http.post(
                "/api/docs",
                headers=owner,
                json={"hub": slug, "title": title, "markdown": extra.pop("markdown", f"About {title}."), **extra},
            )
            assert r.status_code == 201, r.text
            ids[title] = r.json()["id"]
    return {"slug": slug, "token": token, "owner": owner, "ids": ids}


def signed_in(tab, hub: dict) -> Tab:
    """A browser signed in to the hub through its sign-in link, on the hub's page."""
    t = tab()
    t.page.goto(f"/hub/{hub['slug']}/signin#{hub['token']}")
    t.page.get_by_role("button", name=f"Sign in to {hub['slug']}").click()  # a link asks first
    t.page.wait_for_url(f"**/hub/{hub['slug']}")
    t.page.locator("[data-mw-owner]").wait_for()
    return t


def titles(section) -> list[str]:
    return [t.strip() for t in section.locator("li .title").all_inner_texts()]


def test_claim_a_hub_then_sign_in_elsewhere_with_the_link_or_the_token_and_sign_out(tab, live_server):
    make_hub(live_server, "garden")
    first = tab()
    first.page.goto("/")
    first.page.get_by_role("link", name="Claim a hub").click()
    name = first.page.get_by_label("The hub's name")
    error = first.page.locator("[data-mw=claim-error]")
    for taken, says in (("garden", "The name garden is taken"), ("api", "keeps for its own pages")):
        name.fill(taken)
        first.page.get_by_role("button", name="Claim it").click()
        error.wait_for()
        assert says in error.inner_text()
    name.fill("my-notes")
    first.page.get_by_role("button", name="Claim it").click()
    first.page.locator("[data-mw=claimed]").wait_for()
    token = first.page.locator("[data-mw=owner-token]").input_value()
    link = first.page.locator("[data-mw=signin-link]").input_value()
    assert token.startswith("mwo_") and link == f"{live_server.url}/hub/my-notes/signin#{token}"
    first.page.get_by_role("link", name="Open your hub").click()
    first.page.wait_for_url("**/hub/my-notes")
    assert "signed in as this hub's owner" in first.page.locator("[data-mw-owner]").inner_text()
    # the cookie holds a signed session id, never the token
    cookie = next(c for c in first.context.cookies() if c["name"] == "mw_session")
    assert cookie["httpOnly"] and cookie["sameSite"] == "Lax" and token not in cookie["value"]

    by_link = tab()  # another browser, with the link: it asks before it signs in (login CSRF)
    by_link.page.goto(link)
    ask = by_link.page.locator("[data-mw=confirm]")
    ask.wait_for()
    assert "as its owner" in ask.inner_text() and "my-notes" in ask.inner_text()
    by_link.page.wait_for_timeout(300)  # time enough for a script that would sign in by itself
    assert not [c for c in by_link.context.cookies() if c["name"] == "mw_session"]
    assert "#" not in by_link.page.url  # the token left the address bar before anything else
    by_link.page.get_by_role("button", name="Sign in to my-notes").click()
    by_link.page.wait_for_url(f"{live_server.url}/hub/my-notes")  # the fragment left the address bar
    by_link.page.locator("[data-mw-owner]").wait_for()

    by_token = tab()  # a third, pasting the token on the sign-in page
    by_token.page.goto("/hub/my-notes")
    by_token.page.get_by_role("link", name="owner sign-in").click()
    by_token.page.get_by_label("owner token").fill(token)
    by_token.page.get_by_role("button", name="Sign in").click()
    by_token.page.locator("[data-mw-owner]").wait_for()

    wrong = tab()  # a mistyped link signs nobody in, and says so
    wrong.page.goto(f"/hub/my-notes/signin#{token[:-3]}xyz")
    wrong.page.get_by_role("button", name="Sign in to my-notes").click()
    message = wrong.page.locator("[data-mw=signin-error]")
    message.wait_for()
    assert "does not open hub 'my-notes'" in message.inner_text()
    assert not [c for c in wrong.context.cookies() if c["name"] == "mw_session"]

    before = [c for c in by_link.context.cookies() if c["name"] == "mw_session"]
    by_link.page.get_by_role("button", name="Sign out").click()
    by_link.page.get_by_role("link", name="owner sign-in").wait_for()
    assert not [c for c in by_link.context.cookies() if c["name"] == "mw_session"]
    # the cookie copied before the sign-out, replayed in another browser: refused, and it says why
    thief = tab()
    thief.context.add_cookies(before)
    thief.page.goto("/hub/my-notes")
    assert "was signed out" in thief.page.locator("[data-mw=session-ended]").inner_text()
    assert thief.page.locator("[data-mw-owner]").count() == 0
    answer = thief.page.request.get("/api/hub/my-notes/trash")
    assert answer.status == 401 and answer.json()["error"]["code"] == "session_ended"
    # the other browsers stay signed in
    by_token.page.reload()
    by_token.page.locator("[data-mw-owner]").wait_for()


@pytest.fixture
def screenshots(tmp_path) -> Path:
    """Where the docs' screenshots go: docs/screenshots only when asked
    (MEMORYWIKI_SCREENSHOTS=docs/screenshots), so a test run leaves the checkout as it found it."""
    folder = Path(os.environ.get("MEMORYWIKI_SCREENSHOTS") or tmp_path)
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def test_the_owner_sees_every_page_deletes_undeletes_and_sets_the_hub(tab, live_server, screenshots):
    hub = make_hub(
        live_server,
        "notes",
        {
            "Reading list": {},
            "Half-written essay": {"is_draft": True},
            "Diary": {"password": "pw"},
            "Team plan": {"allowed_emails": ["ann@example.com", "bob@example.com"]},
        },
    )
    stranger = tab()
    stranger.page.goto("/hub/notes")
    seen = stranger.page.content()
    assert "Reading list" in seen and not any(t in seen for t in ("Half-written essay", "Diary", "Team plan"))

    t = signed_in(tab, hub)
    pages = t.page.locator("ul.pages")
    badges = {li.locator(".title").inner_text(): li.locator(".badge").inner_text() for li in pages.locator("li").all()}
    assert badges == {
        "Reading list": "public",
        "Half-written essay": "draft",
        "Diary": "password",
        "Team plan": "people",
    }
    assert "Shared with ann@example.com, bob@example.com" in pages.inner_text()

    t.page.get_by_label("Description").fill("What I read and write")
    t.page.get_by_label("Listed on this server's home page").check()
    t.page.get_by_role("button", name="Save settings").click()
    wait_until(lambda: "Saved: the hub is listed" in t.page.locator("[data-mw=owner-status]").inner_text(), "saved")
    listed = httpx.get(f"{live_server.url}/api/hub/notes").json()
    assert (listed["listed"], listed["description"]) == (True, "What I read and write")

    t.page.once("dialog", lambda dialog: dialog.accept())  # "Delete …? It goes to the trash."
    with t.page.expect_navigation():  # done, the page shows the hub as it is now
        t.page.get_by_role("button", name="Delete Half-written essay").click()
    trash = t.page.locator("section.trash")
    assert "Half-written essay" in titles(trash) and "Half-written essay" not in titles(pages)
    t.page.screenshot(path=str(screenshots / "owner-hub.png"), full_page=True)
    assert (
        httpx.get(f"{live_server.url}/api/hub/notes/trash", headers=hub["owner"]).json()["docs"][0]["id"]
        == hub["ids"]["Half-written essay"]
    )
    with t.page.expect_navigation():
        trash.get_by_role("button", name="Undelete Half-written essay").click()
    assert "Half-written essay" in titles(pages) and "The trash is empty" in trash.inner_text()
    doc = httpx.get(f"{live_server.url}/api/docs/{hub['ids']['Half-written essay']}", headers=hub["owner"]).json()
    assert (doc["version"], doc["is_draft"]) == (3, True)

    # a draft opens for its owner, and the editor saves it with the session alone
    t.page.get_by_role("link", name="Edit Half-written essay").click()
    status = t.page.locator("[data-mw=status]")
    wait_until(lambda: status.get_attribute("data-state") == "saved", "the editor to load the draft")
    t.page.locator("textarea[name=markdown]").fill("About Half-written essay, now with an ending.")
    wait_until(lambda: "version 4" in status.inner_text(), "the autosave")
    assert t.page.locator("[data-mw=need-token]").is_hidden()


def test_a_new_page_in_the_hub_needs_no_token_when_signed_in(tab, live_server):
    hub = make_hub(live_server, "inbox")
    t = signed_in(tab, hub)
    t.page.get_by_role("link", name="new page here").click()
    t.page.locator("input[name=title]").fill("Fresh idea")
    t.page.locator("textarea[name=markdown]").fill("Written in the browser, saved by the session.")
    t.page.wait_for_url("**/edit", timeout=30_000)
    assert t.page.locator("[data-mw=hub-token-row]").is_hidden()
    listing = httpx.get(f"{live_server.url}/api/hub/inbox").json()
    assert [d["title"] for d in listing["docs"]] == ["Fresh idea"]


def test_a_bundle_made_and_reordered_in_the_editor(tab, live_server, screenshots):
    hub = make_hub(live_server, "pg", {"Vacuum": {}, "Indexes": {}, "Private notes": {"is_draft": True}})
    t = signed_in(tab, hub)
    t.page.get_by_role("link", name="New bundle").click()
    t.page.wait_for_url("**/hub/pg/bundles/new")
    t.page.get_by_label("Title").fill("Postgres upkeep")
    t.page.get_by_label("Description").fill("Keeping a database healthy")
    for title in ("Vacuum", "Indexes", "Private notes (draft)"):
        t.page.get_by_label("Add a page of pg").select_option(label=title)
        t.page.get_by_role("button", name="Add", exact=True).click()
    members = t.page.locator("[data-mw=members]")
    t.page.get_by_role("button", name="Move up: Private notes").click()
    assert [m.strip() for m in members.locator(".member-title").all_inner_texts()] == [
        "Vacuum",
        "Private notes",
        "Indexes",
    ]
    t.page.get_by_role("button", name="Save bundle").click()
    status = t.page.locator("[data-mw=bundle-status]")
    wait_until(lambda: status.inner_text() == "Saved", "the bundle to be saved")
    bundle_id = t.page.url.rstrip("/").split("/")[-2]
    assert t.page.url == f"{live_server.url}/b/{bundle_id}/edit"
    raw = httpx.get(f"{live_server.url}/b/{bundle_id}.md").text
    assert "1. [Vacuum]" in raw and "2. [Indexes]" in raw and "Private notes" not in raw  # private stays out
    t.page.screenshot(path=str(screenshots / "bundle-editor.png"), full_page=True)

    t.page.reload()  # the saved order, the private member included, is what the editor shows
    assert [m.strip() for m in members.locator(".member-title").all_inner_texts()] == [
        "Vacuum",
        "Private notes",
        "Indexes",
    ]
    t.page.get_by_role("button", name="Move down: Vacuum").click()
    t.page.get_by_role("button", name="Move down: Vacuum").click()
    t.page.get_by_role("button", name="Save bundle").click()
    wait_until(lambda: status.inner_text() == "Saved", "the new order to be saved")
    raw = httpx.get(f"{live_server.url}/b/{bundle_id}.md").text
    assert raw.index("1. [Indexes]") < raw.index("2. [Vacuum]")
    t.page.goto("/hub/pg")
    assert t.page.get_by_role("link", name="Edit bundle Postgres upkeep").count() == 1

    stranger = tab()  # the editor is the owner's: a stranger gets a refusal, not the members
    response = stranger.page.goto(f"/b/{bundle_id}/edit")
    assert response.status == 401 and "Private notes" not in stranger.page.content()


NOTES = {
    "Vacuum tuning": "PostgreSQL vacuum reclaims dead tuples. Autovacuum thresholds decide when vacuum runs.",
    "Index bloat": "Dead tuples bloat PostgreSQL indexes. Vacuum and reindex shrink bloated indexes.",
    "HOT updates": "HOT updates leave fewer dead tuples. Fewer dead tuples mean less vacuum work in PostgreSQL.",
}


def test_a_suggested_bundle_accepted(tab, live_server):
    hub = make_hub(live_server, "tuning", {t: {"markdown": f"{m}\n\n{m}"} for t, m in NOTES.items()})
    wait_curated(live_server)
    t = signed_in(tab, hub)
    suggestion = t.page.locator("section.suggestions li").first
    assert all(title in suggestion.inner_text() for title in NOTES)
    with t.page.expect_navigation():
        suggestion.get_by_role("button", name="Accept").click()
    assert t.page.locator("section.suggestions").count() == 0
    bundles = httpx.get(f"{live_server.url}/api/hub/tuning").json()["bundles"]
    assert len(bundles) == 1
    assert t.page.get_by_role("link", name=bundles[0]["title"], exact=True).count() == 1


def test_a_chat_export_dropped_is_imported_with_progress(tab, live_server):
    hub = make_hub(live_server, "chats")
    conversation = json.loads((FIXTURES / "chatgpt-export" / "native-conversation-v1.json").read_text())
    conversations = []
    for i in range(4):
        c = json.loads(json.dumps(conversation))
        c["id"] = c["conversation_id"] = f"browser-conversation-{i}"
        c["title"] = f"Chat {i}"
        conversations.append(c)
    export = io.BytesIO()
    with zipfile.ZipFile(export, "w") as archive:
        archive.writestr("conversations.json", json.dumps(conversations))
    t = signed_in(tab, hub)
    with t.page.expect_response("**/api/import/chatgpt") as answer:
        t.page.locator("[data-mw=import-file]").set_input_files(
            files=[{"name": "chatgpt-export.zip", "mimeType": "application/zip", "buffer": export.getvalue()}]
        )
    status = t.page.locator("[data-mw=import-status]")
    wait_until(lambda: "Imported into chats: 4 new" in status.inner_text(), "the import to finish", timeout=60)
    progress = t.page.locator("[data-mw=import-progress]")
    assert (progress.get_attribute("max"), progress.get_attribute("value")) == ("4", "4")
    lines = [json.loads(line) for line in answer.value.text().splitlines()]
    assert lines[0] == {"total": 4} and [line.get("done") for line in lines[1:-1]] == [1, 2, 3, 4]
    assert httpx.get(f"{live_server.url}/api/hub/chats").json()["total_docs"] == 4
    # a file that is no export: a clear message, nothing imported
    t.page.locator("[data-mw=import-file]").set_input_files(
        files=[{"name": "holiday.zip", "mimeType": "application/zip", "buffer": b"PK\x03\x04 not really a zip"}]
    )
    wait_until(lambda: status.inner_text().startswith("Not imported:"), "the refusal")
    assert httpx.get(f"{live_server.url}/api/hub/chats").json()["total_docs"] == 4


def test_the_owner_downloads_the_hub_as_a_zip(tab, live_server):
    hub = make_hub(live_server, "takeout", {"Open notes": {}, "Private plan": {"is_draft": True}})
    stranger = tab()
    stranger.page.goto("/hub/takeout")
    assert "/api/hub/takeout/export" not in stranger.page.content()

    t = signed_in(tab, hub)
    with t.page.expect_download() as caught:
        t.page.get_by_role("link", name="Download this hub").click()
    download = caught.value
    assert download.suggested_filename.startswith("takeout-") and download.suggested_filename.endswith(".zip")
    with zipfile.ZipFile(download.path()) as zf:
        names = sorted(zf.namelist())
        index = zf.read("takeout/index.md").decode()
        draft = zf.read("takeout/pages/Private plan.md").decode()
    assert names == ["takeout/index.md", "takeout/pages/Open notes.md", "takeout/pages/Private plan.md"]
    assert index.startswith("---\nmemorywiki_export: 1\n") and "visibility: draft" in draft
    assert hub["token"] not in index + draft


def test_a_captured_session_is_published_with_one_click(tab, live_server):
    hub = make_hub(live_server, "sessions")
    with api(live_server) as http:
        made = http.put(
            "/api/hub/sessions/agent-sessions/claude-code/s-1",
            headers=hub["owner"],
            json={"title": "api: cache mode", "transcript": "## User\n\nWAL?\n\n## Assistant\n\nYes, WAL.\n"},
        ).json()
    assert made["draft"] is True
    t = signed_in(tab, hub)
    with t.page.expect_navigation():
        t.page.get_by_role("button", name="Publish api: cache mode").click()
    badge = t.page.locator(f'li[data-doc="{made["id"]}"] .badge').inner_text()
    assert badge == "public" and t.page.get_by_role("button", name="Publish api: cache mode").count() == 0
    assert httpx.get(made["url"], headers={"Accept": "text/markdown"}).status_code == 200
