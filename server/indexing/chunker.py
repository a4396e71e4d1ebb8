"""Split a markdown doc into heading chunks for embedding and recall.

Headings are found in markdown-it-py's token stream (with source maps), never by regex, so a
`#` inside a code fence, an indented code block, a blockquote or a list item is not a split
point. Chunk text is always cut from the original source lines, so what the indexer stores is
exactly what the author wrote, and an unchanged section keeps an unchanged hash.
"""

from __future__ import annotations

import hashlib
import itertools
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import regex
from markdown_it import MarkdownIt
from memorywiki.formats.mdutil import inline_text, same_text

__all__ = ["Chunk", "ChunkSize", "chunk_conversation", "chunk_markdown", "strip_front_matter"]

SPLIT_LEVELS = ("h1", "h2", "h3")
UNTITLED = "Untitled"

# The rules below, by number: a chunk made by other rules (or sizes) is made again on upgrade.
CHUNKER_VERSION = 3
# 2,000 rather than the model's window (all-MiniLM-L6-v2 reads 256 word pieces, about 1,000
# characters of English): a chunk past the window is embedded as the mean of its windows
# (server/embedding/windows.py), so nothing is lost to the model, and an ordinary abstract or
# paragraph stays one chunk, which full text ranks better than its halves
# (bench/results/longdocs.md).
DEFAULT_MAX_CHARS = 2000
DEFAULT_OVERLAP_CHARS = 0

# Block pass only: inline parsing of every paragraph is most of markdown-it's cost and we only
# need the inline text of headings, which `_INLINE` parses on demand.
_BLOCK = MarkdownIt("commonmark").enable(["table", "strikethrough"]).disable("inline")
_INLINE = MarkdownIt("commonmark").enable(["table", "strikethrough"])

# Front matter must open on the very first line and close with `---` (or YAML's `...`).
_FRONT_MATTER = re.compile(r"\A\ufeff?---[ \t]*\n(?P<body>.*?)^(?:---|\.\.\.)[ \t]*(?:\n|\Z)", re.DOTALL | re.MULTILINE)
# A YAML-looking first line (key, list item or comment), so a doc that merely opens with a
# thematic break `---` does not lose its first paragraph.
_YAML_FIRST_LINE = re.compile(r"\A(?:[ \t]*\n)*(?:[^\s:#][^\n]*:(?:[ \t]|$)|- |#|\Z)", re.MULTILINE)
_SPACES = re.compile(r"\s+")
# Characters that can start inline markup; a heading without any is already plain text.
_INLINE_MARKUP = re.compile(r"[\\`*_\[\]!<&~]")
# Where text over the maximum is cut, coarsest first: after a line break; after a sentence
# end (with its closing quotes or brackets) and the spaces after it, or after a full-width
# terminator, which needs no space; at spaces. Text with none of them is cut between graphemes.
_CUTS = (
    re.compile(r"\n"),
    re.compile(
        r"[.!?\u2026][\"'\u201d\u2019)\]]*\s+|[\u3002\uff01\uff1f\uff61\uff0e][\u300d\u300f\u201d\u2019)\]]*\s*"
    ),
    re.compile(r"\s+"),
)
_WORD = re.compile(r"\S+")
_GRAPHEME = regex.compile(r"\X")
# A transcript line that opens a turn: "Alice: ...", "**Bob:** ...", "[00:01:02] Dr. Chen: ...".
_SPEAKER = re.compile(
    r"[ \t]*(?:\[?\d{1,2}(?::\d{2}){1,2}\]?[ \t]+)?(?:\*\*|__)?"
    r"[^\W\d_][\w .'\u2019-]{0,38}?(?:\*\*|__)?:(?:\*\*|__)?(?:[ \t]|$)"
)


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
    return hashlib.sha256(f"{heading_path}\n{markdown}".encode()).hexdigest()


