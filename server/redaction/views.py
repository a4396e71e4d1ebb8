"""Other readings of a text, each with a map back to the text's own offsets.

A detector reads one string; a secret may reach it wrapped across lines, escaped inside a JSON
string or by a markdown converter, or percent-encoded in a URL. Each view rewrites those spots only (everything else is
the text itself), so a match in a view maps back to the characters it came from and those
are what get redacted. Base64 is the detector's own business (it decodes blobs itself).
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Callable
from dataclasses import dataclass

# The characters tokens are made of (base64, base64url, hex, the separators of key formats).
TOKEN = r"A-Za-z0-9+/=_\-.~"

# A line break inside a token: the line ends in a run of at least 8 token characters (a
# wrapped secret's first pieces are long; prose rarely ends a line in one), optionally
# closing a quoted string that the next line reopens (`"abc" +\n "def"`), or a shell's
# backslash continuation; or the same written as a JSON string's `\n`. Indentation around
# the break goes with it.
_SPLIT = re.compile(
    rf"(?<=[{TOKEN}]{{8}})(?:[\"'][ \t]*\+?|\\)?[ \t]*(?:\r?\n|\\r?\\n)[ \t]*(?:\+[ \t]*)?[\"']?(?=[{TOKEN}])"
)
# JSON's string escapes, and markdown's backslash before any ASCII punctuation (a converter
# writes `sk\_live\_...` for `sk_live_...`, which no rule would match).
_ESCAPE = re.compile(r"\\(?:u([0-9a-fA-F]{4})|([bfnrt])|([!-/:-@\[-`{-~]))")
_JSON_LETTERS = {"b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}
# ASCII only (what a key is made of); and a query string's `&` as a line break, so each
# `name=value` stands alone as in a config file, the way keyword rules expect to meet them.
_PERCENT = re.compile(r"%([0-7][0-9a-fA-F])|&")


@dataclass(frozen=True)
class View:
    """`text` is the rewritten text; segment i starts at view offset vstart[i] and original
    offset ostart[i], and is either the original's own characters (same length both sides)
    or a rewrite of olen[i] original characters into vlen[i] (0 for a removed line break)."""

    name: str
    text: str
    vstart: list[int]
    ostart: list[int]
    vlen: list[int]
    olen: list[int]

    def to_original(self, start: int, end: int) -> tuple[int, int]:
        """The original span a view span [start, end) was made from."""
        return self._start(start), self._end(end)

    def _segment(self, v: int) -> int:
        return max(0, bisect_right(self.vstart, v) - 1)

    def _start(self, v: int) -> int:
        i = self._segment(v)
        if self.vlen[i] == self.olen[i]:
            return self.ostart[i] + (v - self.vstart[i])
        return self.ostart[i]

    def _end(self, v: int) -> int:
        if v <= 0:
            return 0
        i = self._segment(v - 1)
        if self.vlen[i] == self.olen[i]:
            return self.ostart[i] + (v - self.vstart[i])
        return self.ostart[i] + self.olen[i]


def rewrite(
    name: str, text: str, pattern: re.Pattern[str], replace: Callable[[re.Match[str]], str | None]
) -> View | None:
    """The view where each match of `pattern` becomes `replace(match)` (None: leave it), or
    None when nothing changed (the text itself is read already)."""
    pieces: list[str] = []
    vstart: list[int] = []
    ostart: list[int] = []
    vlen: list[int] = []
    olen: list[int] = []
    pos = v = 0
    changed = False
    for m in pattern.finditer(text):
        new = replace(m)
        if new is None:
            continue
        a, b = m.span()
        if a > pos:
            vstart.append(v), ostart.append(pos), vlen.append(a - pos), olen.append(a - pos)
            pieces.append(text[pos:a])
            v += a - pos
        vstart.append(v), ostart.append(a), vlen.append(len(new)), olen.append(b - a)
        pieces.append(new)
        v += len(new)
        pos = b
        changed = True
    if not changed:
        return None
    if pos < len(text):
        vstart.append(v), ostart.append(pos), vlen.append(len(text) - pos), olen.append(len(text) - pos)
        pieces.append(text[pos:])
    return View(name, "".join(pieces), vstart, ostart, vlen, olen)


def joined(text: str) -> list[View]:
    """Readings with wrapped tokens joined: every such break; and every break but the last
    of each run of consecutive ones, for a secret whose last piece is followed by a line
    that starts like a token (joining that one too would run the secret into a word)."""
    if "\n" not in text:
        return []
    breaks = list(_SPLIT.finditer(text))
    if not breaks:
        return []
    last_of_run = {
        m.start()
        for m, nxt in zip(breaks, [*breaks[1:], None], strict=True)
        if nxt is None or "\n" in text[m.end() : nxt.start()]
    }
    views = [rewrite("joined", text, _SPLIT, lambda m: "")]
    if len(last_of_run) < len(breaks):
        views.append(rewrite("joined-but-last", text, _SPLIT, lambda m: None if m.start() in last_of_run else ""))
    return [v for v in views if v is not None]


def _unescaped(m: re.Match[str]) -> str | None:
    if m.group(1) is not None:
        char = chr(int(m.group(1), 16))
        return None if 0xD800 <= ord(char) <= 0xDFFF else char
    if m.group(2) is not None:
        return _JSON_LETTERS[m.group(2)]
    return m.group(3)


def unescaped(text: str) -> View | None:
    """Escapes read as the characters they stand for: JSON's (`\\/`, `\\n`, `\\u003d`) and
    markdown's (`\\_`, `\\*`)."""
    return rewrite("unescaped", text, _ESCAPE, _unescaped) if "\\" in text else None


def url_decoded(text: str) -> View | None:
    """Query strings read as their parameters: percent-encoded ASCII as itself (`%2F`, `%2B`),
    one `name=value` a line."""
    if "%" not in text and "&" not in text:
        return None
    return rewrite("url", text, _PERCENT, lambda m: "\n" if m.group(1) is None else chr(int(m.group(1), 16)))


def all_views(text: str) -> list[View]:
    """Every reading of `text` other than itself that differs from it."""
    views: list[View] = list(joined(text))
    views += [v for v in (unescaped(text), url_decoded(text)) if v is not None]
    return views
