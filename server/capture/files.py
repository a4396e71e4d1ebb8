"""Uploaded files -> markdown: PDF, DOCX, PPTX, HTML, TXT, MD (markitdown), VTT/SRT."""

from __future__ import annotations

import io
import re
from dataclasses import dataclass
from pathlib import PurePath

from memorywiki.formats.mdutil import split_title, tidy_blocks
from memorywiki.formats.model import Captured
from memorywiki.formats.transcript import transcript_markdown
from memorywiki.formats.ziputil import check_ooxml

from ..errors import ApiError, TooLarge, Unprocessable, UnsupportedType
from .article import extract_article
from .isolated import convert_with_markitdown
from .share import looks_like_chatgpt_share, parse_chatgpt_share

_EXT_KIND = {
    ".pdf": "pdf",
    ".docx": "docx",
    ".pptx": "pptx",
    ".html": "html",
    ".htm": "html",
    ".xhtml": "html",
    ".txt": "text",
    ".text": "text",
    ".log": "text",
    ".md": "markdown",
    ".markdown": "markdown",
    ".mdown": "markdown",
    ".vtt": "vtt",
    ".srt": "srt",
}
_MIME_KIND = {
    "application/pdf": "pdf",
    "application/x-pdf": "pdf",
    "application/vnd.openxmlformats-officedocument.wordprocessingml.document": "docx",
    "application/vnd.openxmlformats-officedocument.presentationml.presentation": "pptx",
    "text/html": "html",
    "application/xhtml+xml": "html",
    "text/plain": "text",
    "text/markdown": "markdown",
    "text/x-markdown": "markdown",
    "text/vtt": "vtt",
    "application/x-subrip": "srt",
    "text/srt": "srt",
}
_KNOWN_UNSUPPORTED = {
    ".doc": "Old Word .doc files are not supported; save as .docx or PDF.",
    ".ppt": "Old PowerPoint .ppt files are not supported; save as .pptx or PDF.",
    ".xls": "Spreadsheets are not supported.",
    ".xlsx": "Spreadsheets are not supported.",
    ".zip": "Zip archives are imported as chat exports (memorywiki import), not captured as files.",
}


def detect_kind(data: bytes, file_name: str, content_type: str | None) -> str:
    ext = PurePath(file_name or "").suffix.lower()
    head = data[:1024]
    if head.startswith(b"%PDF-") or (b"%PDF-" in head[:1024] and ext == ".pdf"):
        return "pdf"
    if ext in _EXT_KIND:
        kind = _EXT_KIND[ext]
        if kind in ("docx", "pptx") and not data.startswith(b"PK"):
            raise Unprocessable("corrupt_file", f"{file_name} is not a valid .{kind} file.")
        if kind == "pdf":
            raise Unprocessable("corrupt_file", f"{file_name} is not a valid PDF (no %PDF header).")
        return kind
    if ext in _KNOWN_UNSUPPORTED:
        raise UnsupportedType("unsupported_type", _KNOWN_UNSUPPORTED[ext])
    mime = (content_type or "").split(";", 1)[0].strip().lower()
    if mime in _MIME_KIND:
        return _MIME_KIND[mime]
    if data.startswith(b"PK"):
        if b"word/" in data[:4096]:
            return "docx"
        if b"ppt/" in data[:4096]:
            return "pptx"
        raise UnsupportedType("unsupported_type", f"{file_name or 'This file'} is an archive, not a document.")
    if data.lstrip()[:6].upper() == b"WEBVTT" or data.startswith(b"\xef\xbb\xbfWEBVTT"):
        return "vtt"
    sniff = data[:2048].lstrip().lower()
    if sniff.startswith((b"<!doctype html", b"<html")):
        return "html"
    if ext and ext not in ("",):
        # unknown extension: accept if it is readable text, else refuse
        return "text"
    return "text"


