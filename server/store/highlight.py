"""Snippets of a text with Han, Kana or Hangul in it, cut and marked from match offsets.

PostgreSQL's ts_headline reads such a text as a few long "words" that never equal a bigram,
so for it the search reads the matches' offsets instead (the bigrams the question shares with
the text, the English words ts_headline marked in the rest) and the snippet is made here.
"""

from __future__ import annotations

FRAGMENTS = 2  # as many as ts_headline's MaxFragments
FRAGMENT_CHARS = 120  # about two sentences of Chinese, or twenty English words
LEAD_CHARS = 30  # text shown before a fragment's first match
SNAP_CHARS = 12  # how far a fragment's edge moves to fall between two words
DELIMITER = " … "


def marked_spans(marked: str, length: int, start: str, end: str) -> list[tuple[int, int]]:
    """[start, end) offsets, in the text without marks, of what `marked` has between them;
    none unless that text is `length` characters long, as the text it should mark is."""
    spans, plain, opened = [], 0, None
    for ch in marked:
        if ch == start:
            opened = plain
        elif ch == end:
            if opened is not None and plain > opened:
                spans.append((opened, plain))
            opened = None
        else:
            plain += 1
    return spans if plain == length else []


def merge(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Overlapping or touching spans as one: the bigrams of one word make one mark."""
    out: list[tuple[int, int]] = []
    for s, e in sorted(spans):
        if out and s <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], e))
        else:
            out.append((s, e))
    return out


def _snap(text: str, pos: int, step: int) -> int:
    """pos moved (step -1: back, +1: on) to the nearest gap between words within SNAP_CHARS,
    else left where it is (text without spaces can be cut anywhere)."""
    for i in range(SNAP_CHARS + 1):
        p = pos + step * i
        if p <= 0 or p >= len(text):
            return max(0, min(p, len(text)))
        if text[p - 1].isspace() or text[p].isspace():
            return p
    return pos


def snippet(text: str, spans: list[tuple[int, int]], start: str, end: str) -> str:
    """Up to FRAGMENTS windows of the text around its matches, matches between the marks; the
    text's beginning when nothing matches."""
    spans = merge([(s, e) for s, e in spans if 0 <= s < e <= len(text)])
    if not spans:
        return text[: FRAGMENT_CHARS * FRAGMENTS].strip()
    windows: list[tuple[int, int]] = []
    for s, e in spans:
        if windows and s < windows[-1][1]:
            continue  # inside the window already
        if len(windows) == FRAGMENTS:
            break
        lo = _snap(text, max(0, s - LEAD_CHARS), -1)
        hi = _snap(text, min(len(text), max(e, lo + FRAGMENT_CHARS)), 1)
        windows.append((lo, hi))
    parts = []
    for lo, hi in windows:
        out, at = [], lo
        for s, e in spans:
            if e <= lo or s >= hi:
                continue
            s, e = max(s, lo), min(e, hi)
            out += [text[at:s], start, text[s:e], end]
            at = e
        out.append(text[at:hi])
        parts.append("".join(out).strip())
    return DELIMITER.join(parts)
