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


def estimate_tokens(text: str) -> int:
    """The estimated tokens of one text (0 for an empty or blank one)."""
    count = 0
    for piece in _PIECE.finditer(text):
        length = piece.end() - piece.start()
        count += 1 if length == 1 else math.ceil(length / CHARS_PER_TOKEN)
    return count
