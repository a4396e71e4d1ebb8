"""The web surface over HTTP: home and hub listing, hub search and paging, the doc
page, markdown twins, llms.txt, the editor's pages and preview, and what bad input gets.
The same pages in a real browser: tests/test_web_browser.py."""

from __future__ import annotations

import re
from html.parser import HTMLParser

import psycopg
import pytest

from tests.polling import wait_curated, wait_indexed

BROWSER = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"
HTML = {"Accept": BROWSER}


@pytest.fixture
def hub(client):
    r = client.post("/api/hubs", json={"slug": "garden"})
    owner = {"Authorization": f"Bearer {r.json()['owner_token']}"}

    def add(title: str, markdown: str, **extra) -> dict:
        r = client.post(
            "/api/docs", headers=owner, json={"hub": "garden", "title": title, "markdown": markdown, **extra}
        )
        assert r.status_code == 201, r.text
        return r.json()

    return {"owner": owner, "add": add}


class Page(HTMLParser):
    """What a page holds that the CSP cares about, and its markdown twin."""

    def __init__(self, html: str):
        super().__init__()
        self.inline_scripts = 0
        self.script_srcs: list[str] = []
        self.style_elements = 0
        self.style_attrs: list[str] = []
        self.handlers: list[str] = []
        self.twins: list[str] = []
        self.ids: list[str] = []
        self.feed(html)

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "script":
            if a.get("src"):
                self.script_srcs.append(a["src"])
            else:
                self.inline_scripts += 1
        if tag == "style":
            self.style_elements += 1
        if "style" in a:
            self.style_attrs.append(tag)
        self.handlers += [f"{tag}.{name}" for name in a if name.startswith("on")]
        if tag == "link" and a.get("rel") == "alternate" and a.get("type") == "text/markdown":
            self.twins.append(a["href"])
        if "id" in a:
            self.ids.append(a["id"])


def test_home_lists_only_the_hubs_their_owners_listed(client, hub):
    hub["add"]("Roses", "Prune in winter.")
    other = client.post("/api/hubs", json={"slug": "secret-ops"}).json()
    home = client.get("/", headers=HTML).text
    assert "memorywiki hub create" in home and "memorywiki capture" in home and "memorywiki recall" in home
    assert "garden" not in home and "secret-ops" not in home  # unlisted by default
    assert "garden" not in client.get("/llms.txt").text

    r = client.patch(
        "/api/hub/garden", json={"listed": True, "description": "  Notes from   the garden "}, headers=hub["owner"]
    )
    assert r.status_code == 200 and r.json() == {
        "slug": "garden",
        "url": "http://testserver/hub/garden",
        "listed": True,
        "description": "Notes from the garden",
        "redact_secrets": True,
        "redacted": {"secrets": 0, "kinds": {}, "private": 0, "scanned": True},  # the description's (docs/secrets.md)
    }
    home = client.get("/", headers=HTML).text
    assert 'href="/hub/garden"' in home and "Notes from the garden" in home and "1 page" in home
    assert "secret-ops" not in home
    assert "- [garden](http://testserver/hub/garden/llms.txt): Notes from the garden" in client.get("/llms.txt").text
    assert "[garden](http://testserver/hub/garden.md)" in client.get("/", headers={"Accept": "text/markdown"}).text

    # only the owner lists or unlists a hub
    assert client.patch("/api/hub/garden", json={"listed": False}).status_code == 401
    wrong = {"Authorization": f"Bearer {other['owner_token']}"}
    assert client.patch("/api/hub/garden", json={"listed": False}, headers=wrong).status_code == 403
    r = client.patch("/api/hub/garden", json={"listed": "yes"}, headers=hub["owner"])
    assert r.status_code == 400 and r.json()["error"]["code"] == "invalid_field"
    assert client.patch("/api/hub/nohub", json={"listed": True}, headers=hub["owner"]).status_code == 404
    assert client.patch("/api/hub/garden", json={"listed": False}, headers=hub["owner"]).json()["listed"] is False
    assert "garden" not in client.get("/", headers=HTML).text
    assert client.get("/api/hub/garden").json()["description"] == "Notes from the garden"  # kept


