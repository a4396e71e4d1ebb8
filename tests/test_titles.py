"""One rule for a leading `# Title`, on every path in, and renderers that never show it twice.
Bundle pages step member headings down a level.

The rule (memorywiki.formats.mdutil.split_title): the title lives in the title field; a body that
opens with an H1 equal to the title (up to case, spacing and inline markup) loses that H1; with
no title given, a leading H1 becomes the title; a leading H1 that differs from a given title is
the author's heading and stays.
"""

from __future__ import annotations

import re

import psycopg
import pytest
from markdown_it import MarkdownIt
from memorywiki.formats.mdutil import demote_headings, shift_headings, split_title
from memorywiki.server.capture import convert_file

from tests.test_capture_support import LocalServer

# ------------------------------------------------------------------------------- the rule


@pytest.mark.parametrize(
    "title, markdown, expected",
    [
        ("Deploy notes", "# Deploy notes\n\n## Steps\n\nRun it.\n", ("Deploy notes", "## Steps\n\nRun it.\n")),
        ("deploy  NOTES", "# Deploy notes\nRun it.\n", ("deploy  NOTES", "Run it.\n")),
        ("Deploy notes", "\n\n# **Deploy** `notes` #\n\nRun it.", ("Deploy notes", "Run it.")),
        ("Deploy notes", "Deploy notes\n============\n\nRun it.", ("Deploy notes", "Run it.")),
        ("Deploy notes", "# Deploy notes\r\n\r\nRun it.\r\n", ("Deploy notes", "Run it.\n")),
        (None, "# Deploy notes\n\nRun it.", ("Deploy notes", "Run it.")),
        ("", "  # Deploy notes\n\nRun it.", ("Deploy notes", "Run it.")),
        # the author's own first heading, a deeper heading, a heading later on: all stay
        ("Ops handbook", "# Deploy notes\n\nRun it.", ("Ops handbook", "# Deploy notes\n\nRun it.")),
        ("Deploy notes", "## Deploy notes\n\nRun it.", ("Deploy notes", "## Deploy notes\n\nRun it.")),
        ("Deploy notes", "Intro.\n\n# Deploy notes\n", ("Deploy notes", "Intro.\n\n# Deploy notes\n")),
        ("Deploy notes", "```\n# Deploy notes\n```\n", ("Deploy notes", "```\n# Deploy notes\n```\n")),
        ("Deploy notes", "    # Deploy notes\n", ("Deploy notes", "    # Deploy notes\n")),
        (None, "no heading at all", (None, "no heading at all")),
        (None, "#\n\nempty heading", (None, "#\n\nempty heading")),
    ],
)
def test_split_title(title, markdown, expected):
    assert split_title(title, markdown) == expected


def test_split_title_is_idempotent():
    once = split_title("T", "# T\n\n# T\n\nbody")
    assert once == ("T", "# T\n\nbody")  # only the leading heading is the title
    assert split_title(*once) == ("T", "body")  # a second pass finds the next one, as a new save would


def test_shift_headings():
    md = (
        "# One\n\ntext\n\nSetext two\n----------\n\n```\n# not a heading\n```\n\n> # quoted stays\n\n"
        "###### Six ######\n\n  ## Indented\n"
    )
    assert shift_headings(md, 1) == (
        "## One\n\ntext\n\n### Setext two\n\n```\n# not a heading\n```\n\n> # quoted stays\n\n"
        "###### Six ######\n\n  ### Indented\n"
    )
    assert shift_headings(md, 0) == md


def test_demote_headings_uses_the_same_shift():
    assert demote_headings("Big\n===\n\n# Top\n\n## Sub") == "### Big\n\n### Top\n\n#### Sub"


def test_file_capture_follows_the_rule():
    cap = convert_file(b"# Plan\n\nStep one.\n", "plan.md")
    assert (cap.title, cap.markdown) == ("Plan", "Step one.\n")
    cap = convert_file(b"# Plan\n\nStep one.\n", "plan.md", title="Given title")
    assert (cap.title, cap.markdown) == ("Given title", "# Plan\n\nStep one.\n")
    cap = convert_file(b"# Plan\n\nStep one.\n", "notes.txt")  # a text file's H1 is a title too
    assert (cap.title, cap.markdown) == ("Plan", "Step one.\n")


