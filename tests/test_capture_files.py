"""Uploaded files -> markdown: each format and the hostile cases."""

from __future__ import annotations

import io
import random
import zipfile
from pathlib import Path

import pytest
from memorywiki.formats import FormatError
from memorywiki.formats.transcript import transcript_markdown
from memorywiki.server.capture import convert_file
from memorywiki.server.errors import ApiError

# convert_file refuses with an ApiError (it knows the HTTP status), or lets through the
# FormatError of a pure converter it calls (a transcript, an Office file's zip)
CaptureError = (ApiError, FormatError)

DATA = Path(__file__).parent / "data" / "capture"
FIXTURES = Path(__file__).parent / "data" / "fixtures"


def data(name: str) -> bytes:
    return (DATA / name).read_bytes()


def test_pdf():
    cap = convert_file(data("report.pdf"), "report.pdf", "application/pdf")
    assert cap.source == "pdf"
    assert cap.title == "Quarterly Memory Report"  # from the PDF's metadata
    assert cap.meta["pages"] == 2 and cap.meta["file_name"] == "report.pdf"
    assert "Recall quality improved by twelve percent" in cap.markdown
    assert "Page two: next steps" in cap.markdown
    assert "\x0c" not in cap.markdown


def test_docx_keeps_headings_tables_lists():
    cap = convert_file(data("notes.docx"), "notes.docx")
    assert cap.source == "docx" and cap.title == "Design Notes"
    md = cap.markdown
    assert not md.startswith("# Design Notes")  # the title heading is not repeated in the body
    assert "## Embeddings" in md
    assert "| openai | 1536 |" in md
    assert "* Fully offline with the local model." in md
    assert "| provider | dimension |\n| --- | --- |\n| openai | 1536 |" in md, "the first row is the header"


def test_a_docx_is_titled_by_its_title_property_and_its_tables_keep_their_header(client):
    """Word marks no header row, and markitdown put an empty one above each table; the page's
    title is the document's Title property, not its first heading."""
    from tests.docx_file import make_docx

    okrs = make_docx(
        "Quarterly OKRs",
        [
            ("h1", "Objectives"),
            ("p", "Grow recall quality by ten percent this quarter."),
            ("h2", "Key results"),
            ("table", [["Result", "Owner"], ["nDCG@10 above 0.72", "Ana"], ["p95 under 50 ms", "Ben"]]),
        ],
    )
    cap = convert_file(okrs, "okrs.docx")
    assert cap.title == "Quarterly OKRs"
    assert cap.markdown.startswith("# Objectives\n"), "the first heading stays the body's own"
    table = cap.markdown.split("## Key results\n\n", 1)[1].strip()
    assert table == "| Result | Owner |\n| --- | --- |\n| nDCG@10 above 0.72 | Ana |\n| p95 under 50 ms | Ben |"
    # the same through the API, as the CLI, the editor and the owner's view send it
    token = client.post("/api/hubs", json={"slug": "files"}).json()["owner_token"]
    r = client.post(
        "/api/capture/file",
        files={"file": ("okrs.docx", okrs)},
        data={"hub": "files"},
        headers={"Authorization": f"Bearer {token}"},
    )
    assert r.status_code == 201, r.text
    doc = client.get(f"/api/docs/{r.json()['id']}").json()
    assert doc["title"] == "Quarterly OKRs" and "|  |  |" not in doc["markdown"]
    untitled = convert_file(make_docx(None, [("h1", "Objectives"), ("p", "Grow recall.")]), "okrs.docx")
    assert untitled.title == "Objectives", "without a Title property the first heading names the page"


def test_pptx_slides_become_sections():
    cap = convert_file(data("roadmap.pptx"), "roadmap.pptx")
    assert cap.source == "pptx" and cap.title == "Capture Roadmap"
    assert "## Slide 1: Roadmap" in cap.markdown and "## Slide 2: Risks" in cap.markdown
    assert "Ship hybrid recall" in cap.markdown
    assert "watch the turbo-stream format" in cap.markdown  # speaker notes kept
    assert "<!--" not in cap.markdown