def test_hub_pages_have_no_silent_cap(client, hub, settings):
    """1,001 docs: the hub page pages through all of them, the JSON API links every page to the
    next, and the markdown index and llms.txt name them all (the old listing stopped at 1,000)."""
    first = hub["add"]("Doc 0000", "The first page.")
    with psycopg.connect(settings.database_url) as conn:
        hub_id = conn.execute("SELECT hub_id FROM docs WHERE id = %s", (first["id"],)).fetchone()[0]
        conn.execute(
            """
            INSERT INTO docs (id, hub_id, title, markdown, edit_token_hash, source_hash, updated_at, created_at)
            SELECT 'bulk' || lpad(i::text, 6, '0'), %s, 'Doc ' || lpad(i::text, 4, '0'), 'Body ' || i, 'x', 'h' || i,
                   now() + make_interval(secs => i), now() + make_interval(secs => i)
            FROM generate_series(1, 1000) AS i""",
            (hub_id,),
        )
    html = client.get("/hub/garden", headers=HTML).text
    assert "1001 pages" in html and "Page 1 of 21" in html
    assert html.count('class="title" href="http://testserver/') == 50
    assert "Doc 1000" in html and "Doc 0950" not in html  # newest first
    last = client.get("/hub/garden?page=21", headers=HTML).text
    assert "Doc 0000" in last and 'rel="next"' not in last and 'rel="prev"' in last

    seen, url = [], "/api/hub/garden?per_page=300"
    while url:
        body = client.get(url).json()
        seen += [d["title"] for d in body["docs"]]
        url = body["next"]
    assert len(seen) == len(set(seen)) == 1001 and body["total_docs"] == 1001
    assert client.get("/hub/garden.md").text.count("\n- [Doc ") == 1001
    assert client.get("/hub/garden/llms.txt").text.count("\n- [Doc ") == 1001
    assert client.get("/hub/garden/llms-full.txt").text.count("\n## Doc ") == 1001

    for bad in ("/hub/garden?page=0", "/hub/garden?page=x", "/api/hub/garden?per_page=5000"):
        r = client.get(bad, headers=HTML)
        assert r.status_code == 400 and "must be a whole number" in r.text, bad


def test_searching_a_hub_shows_highlighted_breadcrumbed_results(client, hub):
    roses = hub["add"](
        "Roses",
        "## Pruning\n\nPrune <b>roses</b> in late winter, above an outward bud.\n\n## Feeding\n\nFeed in spring.\n",
    )
    hub["add"]("Tomatoes", "Water tomatoes deeply.")
    wait_indexed(client, [roses["id"]])
    html = client.get("/hub/garden?q=pruning+roses", headers=HTML).text
    results = html.split('<ol class="results">', 1)[1].split("</ol>", 1)[0]
    first = results.split("</li>", 1)[0]
    assert f'<a href="http://testserver/{roses["id"]}">Roses</a> › Pruning' in first
    assert "<mark>Prune</mark>" in first and "&lt;b&gt;<mark>roses</mark>" not in first  # markup gone, text escaped
    assert "<mark>roses</mark>" in first
    assert "Tomatoes" not in first  # ranked below, if at all
    assert "Search: hybrid" in html
    # the same answer as the recall endpoint
    api = client.post("/api/hub/garden/recall", json={"question": "pruning roses", "k": 10}).json()
    assert api["results"][0]["doc_id"] == roses["id"]
    # bad input gets a page that says what was wrong
    r = client.get("/hub/garden?q=" + "x" * 4001, headers=HTML)
    assert r.status_code == 400 and "longer than 4000 characters" in r.text


def test_the_doc_page(client, hub):
    target = hub["add"]("Compost", "## Greens\n\nGrass.\n")
    doc = hub["add"](
        "Guide",
        f"Intro, see [compost](/{target['id']}).\n\n# Setup\n\n## Tools\n\n"
        "```python\ndef dig(depth):\n    return depth\n```\n\n## Toc\n\nWords.\n",
        source="chatgpt-share",
        meta={"url": "https://chatgpt.com/share/abc"},
    )
    bundle = client.post(
        "/api/bundles", json={"hub": "garden", "title": "Starter kit", "doc_ids": [target["id"]]}, headers=hub["owner"]
    ).json()
    html = client.get(f"/{doc['id']}", headers=HTML).text
    toc = html.split('<nav class="toc"', 1)[1].split("</nav>", 1)[0]
    assert re.findall(r'href="#([^"]+)">([^<]+)<', toc) == [("setup", "Setup"), ("tools", "Tools"), ("toc-", "Toc")]
    assert '<h2 id="toc-">Toc</h2>' in html  # a heading never takes the id of a part of the page
    assert '<span class="k">def</span>' in html and '<span class="nf">dig</span>' in html  # Pygments, server-side
    assert '<a href="https://chatgpt.com/share/abc" rel="nofollow noopener">chatgpt-share</a>' in html
    assert f'href="/{doc["id"]}.md"' in html and f'href="/{doc["id"]}/history"' in html
    assert f'href="/{doc["id"]}/edit"' in html and "version 1" in html
    page = client.get(f"/{target['id']}", headers=HTML).text
    linked = page.split("<h2>Linked from</h2>", 1)[1]
    assert f'href="http://testserver/{doc["id"]}">Guide</a>' in linked
    assert f'<a class="title" href="http://testserver/b/{bundle["id"]}">Starter kit</a>' in page.split("In bundles")[1]
    assert '<nav class="toc"' not in page  # one heading: no contents box


