"""What an AI reads: markdown surfaces carry no empty scaffolding, and their links lead to
markdown twins (an AI's fetcher sends no `Accept: text/markdown`, so an HTML address would
hand it a page of HTML)."""

from __future__ import annotations

import re

from tests.polling import wait_curated
from tests.small_hub import make_small_hub

EMPTY = ("_None", "None found", "None inferred", "Not in any bundle", "None.")
LINK = re.compile(r"\]\((http://testserver/[^)\s]+)\)")


def _links(text: str) -> list[str]:
    return LINK.findall(text)


def test_a_short_pages_twin_is_its_text_and_what_curation_found(make_client):
    client = make_client(embedder="none")
    _, ids = make_small_hub(client)
    wait_curated(client)
    doc_id = ids["Postgres vacuum tuning"]
    saved = client.get(f"/raw/{doc_id}", params={"curation": "0"}).text.split("\n---\n\n", 1)[1]
    twin = client.get(f"/{doc_id}.md").text
    body = twin.split("\n---\n\n", 1)[1]
    assert body.startswith(saved.rstrip()), "the page as saved, then the curation block"
    block = body[len(saved.rstrip()) :]
    for empty in EMPTY:
        assert empty not in twin, f"an empty section is left out: {empty!r}"
    headings = re.findall(r"^## (.+)$", block, re.M)
    assert "Concept relations (within this doc's concepts)" not in headings, "extractive mode infers none"
    assert "Bundles containing this document" not in headings, "the page is in no bundle"
    assert "Key takeaways" not in headings or "\n## Key takeaways\n\n- " in block
    assert "_Hub:_ http://testserver/hub/small.md" in block, "the hub link is its markdown twin"
    # extractive lines are the page's own words, and the page is right above: no summary of a
    # short page, no concept gloss quoting its sentences again
    assert "Summary" not in headings
    sentences = [
        s for line in saved.splitlines() if not line.startswith("#") for s in re.split(r"(?<=[.?!])\s+", line) if s
    ]
    assert sentences and not [s for s in sentences if s.strip() in block], "no sentence of the page said twice"
    assert len(twin) < 2 * len(saved) + 500, (len(saved), len(twin))
    # the same on the page for people
    html = client.get(f"/{doc_id}").text
    for empty in ("None found in the text", "None inferred", "Not in any bundle yet", '<li class="meta">None.'):
        assert empty not in html


def test_markdown_surfaces_link_to_markdown_twins(make_client):
    client = make_client(embedder="none")
    owner, ids = make_small_hub(client)
    r = client.post(
        "/api/bundles",
        json={"hub": "small", "title": "Postgres", "doc_ids": [ids["Postgres backups"], ids["Postgres vacuum tuning"]]},
        headers=owner,
    )
    assert r.status_code == 201, r.text
    bundle = r.json()["id"]
    wait_curated(client)
    surfaces = {
        "hub index": "/hub/small.md",
        "hub llms.txt": "/hub/small/llms.txt",
        "bundle": f"/b/{bundle}.md",
        "digest": "/raw/hub/small?digest=1",
        "page twin": f"/{ids['Postgres backups']}.md",
    }
    for name, path in surfaces.items():
        text = client.get(path).text
        links = [
            u for u in _links(text) if not u.endswith(("/llms-full.txt", "/llms.txt", "?digest=1")) and "/api/" not in u
        ]
        assert links, f"{name} links to pages"
        for url in links:
            assert url.endswith(".md"), f"{name} links {url}, an HTML address"
            fetched = client.get(url.removeprefix("http://testserver"))  # no Accept header, like a fetcher
            assert fetched.status_code == 200 and fetched.headers["content-type"].startswith("text/markdown"), url
    full = client.get("/hub/small/llms-full.txt").text
    assert re.findall(r"^<(http://testserver/\w+)>", full, re.M) == [], "each page's address in llms-full is its twin"
    assert len(re.findall(r"^<http://testserver/\w+\.md> · updated", full, re.M)) == 5
    bundle_md = client.get(f"/b/{bundle}.md").text
    assert len(re.findall(r"^<http://testserver/\w+\.md>$", bundle_md, re.M)) == 2
    for empty in EMPTY:
        assert empty not in bundle_md, "the bundle's analysis leaves out what it found nothing for"
