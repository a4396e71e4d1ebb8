"""Markdown helpers shared by the server and the clients: headings, titles, conversation turns,
and a page's text as a reader sees it (summaries, search snippets)."""

from __future__ import annotations

import hashlib
import itertools
import json
import re
from collections.abc import Iterable
from datetime import datetime
from functools import lru_cache
from typing import Any

from markdown_it import MarkdownIt
from markdown_it.token import Token

_md = MarkdownIt("commonmark").enable("table")
_SPACES = re.compile(r"\s+")

# ChatGPT private-use markup: U+E200 <kind> (U+E202 <arg>)* U+E201
_PUA_SPAN = re.compile("\ue200([^\ue200\ue201\ue202]*)((?:\ue202[^\ue200\ue201\ue202]*)*)\ue201")
_PUA_ANY = re.compile("[\ue200-\ue2ff]")


def _pua_replace(m: re.Match[str]) -> str:
    kind = m.group(1).strip()
    args = [a for a in m.group(2).split("\ue202") if a]
    if kind == "entity" and args:
        # ["organization", "Display Name", "description"] -> Display Name
        try:
            val = json.loads(args[0])
            if isinstance(val, list) and len(val) >= 2 and isinstance(val[1], str):
                return val[1]
        except (json.JSONDecodeError, TypeError):
            pass
        return ""
    return ""  # cite, navlist, image_group, filecite, ... -> dropped


def strip_citations(text: str) -> str:
    """Remove ChatGPT citation markup (private-use U+E200..U+E2FF spans) cleanly.

    ``\\ue200cite\\ue202turn0search5\\ue201`` disappears; ``\\ue200entity\\ue202["org","Name",...]\\ue201``
    becomes ``Name``; any stray private-use character left is removed; a space that the
    removal leaves before punctuation or at a line end is tidied.
    """
    if not _PUA_ANY.search(text):
        return text
    text = _PUA_SPAN.sub(_pua_replace, text)
    text = _PUA_ANY.sub("", text)
    text = re.sub(r"[ \t]+([.,;:!?。，；：！？）)])", r"\1", text)
    text = re.sub(r"[ \t]+\n", "\n", text)
    return text.rstrip()


def inline_text(tokens: list[Token]) -> str:
    """Plain text of inline tokens: markup dropped, code spans, link text and image alt kept."""
    parts: list[str] = []
    for tok in tokens:
        if tok.type in ("text", "code_inline", "text_special"):
            parts.append(tok.content)
        elif tok.type in ("softbreak", "hardbreak"):
            parts.append(" ")
        elif tok.type == "image" and tok.children:
            parts.append(inline_text(tok.children))
    return "".join(parts)


def same_text(a: str, b: str) -> bool:
    """Equal up to case and runs of whitespace (how a heading is compared with a title)."""
    return _SPACES.sub(" ", a).strip().casefold() == _SPACES.sub(" ", b).strip().casefold()


def leading_h1(markdown: str) -> tuple[str, str] | None:
    """(heading text, the rest) when the markdown opens with a level-1 heading (ATX or setext).

    Only the first block is parsed, so a 5 MB body costs no more than a short one; a fence
    or list that opens the doc is not a heading, whatever it holds.
    """
    lines = markdown.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    first = next((i for i, line in enumerate(lines) if line.strip()), None)
    if first is None:
        return None
    end = next((i for i in range(first, len(lines)) if not lines[i].strip()), len(lines))
    if not _could_be_h1(lines[first:end]):  # a block of one long line need not be parsed
        return None
    tokens = _md.parse("\n".join(lines[:end]))
    if not tokens or tokens[0].type != "heading_open" or tokens[0].tag != "h1" or tokens[0].map is None:
        return None
    text = _SPACES.sub(" ", inline_text(tokens[1].children or [])).strip()
    if not text:
        return None
    rest = lines[tokens[0].map[1] :]
    while rest and not rest[0].strip():
        rest.pop(0)
    return text, "\n".join(rest)


def _could_be_h1(block: list[str]) -> bool:
    """Whether the block may open with a level-1 heading: an ATX `#` (indented 3 spaces at most)
    on its first line, or a setext `=` underline on a later one. Without either, markdown-it
    finds none."""
    head = block[0].lstrip(" ")
    if len(block[0]) - len(head) <= 3 and head.startswith("#"):
        return True
    return any(line.strip() and not line.strip().strip("=") for line in block[1:])