def test_every_page_has_a_markdown_twin_and_no_inline_script_or_style(client, hub):
    doc = hub["add"]("Guide", "## A\n\ntext\n\n## B\n\nmore")
    bundle = client.post(
        "/api/bundles", json={"hub": "garden", "title": "Kit", "doc_ids": [doc["id"]]}, headers=hub["owner"]
    ).json()
    twins = {
        "/": "/llms.txt",
        "/hub/garden": "/hub/garden.md",
        "/hub/garden?q=text": "/hub/garden.md",
        f"/{doc['id']}": f"/{doc['id']}.md",
        f"/b/{bundle['id']}": f"/b/{bundle['id']}.md",
        "/hub/garden/graph": "/hub/garden/graph.md",
        f"/{doc['id']}/edit": f"/{doc['id']}.md",
        "/new": None,
    }
    for path, twin in twins.items():
        r = client.get(path, headers=HTML)
        assert r.status_code == 200, path
        page = Page(r.text)
        assert (page.inline_scripts, page.style_elements, page.style_attrs, page.handlers) == (0, 0, [], []), path
        assert all(src.startswith("/static/") for src in page.script_srcs), path
        assert page.twins == ([twin] if twin else []), path
        if twin:
            md = client.get(twin, headers=HTML)  # a twin is markdown whatever the client accepts
            assert md.status_code == 200 and md.headers["content-type"].startswith("text/markdown"), twin
    assert Page(client.get("/new", headers=HTML).text).script_srcs[0].startswith("/static/editor.js?v=")
    # the stylesheet and the script are served, versioned and cacheable
    css = client.get(re.search(r'href="(/static/site\.css\?v=\w+)"', client.get("/", headers=HTML).text)[1])
    assert css.status_code == 200 and ".hl .k" in css.text and "immutable" in css.headers["cache-control"]
    assert client.get("/static/editor.js").status_code == 200
    assert client.get("/static/nothing.js").status_code == 404


def test_twins_for_ais(client, hub):
    doc = hub["add"]("Guide", "Start here.\n\n## Steps\n\nDo it.")
    second = hub["add"]("Later", "Then this.")
    bundle = client.post(
        "/api/bundles",
        json={"hub": "garden", "title": "Kit", "description": "Read in order", "doc_ids": [doc["id"], second["id"]]},
        headers=hub["owner"],
    ).json()
    wait_curated(client)  # so no enrichment lands between the reads compared below
    twin = client.get(f"/{doc['id']}.md").text
    assert (
        twin
        == client.get(f"/raw/{doc['id']}").text
        == client.get(f"/{doc['id']}", headers={"Accept": "text/markdown"}).text
    )
    assert twin.startswith('---\ntitle: "Guide"\nurl: "http://testserver/') and "## Steps\n\nDo it.\n" in twin
    assert client.get(f"/{doc['id']}.md?curation=0").text.endswith("## Steps\n\nDo it.\n")  # as saved
    hub_md = client.get("/hub/garden.md").text
    assert (
        hub_md
        == client.get("/raw/hub/garden").text
        == client.get("/hub/garden", headers={"Accept": "text/markdown"}).text
    )
    assert hub_md.startswith('---\ntitle: "garden"\n') and "pages: 2" in hub_md
    assert f"- [Kit](http://testserver/b/{bundle['id']}.md) — Read in order" in hub_md
    b = client.get(f"/b/{bundle['id']}.md").text
    assert b == client.get(f"/raw/b/{bundle['id']}").text
    assert b.index("## Guide") < b.index("### Steps") < b.index("## Later")  # in order, headings stepped down
    for path in (
        "/zzzzzzzzzz.md",
        "/b/zzzzzzzzzz.md",
        "/hub/nohub.md",
        "/hub/nohub/llms.txt",
        "/hub/nohub/llms-full.txt",
        "/hub/nohub/graph.md",
    ):
        r = client.get(path, headers=HTML)
        assert r.status_code == 404, path


LINK = re.compile(r"^- \[[^\]]+\]\((https?://[^)\s]+)\)(: .+)?$")