@dataclass(frozen=True)
class ChunkSize:
    """How big a chunk may be: `max_chars` of markdown at most, whatever the text; a block cut in
    pieces repeats up to `overlap_chars` of one piece at the start of the next. `version` names
    the rules and the sizes, so data chunked another way is known (and re-chunked).
    `turn_chars`: in a conversation, the most characters of one chunk, so a long turn is cut in
    pieces of at most that (0: `max_chars`)."""

    max_chars: int = DEFAULT_MAX_CHARS
    overlap_chars: int = DEFAULT_OVERLAP_CHARS
    turn_chars: int = 0

    def __post_init__(self) -> None:
        if self.max_chars < 1:
            raise ValueError("max_chars must be at least 1")
        if not 0 <= self.overlap_chars <= self.max_chars // 2:
            raise ValueError("overlap_chars must be between 0 and half of max_chars")
        if self.turn_chars < 0:
            raise ValueError("turn_chars must be 0 (max_chars) or more")

    @property
    def version(self) -> str:
        base = f"{CHUNKER_VERSION}/{self.max_chars}/{self.overlap_chars}"
        return f"{base}/{self.turn_chars}" if self.turn_chars else base  # 0 keeps the versions data has

    def for_turns(self) -> ChunkSize:
        """The size of a conversation's chunks: at most `turn_chars` when it is set."""
        if not self.turn_chars or self.turn_chars >= self.max_chars:
            return self
        return ChunkSize(self.turn_chars, min(self.overlap_chars, self.turn_chars // 2))


@dataclass
class _Block:
    start: int  # first source line of a top-level block
    stop: int  # past its last line (markdown-it's map: blank lines after it are not its own)
    kind: str  # the opening token's type: paragraph_open, fence, table_open, bullet_list_open...
    markup: str = ""  # a fence's marker (``` or ~~~...)
    items: list[int] = field(default_factory=list)  # a list's item start lines


@dataclass
class _Section:
    path: str
    start: int  # first source line (the heading line, or 0 for the preamble)
    body_start: int  # first line after the heading
    blocks: list[_Block]  # the top-level blocks after the heading
    parent: str = ""  # breadcrumb of the enclosing headings (the title for a top-level section)


def _split(lines: list[str], section: _Section, end: int, size: ChunkSize) -> list[str]:
    """The section's markdown in pieces of at most size.max_chars, each opening with the heading.

    Whole top-level blocks are packed together, cut from the source; a block too big for a piece
    of its own is cut by its kind (_split_block). A heading too long to repeat on every piece is
    text of its own, and the breadcrumb still says where each piece sits.
    """
    whole = _trim(lines[section.start : end])
    if len(whole) <= size.max_chars:
        return [whole] if whole else []
    head = _trim(lines[section.start : section.body_start])
    repeat = head if len(head) <= size.max_chars // 4 else ""
    budget = size.max_chars - (len(repeat) + 2 if repeat else 0)

    def with_head(body: str) -> str:
        return f"{repeat}\n\n{body}" if repeat else body

    pieces = [] if repeat or not head else _split_text(head, size.max_chars, size.overlap_chars)
    # Unit i runs from one block start to the next; blank lines ride with the block before.
    bounds = [section.body_start, *(b.start for b in section.blocks[1:]), end]
    first = section.start if repeat else section.body_start  # the first piece is cut with its heading
    run_start: int | None = None
    run_len = 0

    def close_run(stop: int) -> None:
        nonlocal run_start, run_len
        if run_start is not None:
            body = _trim(lines[run_start:stop])
            if body:
                pieces.append(
                    _trim(lines[first:stop]) if run_start == section.body_start and repeat else with_head(body)
                )
        run_start, run_len = None, 0

    for block, (a, b) in zip(section.blocks, itertools.pairwise(bounds), strict=True):
        unit_len = sum(len(line) + 1 for line in lines[a:b])  # >= its trimmed length
        if len(_trim(lines[a:b])) > budget:
            close_run(a)
            pieces += [with_head(p) for p in _split_block(lines, block, budget, size.overlap_chars)]
            continue
        if run_start is not None and run_len + unit_len > budget:
            close_run(a)
        if run_start is None:
            run_start = a
        run_len += unit_len
    close_run(end)
    return [p for p in pieces if p]


def _split_block(lines: list[str], block: _Block, budget: int, overlap: int) -> list[str]:
    """One top-level block bigger than `budget`, in pieces of at most `budget`: a fence between
    lines, re-opened and closed on every piece; a table between rows under its header and
    delimiter rows; a list between items; anything else as text (_split_text)."""
    own = lines[block.start : block.stop]
    if block.kind == "fence" and len(own) > 1:
        return _split_fence(own, block.markup, budget, overlap)
    if block.kind == "table_open" and len(own) > 2:
        prefix = f"{own[0]}\n{own[1]}"
        room = budget - len(prefix) - 1
        if room >= budget // 2:
            return [f"{prefix}\n{p}" for p in _pack_lines(own[2:], room, overlap)]
    if block.kind in ("bullet_list_open", "ordered_list_open") and len(block.items) > 1:
        items = [_trim(lines[a:b]) for a, b in zip(block.items, [*block.items[1:], block.stop], strict=True)]
        return _pack(items, budget, overlap, "\n")
    return _split_text(_trim(own), budget, overlap)


def _split_fence(own: list[str], markup: str, budget: int, overlap: int) -> list[str]:
    opener = own[0]
    last = own[-1].strip()
    closed = len(own) > 1 and len(last) >= len(markup) and set(last) == {markup[0]}
    inner = own[1:-1] if closed else own[1:]
    closer = own[-1] if closed else opener[: len(opener) - len(opener.lstrip())] + markup
    room = budget - len(opener) - len(closer) - 2
    if room < budget // 2:  # an info string as long as the code: cut it all as text
        return _split_text(_trim(own), budget, overlap)
    return [f"{opener}\n{p}\n{closer}" for p in _pack_lines(inner, room, overlap)]


def _pack_lines(lines: list[str], room: int, overlap: int) -> list[str]:
    """Consecutive lines joined while they fit in `room` (indentation kept: code and table rows);
    a line longer than `room` is cut as text. No piece opens or ends with a blank line."""
    pieces = (_trim(piece.split("\n")) for piece in _pack(lines, room, overlap, "\n"))
    return [piece for piece in pieces if piece]


def _target(remaining: int, room: int) -> float:
    """The piece length that cuts `remaining` characters into as few pieces of at most `room` as
    it can, all about the same size: 2,004 characters become two of ~1,000, not 2,000 and a
    4-character tail, which would rank as a chunk of its own (bench/results/quality.md)."""
    return remaining / max(1, -(-remaining // room))


def _closes(length: int, longer: int, room: int, target: float) -> bool:
    """Whether a piece of `length` ends here rather than grow to `longer`: it must when `longer`
    does not fit, and does when `length` is nearer the target."""
    return longer > room or (longer > target and longer - target > target - length)


def _pack(units: list[str], room: int, overlap: int, joiner: str) -> list[str]:
    pieces: list[str] = []
    run: list[str] = []
    run_len = 0
    # characters from each unit to the end, joiners included: what is left to pack
    left = [0] * (len(units) + 1)
    for i in range(len(units) - 1, -1, -1):
        left[i] = left[i + 1] + len(units[i]) + (len(joiner) if i < len(units) - 1 else 0)
    target = float(room)
    for i, unit in enumerate(units):
        if len(unit) > room:
            if run:
                pieces.append(joiner.join(run))
                run, run_len = [], 0
            pieces += _split_text(unit, room, overlap)
            continue
        if run and _closes(run_len, run_len + len(joiner) + len(unit), room, target):
            pieces.append(joiner.join(run))
            run, run_len = [], 0
        if not run:
            target = _target(left[i], room)
        run_len += (len(joiner) if run else 0) + len(unit)
        run.append(unit)
    if run:
        pieces.append(joiner.join(run))
    return pieces


def _split_text(text: str, room: int, overlap: int) -> list[str]:
    """Text in pieces of at most `room` characters: between speaker turns when the lines read as
    a transcript, else at line breaks, then sentence ends, then spaces, then between graphemes
    (text without spaces), never inside one unless a single grapheme is longer than `room`."""
    text = text.strip()
    if len(text) <= room:
        return [text] if text else []
    turns = _turns(text)
    if turns is not None:
        return _pack(turns, room, overlap, "\n")
    return _cut(text, room, overlap, 0)


def _cut(text: str, room: int, overlap: int, level: int) -> list[str]:
    """`text` (stripped, longer than `room`) cut at the places _CUTS[level] finds, its runs packed
    into pieces of at most `room`; a run too long alone is cut at the next level. Each piece is
    a slice of `text`, and the next one may open with up to `overlap` characters of it."""
    if level == len(_CUTS):
        return _cut_graphemes(text, room)
    if level == len(_CUTS) - 1 and overlap == 0:
        return _cut_words(text, room, level)
    pieces: list[str] = []
    starts: list[int] = []  # where the runs of the piece being packed start
    end = 0
    target = float(room)
    for a, b in _runs(text, level):
        if b - a > room:
            if starts:
                pieces.append(text[starts[0] : end])
                starts = []
            pieces += _cut(text[a:b], room, overlap, level + 1)
            continue
        if starts and _closes(end - starts[0], b - starts[0], room, target):
            pieces.append(text[starts[0] : end])
            # the next piece opens with this one's last runs that fit in the overlap
            starts = [s for s in starts[1:] if s >= end - overlap and b - s <= room][:1]
        if not starts:
            target = _target(len(text) - a, room)
        if not starts or starts[-1] != a:
            starts.append(a)
        end = b
    if starts:
        pieces.append(text[starts[0] : end])
    return pieces


def _cut_words(text: str, room: int, level: int) -> list[str]:
    """What _cut packs at spaces with no overlap, a piece at a time rather than a word at a time
    (a 5 MB line has a million words): each piece runs from a word's start to the word end
    nearest the target (_target, _closes) within `room`, and a word longer than `room` alone is
    cut at the next level."""
    pieces: list[str] = []
    start, n = 0, len(text)
    while start < n:
        if n - start <= room:  # the text is stripped: its end is a word end
            pieces.append(text[start:])
            break
        first = _word_end(text, start)
        if first - start > room:
            pieces += _cut(text[start:first], room, 0, level + 1)
            end = first
        else:
            target = _target(n - start, room)
            window = text[start : start + int(target) + 1]
            if not window[-1].isspace():  # the word at the target does not fit under it: end before it
                window = window[: len(window) - _word_end(window[::-1], 0)]
            end = max(start + len(window.rstrip()), first)
            following = _WORD.search(text, end)
            if following and not _closes(end - start, following.end() - start, room, target):
                end = following.end()
            pieces.append(text[start:end])
        following = _WORD.search(text, end)
        start = following.start() if following else n
    return pieces


def _word_end(text: str, pos: int) -> int:
    """Where the word at `pos` ends (the text is stripped, so a word stands there)."""
    word = _WORD.match(text, pos)
    return word.end() if word else pos


def _runs(text: str, level: int) -> Iterator[tuple[int, int]]:
    """(start, end) of the runs between the places _CUTS[level] finds, without their spaces."""
    if level == len(_CUTS) - 1:  # between spaces the runs are the words (a 5 MB line has a million)
        yield from (m.span() for m in _WORD.finditer(text))
        return
    bounds = [0, *(m.end() for m in _CUTS[level].finditer(text)), len(text)]
    for a, b in itertools.pairwise(bounds):
        run = text[a:b]
        a, b = a + len(run) - len(run.lstrip()), a + len(run.rstrip())
        if b > a:
            yield a, b


def _cut_graphemes(text: str, room: int) -> list[str]:
    """Text without spaces in slices of at most `room`, each cut at a grapheme boundary (an
    accent or a joined emoji stays whole); only a grapheme longer than `room` is cut inside."""
    pieces: list[str] = []
    start = 0
    while len(text) - start > room:
        limit = start + room
        cut = max(
            (m.end() for m in _GRAPHEME.finditer(text, max(start, limit - 64), limit + 1) if m.end() <= limit),
            default=limit,
        )
        cut = cut if cut > start else limit
        pieces.append(text[start:cut])
        start = cut
    pieces.append(text[start:])
    return pieces


def _turns(text: str) -> list[str] | None:
    """A transcript's turns (a line that opens with a speaker's name, and the lines after it
    that do not), when there are several and one of them spans lines; else None (cutting at
    any line break is then the same)."""
    turns: list[list[str]] = []
    for line in text.split("\n"):
        if not turns or _SPEAKER.match(line):
            turns.append([line])
        else:
            turns[-1].append(line)
    if len(turns) < 2 or not _SPEAKER.match(turns[0][0]) or all(len(t) == 1 for t in turns):
        return None
    return ["\n".join(t).strip() for t in turns if "".join(t).strip()]


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
        if tok.type == "list_item_open" and tok.level == 1 and tok.map and sections[-1].blocks:
            sections[-1].blocks[-1].items.append(tok.map[0])  # an item of the top-level list
            continue
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
            parent = " > ".join([title, *(s for s in stack[: level - 1] if s)])
            sections.append(_Section(path, start, stop, [], parent))
        else:
            sections[-1].blocks.append(_Block(start, stop, tok.type, tok.markup if tok.type == "fence" else ""))
    return lines, sections


def _title(title: str) -> str:
    return _SPACES.sub(" ", title).strip() or UNTITLED


def chunk_markdown(title: str, markdown: str, size: ChunkSize = ChunkSize()) -> list[Chunk]:
    """Split a doc at its level 1-3 headings into chunks carrying a breadcrumb and a hash.

    Front matter is dropped and newlines normalised first. Text before the first heading is
    chunk 0 (skipped when blank). A heading with no body of its own is no chunk: its name
    lives on in the breadcrumbs of the sections under it. No chunk is longer than
    size.max_chars: long sections are cut between top-level blocks, and a block too big alone
    by its kind (see _split_block), with the heading re-emitted at the top of each piece so
    every piece says where it came from.
    """
    title = _title(title)
    parsed = _sections(title, markdown)
    if parsed is None:
        return []
    lines, sections = parsed
    if not any(section.blocks for section in sections):
        # Headings and nothing else: the outline is all the doc says, so it is one chunk
        # (or, past the maximum, pieces of it as text).
        pieces = _split_text(_trim(lines), size.max_chars, size.overlap_chars)
        return [Chunk(n, title, piece, _hash(title, piece)) for n, piece in enumerate(pieces)]
    chunks: list[Chunk] = []
    for n, section in enumerate(sections):
        if not section.blocks:
            # A heading with no body is never a chunk of its own (it would win recall with
            # nothing to say); its text already leads the breadcrumb of the sections below it.
            continue
        end = sections[n + 1].start if n + 1 < len(sections) else len(lines)
        for piece in _split(lines, section, end, size):
            chunks.append(Chunk(len(chunks), section.path, piece, _hash(section.path, piece)))
    return chunks


def chunk_conversation(
    title: str, markdown: str, window_chars: int = 600, size: ChunkSize = ChunkSize()
) -> list[Chunk]:
    """Chunks of a conversation: windows of consecutive turns that overlap by one turn.

    A turn is a section of the doc (the chat renderer gives each turn its own heading, under a
    heading per day when the dates are known). One turn is often meaningless alone ("Yes! It was
    amazing."), so a window holds as many consecutive turns under the same parent heading as fit
    in `window_chars` (at least one), and the next window starts with this window's last turn, so
    every turn is also seen next to the turn that answers it. The breadcrumb is the parent's
    (title and day); each turn keeps its speaker heading in the text. A window is never longer
    than size.max_chars, and a turn longer than that is cut like any long section, its speaker
    heading on every piece. Sections with no text (a day heading) are skipped.
    """
    if window_chars < 1:
        raise ValueError("window_chars must be at least 1")
    size = size.for_turns()
    window_chars = min(window_chars, size.max_chars)
    title = _title(title)
    parsed = _sections(title, markdown)
    if parsed is None:
        return []
    lines, sections = parsed
    if not any(section.blocks for section in sections):
        return chunk_markdown(title, markdown, size)  # an outline: one chunk, as any doc
    turns: list[tuple[_Section, int, str]] = []  # (section, end line, its markdown)
    for n, section in enumerate(sections):
        end = sections[n + 1].start if n + 1 < len(sections) else len(lines)
        if section.blocks:
            turns.append((section, end, _trim(lines[section.start : end])))
    pieces: list[tuple[str, str]] = []  # (breadcrumb, markdown)
    i = 0
    while i < len(turns):
        section, end, text = turns[i]
        if len(text) > size.max_chars:
            pieces += [(section.parent, p) for p in _split(lines, section, end, size)]
            i += 1
            continue
        j = i + 1
        while (
            j < len(turns)
            and turns[j][0].parent == section.parent
            and len(_trim(lines[section.start : turns[j][1]])) <= window_chars
        ):
            j += 1
        pieces.append((section.parent, _trim(lines[section.start : turns[j - 1][1]])))  # cut from the source
        # overlap: the next window opens with this one's last turn (a single-turn window has
        # nothing to share, and a window never reaches across a parent heading)
        i = j - 1 if j - i > 1 and j < len(turns) and turns[j][0].parent == section.parent else j
    return [Chunk(o, path, md, _hash(path, md)) for o, (path, md) in enumerate(pieces)]