# ------------------------------------------------------------------------------- every path in


def hub(client, slug="notes"):
    r = client.post("/api/hubs", json={"slug": slug})
    return {"Authorization": f"Bearer {r.json()['owner_token']}"}


def stored(client, doc_id):
    doc = client.get(f"/api/docs/{doc_id}").json()
    return doc["title"], doc["markdown"]


def test_post_docs(client):
    h = hub(client)
    r = client.post(
        "/api/docs",
        json={"title": "Deploy notes", "markdown": "# Deploy notes\n\nRun it.\n", "hub": "notes"},
        headers=h,
    )
    assert stored(client, r.json()["id"]) == ("Deploy notes", "Run it.\n")
    r = client.post("/api/docs", json={"markdown": "# From the heading\n\nBody.\n"})
    assert r.status_code == 201, r.text
    assert stored(client, r.json()["id"]) == ("From the heading", "Body.\n")
    r = client.post("/api/docs", json={"markdown": "No heading, no title.\n"})
    assert r.status_code == 400 and r.json()["error"]["code"] == "missing_field"
    assert "'title'" in r.json()["error"]["message"]
    # an importer's upsert (the CLI's local `import` sends these) follows the same rule
    body = {"title": "Chat", "markdown": "# Chat\n\n## User\n\nhi\n", "hub": "notes", "external_id": "chatgpt:1"}
    r = client.post("/api/docs", json=body, headers=h)
    assert stored(client, r.json()["id"]) == ("Chat", "## User\n\nhi\n")
    assert client.post("/api/docs", json=body, headers=h).json()["status"] == "unchanged"


def test_patch(client):
    doc = client.post("/api/docs", json={"title": "Plan", "markdown": "Step one.\n"}).json()
    edit = {"Authorization": f"Bearer {doc['edit_token']}"}
    r = client.patch(f"/api/docs/{doc['id']}", json={"markdown": "# Plan\n\nStep two.\n"}, headers=edit)
    assert r.status_code == 200 and (r.json()["title"], r.json()["markdown"]) == ("Plan", "Step two.\n")
    r = client.patch(
        f"/api/docs/{doc['id']}", json={"title": "Better plan", "markdown": "# Better plan\n\nStep 3.\n"}, headers=edit
    )
    assert (r.json()["title"], r.json()["markdown"]) == ("Better plan", "Step 3.\n")
    r = client.patch(f"/api/docs/{doc['id']}", json={"markdown": "# Another heading\n\nStep 4.\n"}, headers=edit)
    assert (r.json()["title"], r.json()["markdown"]) == ("Better plan", "# Another heading\n\nStep 4.\n")
    # a rename to the body's own heading: the heading now repeats the title, so it goes
    r = client.patch(f"/api/docs/{doc['id']}", json={"title": "Another heading"}, headers=edit)
    assert (r.json()["title"], r.json()["markdown"]) == ("Another heading", "Step 4.\n")


def test_file_upload_and_url_capture(make_client):
    client = make_client(fetch_allow_loopback=True)  # the test site is on 127.0.0.1
    h = hub(client)
    r = client.post(
        "/api/capture/file",
        files={"file": ("field.md", b"# Field notes\n\nWe saw a walrus.\n")},
        data={"hub": "notes"},
        headers=h,
    )
    assert r.status_code == 201, r.text
    assert stored(client, r.json()["id"]) == ("Field notes", "We saw a walrus.\n")

    with LocalServer() as site:
        site.routes["/trip.md"] = (200, "text/markdown", b"# Boat trip\n\nWe saw an otter.\n")
        r = client.post("/api/capture", json={"url": site.url("/trip.md"), "hub": "notes"}, headers=h)
        assert r.status_code == 201, r.text
        assert stored(client, r.json()["id"]) == ("Boat trip", "We saw an otter.\n")
        r = client.post(
            "/api/capture",
            json={"url": site.url("/trip.md"), "hub": "notes", "title": "boat TRIP", "dedupe": False},
            headers=h,
        )
        assert stored(client, r.json()["id"]) == ("boat TRIP", "We saw an otter.\n")


