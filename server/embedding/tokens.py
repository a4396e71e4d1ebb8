"""How many tokens a text costs the model that reads it: an estimate, for recall's token budget.

Estimated, not counted with the embedder's tokenizer: the model a caller pastes the results into
is not the embedder, so the embedder's exact word pieces are no truer a count for it, counting
them at recall costs more CPU than the recall statement itself, and the estimate stays the same
when the embedder changes (docs/retrieval.md). The rule: a word of letters or digits counts one
token per five characters (rounded up), each Han, Kana or Hangul character one (those scripts
have no spaces and tokenizers give them about one token a character), each punctuation mark or
symbol one. On English it comes out a little above the
default model's word pieces, so a budget errs on the side of fitting.
"""

from __future__ import annotations

import math
import re

# Han (with its extensions and compatibility block), Hiragana, Katakana, Hangul syllables.
_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af"
_PIECE = re.compile(f"[{_CJK}]|[^\\W_{_CJK}]+|[^\\w\\s]|_")
CHARS_PER_TOKEN = 5
# The same rule with each token a match of its own: a word of letters or digits is cut into
# pieces of up to five characters (the greedy {1,5}), one match each, so the count is the number
# of matches and no Python runs per piece.
_TOKEN = re.compile(f"[{_CJK}]|[^\\W_{_CJK}]{{1,{CHARS_PER_TOKEN}}}|[^\\w\\s]|_")
# ASCII text (most of it) is counted faster still, in bytes: each character mapped to its class
# (a: letter or digit, b: punctuation, symbol or "_", space: anything else), then the runs of
# "a" counted five at a time. Built from the regular expression itself, so the two agree.
_ASCII_CLASS = (
    bytes(
        ord("a") if re.fullmatch(f"[^\\W_{_CJK}]", chr(c)) else ord("b") if _PIECE.fullmatch(chr(c)) else ord(" ")
        for c in range(128)
    )
    + b" " * 128
)


def estimate_tokens(text: str) -> int:
    """The estimated tokens of one text (0 for an empty or blank one)."""
    if not text.isascii():
        return len(_TOKEN.findall(text))
    classes = text.encode("ascii").translate(_ASCII_CLASS)
    full = b"a" * CHARS_PER_TOKEN
    count = classes.count(full)  # each a token; what is left of a word (1-4 characters) is one more
    rest = classes.replace(full, b" ")
    for n in range(CHARS_PER_TOKEN - 1, 1, -1):  # those rests, one "a" each
        rest = rest.replace(b"a" * n, b"a")
    return count + rest.count(b"a") + rest.count(b"b")


def estimate_tokens_by_piece(text: str) -> int:
    """estimate_tokens as the rule reads, a piece at a time (the tests hold the two equal)."""
    count = 0
    for piece in _PIECE.finditer(text):
        length = piece.end() - piece.start()
        count += 1 if length == 1 else math.ceil(length / CHARS_PER_TOKEN)
    return count
