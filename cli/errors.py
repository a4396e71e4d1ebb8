"""Errors the CLI reports as one line (``error: ...``) with exit code 1."""

from __future__ import annotations


class CLIError(Exception):
    """A user-facing failure: the message is printed as ``error: <message>``."""

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message


class APIError(CLIError):
    """The server answered with a 4xx/5xx status."""

    def __init__(self, status: int, code: str | None, message: str):
        super().__init__(message)
        self.status = status
        self.code = code
