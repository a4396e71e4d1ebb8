"""Replace one section of a markdown doc, keeping everything else byte-for-byte.

Headings are found with markdown-it-py tokens, so a ``#`` inside a code fence is not a
heading, setext headings (``Title`` / ``=====``) count, and headings nested in lists or
blockquotes do not split the document. A section is its heading line(s) plus the text up to
the next top-level heading of the same or a higher level (deeper headings stay inside).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from markdown_it import MarkdownIt

from .errors import NO_SECTION, MemoryWikiError

_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")


@dataclass(frozen=True)
class Heading:
    level: int
    text: str
    start: int  # first line of the heading
    end: int  # line after the heading (setext headings span two lines)


def split_lines(text: str) -> list[str]:
    """Lines with their endings, split the way markdown-it counts them (\\r\\n, \\r, \\n)."""
    return _LINE.findall(text)


def headings(markdown: str) -> list[Heading]:
    """Top-level headings (not inside lists, blockquotes or code) in document order."""
    tokens = MarkdownIt("commonmark").parse(markdown)
    found: list[Heading] = []
    for i, tok in enumerate(tokens):
        if tok.type == "heading_open" and tok.level == 0 and tok.map:
            inline = tokens[i + 1] if i + 1 < len(tokens) else None
            text = inline.content if inline is not None and inline.type == "inline" else ""
            found.append(Heading(int(tok.tag[1:]), text, tok.map[0], tok.map[1]))
    return found


def _norm(text: str) -> str:
    text = text.strip()
    text = re.sub(r"^#{1,6}\s+", "", text)
    text = re.sub(r"\s+#+\s*$", "", text)
    return " ".join(text.split()).casefold()


def find_heading(markdown: str, name: str) -> Heading:
    hs = headings(markdown)
    wanted = _norm(name)
    exact = [h for h in hs if " ".join(h.text.split()) == " ".join(name.strip().lstrip("#").split())]
    if exact:
        return exact[0]
    loose = [h for h in hs if _norm(h.text) == wanted]
    if loose:
        return loose[0]
    if not hs:
        raise MemoryWikiError(f"no section {name!r}: the doc has no headings", NO_SECTION)
    names = ", ".join(repr(h.text) for h in hs[:12]) + (", ..." if len(hs) > 12 else "")
    raise MemoryWikiError(f"no section {name!r} in the doc; sections: {names}", NO_SECTION)


def _is_blank(line: str) -> bool:
    return not line.strip()


def _line_ending(lines: list[str]) -> str:
    for line in lines:
        if line.endswith("\r\n"):
            return "\r\n"
        if line.endswith("\n"):
            return "\n"
        if line.endswith("\r"):
            return "\r"
    return "\n"


def replace_section(markdown: str, name: str, new_text: str) -> str:
    """Replace the section titled ``name`` with ``new_text``.

    If ``new_text`` starts with a heading of the same or a higher level, it replaces the
    heading too; otherwise the original heading line is kept and ``new_text`` becomes the body.
    """
    lines = split_lines(markdown)
    target = find_heading(markdown, name)
    all_heads = headings(markdown)
    end = len(lines)
    for h in all_heads:
        if h.start > target.start and h.level <= target.level:
            end = h.start
            break
    eol = _line_ending(lines)

    # what the new text looks like
    new_lines = split_lines(new_text.replace("\r\n", "\n").replace("\r", "\n"))
    while new_lines and _is_blank(new_lines[0]):
        new_lines.pop(0)
    while new_lines and _is_blank(new_lines[-1]):
        new_lines.pop()
    new_lines = [ln.rstrip("\n") + eol for ln in new_lines]
    new_heads = headings("".join(new_lines))
    replaces_heading = bool(new_heads) and new_heads[0].start == 0 and new_heads[0].level <= target.level

    section = lines[target.start : end]
    body = section[target.end - target.start :]
    # trailing blank lines before the next heading are kept as they were
    trailing: list[str] = []
    while body and _is_blank(body[-1]):
        trailing.insert(0, body.pop())
    if end < len(lines) and not trailing:
        trailing = [eol]
    if end == len(lines) and not trailing and new_lines and not markdown.endswith(("\n", "\r")):
        # the doc had no final newline; do not add one
        new_lines[-1] = new_lines[-1].rstrip("\r\n")

    if replaces_heading:
        out = new_lines
    else:
        heading_lines = section[: target.end - target.start]
        if heading_lines and not heading_lines[-1].endswith(("\n", "\r")):
            heading_lines = [*heading_lines[:-1], heading_lines[-1] + eol]
        gap: list[str] = []
        for ln in body:
            if _is_blank(ln):
                gap.append(ln)
            else:
                break
        if not gap and not body:
            gap = [eol]
        out = heading_lines + (gap + new_lines if new_lines else [])
    return "".join(lines[: target.start] + out + trailing + lines[end:])


_FRONT = re.compile(r"\A---\r?\n(.*?)\r?\n---[ \t]*(?:\r?\n|\Z)(?:[ \t]*\r?\n)?", re.DOTALL)


def strip_pulled_front_matter(text: str, doc_id: str) -> tuple[str, str | None]:
    """Undo what ``/raw/<id>`` adds: if ``text`` starts with the front matter the server wrote
    for this doc (its ``url:`` ends in ``/<doc_id>``), return (body, title from it); else
    (text, None). Other front matter is the user's own and is kept."""
    m = _FRONT.match(text)
    if not m:
        return text, None
    fields: dict[str, object] = {}
    for line in m.group(1).splitlines():
        key, sep, value = line.partition(":")
        if not sep:
            return text, None
        value = value.strip()
        try:
            fields[key.strip()] = json.loads(value)
        except ValueError:
            fields[key.strip()] = value
    url = fields.get("url")
    if not isinstance(url, str) or url.split("?", 1)[0].rstrip("/").rsplit("/", 1)[-1] != doc_id:
        return text, None
    title = fields.get("title")
    return text[m.end() :], (title if isinstance(title, str) and title.strip() else None)
