"""Reading what the user hands a command: a file, `-` for stdin, or piped stdin."""

from __future__ import annotations

import sys
from pathlib import Path

from memorywiki.client import MemoryWikiError
from memorywiki.client.files import read_text_file


def stdin_is_tty() -> bool:
    try:
        return sys.stdin is None or sys.stdin.isatty()
    except (ValueError, AttributeError):
        return True


def read_stdin() -> str:
    if sys.stdin is None:
        return ""
    try:
        return sys.stdin.read()
    except UnicodeDecodeError:
        raise MemoryWikiError("stdin is not UTF-8 text") from None


def read_body(file: str | None) -> str | None:
    """The text of FILE, of stdin for `-` (or no FILE with piped stdin); None if there is none."""
    if file == "-":
        return read_stdin()
    if file is None:
        return None if stdin_is_tty() else read_stdin()
    return read_text_file(Path(file).expanduser())