def test_html_file_main_text():
    cap = convert_file(data("article.html"), "saved.html", "text/html")
    assert cap.source == "html"
    assert cap.title == "Hybrid search with reciprocal rank fusion"
    assert "| BM25 | 0.686 |" in cap.markdown
    assert "Accept all cookies" not in cap.markdown


def test_html_file_that_is_a_chatgpt_share_page():
    cap = convert_file((FIXTURES / "chatgpt-share" / "chatgpt-share-modern.html").read_bytes(), "share.html")
    assert cap.source == "chatgpt-share" and cap.title == "今天重大新闻概览"
    assert cap.meta["file_name"] == "share.html"


def test_markdown_and_text():
    md = b"---\ntitle: Front Matter Title\n---\n# Heading\n\nBody with `code`.\n\n```py\n# not a heading\n```\n"
    cap = convert_file(md, "note.md")
    assert cap.source == "markdown" and cap.title == "Front Matter Title"
    assert "```py\n# not a heading\n```" in cap.markdown
    cap = convert_file(b"# Plan\n\nStep one.\n", "plan.md", title="Given title")
    assert cap.title == "Given title" and cap.markdown.startswith("# Plan")
    cap = convert_file(b"# Plan\n\nStep one.\n", "plan.md")
    assert cap.title == "Plan" and cap.markdown == "Step one.\n"
    cap = convert_file("\ufeffjust some notes\r\nline two\r\n".encode("utf-8"), "notes.txt")
    assert cap.source == "text" and cap.title == "notes" and cap.markdown == "just some notes\nline two\n"


def test_text_in_a_recognisable_legacy_encoding():
    text = "Le café de la gare est fermé. Nous irons à l'hôtel près de la rivière, où l'on sert des crêpes."
    cap = convert_file(text.encode("latin-1"), "notes.txt")
    assert "café" in cap.markdown and "crêpes" in cap.markdown
    assert cap.meta["encoding"] in ("cp1252", "latin_1", "iso8859_15", "iso8859_1")
    cap = convert_file(text.encode("utf-16"), "notes.txt")
    assert "crêpes" in cap.markdown


def test_vtt_transcript():
    cap = convert_file(data("meeting.vtt"), "meeting.vtt")
    assert cap.source == "vtt" and cap.title == "meeting"
    md = cap.markdown
    assert md.startswith(
        "## 00:00–05:00\n\n**[00:01] Alice Chen:** Welcome everyone, this is the weekly capture sync. First item: share links."
    )
    assert (
        "**[00:07] Bob Ruiz:** The ChatGPT share page moved to turbo-stream & we decode it now. Claude shares come from the snapshot JSON."
        in md
    )
    assert "## 05:00–10:00\n\n**[05:02] Alice Chen:**" in md
    assert "## 10:00–15:00\n\n**[11:40] Carol Diaz:** Thanks, that's all from me." in md
    assert "<b>" not in md and "<v" not in md and "NOTE" not in md
    assert cap.meta["speakers"] == ["Alice Chen", "Bob Ruiz", "Carol Diaz"]


def test_srt_transcript():
    cap = convert_file(data("standup.srt"), "standup.srt")
    assert cap.source == "srt"
    md = cap.markdown
    assert "**[00:00] Dana:** Let us review the import numbers. Two thousand conversations took two seconds." in md
    assert "**[00:06] Eli:** And memory stayed flat." in md
    assert "## 05:00–10:00\n\n**[06:10] Dana:** Good, ship it." in md


def test_transcript_long_and_rolling_captions():
    cues = []
    for i in range(0, 3700, 20):  # an hour+ of auto-captions that repeat the previous line
        h, m, s = i // 3600, i % 3600 // 60, i % 60
        e = i + 20
        cues.append(
            f"{h:02d}:{m:02d}:{s:02d}.000 --> {e // 3600:02d}:{e % 3600 // 60:02d}:{e % 60:02d}.000\nline {i - 20}\nline {i}\n"
        )
    md, meta = transcript_markdown("WEBVTT\n\n" + "\n".join(cues), "vtt", section_minutes=10)
    assert md.startswith("## 0:00:00–0:10:00")
    assert "## 1:00:00–1:10:00" in md
    assert md.count("line 40 ") == 1  # each caption line once, not repeated by the next cue
    assert meta["speakers"] == []


# ---------------------------------------------------------------- hostile inputs


