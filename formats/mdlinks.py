"""Rewriting the links of a markdown text in place: link destinations and `[[wiki links]]`.

Only what a reader sees as a link changes; code (fences, indented blocks, inline code spans)
and raw HTML blocks are left exactly as written, and so is every other byte of the text, so
a rewrite in both directions (an export, then an import) gives the text back. Block code is
found by markdown-it's parse, inline code spans by their backtick runs.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from urllib.parse import quote, unquote

from markdown_it import MarkdownIt

_CODE_BLOCKS = frozenset({"fence", "code_block", "html_block"})
_BACKTICKS = re.compile(r"`+")
# `](destination` of an inline link or image: <...>, or a run without spaces holding at most
# one level of balanced parentheses
_INLINE = re.compile(r"(\]\([ \t]*)(<[^<>\n]*>|(?:[^\s()<>\\]|\\.|\((?:[^\s()<>\\]|\\.)*\))+)")
_AUTOLINK = re.compile(r"<((?:https?|ftp)://[^\s<>]+)>")
_REFERENCE = re.compile(r"^([ \t]{0,3}\[[^\]\n]+\]:[ \t]*)(<[^<>\n]*>|\S+)", re.MULTILINE)
_WIKI = re.compile(r"(!?)\[\[([^\[\]\n]+?)\]\]")
# what a destination written bare cannot hold: a space or a bracket ends it, a % starts an escape
_UNSAFE_IN_HREF = re.compile(r"[\s%()<>\[\]\\\"]")


@lru_cache(maxsize=1)
def _blocks() -> MarkdownIt:
    return MarkdownIt("commonmark", {"html": True}).enable(["table", "strikethrough"]).disable("inline")


def _line_starts(text: str) -> list[int]:
    starts = [0]
    for m in re.finditer("\n", text):
        starts.append(m.end())
    return starts


def _inline_code(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """Code spans in text[start:end]: a run of n backticks up to the next run of exactly n,
    never across a blank line."""
    spans: list[tuple[int, int]] = []
    pos = start
    while True:
        opening = _BACKTICKS.search(text, pos, end)
        if opening is None:
            return spans
        n = len(opening.group())
        limit = text.find("\n\n", opening.end(), end)
        limit = end if limit < 0 else limit
        closing = None
        for run in _BACKTICKS.finditer(text, opening.end(), limit):
            if len(run.group()) == n:
                closing = run
                break
        if closing is None:
            pos = opening.end()
            continue
        spans.append((opening.start(), closing.end()))
        pos = closing.end()


def code_ranges(text: str) -> list[tuple[int, int]]:
    """(start, end) character ranges of the text's code and raw HTML blocks and code spans,
    in order."""
    starts = _line_starts(text)
    blocks = []
    for token in _blocks().parse(text):
        if token.type in _CODE_BLOCKS and token.map:
            first, last = token.map
            blocks.append((starts[first], starts[last] if last < len(starts) else len(text)))
    ranges = []
    pos = 0
    for block_start, block_end in [*blocks, (len(text), len(text))]:
        ranges += _inline_code(text, pos, block_start)
        if block_end > block_start:
            ranges.append((block_start, block_end))
        pos = max(pos, block_end)
    return ranges


def outside_code(text: str, change: Callable[[str], str]) -> str:
    """`change` applied to each stretch of the text that is not code."""
    if not text:
        return text
    out = []
    pos = 0
    for start, end in code_ranges(text):
        out.append(change(text[pos:start]))
        out.append(text[start:end])
        pos = end
    out.append(change(text[pos:]))
    return "".join(out)


def href(path: str) -> str:
    """A relative path as a link destination: what would end or break it percent-encoded,
    letters of any script kept as they are."""
    return _UNSAFE_IN_HREF.sub(lambda m: quote(m.group()), path)


def href_path(destination: str) -> str:
    """The path a destination names: <...> unwrapped, percent escapes decoded."""
    if destination.startswith("<") and destination.endswith(">"):
        destination = destination[1:-1]
    return unquote(destination)


def rewrite_destinations(text: str, change: Callable[[str], str | None]) -> str:
    """Each link destination outside code (inline links and images, <autolinks>, reference
    definitions) replaced by `change(destination)`, or kept when it answers None. An
    autolink given a destination that is no URL becomes a link showing the URL it had."""
    return outside_code(text, lambda part: destinations_in(part, change))


def destinations_in(part: str, change: Callable[[str], str | None]) -> str:
    """rewrite_destinations on a stretch of text already known to hold no code."""

    def one(m: re.Match[str]) -> str:
        new = change(m.group(2))
        return m.group() if new is None else m.group(1) + new

    def autolink(m: re.Match[str]) -> str:
        new = change(m.group(1))
        if new is None:
            return m.group()
        return f"<{new}>" if _AUTOLINK.fullmatch(f"<{new}>") else f"[{link_text(m.group(1))}]({new})"

    part = _INLINE.sub(one, part)
    part = _AUTOLINK.sub(autolink, part)
    return _REFERENCE.sub(one, part)


@dataclass(frozen=True)
class WikiLink:
    """`[[target#heading|alias]]`, or with `!` in front an embed."""

    target: str  # "" for a link to a heading of the same note
    heading: str | None  # a heading, or "^id" for a block
    alias: str | None
    embed: bool
    written: str  # the link as it stands in the text

    @property
    def text(self) -> str:
        """What the link shows: its alias, else its target (and heading, as Obsidian shows it)."""
        if self.alias:
            return self.alias
        shown = [part for part in (self.target, self.heading) if part and not part.startswith("^")]
        return " > ".join(shown) or self.written


def parse_wiki_link(written: str) -> WikiLink:
    embed = written.startswith("!")
    inner = written[3 if embed else 2 : -2]
    # inside a table the pipe is written escaped
    target, _, alias = inner.replace("\\|", "|").partition("|")
    target, _, heading = target.partition("#")
    return WikiLink(target.strip(), heading.strip() or None, alias.strip() or None, embed, written)


def wiki_links_in(part: str, change: Callable[[WikiLink], str | None]) -> str:
    """Each `[[wiki link]]` and `![[embed]]` of a stretch of text known to hold no code
    (see outside_code) replaced by `change(link)`, or kept as written when it answers None."""

    def one(m: re.Match[str]) -> str:
        new = change(parse_wiki_link(m.group()))
        return m.group() if new is None else new

    return _WIKI.sub(one, part) if "[[" in part else part


def link_text(text: str) -> str:
    """Text to stand between a link's brackets."""
    return re.sub(r"([\[\]\\])", r"\\\1", " ".join(text.split()))
