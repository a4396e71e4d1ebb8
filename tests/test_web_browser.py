"""The web surface in a real browser (Debian's headless Chromium driven by Playwright): what a
person does with it, end to end against a live server, the real database and the local
embedding server. Every page must also run without a script error or a CSP violation.

Skipped where Chromium is not installed, except in CI (CI=1), where that fails.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import httpx
import pytest

from tests.polling import wait_indexed, wait_until
from tests.test_capture_support import LocalServer

pytestmark = pytest.mark.slow

SHARE_PAGE = Path(__file__).parent / "data" / "fixtures" / "chatgpt-share" / "chatgpt-share-modern.html"
AUTOSAVE = 1.5  # seconds; the default is 10 (Settings.autosave_seconds)


@pytest.fixture
def settings(settings):
    return replace(settings, autosave_seconds=AUTOSAVE, fetch_allow_loopback=True)


class Tab:
    """A page in its own browser context (its own local storage), recording script errors."""

    def __init__(self, browser, base: str):
        self.context = browser.new_context(base_url=base, viewport={"width": 1200, "height": 900})
        self.page = self.context.new_page()
        self.errors: list[str] = []
        self.requests: list[tuple[str, str]] = []
        self.page.on("pageerror", lambda exc: self.errors.append(str(exc)))
        # console errors are script errors and CSP refusals ("Refused to ..."); an HTTP error
        # status the page handles (a 409 on a conflict) is logged too, and is not one
        self.page.on(
            "console",
            lambda msg: (
                msg.type == "error"
                and not msg.text.startswith("Failed to load resource")
                and self.errors.append(msg.text)
            ),
        )
        self.page.on("request", lambda req: self.requests.append((req.method, req.url)))

    def saves(self, doc_id: str | None = None) -> list[tuple[str, str]]:
        return [
            (m, u)
            for m, u in self.requests
            if m in ("POST", "PATCH") and "/api/docs" in u and (doc_id is None or u.endswith(f"/api/docs/{doc_id}"))
        ]

    def close(self) -> None:
        self.context.close()
        assert not self.errors, self.errors


@pytest.fixture
def tab(browser, live_server):
    opened = []

    def make() -> Tab:
        t = Tab(browser, live_server.url)
        opened.append(t)
        return t

    yield make
    for t in opened:
        t.close()


@pytest.fixture
def hub(live_server):
    r = httpx.post(f"{live_server.url}/api/hubs", json={"slug": "garden"})
    token = r.json()["owner_token"]
    owner = {"Authorization": f"Bearer {token}"}

    def add(title: str, markdown: str, **extra) -> dict:
        r = httpx.post(
            f"{live_server.url}/api/docs",
            headers=owner,
            json={"hub": "garden", "title": title, "markdown": markdown, **extra},
        )
        assert r.status_code == 201, r.text
        return r.json()

    return {"slug": "garden", "token": token, "owner": owner, "add": add}


def test_search_a_hub_and_open_a_result(tab, hub, live_server):
    roses = hub["add"]("Roses", "## Pruning\n\nPrune roses in late winter, just above an outward bud.\n")
    hub["add"]("Tomatoes", "## Watering\n\nWater tomatoes deeply twice a week.\n")
    wait_indexed(live_server, [roses["id"]])
    t = tab()
    t.page.goto("/hub/garden")
    t.page.get_by_role("searchbox").fill("when to prune roses")
    t.page.get_by_role("button", name="Search").click()
    first = t.page.locator("ol.results li").first
    assert first.locator("mark").first.inner_text().lower().startswith("prun")  # highlighted
    assert "Pruning" in first.locator(".crumb").inner_text()  # breadcrumb: doc › section
    first.get_by_role("link", name="Roses").click()
    t.page.wait_for_url(f"**/{roses['id']}")
    assert t.page.locator("h1").first.inner_text() == "Roses"


def test_open_a_doc_and_its_markdown_twin(tab, hub):
    doc = hub["add"]("Compost", "## Greens\n\nGrass clippings.\n\n## Browns\n\n```python\nleaves = 3\n```\n")
    t = tab()
    t.page.goto(f"/{doc['id']}")
    assert t.page.locator("nav.toc a").all_inner_texts() == ["Greens", "Browns"]
    assert t.page.locator("pre.hl .n").first.inner_text() == "leaves"  # Pygments, server-side
    twin = t.page.locator('link[rel=alternate][type="text/markdown"]').get_attribute("href")
    assert twin == f"/{doc['id']}.md"
    response = t.page.goto(twin)
    assert response.headers["content-type"].startswith("text/markdown")
    assert response.text().startswith('---\ntitle: "Compost"\n') and "## Greens" in response.text()


def test_typing_then_pausing_saves_once_and_embeds_once(tab, hub, live_server, embedding_server):
    doc = hub["add"]("Journal", "## Monday\n\nPlanted garlic.\n\n## Tuesday\n\nRain all day.\n")
    wait_indexed(live_server, [doc["id"]])
    embedding_server.reset()
    t = tab()
    t.page.goto(f"/{doc['id']}/edit#token={doc['edit_token']}")
    status = t.page.locator("[data-mw=status]")
    wait_until(lambda: status.get_attribute("data-state") == "saved", "the editor to load the doc")
    assert "#token" not in t.page.url  # the token left the address bar for local storage
    # the edit link to keep is filled in once the editor stored the token (it may follow 'saved')
    link = t.page.locator("[data-mw=edit-link-url]")
    wait_until(
        lambda: link.input_value().endswith(f"/{doc['id']}/edit#token={doc['edit_token']}"), "the edit link to keep"
    )
    editor = t.page.locator("textarea[name=markdown]")
    editor.press("Control+End")
    editor.press_sequentially("Then sun and wind.", delay=40)  # many keystrokes, no pause
    wait_until(lambda: "version 2" in status.inner_text(), "the autosave", timeout=30)
    wait_indexed(live_server, [doc["id"]])
    t.page.wait_for_timeout(AUTOSAVE * 2 * 1000)  # room for a second save, if one were coming
    assert len(t.saves(doc["id"])) == 1
    assert (embedding_server.calls, embedding_server.inputs) == (1, 1)  # the one changed section
    saved = httpx.get(f"{live_server.url}/api/docs/{doc['id']}").json()
    assert saved["version"] == 2 and saved["markdown"].endswith("Rain all day.\nThen sun and wind.")
    assert "Then sun and wind." in t.page.locator("[data-mw=preview]").inner_text()  # the live preview


def test_a_conflict_from_a_second_browser_shows_both_and_lets_the_user_choose(tab, hub, live_server):
    doc = hub["add"]("Plan", "Plant beans in May.\n")
    link = f"/{doc['id']}/edit#token={doc['edit_token']}"
    first, second = tab(), tab()
    for t in (first, second):
        t.page.goto(link)
        wait_until(lambda t=t: t.page.locator("[data-mw=status]").get_attribute("data-state") == "saved", "load")
    second.page.locator("textarea[name=markdown]").fill("Plant beans in June, after the frost.\n")
    wait_until(lambda: "version 2" in second.page.locator("[data-mw=status]").inner_text(), "the other save")
    first.page.locator("textarea[name=markdown]").fill("Plant beans and peas in May.\n")
    conflict = first.page.locator("[data-mw=conflict]")
    conflict.wait_for(state="visible", timeout=30_000)
    assert first.page.locator("[data-mw=status]").get_attribute("data-state") == "conflict"
    assert "after the frost" in first.page.locator("[data-mw=theirs]").inner_text()
    assert "beans and peas" in first.page.locator("[data-mw=mine]").inner_text()
    stored = httpx.get(f"{live_server.url}/api/docs/{doc['id']}").json()
    assert stored["version"] == 2 and "after the frost" in stored["markdown"]  # nothing overwritten yet
    first.page.get_by_role("button", name="Keep mine").click()
    wait_until(lambda: "version 3" in first.page.locator("[data-mw=status]").inner_text(), "keep mine")
    stored = httpx.get(f"{live_server.url}/api/docs/{doc['id']}").json()
    assert stored["markdown"] == "Plant beans and peas in May.\n"


def test_pasting_a_share_link_captures_the_conversation(tab, live_server):
    with LocalServer() as site:
        site.routes["/share/69807432-337c-8003-9975-57b27ce55c6f"] = (
            200,
            "text/html; charset=utf-8",
            SHARE_PAGE.read_bytes(),
        )
        t = tab()
        t.page.goto("/new")
        url = site.url("/share/69807432-337c-8003-9975-57b27ce55c6f")
        t.page.evaluate(
            """url => {
            const area = document.querySelector('textarea[name=markdown]');
            const data = new DataTransfer();
            data.setData('text/plain', url);
            area.focus();
            area.dispatchEvent(new ClipboardEvent('paste', {clipboardData: data, bubbles: true, cancelable: true}));
        }""",
            url,
        )
        t.page.wait_for_url("**/edit", timeout=30_000)
        doc_id = t.page.url.rstrip("/").split("/")[-2]
        wait_until(lambda: t.page.locator("[data-mw=status]").get_attribute("data-state") == "saved", "load")
        assert t.page.locator("input[name=title]").input_value() == "今天重大新闻概览"
        assert "## User" in t.page.locator("textarea[name=markdown]").input_value()
        # the link appears once the editor has stored the capture's edit token, after "saved"
        wait_until(lambda: t.page.locator("[data-mw=edit-link]").is_visible(), "the edit link to keep")
    doc = httpx.get(f"{live_server.url}/api/docs/{doc_id}").json()
    assert doc["source"] == "chatgpt-share" and doc["title"] == "今天重大新闻概览"


TRANSCRIPT = (
    "WEBVTT\n\n00:00:01.000 --> 00:00:04.000\n<v Ada>We ship the garden planner on Friday.\n\n"
    "00:00:05.000 --> 00:00:08.000\n<v Alan>Then the seed list goes out on Monday.\n"
)
# What the browser does when a file from the desktop is dropped on the editor.
DROP_FILE = """([text, name]) => {
    const data = new DataTransfer();
    data.items.add(new File([text], name, {type: 'text/vtt'}));
    const zone = document.querySelector('[data-mw=dropzone]');
    for (const type of ['dragenter', 'dragover', 'drop'])
        zone.dispatchEvent(new DragEvent(type, {dataTransfer: data, bubbles: true, cancelable: true}));
}"""


@pytest.mark.parametrize("how", ["choose a file", "drop a file after typing a title"])
def test_a_file_captured_on_new_gets_its_edit_address(tab, live_server, how):
    t = tab()
    dialogs: list[str] = []
    # a "leave this page?" prompt, answered as a user keeping their work would: stay
    t.page.on("dialog", lambda dialog: (dialogs.append(dialog.type), dialog.dismiss()))
    t.page.goto("/new")
    with t.page.expect_response("**/api/capture/file") as capture:
        if how == "choose a file":
            with t.page.expect_file_chooser() as chooser:
                t.page.get_by_text("choose one").click()
            chooser.value.set_files(
                files=[{"name": "standup.vtt", "mimeType": "text/vtt", "buffer": TRANSCRIPT.encode()}]
            )
        else:
            t.page.locator("input[name=title]").press_sequentially("Standup")
            t.page.evaluate(DROP_FILE, [TRANSCRIPT, "standup.vtt"])
    doc_id = capture.value.json()["id"]
    edit_url = f"{live_server.url}/{doc_id}/edit"
    status, markdown = t.page.locator("[data-mw=status]"), t.page.locator("textarea[name=markdown]")
    wait_until(lambda: t.page.url == edit_url, f"the address to become {edit_url}", timeout=30)
    wait_until(lambda: status.get_attribute("data-state") == "saved", "the captured page to load")
    assert "garden planner" in markdown.input_value()
    assert t.page.locator("[data-mw=view-link]").get_attribute("href") == f"/{doc_id}"
    t.page.reload()  # a reload (or the bookmark) opens the page, with this browser's edit token
    assert t.page.url == edit_url
    wait_until(lambda: status.get_attribute("data-state") == "saved", "the page to load again")
    assert "garden planner" in markdown.input_value()
    link = t.page.locator("[data-mw=edit-link-url]")  # filled once the page's script has read the token
    wait_until(lambda: link.input_value().startswith(f"{edit_url}#token=mwe_"), "the edit link to show", timeout=10)
    assert not dialogs, dialogs
    assert "garden planner" in httpx.get(f"{live_server.url}/api/docs/{doc_id}").json()["markdown"]


def test_open_the_graph_and_click_a_node(tab, hub, live_server):
    docs = [
        hub["add"]("Roses in winter", "Prune roses in winter; roses like sun."),
        hub["add"]("Roses in summer", "Water roses in summer; roses like sun."),
        hub["add"]("Tax forms", "File the tax forms before April."),
    ]
    wait_indexed(live_server, [d["id"] for d in docs])
    graph = httpx.get(f"{live_server.url}/api/hub/garden/graph").json()
    assert {(e["source"], e["target"]) for e in graph["edges"]} == {tuple(sorted([docs[0]["id"], docs[1]["id"]]))}
    t = tab()
    t.page.goto("/hub/garden/graph")
    assert t.page.locator("svg.graph a").count() == 3
    t.page.locator(f'svg.graph a[data-node="{docs[2]["id"]}"]').click()
    t.page.wait_for_url(f"**/{docs[2]['id']}")
    assert t.page.locator("h1").first.inner_text() == "Tax forms"


def test_pages_read_without_javascript_and_fit_a_phone(browser, hub, live_server):
    doc = hub["add"](
        "Roses",
        "## Pruning\n\nPrune roses in late winter, just above an outward bud.\n\n"
        "```python\nprint('a fairly long line of code that must scroll inside its own box, not the page')\n```\n",
    )
    wait_indexed(live_server, [doc["id"]])
    context = browser.new_context(
        base_url=live_server.url, java_script_enabled=False, viewport={"width": 390, "height": 844}, is_mobile=True
    )
    page = context.new_page()
    try:
        page.goto("/hub/garden")
        page.get_by_role("searchbox").fill("prune roses")
        page.get_by_role("button", name="Search").click()  # a plain form: no script needed
        page.locator("ol.results li").first.get_by_role("link", name="Roses").click()
        page.wait_for_url(f"**/{doc['id']}")
        assert "Prune roses in late winter" in page.locator("article").inner_text()
        for path in ("/", "/hub/garden", f"/{doc['id']}", "/hub/garden/graph", f"/{doc['id']}/edit"):
            page.goto(path)
            overflow = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
            assert overflow <= 0, (path, overflow)  # nothing wider than the phone
        assert "Prune roses" in page.locator("textarea[name=markdown]").input_value()  # the editor shows the text
        assert page.locator("noscript").count() == 1
    finally:
        context.close()


def test_view_and_restore_a_version(tab, live_server):
    doc = httpx.post(f"{live_server.url}/api/docs", json={"title": "Recipe", "markdown": "Two eggs.\n"}).json()
    edit = {"Authorization": f"Bearer {doc['edit_token']}"}
    httpx.patch(f"{live_server.url}/api/docs/{doc['id']}", json={"markdown": "Three eggs and milk.\n"}, headers=edit)
    t = tab()
    t.page.goto(f"/{doc['id']}")
    t.page.get_by_role("link", name="history").click()
    t.page.wait_for_url(f"**/{doc['id']}/history")
    assert "+Three eggs and milk." in t.page.locator("pre.diff").inner_text()
    t.page.once("dialog", lambda dialog: dialog.accept())  # "Restore version 1? ..."
    t.page.get_by_role("button", name="Restore").click()  # this browser holds no token yet: it asks
    t.page.locator("[data-mw=need-token]").wait_for(state="visible")
    t.page.locator("[data-mw=token-input]").fill(f"{live_server.url}/{doc['id']}/edit#token={doc['edit_token']}")
    t.page.get_by_role("button", name="Use it").click()
    t.page.wait_for_url("**/history?restored=3")
    assert "(current)" in t.page.locator("tbody tr").first.inner_text()
    assert t.page.locator("tbody tr").count() == 3
    stored = httpx.get(f"{live_server.url}/api/docs/{doc['id']}").json()
    assert stored["version"] == 3 and stored["markdown"] == "Two eggs.\n"
