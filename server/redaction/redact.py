"""Redact a text: `<private>` spans dropped, each secret replaced by a marker naming its kind."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from .detector import DETECTOR, Detector
from .views import TOKEN, all_views

PRIVATE = re.compile(r"<private>.*?</private>", re.IGNORECASE | re.DOTALL)
MIN_REPEAT = 8  # a found secret this long is redacted wherever else it appears, found or not
# ... when it reads as a credential, not a word: two of lower case, upper case, digits and
# other characters (a URL's placeholder password `password` is redacted there, not in prose)
_CLASSES = (re.compile("[a-z]"), re.compile("[A-Z]"), re.compile("[0-9]"), re.compile("[^A-Za-z0-9]"))
_TOKEN_CHAR = re.compile(f"[{TOKEN}]")
_WORD_CHAR = re.compile("[A-Za-z0-9]")  # what a token's first piece is not preceded by (`KEY=`, `/` are fine)
_WORD_REST = re.compile("[A-Za-z0-9+/=_-]*")  # the rest of a token a match stopped inside
_PROSE_WORD = re.compile(r"[ \t\"']*[A-Za-z][a-z]{0,11}")  # a line's first word, not a key's last piece


MARKER_START = "[redacted: "


def marker(kind: str) -> str:
    return f"{MARKER_START}{kind}]"


@dataclass
class Redaction:
    """What one write had redacted: secrets by kind, and `<private>` spans dropped."""

    kinds: Counter[str] = field(default_factory=Counter)
    private: int = 0

    @property
    def secrets(self) -> int:
        return sum(self.kinds.values())

    def add(self, other: Redaction) -> None:
        self.kinds.update(other.kinds)
        self.private += other.private

    def as_json(self) -> dict[str, Any]:
        return {"secrets": self.secrets, "kinds": dict(sorted(self.kinds.items())), "private": self.private}


def drop_private(text: str) -> tuple[str, int]:
    """The text without its `<private>…</private>` spans, and how many there were. An opening
    tag with no closing one is left as written: there is no telling where it was meant to end."""
    count = 0

    def drop(_m: re.Match[str]) -> str:
        nonlocal count
        count += 1
        return ""

    return (PRIVATE.sub(drop, text), count) if "<" in text else (text, 0)


def _spans(text: str, detector: Detector) -> list[tuple[int, int, str]]:
    """(start, end, kind) of every secret in the text and in each of its other readings."""
    spans: list[tuple[int, int, str]] = []
    values: dict[str, str] = {}
    for finding in detector.find(text):
        spans += _secret_spans(text, finding.start, finding.end, finding.secret, finding.encoded, finding.kind)
        values.setdefault(finding.secret, finding.kind)
    raw = list(spans)
    for view in all_views(text):
        for finding in detector.find(view.text):
            kept = False
            for start, end, kind in _secret_spans(
                view.text, finding.start, finding.end, finding.secret, finding.encoded, finding.kind
            ):
                o_start, o_end = view.to_original(start, end)
                if o_end > o_start and _whole(text, o_start, o_end, kind, raw):
                    spans.append((o_start, o_end, kind))
                    kept = True
            if kept:
                values.setdefault(finding.secret, finding.kind)
    # a value once found is a secret wherever it appears (an echo of it, a second paste)
    for value, kind in values.items():
        if len(value) >= MIN_REPEAT and sum(1 for c in _CLASSES if c.search(value)) >= 2:
            at = text.find(value)
            while at >= 0:
                spans.append((at, at + len(value), kind))
                at = text.find(value, at + len(value))
    return spans


def _whole(text: str, start: int, end: int, kind: str, raw: list[tuple[int, int, str]]) -> bool:
    """Whether a match that a joined reading ran across a line break is a secret split there.
    A split secret is a whole token where it ends, and the lines it joins hold no other
    secret; a match that ran on into the next line's word (a webhook URL glued to
    `TELEGRAM_BOT_TOKEN`, a JWT glued to the `-----BEGIN` of a key below it) is neither,
    and the line it came from has its own finding already. (Another rule's finding that starts
    where this one does is the same key's first piece under another name.)"""
    if "\n" not in text[start:end]:
        return True
    if (start > 0 and _WORD_CHAR.match(text, start - 1)) or _TOKEN_CHAR.match(text, end):
        return False
    return not any(s < end and start < e and k != kind and s != start for s, e, k in raw)


def _secret_spans(text: str, start: int, end: int, secret: str, encoded: bool, kind: str) -> list[tuple[int, int, str]]:
    """The part of a finding to redact: the credential itself where the rule's match holds
    more (a URL's password, not the URL), else the whole match (a base64 blob, a key block).
    A match that stops inside a word (a rule for hex digits meeting a token that goes on in
    other letters) runs on to the word's end: no tail of a credential is left behind."""
    if not encoded and secret and len(secret) < end - start:
        at = text.find(secret, start, end)
        if at >= 0:
            start, end = at, at + len(secret)
    if not encoded and 0 < end < len(text) and _WORD_CHAR.match(text, end - 1) and _WORD_CHAR.match(text, end):
        end = _WORD_REST.match(text, end).end()  # type: ignore[union-attr]  # always matches
    return [(start, end, kind)]


def _settled(text: str, spans: list[tuple[int, int, str]], preferred: frozenset[str]) -> list[tuple[int, int, str]]:
    """Of the spans that say the same thing more or less precisely, the precise one:

    - a span of Kingfisher's own rules (a whole database URL) that holds a span of the bundled
      catalog (its password) gives way to it;
    - a secret joined across lines that runs on into the first word of the line after its
      end (`ghp_...` + `next` when the next line starts "next line") gives way to the same
      match that ends with its line, when a reading found that one; what it ran on into must
      read as a word (`next`, `Then`): a last piece like `2840a0b9379c` or `T7BE"` is the key's.
    """
    out = []
    for start, end, kind in spans:
        if MARKER_START in text[start:end]:  # a URL whose password is a marker already
            continue
        if kind not in preferred and any(
            k in preferred and start <= s and e <= end and (s, e) != (start, end) for s, e, k in spans
        ):
            continue
        if "\n" in text[start:end] and end < len(text) and text[end] != "\n":
            ran_on = text[text.rindex("\n", start, end) + 1 : end]
            if _PROSE_WORD.fullmatch(ran_on) and any(
                k == kind and s == start and e < end and text[e : e + 1] == "\n" for s, e, k in spans
            ):
                continue
        out.append((start, end, kind))
    return out


def _merge(spans: list[tuple[int, int, str]], preferred: frozenset[str] = frozenset()) -> list[tuple[int, int, str]]:
    """Overlapping spans as one, named by the longest of them (of two rules that found the
    same span, the bundled catalog's, then the one with the more telling name)."""
    merged: list[tuple[int, int, str, tuple[int, bool, int]]] = []
    for start, end, kind in sorted(spans):
        rank = (end - start, kind in preferred, len(kind))
        if merged and start < merged[-1][1]:
            m_start, m_end, m_kind, m_rank = merged[-1]
            best = (kind, rank) if rank > m_rank else (m_kind, m_rank)
            merged[-1] = (m_start, max(m_end, end), *best)
        else:
            merged.append((start, end, kind, rank))
    return [(s, e, k) for s, e, k, _ in merged]


def redact_secrets(text: str, detector: Detector = DETECTOR) -> tuple[str, Counter[str]]:
    """The text with every secret found replaced by its marker, and the count of each kind."""
    kinds: Counter[str] = Counter()
    spans = _merge(_settled(text, _spans(text, detector), detector.preferred), detector.preferred)
    if not spans:
        return text, kinds
    out: list[str] = []
    pos = 0
    for start, end, kind in spans:
        out += [text[pos:start], marker(kind)]
        kinds[kind] += 1
        pos = end
    out.append(text[pos:])
    return "".join(out), kinds


def redact_text(text: str, detector: Detector = DETECTOR, *, secrets: bool = True) -> tuple[str, Redaction]:
    """The text with `<private>` spans dropped and (unless `secrets` is False) every secret
    replaced by its marker."""
    report = Redaction()
    text, report.private = drop_private(text)
    if secrets:
        text, report.kinds = redact_secrets(text, detector)
    return text, report


def redact_value(value: Any, report: Redaction, detector: Detector = DETECTOR, *, secrets: bool = True) -> Any:
    """A JSON value (a page's meta) with every string in it redacted; keys are left alone."""
    if isinstance(value, str):
        text, found = redact_text(value, detector, secrets=secrets)
        report.add(found)
        return text
    if isinstance(value, list):
        return [redact_value(v, report, detector, secrets=secrets) for v in value]
    if isinstance(value, dict):
        return {k: redact_value(v, report, detector, secrets=secrets) for k, v in value.items()}
    return value
