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

# codes of failures the client finds itself, before or instead of asking the server
INVALID_INPUT = "invalid_input"  # an argument the operation cannot act on (empty text, no title...)
NO_HUB = "no_hub"  # no hub given and no default hub configured
NO_SECTION = "no_section"  # the doc has no section of that name
UNREACHABLE = "unreachable"  # the server did not answer (not running, timeout, bad URL)


class MemoryWikiError(Exception):
    """A failure a person can act on; ``message`` is one line that says what to do, ``code``
    (when known) the stable code to branch on."""

    def __init__(self, message: str, code: str | None = None):
        super().__init__(message)
        self.message = message
        self.code = code


class InputError(MemoryWikiError):
    """An operation refused its arguments before anything was sent."""

    def __init__(self, message: str):
        super().__init__(message, INVALID_INPUT)


class VersionConflict(MemoryWikiError):
    """The doc moved on since the caller read it (``expected``); ``current`` is its version now.
    Each surface says how to read it again in its own words."""

    def __init__(self, doc_id: str, current: int | None, expected: int | None):
        super().__init__(f"the doc is at version {current}, not {expected}", VERSION_CONFLICT)
        self.doc_id = doc_id
        self.current = current
        self.expected = expected


class ApiError(MemoryWikiError):
    """The server answered ``{"error": {"code", "message", ...}}`` with a 4xx/5xx status.

    ``details`` holds any further keys of the error object (e.g. ``unknown`` / ``accepted``
    for refused fields).
    """

    def __init__(self, status: int, code: str | None, message: str, details: dict[str, Any] | None = None):
        super().__init__(message, code)
        self.status = status
        self.details = details or {}
