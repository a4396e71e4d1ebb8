"""Share pages (ChatGPT turbo-stream and __NEXT_DATA__, Claude snapshots) and web pages,
parsed directly and fetched through capture_url from a local server."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from memorywiki.formats.mdutil import demote_headings, strip_citations
from memorywiki.server.capture import capture_url, parse_chatgpt_share, parse_claude_share, share_kind
from memorywiki.server.capture.share import claude_snapshot_api_url
from memorywiki.server.capture.turbostream import PENDING, decode, decode_html, extract_chunks
from memorywiki.server.errors import ApiError

from tests.test_capture_support import LocalServer

FIXTURES = Path(__file__).parent / "data" / "fixtures"
DATA = Path(__file__).parent / "data" / "capture"
CHATGPT_SHARE = FIXTURES / "chatgpt-share" / "chatgpt-share-modern.html"
SHARE_ID = "69807432-337c-8003-9975-57b27ce55c6f"


# ------------------------------------------------------------------ turbo-stream decoder


def test_turbostream_objects_keys_and_literals():
    flat = [{"_1": 2, "_3": 4, "_5": 6, "_7": -5, "_8": -7}, "title", "Hello", "weight", 1, "ok", True, "gone", "undef"]
    # "weight" -> index 4 -> literal 1; a literal number is not dereferenced again
    assert decode([json.dumps(flat)]) == {"title": "Hello", "weight": 1, "ok": True, "gone": None, "undef": None}


def test_turbostream_arrays_shared_refs_and_types():
    flat = [
        {"_1": 2, "_3": 2, "_4": 5, "_6": 7, "_8": 9},
        "a",
        [10, 11],  # plain array of indices
        "b",
        "when",
        ["D", 0],
        "map",
        ["M", 1, 10],
        "later",
        ["P", 3],
        "x",
        "y",
    ]
    out = decode([json.dumps(flat), 'P3:[{"_13":10},"k"]'])
    assert out["a"] == ["x", "y"]
    assert out["a"] is out["b"]  # deduplicated value decoded once
    assert out["when"] == "1970-01-01T00:00:00+00:00"
    assert out["map"] == {"a": "x"}
    assert out["later"] == {"k": "x"}  # promise resolved by the later chunk


def test_turbostream_unresolved_promise_is_pending():
    flat = [{"_1": 2}, "p", ["P", 9]]
    assert decode([json.dumps(flat)])["p"] is PENDING


def test_turbostream_real_page():
    html = CHATGPT_SHARE.read_text()
    chunks = extract_chunks(html)
    assert len(chunks) == 2 and chunks[1].startswith("P21:")
    root = decode_html(html)
    route = root["loaderData"]["routes/share.$shareId.($action)"]
    data = route["serverResponse"]["data"]
    assert route["sharedConversationId"] == SHARE_ID
    assert data["title"] == "今天重大新闻概览"
    assert len(data["mapping"]) == 31 and len(data["linear_conversation"]) == 31
    weights = {n["message"]["weight"] for n in data["mapping"].values() if n.get("message")}
    assert weights <= {0, 1}  # numbers are literals, not indices


# ------------------------------------------------------------------ ChatGPT share pages


def test_parse_chatgpt_share_modern():
    cap = parse_chatgpt_share(CHATGPT_SHARE.read_text(), f"https://chatgpt.com/share/{SHARE_ID}")
    assert cap.source == "chatgpt-share"
    assert cap.title == "今天重大新闻概览"
    assert cap.external_id == f"chatgpt-share:{SHARE_ID}"
    assert cap.meta["url"].endswith(SHARE_ID)
    assert cap.meta["created_at"].startswith("2026-02-02")
    md = cap.markdown
    assert not md.startswith("# ")
    headings = [ln for ln in md.splitlines() if ln.startswith(("## ", "### "))]
    # dated messages: a heading opens each day (UTC), a section per turn under it
    assert (
        headings
        == ["## 31 January 2026", "### User", "### Assistant", "## 2 February 2026"] + ["### User", "### Assistant"] * 2
    )
    assert md.index("今天有什么重大新闻？") < md.index("生成一张图片给我") < md.index("给一个mermaid流程图给我")
    # hidden / system / tool / thoughts noise is gone
    assert "Original custom instructions no longer available" not in md
    assert "The output of this plugin was redacted" not in md
    assert "search_query" not in md and "已思考" not in md and "Thought for" not in md
    # citation markup removed cleanly, entities keep their display name
    assert not any(0xE000 <= ord(ch) <= 0xF8FF for ch in md)
    assert "turn0news" not in md and "cite" not in md
    assert "U.S. Department of Homeland Security" in md
    # code fences intact
    assert "```mermaid\nflowchart TD" in md and md.rstrip().endswith("```")


def test_parse_chatgpt_share_legacy_next_data():
    cap = parse_chatgpt_share(
        (DATA / "chatgpt-share-legacy.html").read_text(),
        "https://chat.openai.com/share/0b4a2c8e-aaaa-4bbb-8ccc-123456789abc",
    )
    assert cap.title == "Postgres haiku"
    assert cap.markdown.startswith("## 14 November 2023\n\n### User\n\nWrite a haiku about Postgres.")
    assert "| 1 | Rows in quiet rank |" in cap.markdown
    assert "```sql\nSELECT 1;\n```" in cap.markdown


def test_chatgpt_share_without_data():
    with pytest.raises(ApiError) as err:
        parse_chatgpt_share("<html><body>Just a moment...</body></html>", "https://chatgpt.com/share/x")
    assert err.value.code == "unrecognised_page"


def test_citation_stripping():
    text = 'Shutdown began.\ue200cite\ue202turn0news34\ue202turn0search5\ue201 Talks with \ue200entity\ue202["organization","ICE","agency"]\ue201 stalled \ue200cite\ue202turn0search8\ue201.\n\ue200navlist\ue202Related\ue202turn0news1\ue201'
    assert strip_citations(text) == "Shutdown began. Talks with ICE stalled."


def test_demote_headings_skips_code():
    text = "# Top\n\ntext\n\n```\n# comment\n```\n\n## Sub"
    assert demote_headings(text) == "### Top\n\ntext\n\n```\n# comment\n```\n\n#### Sub"


# ------------------------------------------------------------------ Claude share


def test_parse_claude_share_snapshot_json():
    cap = parse_claude_share(
        (DATA / "claude-share-snapshot.json").read_text(),
        "https://claude.ai/share/4f1c2a9e-6b7d-4c1e-9a51-2d3e8f0b7c11",
    )
    assert cap.source == "claude-share"
    assert cap.title == "Chunking markdown for retrieval"
    assert cap.external_id == "claude-share:4f1c2a9e-6b7d-4c1e-9a51-2d3e8f0b7c11"
    assert cap.meta["author"] == "Ada Example"
    md = cap.markdown
    assert [ln for ln in md.splitlines() if ln.startswith(("## ", "### "))] == (
        ["## 2 March 2026"] + ["### User", "### Assistant"] * 2
    )
    assert "ABANDONED ANSWER" not in md  # the branch off the current leaf is dropped
    assert "The user wants heading-based chunking" not in md  # thinking dropped
    assert "*[used tool: web_search]*" in md  # tool use summarised in one line
    assert "| Keep fences whole | code is useless cut |" in md
    assert "### Rules" in md  # a '# ' heading inside an answer is demoted under '## Assistant'
    assert "**chunker.py**\n\n```python\ndef chunk(md: str)" in md  # artifact -> fenced code
    assert "*Attachments: notes.md*" in md


def test_parse_claude_share_embedded_in_html():
    a = parse_claude_share((DATA / "claude-share-page.html").read_text(), "https://claude.ai/share/x")
    b = parse_claude_share((DATA / "claude-share-snapshot.json").read_text(), "https://claude.ai/share/x")
    assert a.markdown == b.markdown and a.title == b.title


def test_claude_share_not_found():
    with pytest.raises(ApiError) as err:
        parse_claude_share(
            '{"type":"error","error":{"type":"not_found_error","message":"Not found"}}', "https://claude.ai/share/x"
        )
    assert err.value.code == "unrecognised_page"


def test_share_kind_and_claude_api_url():
    assert share_kind(f"https://chatgpt.com/share/{SHARE_ID}") == "chatgpt"
    assert share_kind("https://chat.openai.com/share/abc") == "chatgpt"
    assert share_kind("https://chatgpt.com/s/t_123") == "chatgpt"
    assert share_kind("https://claude.ai/share/4f1c2a9e-6b7d-4c1e-9a51-2d3e8f0b7c11") == "claude"
    assert share_kind("https://chatgpt.com/c/abc") is None
    assert share_kind("https://example.org/share/abc") is None
    assert claude_snapshot_api_url("https://claude.ai/share/4f1c2a9e-6b7d-4c1e-9a51-2d3e8f0b7c11") == (
        "https://claude.ai/api/chat_snapshots/4f1c2a9e-6b7d-4c1e-9a51-2d3e8f0b7c11?rendering_mode=messages&render_all_tools=true"
    )


# ------------------------------------------------------------------ capture_url over HTTP


@pytest.fixture(scope="module")
def srv():
    with LocalServer() as s:
        s.routes[f"/share/{SHARE_ID}"] = (200, "text/html; charset=utf-8", CHATGPT_SHARE.read_bytes())
        s.routes["/api/chat_snapshots/4f1c2a9e"] = (
            200,
            "application/json",
            (DATA / "claude-share-snapshot.json").read_bytes(),
        )
        s.routes["/claude-page"] = (200, "text/html; charset=utf-8", (DATA / "claude-share-page.html").read_bytes())
        s.routes["/blog/rrf"] = (200, "text/html; charset=utf-8", (DATA / "article.html").read_bytes())
        s.routes["/old-link"] = (301, "text/html", b"", {"Location": "/blog/rrf"})
        s.routes["/report.pdf"] = (200, "application/pdf", (DATA / "report.pdf").read_bytes())
        s.routes["/notes.txt"] = (200, "text/plain; charset=utf-8", b"plain notes\n\nsecond paragraph\n")
        s.routes["/empty.html"] = (200, "text/html", b"<html><body><nav>menu</nav></body></html>")
        s.routes["/data.json"] = (200, "application/json", b'{"a": 1}')
        yield s


async def test_capture_url_chatgpt_share_page(srv):
    cap = await capture_url(srv.url(f"/share/{SHARE_ID}"), allow_loopback=True)
    assert cap.source == "chatgpt-share"
    assert cap.title == "今天重大新闻概览"
    assert "## User\n\n今天有什么重大新闻？" in cap.markdown


async def test_capture_url_claude_snapshot_and_page(srv):
    a = await capture_url(srv.url("/api/chat_snapshots/4f1c2a9e"), allow_loopback=True)
    b = await capture_url(srv.url("/claude-page"), allow_loopback=True, title="My title")
    assert a.source == b.source == "claude-share"
    assert a.markdown == b.markdown
    assert b.title == "My title"


async def test_capture_url_article(srv):
    cap = await capture_url(srv.url("/old-link"), allow_loopback=True)
    assert cap.source == "article"
    assert cap.title == "Hybrid search with reciprocal rank fusion"
    assert cap.meta["final_url"].endswith("/blog/rrf")
    assert cap.meta["author"] == "Grace Example"
    md = cap.markdown
    assert "## The formula" in md and "## Results" in md
    assert "| RRF | 0.717 |" in md
    assert "- Never AND the user's query terms together." in md
    # boilerplate is gone
    for junk in ("Accept all cookies", "Careers", "All rights reserved", "Our new office"):
        assert junk not in md


async def test_capture_url_pdf_and_text(srv):
    pdf = await capture_url(srv.url("/report.pdf"), allow_loopback=True)
    assert pdf.source == "pdf" and pdf.title == "Quarterly Memory Report"
    assert "twelve percent" in pdf.markdown
    txt = await capture_url(srv.url("/notes.txt"), allow_loopback=True)
    assert txt.source == "text" and "second paragraph" in txt.markdown


async def test_capture_url_errors(srv):
    with pytest.raises(ApiError) as err:
        await capture_url(srv.url("/empty.html"), allow_loopback=True)
    assert err.value.code == "empty"
    with pytest.raises(ApiError) as err:
        await capture_url(srv.url("/data.json"), allow_loopback=True)
    assert err.value.code == "unsupported_type"
    with pytest.raises(ApiError) as err:
        await capture_url(srv.url("/blog/rrf"))  # no loopback opt-in
    assert err.value.code == "blocked_address"
