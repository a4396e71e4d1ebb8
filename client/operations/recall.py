"""Recall: ask a hub a question, get back the passages (or docs, or bundles) that answer it."""

from __future__ import annotations

from typing import Any, Literal, cast

from ..errors import InputError
from .types import RecallAnswer
from .wiki import Wiki

Level = Literal["chunk", "doc", "bundle"]
Fusion = Literal["zscore", "rrf"]


def recall(
    wiki: Wiki,
    question: str,
    *,
    hub: str | None = None,
    k: int = 5,
    level: Level = "chunk",
    hybrid: bool = True,
    fusion: Fusion | None = None,
    max_tokens: int | None = None,
) -> RecallAnswer:
    """The top ``k`` results; ``hybrid`` fuses vector and full-text search (false: vectors
    only), by ``fusion`` (None: the server's default). ``max_tokens``: results in rank order
    while their tokens fit, never a cut one. The answer names the mode and fusion that ran
    and, when vectors were not used, why."""
    if not question.strip():
        raise InputError("the question is empty")
    if max_tokens is not None and max_tokens < 1:
        raise InputError("max_tokens must be at least 1")
    slug = wiki.require_hub(hub)
    body: dict[str, Any] = {"question": question, "k": k, "level": level, "hybrid": hybrid}
    if fusion is not None:
        body["fusion"] = fusion
    if max_tokens is not None:
        body["max_tokens"] = max_tokens
    return cast(RecallAnswer, wiki.client.recall(slug, body, token=wiki.config.hub_token(slug)))