def test_cli_capture(live_server, tmp_path, monkeypatch):
    from memorywiki.cli.main import app
    from typer.testing import CliRunner

    monkeypatch.setenv("MEMORYWIKI_CONFIG", str(tmp_path / "config.toml"))
    monkeypatch.setenv("MEMORYWIKI_URL", live_server.url)
    monkeypatch.delenv("MEMORYWIKI_HUB", raising=False)
    monkeypatch.delenv("MEMORYWIKI_TOKEN", raising=False)
    note = tmp_path / "deploy.md"
    note.write_text("# Deploy notes\n\nRun make release.\n")
    result = CliRunner().invoke(app, ["capture", str(note)])
    assert result.exit_code == 0, result.output
    doc_id = result.stdout.strip().rsplit("/", 1)[-1]
    import httpx

    doc = httpx.get(f"{live_server.url}/api/docs/{doc_id}").json()
    assert (doc["title"], doc["markdown"]) == ("Deploy notes", "Run make release.\n")


# ------------------------------------------------------------------------------- renderers


def h1s(html: str) -> list[str]:
    return [re.sub(r"<[^>]+>", "", m) for m in re.findall(r"<h1[^>]*>(.*?)</h1>", html, re.S)]


def make_legacy(settings, doc_id, markdown):
    """A page saved before the rule, with its title still at the top of its body."""
    with psycopg.connect(settings.database_url) as conn:
        conn.execute("UPDATE docs SET markdown = %s WHERE id = %s", (markdown, doc_id))


@pytest.mark.parametrize("legacy", [False, True])
def test_a_title_never_shows_twice(client, settings, legacy):
    h = hub(client)
    doc = client.post(
        "/api/docs",
        json={"title": "Deploy notes", "hub": "notes", "markdown": "# Deploy notes\n\nIntro.\n\n## Steps\n\nRun it.\n"},
        headers=h,
    ).json()
    if legacy:
        make_legacy(settings, doc["id"], "# Deploy notes\n\nIntro.\n\n## Steps\n\nRun it.\n")

    raw = client.get(f"/raw/{doc['id']}?curation=0").text  # the doc as saved, without its enrichment block
    assert raw.count("Deploy notes") == 1 and 'title: "Deploy notes"' in raw  # in the front matter only
    assert raw.endswith("---\n\nIntro.\n\n## Steps\n\nRun it.\n")
    curated = client.get(f"/raw/{doc['id']}").text
    body = raw.split("\n---\n", 1)[1].rstrip("\n")
    # what the twin adds (the enrichment once made, the hub's links) comes after the body
    assert curated.split("\n---\n", 1)[1].startswith(body + "\n\n---\n\n"), "the enrichment comes after the body"
    html = client.get(f"/{doc['id']}", headers={"Accept": "text/html"}).text
    assert h1s(html) == ["Deploy notes"]

    hub_html = client.get("/hub/notes", headers={"Accept": "text/html"}).text
    assert hub_html.count("Deploy notes") == 1
    hub_md = client.get("/raw/hub/notes").text
    assert hub_md.count("Deploy notes") == 1 and "— Intro." in hub_md

    bundle = client.post(
        "/api/bundles", json={"hub": "notes", "title": "Runbook", "doc_ids": [doc["id"]]}, headers=h
    ).json()
    md = client.get(f"/raw/b/{bundle['id']}").text
    # the bundle's cross-doc analysis, when ready, sits between the reading order and the members
    md = re.sub(r"^## Across these documents\n.*?(?=^---$)", "", md, flags=re.M | re.S)
    assert re.findall(r"^#+ Deploy notes$", md, re.M) == ["## Deploy notes"]  # the member's title, once
    assert re.findall(r"^#+ Steps$", md, re.M) == ["### Steps"]  # member headings step down under it
    tokens = MarkdownIt("commonmark").parse(md.split("\n---\n", 1)[1])  # past the front matter
    levels = [t.tag for t in tokens if t.type == "heading_open"]
    assert levels == ["h1", "h2", "h3"]  # Runbook > Deploy notes > Steps
    html = client.get(f"/b/{bundle['id']}", headers={"Accept": "text/html"}).text
    assert h1s(html) == ["Runbook"]
    assert re.search(r"<h2><a [^>]*>Deploy notes</a></h2>", html) and "<h3>Steps</h3>" in html
