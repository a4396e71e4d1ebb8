"""Exact identifiers in a question: the words an embedder cannot tell from their near misses.

An embedder reads INC-20417 and INC-20471, or two commit hashes, as the same few word pieces:
to it they are one point. Full text tells them apart only as lexemes, and PostgreSQL's parser
cuts an identifier into pieces (INC-20417 is `inc` and `-20417`; ERR_RATE_6684 is `err`, `rate`,
`6684`), which look-alike records share. So the default fusion counts, beside its two rankers,
one more per identifier the question names: whether a candidate's text holds that identifier
whole (server/store/recall.py).

An identifier is a whitespace-separated token of the question, in ASCII, its surrounding punctuation
stripped, at least MIN_CHARS long, that holds a digit and a letter, or is a run of at least
MIN_DIGITS digits: INC-20417, ERR_RATE_6684, 9f3ab27c, 12041788, req-9521-av62, IL-6, BRCA1;
not 2023, 3.5, -12, 1/2000, 1972-1979 or 10,000,000 (numbers), 18th or 1960s, nor a word such as
anti-interleukin-2 (five lowercase letters in a row make a word; MW_FLUSH_INTERVAL_MS3 is upper case). A text holds it when the token occurs in it
case-insensitively, not as part of a longer token (INC-2041 is not in INC-20417).
"""

from __future__ import annotations

import re

MIN_CHARS = 4
MIN_DIGITS = 5
MAX_IDENTIFIERS = 8  # a question naming more is a list, not a lookup: the first eight count
MAX_CHARS = 64  # longer tokens are pasted text, not an identifier

_STRIP = "\"'`.,;:!?()[]{}<>"
# an ordinal or a decade (18th, 1960s), or a word joined to a number (anti-interleukin-2,
# 0-dimensional: a run of five lowercase letters is a word): not identifiers
_ORDINAL = re.compile(r"^\d+(st|nd|rd|th|s)$", re.IGNORECASE)
_WORDY = re.compile(r"[a-z]{5}")


def identifiers(question: str) -> list[str]:
    """The identifiers a question names, in order, each once (case-folded)."""
    out: list[str] = []
    for raw in question.split():
        token = raw.strip(_STRIP)
        if not MIN_CHARS <= len(token) <= MAX_CHARS:
            continue
        if not token.isascii():
            continue  # 1990년, αvβ8: a number or a name in another script, not a record's key
        digits = sum(ch.isdigit() for ch in token)
        letters = any(ch.isalpha() for ch in token)
        if not digits or (not letters and not (token.isdigit() and digits >= MIN_DIGITS)):
            continue  # no digit, or a number (a date, a range, a fraction) that is no long serial
        if _ORDINAL.match(token) or _WORDY.search(token):
            continue
        if token.lower() not in out:
            out.append(token.lower())
        if len(out) == MAX_IDENTIFIERS:
            break
    return out


def pattern(token: str) -> str:
    """A PostgreSQL (and Python) regular expression for `token` standing alone, case aside."""
    return f"(^|[^0-9A-Za-z_-]){re.escape(token)}($|[^0-9A-Za-z_-])"


def held(token: str, text: str) -> bool:
    return re.search(pattern(token), text, re.IGNORECASE) is not None