def decode_text(data: bytes, file_name: str) -> tuple[str, str]:
    """(text, encoding). Refuses binary data and text in an encoding that cannot be told."""
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        try:
            return data.decode("utf-16"), "utf-16"
        except UnicodeDecodeError:
            pass
    sample = data[:65536]
    if b"\x00" in sample:
        raise Unprocessable("binary_file", f"{file_name or 'This file'} is binary, not text.")
    controls = sum(1 for b in sample if b < 32 and b not in (9, 10, 12, 13))
    if sample and controls / len(sample) > 0.02:
        raise Unprocessable("binary_file", f"{file_name or 'This file'} is binary, not text.")
    try:
        return data.decode("utf-8-sig"), "utf-8"
    except UnicodeDecodeError:
        pass
    from charset_normalizer import from_bytes

    best = from_bytes(data[:1_000_000]).best()
    if best is None or best.chaos > 0.1:
        raise Unprocessable(
            "bad_encoding",
            f"{file_name or 'This file'} is not UTF-8 text and its encoding could not be recognised. "
            "Save it as UTF-8 and try again.",
        )
    try:
        return data.decode(best.encoding), best.encoding
    except (UnicodeDecodeError, LookupError) as exc:
        raise Unprocessable("bad_encoding", f"{file_name} could not be decoded as {best.encoding}.") from exc


def _first_heading(md: str) -> str | None:
    m = re.search(r"^#{1,3}\s+(.+?)\s*#*\s*$", md, re.M)
    return m.group(1).strip() if m else None


_EMPTY_ROW = re.compile(r"^\|(?:[ \t]*\|)+[ \t]*$")
_DELIMITER_ROW = re.compile(r"^\|(?:[ \t]*:?-+:?[ \t]*\|)+[ \t]*$")
_TABLE_ROW = re.compile(r"^\|.*\|[ \t]*$")


def _table_headers(md: str) -> str:
    """A converted table keeps its header. Word tables (and HTML ones without <th>) mark no
    header row, so markitdown puts an empty one above the first row: that first row, the
    column names a reader sees at the top, becomes the header again."""
    lines = md.split("\n")
    out: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        starts_table = not out or not out[-1].strip()
        if (
            starts_table
            and _EMPTY_ROW.match(line)
            and i + 2 < len(lines)
            and _DELIMITER_ROW.match(lines[i + 1])
            and _TABLE_ROW.match(lines[i + 2])
        ):
            out += [lines[i + 2], lines[i + 1]]
            i += 3
            continue
        out.append(line)
        i += 1
    return "\n".join(out)


def _tidy(md: str) -> str:
    md = md.replace("\r\n", "\n").replace("\x0c", "\n\n")
    md = re.sub(r"[ \t]+\n", "\n", md)
    return tidy_blocks(md)


def _pdf_check(data: bytes, name: str) -> dict:
    """Encrypted/corrupt checks with pdfminer; returns PDF metadata (title, pages)."""
    from pdfminer.pdfdocument import PDFDocument, PDFEncryptionError, PDFPasswordIncorrect
    from pdfminer.pdfpage import PDFPage
    from pdfminer.pdfparser import PDFParser

    try:
        parser = PDFParser(io.BytesIO(data))
        doc = PDFDocument(parser, password="")
        pages = sum(1 for _ in PDFPage.create_pages(doc))
    except (PDFPasswordIncorrect, PDFEncryptionError) as exc:
        raise Unprocessable(
            "encrypted_pdf", f"{name} is password-protected; remove the password and try again."
        ) from exc
    except Exception as exc:  # PDFSyntaxError, PSEOF, struct errors...
        raise Unprocessable("corrupt_file", f"{name} is not a readable PDF ({exc.__class__.__name__}).") from exc
    if pages == 0:
        raise Unprocessable("corrupt_file", f"{name} has no pages.")
    meta: dict = {"pages": pages}
    try:
        info = doc.info[0] if doc.info else {}
        raw = info.get("Title")
        if hasattr(raw, "resolve"):
            raw = raw.resolve()
        if isinstance(raw, bytes):
            if raw.startswith((b"\xfe\xff", b"\xff\xfe")):
                raw = raw.decode("utf-16")
            else:
                raw = raw.decode("latin-1")
        if isinstance(raw, str) and raw.strip() and raw.strip().lower() not in ("untitled", "(anonymous)"):
            meta["doc_title"] = raw.strip()
    except Exception:
        pass
    return meta


def _ooxml_title(data: bytes) -> str | None:
    import zipfile

    try:
        with zipfile.ZipFile(io.BytesIO(data)) as zf:
            xml = zf.read("docProps/core.xml")
        from defusedxml import ElementTree as ET

        root = ET.fromstring(xml)
        el = root.find("{http://purl.org/dc/elements/1.1/}title")
        if el is not None and el.text and el.text.strip():
            return el.text.strip()
    except Exception:
        return None
    return None


@dataclass
class _Converted:
    markdown: str
    title: str | None


