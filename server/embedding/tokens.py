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

import codecs
import math
import re

# Han (with its extensions and compatibility block), Hiragana, Katakana, Hangul syllables.
_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af"
_PIECE = re.compile(f"[{_CJK}]|[^\\W_{_CJK}]+|[^\\w\\s]|_")
CHARS_PER_TOKEN = 5
# The rule counted in C, in bytes: each character mapped to its class (a: letter or digit, b:
# punctuation, symbol or "_", Han, Kana or Hangul: each one token; space: anything else), then
# the runs of "a" counted five at a time. ASCII maps through a table; any other character is
# classed by the regular expression itself as the ASCII encoder meets it (an error handler: one
# call per run of them) and stands in as an ASCII character of its class, so the two agree.
_WORD = re.compile(f"[^\\W_{_CJK}]")
_ASCII_CLASS = (
    bytes(
        ord("a") if _WORD.fullmatch(chr(c)) else ord("b") if _PIECE.fullmatch(chr(c)) else ord(" ") for c in range(128)
    )
    + b" " * 128
)
_STAND_IN: dict[str, str] = {}  # a non-ASCII character -> an ASCII one of its class ("a", "." or " ")
_STAND_INS_KEPT = 4096


def _stand_in(char: str) -> str:
    found = _STAND_IN.get(char)
    if found is None:
        found = "a" if _WORD.fullmatch(char) else "." if _PIECE.fullmatch(char) else " "
        if len(_STAND_IN) < _STAND_INS_KEPT:
            _STAND_IN[char] = found
    return found


def _stand_ins(error: UnicodeError) -> tuple[str, int]:
    assert isinstance(error, UnicodeEncodeError)
    return "".join(_stand_in(char) for char in error.object[error.start : error.end]), error.end


codecs.register_error("memorywiki.token_class", _stand_ins)


def estimate_tokens(text: str) -> int:
    """The estimated tokens of one text (0 for an empty or blank one)."""
    classes = text.encode("ascii", "memorywiki.token_class").translate(_ASCII_CLASS)
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