def split_title(title: str | None, markdown: str) -> tuple[str | None, str]:
    """The one rule for a leading `# Title`, applied on every path a page comes in by.

    The title lives in the title field, never also at the top of the body: a body that opens
    with an H1 equal to the title loses that H1; with no title given, a leading H1 becomes the
    title. A leading H1 that differs from a given title is the author's own heading and stays.
    Renderers call this too, so pages saved before the rule never show their title twice.
    """
    title = (title or "").strip() or None
    found = leading_h1(markdown)
    if found is None:
        return title, markdown
    heading, rest = found
    if title is None:
        return heading, rest
    if same_text(heading, title):
        return title, rest
    return title, markdown


def page_hash(title: str, markdown: str) -> str:
    """What identifies a page's text as saved (the server's source_hash): an unchanged hash
    means nothing to index again, and lets an importer see that a file is already saved."""
    return hashlib.sha256(f"{title}\n{markdown}".encode()).hexdigest()


def shift_headings(text: str, by: int) -> str:
    """Move every top-level heading `by` levels deeper (capped at 6), setext ones as ATX.

    Headings inside code fences are not touched (markdown-it finds real headings only).
    """
    if by <= 0 or ("#" not in text and "\n=" not in text and "\n-" not in text):
        return text
    lines = text.split("\n")
    for tok in reversed(_md.parse(text)):
        if tok.type != "heading_open" or tok.level != 0 or tok.map is None:
            continue
        start, end = tok.map
        level = min(6, int(tok.tag[1]) + by)
        if tok.markup.startswith("#"):
            line = lines[start]
            stripped = line.lstrip()
            lines[start] = line[: len(line) - len(stripped)] + "#" * level + stripped[len(tok.markup) :]
        else:  # setext: the text lines, then the underline
            name = " ".join(line.strip() for line in lines[start : end - 1])
            lines[start:end] = ["#" * level + " " + name]
    return "\n".join(lines)


def demote_headings(text: str, min_level: int = 3) -> str:
    """Shift headings inside a turn so the shallowest becomes ``min_level``.

    A conversation doc uses ``## User`` / ``## Assistant``; a ``# Title`` inside an answer
    would otherwise break the doc's heading structure (and its chunk breadcrumbs).
    """
    if "#" not in text:
        return text
    levels = [
        int(t.tag[1]) for t in _md.parse(text) if t.type == "heading_open" and t.level == 0 and t.markup.startswith("#")
    ]
    if not levels:
        return text
    return shift_headings(text, max(0, min_level - min(levels)))


MONTHS = (
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
)


def day_label(when: datetime) -> str:
    """ "8 May 2023": a day as people write it, and as their questions say it."""
    return f"{when.day} {MONTHS[when.month - 1]} {when.year}"


def render_turns(turns: Iterable[tuple[str, str] | tuple[str, str, datetime | None]]) -> str:
    """``[(role, text)]`` or ``[(role, text, when)]`` -> markdown, one section per turn.

    Without times: ``## Role`` sections. With times (exports date every message): a ``## <day>``
    heading opens each day, and each turn is a ``### Role`` section under it, so a chunk of the
    conversation (server/indexing/chunker.py, chunk_conversation) says on which day it was said; a turn
    without a time belongs to the day before it. Consecutive turns of one role on one day are
    merged into one section. Headings inside a turn are demoted below the turn's own heading.
    """
    items = [(t[0], t[1].strip(), t[2] if len(t) > 2 else None) for t in turns]
    dated = any(when is not None for _, _, when in items)
    merged: list[tuple[str | None, str, list[str]]] = []  # (day, role, texts)
    day = None
    for role, text, when in items:
        if when is not None:
            day = day_label(when)
        if not text:
            continue
        if merged and merged[-1][0] == day and merged[-1][1] == role:
            merged[-1][2].append(text)
        else:
            merged.append((day, role, [text]))
    parts = []
    shown = None
    for day, role, texts in merged:
        if dated and day is not None and day != shown:
            parts.append(f"## {day}")
            shown = day
        level = 3 if dated else 2
        body = "\n\n".join(demote_headings(t, level + 1) for t in texts)
        parts.append(f"{'#' * level} {role}\n\n{body}")
    return "\n\n".join(parts) + ("\n" if parts else "")


_FENCE_RE = re.compile(r"^\s{0,3}(`{3,}|~{3,})")


