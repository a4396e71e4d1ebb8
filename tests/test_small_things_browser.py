"""A new user's small things in a real browser (Debian's headless Chromium under Playwright,
against a live server): the editor's heading after the first save, the hub field's check, the
graph on a phone, the owner's suggested bundles beside the bundles, deleting and restoring
asked before they act, and the height of a small hub's page.

Skipped where Chromium is not installed, except in CI (CI=1), where that fails.
"""

from __future__ import annotations

import re
from dataclasses import replace

import httpx
import pytest

from tests.polling import wait_curated, wait_indexed, wait_until
from tests.small_hub import make_small_hub
from tests.test_owner_browser import make_hub, signed_in
from tests.test_web_browser import Tab, tab  # noqa: F401  (tab: the fixture, shared)

pytestmark = pytest.mark.slow

AUTOSAVE = 1.0


@pytest.fixture
def settings(settings):
    return replace(settings, autosave_seconds=AUTOSAVE)


def test_the_editor_says_edit_page_once_the_new_page_is_saved(tab):
    t = tab()
    t.page.goto("/new")
    assert t.page.locator("main h1").inner_text() == "New page"
    t.page.locator("input[name=title]").fill("Seed catalogue")
    t.page.locator("textarea[name=markdown]").fill("Tomatoes, beans and squash for the spring beds.")
    t.page.wait_for_url("**/edit", timeout=30_000)  # saved: the address is the page's edit address
    wait_until(lambda: t.page.locator("main h1").inner_text() == "Edit page", "the heading to follow the save")
    assert t.page.title() == "Edit: Seed catalogue · Memory.Wiki"
    t.page.reload()  # what the address shows when opened again agrees
    assert t.page.locator("main h1").inner_text() == "Edit page"


def test_the_hub_field_checks_its_pattern(tab):
    """Chromium compiles `pattern` with the `v` flag, where an unescaped `-` in a class is an
    invalid expression: the check was silently off."""
    t = tab()
    warnings: list[str] = []
    t.page.on("console", lambda msg: warnings.append(msg.text))
    t.page.goto("/new")
    hub = t.page.locator("#mw-hub")
    hub.fill("Not A Slug!")
    assert hub.evaluate("el => el.validity.patternMismatch") is True
    hub.fill("my-notes-2")
    assert hub.evaluate("el => el.validity.valid") is True
    assert not [w for w in warnings if "pattern" in w.lower()], warnings
    for page in ("/new-hub",):  # the other slug fields compile too
        t.page.goto(page)
        field = t.page.locator("input[pattern]").first
        field.fill("Bad Slug")
        assert field.evaluate("el => el.validity.patternMismatch") is True


def test_the_graph_fits_its_rings_and_reads_on_a_phone(browser, live_server):
    token = httpx.post(f"{live_server.url}/api/hubs", json={"slug": "roses"}).json()["owner_token"]
    owner = {"Authorization": f"Bearer {token}"}
    ids = []
    for i, season in enumerate(("winter", "spring", "summer", "autumn", "early winter", "late summer")):
        r = httpx.post(
            f"{live_server.url}/api/docs",
            headers=owner,
            json={
                "hub": "roses",
                "title": f"Roses in {season}, a long title number {i}",
                "markdown": f"Prune and water the roses in {season}; roses like sun and roses like water.",
            },
        )
        ids.append(r.json()["id"])
    wait_indexed(live_server, ids)
    context = browser.new_context(base_url=live_server.url, viewport={"width": 390, "height": 844}, is_mobile=True)
    page = context.new_page()
    try:
        page.goto("/hub/roses/graph")
        assert page.locator("svg.graph circle.hull").count() >= 1, "a cluster is drawn with its ring"
        box = [float(v) for v in page.locator("svg.graph").get_attribute("viewBox").split()]
        for ring in page.locator("svg.graph circle.hull").all():
            cx, cy, r = (float(ring.get_attribute(a)) for a in ("cx", "cy", "r"))
            assert box[0] <= cx - r and cx + r <= box[0] + box[2], "the ring fits across"
            assert box[1] <= cy - r and cy + r <= box[1] + box[3], "the ring fits top to bottom"
        heights = page.eval_on_selector_all("svg.graph text", "els => els.map(e => e.getBoundingClientRect().height)")
        assert heights and min(heights) >= 9, f"labels readable on a phone: {heights}"
        overflow = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
        assert overflow <= 0, "the picture scrolls in its own box, not the page"
    finally:
        context.close()