def llms_sections(text: str) -> list[str]:
    """Check the llms.txt layout; return its H2 section names."""
    lines = text.splitlines()
    assert lines[0].startswith("# ") and lines[1] == "" and lines[2].startswith("> "), text[:200]
    sections = [line[3:] for line in lines if line.startswith("## ")]
    assert sections and sections[-1] == "Optional"
    in_section = False
    for line in lines:
        if line.startswith("## "):
            in_section = True
        elif in_section and line:
            assert LINK.match(line), line
    return sections


def test_llms_txt_follows_the_convention_and_reaches_every_public_page(client, hub):
    docs = [hub["add"](f"Page {i}", f"Text number {i}, with [a link](https://example.com).") for i in range(3)]
    hub["add"]("Hidden draft", "Not for the public.", is_draft=True)
    client.post(
        "/api/bundles", json={"hub": "garden", "title": "Kit", "doc_ids": [docs[0]["id"]]}, headers=hub["owner"]
    )
    client.patch("/api/hub/garden", json={"listed": True, "description": "A garden"}, headers=hub["owner"])
    assert llms_sections(client.get("/llms.txt").text) == ["Hubs", "Optional"]
    text = client.get("/hub/garden/llms.txt").text
    assert llms_sections(text) == ["Bundles", "Pages", "Optional"]
    assert text.startswith("# garden\n\n> A garden\n")
    urls = re.findall(r"\]\((http://testserver/[a-z0-9]{10})\.md\)", text)
    assert sorted(urls) == sorted(d["url"] for d in docs) and "Hidden draft" not in text
    for url in urls:  # each link is the page's markdown
        r = client.get(url.replace("http://testserver", "") + ".md")
        assert r.status_code == 200 and r.text.startswith("---\n")
    full = client.get("/hub/garden/llms-full.txt")
    assert full.headers["content-type"].startswith("text/markdown")
    for i in range(3):
        assert f"## Page {i}\n\n<http://testserver/" in full.text and f"Text number {i}" in full.text
    assert "Not for the public" not in full.text


def test_the_editor_pages(client, hub):
    doc = hub["add"]("Guide", "## Steps\n\nDo **it**.")
    html = client.get(f"/{doc['id']}/edit", headers=HTML).text
    assert 'value="Guide"' in html and "## Steps\n\nDo **it**.</textarea>" in html  # readable without script
    assert f'data-version="{doc["version"]}"' in html and "<strong>it</strong>" in html  # the preview
    assert 'value="garden"' in html
    private = hub["add"]("Secret", "The combination is 1234.", is_draft=True)
    html = client.get(f"/{private['id']}/edit", headers=HTML).text
    assert "1234" not in html and "Secret" not in html and 'data-private="true"' in html
    assert "<h1>New page</h1>" in client.get("/new", headers=HTML).text
    assert 'value="garden"' in client.get("/new?hub=garden", headers=HTML).text
    for path in ("/zzzzzzzzzz/edit", "/not-an-id/edit"):
        r = client.get(path, headers=HTML)
        assert r.status_code == 404 and "<h1>Page not found</h1>" in r.text
    client.delete(f"/api/docs/{doc['id']}", headers=hub["owner"])
    assert client.get(f"/{doc['id']}/edit", headers=HTML).status_code == 404


def test_the_preview_is_the_page_renderer(client, hub):
    markdown = "# Title\n\n## Part\n\n```python\nx = 1\n```\n\n<script>alert(1)</script>\n"
    r = client.post("/api/render", json={"markdown": markdown})
    assert r.status_code == 200
    body = r.json()
    assert body["toc"] == [{"level": 1, "id": "title", "text": "Title"}, {"level": 2, "id": "part", "text": "Part"}]
    assert '<span class="n">x</span>' in body["html"] and "<script>" not in body["html"]
    doc = hub["add"]("Page", markdown)
    assert body["html"].split("<h2", 1)[1] in client.get(f"/{doc['id']}", headers=HTML).text
    assert client.post("/api/render", json={"markdown": 3}).json()["error"]["code"] == "invalid_field"
    assert client.post("/api/render", content=b"x" * (6 * 1024 * 1024)).status_code == 413


