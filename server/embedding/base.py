"""The interface every embedder offers, and the one error they raise.

The indexer and recall only need `name` (so vectors from different spaces are never mixed),
`embed` (one L2-normalised vector per text, for indexing) and `embed_questions` (the same for
recall's questions, which must not queue behind indexing: see server/embedding/questions.py).
Any failure surfaces as `EmbedderError`, so a caller can leave the work owed (embedded_hash
unchanged) and retry later instead of crashing.
"""

from __future__ import annotations

import importlib.util
from typing import Protocol, runtime_checkable


class EmbedderError(Exception):
    """The embedder is unreachable or failed; the caller keeps the work owed."""


@runtime_checkable
class Embedder(Protocol):
    name: str  # stable id of the embedding space, e.g. "openai:text-embedding-3-small"

    async def embed(self, texts: list[str]) -> list[list[float]]:
        """One L2-normalised vector per text, in order; raises EmbedderError."""
        ...

    async def embed_questions(self, texts: list[str]) -> list[list[float]]:
        """Like `embed`, for recall's questions: ahead of any indexing work in flight."""
        ...


def importable(module: str) -> bool:
    """True when the module could be imported, without importing it (no torch in sight)."""
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False
