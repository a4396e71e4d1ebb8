"""What every converter returns, and how it refuses input."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .storable import strip_unstorable

# A doc's id, as its page URL carries it (/{id}): the server makes them, links name them.
ID_ALPHABET = "abcdefghijkmnpqrstuvwxyz23456789"
ID_LENGTH = 10

# Sources whose markdown is a conversation rendered by `mdutil.render_turns`: the server chunks
# such a doc as windows of turns (server/indexing/chunker.py, chunk_conversation). "chat" is for any
# other client that sends a conversation in that layout.
CONVERSATION_SOURCES = frozenset({"chatgpt-share", "claude-share", "chatgpt-export", "claude-export", "chat"})


@dataclass
class Captured:
    """One captured document: a title and a clean markdown body (no `# title` line).

    `source` names the converter, e.g. "chatgpt-export", "claude-share", "article", "pdf", "vtt".
    """

    title: str
    markdown: str
    source: str
    meta: dict[str, Any] = field(default_factory=dict[str, Any])
    external_id: str | None = None  # stable id for re-import dedupe, e.g. "chatgpt:<id>"

    def storable(self) -> Captured:
        """This capture with any NUL or broken surrogate dropped (a chat's stray byte, a PDF's
        odd glyph): the server refuses them in a request, and they must not cost the page."""
        return Captured(
            *(strip_unstorable(v) for v in (self.title, self.markdown, self.source, self.meta, self.external_id))
        )


class FormatError(ValueError):
    """Input a converter cannot read. `code` is short snake_case and stable, the message fit
    to show to a user. No HTTP status here: the server maps these errors in one place."""

    def __init__(self, code: str, message: str):
        super().__init__(message)
        self.code = code
        self.message = message

    def __repr__(self) -> str:  # pragma: no cover - debugging aid
        return f"FormatError({self.code!r}, {self.message!r})"
