"""Split a markdown doc into heading chunks for embedding and recall.

Headings are found in markdown-it-py's token stream (with source maps), never by regex, so a
`#` inside a code fence, an indented code block, a blockquote or a list item is not a split
point. Chunk text is always cut from the original source lines, so what the indexer stores is
exactly what the author wrote, and an unchanged section keeps an unchanged hash.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from typing import Any

from markdown_it import MarkdownIt

from memorywiki.formats.mdutil import inline_text, same_text

__all__ = ["Chunk", "chunk_conversation", "chunk_markdown", "strip_front_matter"]

SPLIT_LEVELS = ("h1", "h2", "h3")
UNTITLED = "Untitled"

# Block pass only: inline parsing of every paragraph is most of markdown-it's cost and we only
# need the inline text of headings, which `_INLINE` parses on demand.
_BLOCK = MarkdownIt("commonmark").enable(["table", "strikethrough"]).disable("inline")
_INLINE = MarkdownIt("commonmark").enable(["table", "strikethrough"])

# Front matter must open on the very first line and close with `---` (or YAML's `...`).
_FRONT_MATTER = re.compile(
    r"\A\ufeff?---[ \t]*\n(?P<body>.*?)^(?:---|\.\.\.)[ \t]*(?:\n|\Z)", re.DOTALL | re.MULTILINE
)
# A YAML-looking first line (key, list item or comment), so a doc that merely opens with a
# thematic break `---` does not lose its first paragraph.
_YAML_FIRST_LINE = re.compile(r"\A(?:[ \t]*\n)*(?:[^\s:#][^\n]*:(?:[ \t]|$)|- |#|\Z)", re.MULTILINE)
_SPACES = re.compile(r"\s+")
# Characters that can start inline markup; a heading without any is already plain text.
_INLINE_MARKUP = re.compile(r"[\\`*_\[\]!<&~]")


@dataclass(frozen=True)
class Chunk:
    ordinal: int  # 0-based position in the doc
    heading_path: str  # "Doc title > Section > Subsection"; just the title before any heading
    markdown: str  # heading line(s) + text up to the next #/##/### heading, blank lines trimmed
    hash: str  # sha256 hex of heading_path + "\n" + markdown


def _normalise_newlines(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n")


def strip_front_matter(markdown: str) -> str:
    """Remove a leading YAML front matter block (`---` ... `---`), which is metadata, not prose.

    Without a closing fence, or when the block does not look like YAML, the text is returned
    unchanged (newlines normalised): losing the author's text is worse than indexing metadata.
    """
    text = _normalise_newlines(markdown)
    match = _FRONT_MATTER.match(text)
    if match is None or not _YAML_FIRST_LINE.match(match.group("body")):
        return text
    return text[match.end() :]


def _heading_text(source: str, env: dict[str, Any]) -> str:
    if not _INLINE_MARKUP.search(source):  # the common case; skips a parser run
        return _SPACES.sub(" ", source).strip()
    inline = _INLINE.parseInline(source, env)
    children = inline[0].children if inline and inline[0].children else []
    return _SPACES.sub(" ", inline_text(children)).strip()


def _trim(lines: list[str]) -> str:
    """Join lines, dropping blank lines at both ends (indentation of the first line is kept)."""
    start, end = 0, len(lines)
    while start < end and not lines[start].strip():
        start += 1
    while end > start and not lines[end - 1].strip():
        end -= 1
    return "\n".join(lines[start:end])


def _hash(heading_path: str, markdown: str) -> str:
    return hashlib.sha256(f"{heading_path}\n{markdown}".encode("utf-8")).hexdigest()


@dataclass
class _Section:
    path: str
    start: int  # first source line (the heading line, or 0 for the preamble)
    body_start: int  # first line after the heading
    blocks: list[int]  # start lines of the top-level blocks after the heading
    parent: str = ""  # breadcrumb of the enclosing headings (the title for a top-level section)


def _split(lines: list[str], section: _Section, end: int, max_chars: int) -> list[str]:
    """The section's markdown, cut between top-level blocks into pieces of <= max_chars.

    Cuts fall only at the start of a top-level block, so a fence, table, list or blockquote is
    never split; a block bigger than max_chars becomes a piece of its own, whole.
    """
    whole = _trim(lines[section.start : end])
    if len(whole) <= max_chars or len(section.blocks) < 2:
        return [whole] if whole else []
    head = _trim(lines[section.start : section.body_start])
    head_len = len(head) + 2 if head else 0
    # Unit i runs from one block start to the next; blank lines ride with the block before.
    bounds = [section.body_start, *section.blocks[1:], end]
    ranges: list[tuple[int, int]] = []
    piece_start, piece_len = bounds[0], 0
    for a, b in zip(bounds, bounds[1:]):
        unit_len = sum(len(line) + 1 for line in lines[a:b])  # >= its trimmed length
        if piece_len and head_len + piece_len + unit_len > max_chars:
            ranges.append((piece_start, a))
            piece_start, piece_len = a, 0
        piece_len += unit_len
    ranges.append((piece_start, end))

    pieces = [_trim(lines[section.start : ranges[0][1]])]
    for a, b in ranges[1:]:
        body = _trim(lines[a:b])
        pieces.append(f"{head}\n\n{body}" if head else body)
    return [p for p in pieces if p]


def _sections(title: str, markdown: str) -> tuple[list[str], list[_Section]] | None:
    """The doc's lines and its sections (preamble first), or None for a blank doc."""
    text = strip_front_matter(markdown)
    if not text.strip():
        return None
    env: dict[str, Any] = {}
    tokens = _BLOCK.parse(text, env)
    lines = text.split("\n")  # markdown-it's own line model; str.splitlines() splits on more

    sections = [_Section(title, 0, 0, [], title)]
    stack: list[str | None] = [None, None, None]  # breadcrumb text for h1, h2, h3
    title_seen = False
    for i, tok in enumerate(tokens):
        if tok.level != 0 or tok.map is None or tok.nesting < 0:
            continue
        start, stop = tok.map
        if tok.type == "heading_open" and tok.tag in SPLIT_LEVELS:
            level = int(tok.tag[1])
            name: str | None = _heading_text(tokens[i + 1].content, env)
            if level == 1 and not title_seen:
                title_seen = True
                if same_text(name or "", title):
                    name = None  # the doc's own title heading: don't say it twice
            stack[level - 1] = name
            for deeper in range(level, 3):
                stack[deeper] = None
            path = " > ".join([title, *(s for s in stack if s)])
            parent = " > ".join([title, *(s for s in stack[:level - 1] if s)])
            sections.append(_Section(path, start, stop, [], parent))
        else:
            sections[-1].blocks.append(start)
    return lines, sections