def _convert_markitdown(data: bytes, kind: str, name: str) -> _Converted:
    """markitdown's markdown and title for the file, converted in a child process (isolated.py)."""
    ext = {"pdf": ".pdf", "docx": ".docx", "pptx": ".pptx", "html": ".html"}[kind]
    return _Converted(*convert_with_markitdown(data, ext, name))


def _html_to_markdown(text: str, name: str) -> tuple[str, str | None]:
    """A saved web page: its main text (trafilatura, as for URLs); an HTML document where
    that finds little: the whole body (markitdown)."""
    res = _convert_markitdown(text.encode("utf-8"), "html", name)
    full = res.markdown or ""
    try:
        art = extract_article(text, "")
    except ApiError:
        art = None
    if art is not None and len(art.markdown) >= 0.25 * len(full.strip()):
        return art.markdown, art.title if art.title != "Untitled page" else ((res.title or "").strip() or None)
    return full, (res.title or "").strip() or None


def _pptx_tidy(md: str) -> str:
    md = re.sub(r"<!-- Slide number: (\d+) -->\s*\n#\s+([^\n]+)", r"## Slide \1: \2", md)
    md = re.sub(r"<!-- Slide number: (\d+) -->", r"## Slide \1", md)
    return md


def convert_file(
    data: bytes,
    file_name: str,
    content_type: str | None = None,
    title: str | None = None,
    *,
    max_bytes: int | None = None,
    section_minutes: int = 5,
) -> Captured:
    """Convert an uploaded file to a Captured doc. Raises ApiError (or FormatError, for a
    transcript or an Office file's zip) for bad input. `max_bytes`: the caller's size limit."""
    name = PurePath(file_name or "upload").name or "upload"
    if max_bytes is not None and len(data) > max_bytes:
        raise TooLarge("too_large", f"{name} is {len(data):,} bytes (limit {max_bytes:,}).")
    if not data or not data.strip(b" \t\r\n\x00\xef\xbb\xbf"):
        raise Unprocessable("empty", f"{name} is empty.")
    kind = detect_kind(data, name, content_type)
    stem = PurePath(name).stem or name
    meta: dict = {"file_name": name, "bytes": len(data)}
    doc_title: str | None = None

    if kind == "pdf":
        meta.update(_pdf_check(data, name))
        doc_title = meta.pop("doc_title", None)
        md = _convert_markitdown(data, "pdf", name).markdown or ""
        if not md.strip():
            raise Unprocessable("empty", f"{name} has no extractable text (a scanned PDF needs OCR first).")
    elif kind in ("docx", "pptx"):
        check_ooxml(data)
        res = _convert_markitdown(data, kind, name)
        md = res.markdown or ""
        doc_title = _ooxml_title(data) or res.title
        if kind == "pptx":
            md = _pptx_tidy(md)
    elif kind in ("vtt", "srt"):
        text, enc = decode_text(data, name)
        md, tmeta = transcript_markdown(text, kind, section_minutes)
        meta.update(tmeta)
    else:
        text, enc = decode_text(data, name)
        if enc != "utf-8":
            meta["encoding"] = enc
        if kind == "html":
            if looks_like_chatgpt_share(text):
                cap = parse_chatgpt_share(text, meta.get("url") or "")
                cap.meta.update({"file_name": name})
                if title:
                    cap.title = title
                return cap
            md, doc_title = _html_to_markdown(text, name)
        else:
            md = text
            if kind == "markdown":
                fm = re.match(r"---\n(.*?)\n---\n", md.replace("\r\n", "\n"), re.S)
                if fm:
                    tm = re.search(r"^title:\s*['\"]?(.+?)['\"]?\s*$", fm.group(1), re.M)
                    if tm:
                        doc_title = tm.group(1).strip()
            elif kind == "text" and not md.strip():
                raise Unprocessable("empty", f"{name} is empty.")

    md = _tidy(md)
    if kind in ("docx", "pptx", "html", "pdf"):  # markitdown's tables
        md = _table_headers(md)
    if not md.strip():
        raise Unprocessable("empty", f"{name} has no text.")
    final_title, md = split_title((title or "").strip() or doc_title, md)
    if not final_title:
        final_title = (_first_heading(md) if kind in ("markdown", "docx", "html", "pdf") else None) or stem
    if not md.strip():
        raise Unprocessable("empty", f"{name} has no text beyond its title.")
    return Captured(title=final_title, markdown=md, source=kind, meta=meta)
