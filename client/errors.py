"""What can go wrong talking to a Memory.Wiki server, as the CLI and the MCP server report it.

Clients branch on the server's stable error ``code`` (the constants below), never on the
message text, which may be reworded at any time.
"""

from __future__ import annotations

from typing import Any

# error codes of the HTTP contract that clients act on
UNAUTHORIZED = "unauthorized"  # no token was sent
FORBIDDEN = "forbidden"  # a token was sent, and it does not cover this
HUB_TAKEN = "hub_taken"
UNKNOWN_HUB = "unknown_hub"
NOT_FOUND = "not_found"
VERSION_CONFLICT = "version_conflict"
EMBEDDER_UNAVAILABLE = "embedder_unavailable"


class MemoryWikiError(Exception):
    """A failure a person can act on; ``message`` is one line that says what to do."""

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message


class ApiError(MemoryWikiError):
    """The server answered ``{"error": {"code", "message", ...}}`` with a 4xx/5xx status.

    ``details`` holds any further keys of the error object (e.g. ``unknown`` / ``accepted``
    for refused fields).
    """

    def __init__(self, status: int, code: str | None, message: str, details: dict[str, Any] | None = None):
        super().__init__(message)
        self.status = status
        self.code = code
        self.details = details or {}