def _code(exc_info) -> str:
    return exc_info.value.code


@pytest.mark.parametrize("blob,name", [(b"", "a.pdf"), (b"", "notes.txt"), (b"  \n\t\n", "notes.md"), (b"", "x.docx")])
def test_empty_file(blob, name):
    with pytest.raises(CaptureError) as err:
        convert_file(blob, name)
    assert _code(err) == "empty" and err.value.status == 422


def test_encrypted_pdf():
    with pytest.raises(CaptureError) as err:
        convert_file(data("encrypted.pdf"), "encrypted.pdf")
    assert _code(err) == "encrypted_pdf"
    assert "password" in str(err.value)


@pytest.mark.parametrize(
    "blob",
    [
        b"%PDF-1.7\n1 0 obj\n<< /Type /Catalog >>\ngarbage garbage\n%%EOF",
        b"%PDF-1.4\n" + random.Random(3).randbytes(3000),
        (DATA / "report.pdf").read_bytes()[:700],  # truncated download
    ],
)
def test_corrupt_pdf(blob):
    with pytest.raises(CaptureError) as err:
        convert_file(blob, "broken.pdf")
    assert _code(err) in ("corrupt_file", "empty")


def test_pdf_extension_without_pdf_content():
    with pytest.raises(CaptureError) as err:
        convert_file(b"hello, I am not a PDF", "fake.pdf")
    assert _code(err) == "corrupt_file"


def test_corrupt_docx():
    with pytest.raises(CaptureError) as err:
        convert_file(data("notes.docx")[:5000], "notes.docx")
    assert _code(err) in ("corrupt_file", "bad_archive")
    with pytest.raises(CaptureError) as err:
        convert_file(b"PK\x03\x04 not really a zip", "notes.docx")
    assert _code(err) in ("corrupt_file", "bad_archive")


def test_docx_zip_bomb():
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("[Content_Types].xml", "<Types/>")
        zf.writestr("word/document.xml", b"<w:document>" + b" " * 20_000_000 + b"</w:document>")
    with pytest.raises(CaptureError) as err:
        convert_file(buf.getvalue(), "bomb.docx")
    assert _code(err) == "bad_archive" and "zip bomb" in str(err.value)


def test_binary_garbage():
    blob = random.Random(1).randbytes(4096)
    for name in ("data.txt", "data.md", "data.bin", "talk.vtt"):
        with pytest.raises(CaptureError) as err:
            convert_file(blob, name)
        assert _code(err) == "binary_file", name


def test_undecodable_non_utf8_text():
    blob = bytes(b | 0x80 for b in random.Random(2).randbytes(400))
    with pytest.raises(CaptureError) as err:
        convert_file(blob, "notes.txt")
    assert _code(err) == "bad_encoding"
    assert "UTF-8" in str(err.value)


def test_unsupported_types():
    for name in ("old.doc", "sheet.xlsx", "archive.zip"):
        with pytest.raises(CaptureError) as err:
            convert_file(b"PK\x03\x04whatever", name)
        assert _code(err) == "unsupported_type" and err.value.status == 415


def test_too_large():
    with pytest.raises(CaptureError) as err:
        convert_file(b"a" * 2000, "big.txt", max_bytes=1000)
    assert _code(err) == "too_large" and err.value.status == 413


def test_vtt_without_cues():
    with pytest.raises(CaptureError) as err:
        convert_file(b"WEBVTT\n\nNOTE nothing here\n", "empty.vtt")
    assert _code(err) == "empty"


def test_the_converter_child_is_kept_and_replaced_when_it_dies():
    """markitdown runs in one long-lived child (server/capture/isolated.py): loaded once, and a
    child that died is replaced on the next file, which converts as before."""
    import os
    import signal

    from memorywiki.server.capture.isolated import _converter

    first = convert_file(data("notes.docx"), "notes.docx")
    child = _converter._proc
    assert child is not None and child.poll() is None
    assert convert_file(data("roadmap.pptx"), "roadmap.pptx").markdown
    assert _converter._proc is child  # the same process: markitdown loads once
    os.kill(child.pid, signal.SIGKILL)
    child.wait()
    again = convert_file(data("notes.docx"), "notes.docx")
    assert again.markdown == first.markdown and _converter._proc is not child
