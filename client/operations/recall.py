"""Recall: ask a hub a question, get back the passages (or docs, or bundles) that answer it."""

from __future__ import annotations

from typing import Literal

from ..errors import InputError
from .types import RecallAnswer
from .wiki import Wiki

Level = Literal["chunk", "doc", "bundle"]


def recall(wiki: Wiki, question: str, *, hub: str | None = None, k: int = 5, level: Level = "chunk",
           hybrid: bool = True) -> RecallAnswer:
    """The top ``k`` results; ``hybrid`` fuses vector and full-text search (false: vectors
    only). The answer names the mode that ran and, when vectors were not used, why."""
    if not question.strip():
        raise InputError("the question is empty")
    slug = wiki.require_hub(hub)
    body = {"question": question, "k": k, "level": level, "hybrid": hybrid}
    return wiki.client.recall(slug, body, token=wiki.config.hub_token(slug))
