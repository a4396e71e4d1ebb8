"""A text longer than the model's window is embedded whole: as the mean of its windows.

A BERT sentence-transformer reads max_seq_length word pieces (all-MiniLM-L6-v2: 256) and drops
the rest, so text past the window would be invisible to vector search. Here a longer text is cut
into consecutive windows at word starts, each window is embedded, and the text's vector is the
mean of theirs weighted by their word pieces (mean pooling over the whole text, as the model
pools over one window), normalised again. A text that fits is embedded as before.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# Word pieces of the window taken by [CLS] and [SEP].
SPECIAL_TOKENS = 2


@dataclass
class Split:
    """Window texts for a batch of texts, and how to fold their vectors back into one per text."""

    texts: list[str]
    owners: list[int]  # the index of the text each window came from
    weights: list[int]  # word pieces per window
    count: int  # texts in the batch

    @property
    def windowed(self) -> bool:
        return len(self.texts) != self.count

    def mean(self, vectors: Any) -> Any:
        """One L2-normalised row per text from one row per window."""
        import numpy as np

        out = np.zeros((self.count, vectors.shape[1]), dtype=np.float64)
        np.add.at(out, self.owners, vectors.astype(np.float64) * np.asarray(self.weights, dtype=np.float64)[:, None])
        return out / np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-12)


class Windows:
    def __init__(self, tokenizer: Any, size: int) -> None:
        self.tokenizer = tokenizer  # no truncation, no padding, no special tokens
        self.size = size  # word pieces per window

    @classmethod
    def of(cls, model_dir: Path) -> Windows | None:
        """The model's windows, from its tokenizer.json and max_seq_length; None when the folder
        does not say (the model then truncates as it always did)."""
        try:
            from tokenizers import Tokenizer

            tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
        except Exception:  # no tokenizers package, no tokenizer.json, or one it cannot read
            return None
        length = _max_seq_length(model_dir)
        if length is None or length <= SPECIAL_TOKENS + 1:
            return None
        tokenizer.no_truncation()
        tokenizer.no_padding()
        return cls(tokenizer, length - SPECIAL_TOKENS)

    def split(self, texts: list[str]) -> Split:
        out = Split([], [], [], len(texts))
        # A text of n characters is at most ~3n word pieces (a Hangul syllable decomposes into
        # up to three jamo): a short one cannot overflow and is not tokenized here.
        long = [i for i, text in enumerate(texts) if 3 * len(text) > self.size]
        encodings = dict(
            zip(long, self.tokenizer.encode_batch([texts[i] for i in long], add_special_tokens=False), strict=True)
        )
        for i, text in enumerate(texts):
            encoding = encodings.get(i)
            if encoding is None or len(encoding.ids) <= self.size:
                out.texts.append(text)
                out.owners.append(i)
                out.weights.append(1)  # its own vector, whatever the weight
                continue
            for a, b in self._bounds(encoding.word_ids, len(encoding.ids)):
                out.texts.append(text[encoding.offsets[a][0] : encoding.offsets[b - 1][1]])
                out.owners.append(i)
                out.weights.append(b - a)
        return out

    def _bounds(self, word_ids: list[int | None], n: int) -> list[tuple[int, int]]:
        """Token ranges of at most `size`, each starting at a word's first piece where it can."""
        bounds = []
        start = 0
        while start < n:
            stop = min(start + self.size, n)
            if stop < n:
                back = stop
                while back > start + 1 and word_ids[back] is not None and word_ids[back] == word_ids[back - 1]:
                    back -= 1
                stop = back if back > start + 1 else stop
            bounds.append((start, stop))
            start = stop
        return bounds


def _max_seq_length(model_dir: Path) -> int | None:
    for name, key in (("sentence_bert_config.json", "max_seq_length"), ("config.json", "max_position_embeddings")):
        try:
            value = json.loads((model_dir / name).read_text()).get(key)
        except (OSError, ValueError):
            continue
        if isinstance(value, int) and value > 0:
            return value
    return None
