"""Data types shared by every capture path."""

from __future__ import annotations

from dataclasses import dataclass, field

SOURCES = (
    "chatgpt-share",
    "claude-share",
    "article",
    "pdf",
    "docx",
    "pptx",
    "html",
    "text",
    "markdown",
    "vtt",
    "srt",
    "chatgpt-export",
    "claude-export",
)


@dataclass
class Captured:
    """One captured document: a title and a clean markdown body (no `# title` line)."""

    title: str
    markdown: str
    source: str
    meta: dict = field(default_factory=dict)
    external_id: str | None = None  # stable id for re-import dedupe, e.g. "chatgpt:<id>"


class CaptureError(Exception):
    """Bad input for capture. `code` is short snake_case, `status` a 4xx HTTP status,
    and the message is fit to show to a user."""

    def __init__(self, code: str, message: str, status: int = 422):
        super().__init__(message)
        self.code = code
        self.status = status
        self.message = message

    def to_json(self) -> dict:
        return {"error": {"code": self.code, "message": self.message}}

    def __repr__(self) -> str:  # pragma: no cover - debugging aid
        return f"CaptureError({self.code!r}, {self.message!r}, status={self.status})"