def tidy_blocks(md: str) -> str:
    """Blank line before headings and around code fences (outside fences); trailing spaces
    and runs of blank lines trimmed. Converters sometimes glue a heading to a fence."""
    out: list[str] = []
    fence: str | None = None
    for line in md.replace("\r\n", "\n").split("\n"):
        line = line.rstrip()
        m = _FENCE_RE.match(line)
        if fence is None:
            if m:
                if out and out[-1].strip():
                    out.append("")
                fence = m.group(1)[0] * len(m.group(1))
                out.append(line)
                continue
            if line.lstrip().startswith("#") and re.match(r"^\s{0,3}#{1,6}\s", line) and out and out[-1].strip():
                out.append("")
            if out and out[-1] == "\x00close":
                out[-1] = ""
                if not line.strip():
                    continue
            out.append(line)
            if re.match(r"^\s{0,3}#{1,6}\s", line):
                out.append("\x00close")
        else:
            out.append(line)
            if m and line.strip().startswith(fence[0] * len(fence)) and not line.strip().strip(fence[0]):
                fence = None
                out.append("\x00close")
    text = "\n".join(x for x in out if x != "\x00close" or False)
    text = re.sub(r"\n{3,}", "\n\n", text)
    return text.strip() + "\n"


# For text only, never rendered to HTML: with html on, raw tags are tokens of their own and
# drop out of the text instead of showing as `<b>`. Blocks are parsed first, and only the
# paragraphs a summary reads get their (costly) inline pass.
_TEXT = MarkdownIt("commonmark", {"html": True}).enable(["table", "strikethrough"])
_TEXT_BLOCKS = MarkdownIt("commonmark", {"html": True}).enable(["table", "strikethrough"]).disable("inline")
# What an unclosed or cut-off span leaves behind as literal text.
_LEFTOVER_MARKUP = re.compile(r"\*\*+|__+|`+|~~+")
# A reference link whose definition lies past the part read: keep its text.
_UNRESOLVED_REF = re.compile(r"\[([^\[\]]*)\]\[[^\[\]]*\]")
_BLANK_LINE = re.compile(r"\n[ \t]*\n")
SUMMARY_CHARS = 160


@lru_cache(maxsize=4096)  # a hub page summarises many docs on every request
def summary(markdown: str, limit: int = SUMMARY_CHARS) -> str:
    """One line for an index: the opening prose as a reader sees it (rendered, then its
    text), cut on a word boundary with an ellipsis. Headings, code and tables are skipped.

    Only the source a summary can need is parsed: up to the first block boundary past
    3 x limit characters, and at most 4 x limit characters of any one paragraph.
    """
    boundary = _BLANK_LINE.search(markdown, 3 * limit)
    env: dict[str, Any] = {}
    tokens = _TEXT_BLOCKS.parse(markdown[: boundary.start()] if boundary else markdown, env)
    parts: list[str] = []
    size = 0
    for prev, tok in itertools.pairwise(tokens):
        if tok.type != "inline" or prev.type != "paragraph_open":
            continue
        source = tok.content
        if len(source) > 4 * limit:  # cut between words, or hard when there is no space
            space = source.rfind(" ", 0, 4 * limit)
            source = source[: space if space > 0 else 4 * limit]
        inline = _TEXT.parseInline(source, env)  # env holds the link reference definitions
        children = inline[0].children if inline and inline[0].children else []
        text = _UNRESOLVED_REF.sub(r"\1", _LEFTOVER_MARKUP.sub("", inline_text(children)))
        text = " ".join(text.split())
        if text:
            parts.append(text)
            size += len(text) + 1
        if size > limit:
            break
    text = " ".join(parts)
    if len(text) <= limit:
        return text
    cut = text[: limit + 1]
    space = cut.rfind(" ")
    cut = cut[:space] if space > limit // 2 else text[:limit]
    return cut.rstrip(" ,;:.-–—(") + "…"


@lru_cache(maxsize=1024)
def plain_text(markdown: str, skip_headings: bool = True) -> str:
    """The words a reader sees, markup gone (search snippets); code stays as its text."""
    tokens = _TEXT.parse(markdown)
    parts: list[str] = []
    in_heading = False
    for tok in tokens:
        if tok.type == "heading_open":
            in_heading = True
        elif tok.type == "heading_close":
            in_heading = False
        elif tok.type == "inline" and not (in_heading and skip_headings):
            parts.append(inline_text(tok.children or []))
        elif tok.type in ("fence", "code_block"):
            parts.append(tok.content)
    return " ".join(" ".join(parts).split())
