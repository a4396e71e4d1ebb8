"""Which scripts an embedding model reads, and whether a question is written in them.

An embedder trained on English text (all-MiniLM-L6-v2) maps a question in Arabic, Chinese or
Korean to noise: its nearest chunks are chance, yet they still stand out of their pool as much as
a real match does, so no score statistic tells them apart. What does tell is the question's
script: recall leans on full text alone when most of a question's letters are in a script the
embedder does not read (docs/retrieval.md, "A blind ranker")."""

from __future__ import annotations

import unicodedata

# Sentence-transformers models trained on English only: they read Latin script.
ENGLISH_MODELS = ("all-MiniLM-L6-v2", "all-MiniLM-L12-v2", "all-mpnet-base-v2", "all-distilroberta-v1")
SCRIPTS = ("auto", "latin", "all")


def embedder_scripts(setting: str, embedder_name: str | None) -> str:
    """`latin` or `all`: the setting, or for `auto` what the model is known to read (`latin` for
    the English sentence-transformers models, `all` for any other: a model directory or endpoint
    chosen for other languages is taken at its word)."""
    if setting != "auto":
        return setting
    model = (embedder_name or "").rsplit(":", 1)[-1].rsplit("/", 1)[-1]  # local:all-MiniLM-L6-v2-int8
    english = any(model == m or model.startswith(m + "-") for m in ENGLISH_MODELS)
    return "latin" if english else "all"


def _script(ch: str) -> str:
    name = unicodedata.name(ch, "")
    return name.split(" ", 1)[0] if name else ""


def reads(scripts: str, question: str) -> bool:
    """Whether an embedder reading `scripts` reads `question`: with `latin`, at least half of the
    question's letters are Latin (digits, marks and symbols do not count; a question without
    letters is read)."""
    if scripts == "all":
        return True
    letters = [ch for ch in question if ch.isalpha()]
    if not letters:
        return True
    latin = sum(1 for ch in letters if _script(ch) == "LATIN")
    return 2 * latin >= len(letters)
