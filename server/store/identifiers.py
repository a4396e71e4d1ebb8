"""Exact identifiers in a question: the words an embedder cannot tell from their near misses.

An embedder reads INC-20417 and INC-20471, or two commit hashes, as the same few word pieces:
to it they are one point. Full text tells them apart only as lexemes, and PostgreSQL's parser
cuts an identifier into pieces (INC-20417 is `inc` and `-20417`; ERR_RATE_6684 is `err`, `rate`,
`6684`), which look-alike records share. So the default fusion counts, beside its two rankers,
one more per identifier the question names: whether a candidate's text holds that identifier
whole (server/store/recall.py).

An identifier is a whitespace-separated token of the question, its surrounding punctuation
stripped, at least MIN_CHARS long, that holds a digit and either a letter or at least
MIN_DIGITS digits: INC-20417, ERR_RATE_6684, 9f3ab27c, 12041788, req-9521-av62, IL-6, BRCA1;
not 2023, 3.5, -12 or 10,000,000 (numbers), nor words. A text holds it when the token occurs in it
case-insensitively, not as part of a longer token (INC-2041 is not in INC-20417).
"""

from __future__ import annotations

import re

MIN_CHARS = 4
MIN_DIGITS = 5
MAX_IDENTIFIERS = 8  # a question naming more is a list, not a lookup: the first eight count
MAX_CHARS = 64  # longer tokens are pasted text, not an identifier

_STRIP = "\"'`.,;:!?()[]{}<>"
# a number written as one (signed, with separators, decimals or a percent sign): not an identifier
_FORMATTED_NUMBER = re.compile(r"^(?=.*[+.,%]|-)[+-]?[\d.,]+%?$")


def identifiers(question: str) -> list[str]:
    """The identifiers a question names, in order, each once (case-folded)."""
    out: list[str] = []
    for raw in question.split():
        token = raw.strip(_STRIP)
        if not MIN_CHARS <= len(token) <= MAX_CHARS or _FORMATTED_NUMBER.match(token):
            continue
        digits = sum(ch.isdigit() for ch in token)
        letters = any(ch.isalpha() for ch in token)
        if digits and (letters or digits >= MIN_DIGITS) and token.lower() not in out:
            out.append(token.lower())
        if len(out) == MAX_IDENTIFIERS:
            break
    return out


def pattern(token: str) -> str:
    """A PostgreSQL (and Python) regular expression for `token` standing alone, case aside."""
    return f"(^|[^0-9A-Za-z_-]){re.escape(token)}($|[^0-9A-Za-z_-])"


def held(token: str, text: str) -> bool:
    return re.search(pattern(token), text, re.IGNORECASE) is not None