def _title(title: str) -> str:
    return _SPACES.sub(" ", title).strip() or UNTITLED


def chunk_markdown(title: str, markdown: str, max_chars: int = 1800) -> list[Chunk]:
    """Split a doc at its level 1-3 headings into chunks carrying a breadcrumb and a hash.

    Front matter is dropped and newlines normalised first. Text before the first heading is
    chunk 0 (skipped when blank). A heading with no body of its own is no chunk: its name
    lives on in the breadcrumbs of the sections under it. Long sections are cut between
    top-level blocks, with the heading re-emitted at the top of each piece so every piece
    says where it came from.
    """
    if max_chars < 1:
        raise ValueError("max_chars must be at least 1")
    title = _title(title)
    parsed = _sections(title, markdown)
    if parsed is None:
        return []
    lines, sections = parsed
    if not any(section.blocks for section in sections):
        # Headings and nothing else: the outline is all the doc says, so it is one chunk.
        whole = _trim(lines)
        return [Chunk(0, title, whole, _hash(title, whole))]
    chunks: list[Chunk] = []
    for n, section in enumerate(sections):
        if not section.blocks:
            # A heading with no body is never a chunk of its own (it would win recall with
            # nothing to say); its text already leads the breadcrumb of the sections below it.
            continue
        end = sections[n + 1].start if n + 1 < len(sections) else len(lines)
        for piece in _split(lines, section, end, max_chars):
            chunks.append(Chunk(len(chunks), section.path, piece, _hash(section.path, piece)))
    return chunks


def chunk_conversation(title: str, markdown: str, window_chars: int = 600, max_chars: int = 1800) -> list[Chunk]:
    """Chunks of a conversation: windows of consecutive turns that overlap by one turn.

    A turn is a section of the doc (the chat renderer gives each turn its own heading, under a
    heading per day when the dates are known). One turn is often meaningless alone ("Yes! It was
    amazing."), so a window holds as many consecutive turns under the same parent heading as fit
    in `window_chars` (at least one), and the next window starts with this window's last turn, so
    every turn is also seen next to the turn that answers it. The breadcrumb is the parent's
    (title and day); each turn keeps its speaker heading in the text. A turn longer than
    `max_chars` is cut like any long section. Sections with no text (a day heading) are skipped.
    """
    if max_chars < 1 or window_chars < 1:
        raise ValueError("max_chars and window_chars must be at least 1")
    title = _title(title)
    parsed = _sections(title, markdown)
    if parsed is None:
        return []
    lines, sections = parsed
    if not any(section.blocks for section in sections):
        return chunk_markdown(title, markdown, max_chars)  # an outline: one chunk, as any doc
    turns: list[tuple[_Section, int, str]] = []  # (section, end line, its markdown)
    for n, section in enumerate(sections):
        end = sections[n + 1].start if n + 1 < len(sections) else len(lines)
        if section.blocks:
            turns.append((section, end, _trim(lines[section.start:end])))
    pieces: list[tuple[str, str]] = []  # (breadcrumb, markdown)
    i = 0
    while i < len(turns):
        section, end, text = turns[i]
        if len(text) > max_chars:
            pieces += [(section.parent, p) for p in _split(lines, section, end, max_chars)]
            i += 1
            continue
        j = i + 1
        while (j < len(turns) and turns[j][0].parent == section.parent
               and len(_trim(lines[section.start:turns[j][1]])) <= window_chars):
            j += 1
        pieces.append((section.parent, _trim(lines[section.start:turns[j - 1][1]])))  # cut from the source
        # overlap: the next window opens with this one's last turn (a single-turn window has
        # nothing to share, and a window never reaches across a parent heading)
        i = j - 1 if j - i > 1 and j < len(turns) and turns[j][0].parent == section.parent else j
    return [Chunk(o, path, md, _hash(path, md)) for o, (path, md) in enumerate(pieces)]
