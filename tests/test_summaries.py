"""Hub summaries come from the rendered text, cut on a word with an ellipsis.

They used to be the first source line with a few characters stripped: a stray `**`, raw
backticks, text cut mid-word with no ellipsis.
"""

from __future__ import annotations

import re

import pytest
from memorywiki.formats.mdutil import SUMMARY_CHARS, summary

MARKUP = re.compile(r"\*\*|__|`|~~|\]\(|<[a-z/]")


@pytest.mark.parametrize(
    "markdown, expected",
    [
        (
            "**Bold** start and `code` and *emphasis* and [a link](https://example.com).",
            "Bold start and code and emphasis and a link.",
        ),
        ("# Title\n\n## Section\n\n> - **quoted** list item\n", "quoted list item"),
        ("```python\nprint('code first')\n```\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\nThen prose.", "Then prose."),
        (
            "Tom &amp; Jerry &lt;3 <b>html</b> <!-- note --> ![logo](l.png) ~~old~~ new",
            "Tom & Jerry <3 html logo old new",
        ),
        ("Line one\nline two  \nline three", "Line one line two line three"),
        ("**unclosed bold and `unclosed code", "unclosed bold and unclosed code"),
        ("See [the docs][d] and [more][far].\n\n[d]: https://example.com\n", "See the docs and more."),
        ("", ""),
        ("# Only headings\n\n## More", ""),
    ],
)
def test_summary_is_the_rendered_text(markdown, expected):
    assert summary(markdown) == expected


def test_a_long_opening_is_cut_on_a_word_with_an_ellipsis():
    words = " ".join(f"**word{i}**" for i in range(200))
    text = summary(words)
    assert text.endswith("…") and len(text) <= SUMMARY_CHARS + 1
    assert not MARKUP.search(text)
    body = text[:-1]
    assert body.split(" ")[-1] in {f"word{i}" for i in range(200)}  # the last word is whole
    # a first paragraph that ends inside the limit is followed by the next one
    assert summary("Short.\n\nSecond paragraph.") == "Short. Second paragraph."
    # one endless word is cut where it has to be, still with the ellipsis
    assert summary("x" * 500) == "x" * SUMMARY_CHARS + "…"


def test_hub_page_and_markdown_index_show_clean_summaries(client):
    r = client.post("/api/hubs", json={"slug": "notes"})
    h = {"Authorization": f"Bearer {r.json()['owner_token']}"}
    hostile = (
        "# Hostile\n\n**Note:** run `make deploy` then see [the docs](https://example.com/a_(b)) — "
        "it *usually* works " + "and then it keeps going " * 20 + "\n"
    )
    client.post("/api/docs", json={"title": "Hostile", "markdown": hostile, "hub": "notes"}, headers=h)
    [doc] = client.get("/api/hub/notes").json()["docs"]
    assert doc["summary"].startswith("Note: run make deploy then see the docs — it usually works and then")
    assert doc["summary"].endswith("…") and not doc["summary"].endswith(" …")
    assert not MARKUP.search(doc["summary"])
    index = client.get("/raw/hub/notes").text
    assert f"— {doc['summary']}" in index
    html = client.get("/hub/notes", headers={"Accept": "text/html"}).text
    assert "Note: run make deploy then see the docs" in html and "**" not in html and "`" not in html