NOTES = {
    "Vacuum tuning": "PostgreSQL vacuum reclaims dead tuples. Autovacuum thresholds decide when vacuum runs.",
    "Index bloat": "Dead tuples bloat PostgreSQL indexes. Vacuum and reindex shrink bloated indexes.",
    "HOT updates": "HOT updates leave fewer dead tuples. Fewer dead tuples mean less vacuum work in PostgreSQL.",
}


def test_the_owner_finds_suggested_bundles_beside_the_bundles(tab, live_server):
    hub = make_hub(live_server, "tuning", {t: {"markdown": f"{m}\n\n{m}"} for t, m in NOTES.items()})
    wait_curated(live_server)
    t = signed_in(tab, hub)
    order = t.page.eval_on_selector_all("main > h2, main > section > h2", "els => els.map(e => e.textContent.trim())")
    assert order.index("Suggested bundles") == order.index("Bundles") + 1, order


def test_deleting_and_restoring_ask_first(tab, live_server):
    hub = make_hub(live_server, "notes", {"Reading list": {}, "Old plan": {}})
    t = signed_in(tab, hub)
    asked: list[str] = []

    def answer(accept: bool):
        def handle(dialog):
            asked.append(dialog.message)
            dialog.accept() if accept else dialog.dismiss()

        return handle

    t.page.once("dialog", answer(False))
    t.page.get_by_role("button", name="Delete Old plan").click()
    wait_until(lambda: asked, "the question")
    assert "Old plan" in asked[0] and "trash" in asked[0]
    t.page.wait_for_timeout(500)
    assert httpx.get(f"{live_server.url}/api/docs/{hub['ids']['Old plan']}").status_code == 200, "kept"

    t.page.once("dialog", answer(True))
    with t.page.expect_navigation():
        t.page.get_by_role("button", name="Delete Old plan").click()
    assert httpx.get(f"{live_server.url}/api/docs/{hub['ids']['Old plan']}").status_code == 404

    doc_id = hub["ids"]["Reading list"]
    httpx.patch(f"{live_server.url}/api/docs/{doc_id}", json={"markdown": "Two books."}, headers=hub["owner"])
    t.page.goto(f"/{doc_id}/history")
    t.page.once("dialog", answer(False))
    t.page.get_by_role("button", name="Restore").first.click()
    wait_until(lambda: len(asked) == 3, "the question")
    assert re.search(r"Restore version \d", asked[2])
    t.page.wait_for_timeout(500)
    assert httpx.get(f"{live_server.url}/api/docs/{doc_id}").json()["version"] == 2, "nothing restored"


def test_a_small_hubs_page_is_short(browser, live_server):
    """Five short pages, 42 concepts under them: the page was 4,110 px tall at 1280 px wide
    (5,487 px on a phone); its concepts are now the few two pages share."""
    with httpx.Client(base_url=live_server.url) as http:
        _, ids = make_small_hub(http)
    wait_curated(live_server)
    heights = {}
    for width in (1280, 390):
        context = browser.new_context(base_url=live_server.url, viewport={"width": width, "height": 800})
        page = context.new_page()
        try:
            page.goto("/hub/small")
            assert page.locator("section.concepts li").count() <= 10
            heights[width] = page.evaluate("document.documentElement.scrollHeight")
        finally:
            context.close()
    assert heights[1280] < 2200 and heights[390] < 3400, heights