def test_hostile_markdown_renders_safely(client, hub):
    hostile = (
        "<script>document.title='x'</script>\n\n<img src=x onerror=alert(1)>\n\n"
        "[click](javascript:alert(1)) [data](data:text/html,<script>alert(1)</script>)\n\n"
        '<a href="#" onclick="alert(1)">a</a>\n\n'
        + "| a | b |\n|---|---|\n"
        + "".join(f"| {i} | <b onmouseover=x>{i}</b> |\n" for i in range(10_000))
        + "\n"
        + "".join("  " * i + "- level\n" for i in range(500))
        + "\n"
        + ">" * 500
        + " deep\n"
    )
    doc = hub["add"]("Hostile", hostile)
    r = client.get(f"/{doc['id']}", headers=HTML)
    assert r.status_code == 200
    body = r.text.split('<div class="body">', 1)[1]
    page = Page(body)
    assert (page.inline_scripts, page.handlers, page.style_attrs) == (0, [], [])
    assert "javascript:" not in body.replace("[click](javascript:", "") and 'href="data:' not in body
    assert body.count("<tr>") == 10_001  # every row is there
    assert body.count("<ul>") <= 21 and body.count("<blockquote>") <= 21  # nesting is capped, not recursed
    huge_code = "```python\n" + "x = 1\n" * 10_000 + "```\n"  # past 50,000 chars: plain, not coloured
    html = client.post("/api/render", json={"markdown": huge_code}).json()["html"]
    assert html.startswith('<pre><code class="language-python">x = 1\n') and "<span" not in html
    preview = client.post("/api/render", json={"markdown": hostile}).json()["html"]
    assert "<script" not in preview and "onerror=" not in preview.replace("onerror=alert(1)&gt;", "")


def test_the_hub_page_of_an_unknown_or_empty_hub(client, hub):
    assert "No public pages yet" in client.get("/hub/garden", headers=HTML).text
    assert "Nothing in this hub matches" in client.get("/hub/garden?q=roses", headers=HTML).text
    assert "No public pages yet" in client.get("/hub/garden/graph", headers=HTML).text
    assert client.get("/api/hub/garden/graph").json() == {
        "hub": "garden",
        "url": "http://testserver/hub/garden",
        "nodes": [],
        "edges": [],
    }
    for path in ("/hub/nohub/graph", "/api/hub/nohub/graph"):
        assert client.get(path, headers=HTML).status_code == 404


def test_the_history_page(client, hub):
    doc = hub["add"]("Plan", "Plant beans in May.\n")
    edit = {"Authorization": f"Bearer {doc['edit_token']}"}
    client.patch(f"/api/docs/{doc['id']}", json={"markdown": "Plant beans in June.\n"}, headers=edit)
    client.patch(
        f"/api/docs/{doc['id']}",
        json={"title": "Bean plan", "markdown": "Plant beans in June.\n\nWater.\n"},
        headers=edit,
    )
    html = client.get(f"/{doc['id']}/history", headers=HTML).text
    rows = html.split("<tbody>", 1)[1].split("</tbody>", 1)[0]
    assert rows.count("<tr>") == 3 and rows.index(">3 <span") < rows.index(">2</td>") < rows.index(">1</td>")
    assert '<button type="button" data-restore="1">Restore</button>' in rows and 'data-restore="3"' not in rows
    assert "20 B" in rows  # sizes in bytes: "Plant beans in May.\n"
    diff = html.split('<pre class="diff">', 1)[1].split("</pre>", 1)[0]  # default: version 2 to 3
    assert '<span class="del">-# Plan</span>' in diff and '<span class="add">+# Bean plan</span>' in diff
    assert '<span class="add">+Water.</span>' in diff
    diff = client.get(f"/{doc['id']}/history?a=1&b=2", headers=HTML).text.split('<pre class="diff">', 1)[1]
    assert (
        '<span class="del">-Plant beans in May.</span>' in diff
        and '<span class="add">+Plant beans in June.</span>' in diff
    )
    assert Page(html).twins == [f"/{doc['id']}/history.md"] and Page(html).inline_scripts == 0
    md = client.get(f"/{doc['id']}/history.md").text
    assert md.startswith("# History of Bean plan") and "| 1 | " in md and "```diff\n" in md and "+Water." in md
    for bad in ("?a=9", "?b=0", "?a=x"):
        r = client.get(f"/{doc['id']}/history{bad}", headers=HTML)
        assert r.status_code == 400, bad
    # a private doc's history is as private as the doc
    client.patch(f"/api/docs/{doc['id']}", json={"is_draft": True}, headers=edit)
    for path in (f"/{doc['id']}/history", f"/{doc['id']}/history.md"):
        r = client.get(path, headers=HTML)
        assert r.status_code == 404 and "Plant beans" not in r.text and "Bean plan" not in r.text
    assert client.get("/zzzzzzzzzz/history", headers=HTML).status_code == 404
