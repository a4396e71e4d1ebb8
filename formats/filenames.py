"""File names from titles that every OS accepts, unique within their folder, the same on every run.

A name keeps the title readable (Obsidian shows a note by its file name) and drops what
Windows, macOS or Linux refuse or misread: separators and reserved characters, control
characters, trailing dots and spaces, device names (CON, NUL, COM1...). Characters a wiki link
cannot hold (`#`, `^`, `[`, `]`, `|`) go too, so `[[name]]` finds the file. Names are compared
as the case-insensitive file systems do (case folded, NFC), and a repeat gets " (2)", " (3)"...
in the order the titles come, so the same titles in the same order name the same files.
"""

from __future__ import annotations

import re
import unicodedata

MAX_NAME_BYTES = 120  # UTF-8 bytes of a stem: room for " (n)", ".versions/" and a long folder
_REFUSED = re.compile(r'[\x00-\x1f\x7f<>:"/\\|?*#^\[\]]')
_SPACES = re.compile(r"\s+")
_DEVICES = frozenset(
    {"con", "prn", "aux", "nul", *(f"com{i}" for i in range(1, 10)), *(f"lpt{i}" for i in range(1, 10))}
)
UNTITLED = "Untitled"


def _clip(text: str, max_bytes: int) -> str:
    encoded = text.encode("utf-8")
    if len(encoded) <= max_bytes:
        return text
    return encoded[:max_bytes].decode("utf-8", "ignore")


def file_stem(title: str, max_bytes: int = MAX_NAME_BYTES) -> str:
    """The title as a file name without extension, safe on every OS."""
    name = unicodedata.normalize("NFC", title)
    name = _SPACES.sub(" ", _REFUSED.sub(" ", name)).strip()
    name = _clip(name, max_bytes).strip(" .")
    if not name:
        return UNTITLED
    if name.split(".")[0].strip().lower() in _DEVICES:
        name = f"{name}_"
    return name


def name_key(name: str) -> str:
    """How a case-insensitive file system compares two names."""
    return unicodedata.normalize("NFC", name).casefold()


class Namer:
    """Unique file names within one folder, handed out in the order titles are given."""

    def __init__(self, extension: str = ".md"):
        self.extension = extension
        self._taken: set[str] = set()

    def name(self, title: str) -> str:
        stem = file_stem(title)
        candidate, n = stem, 1
        while name_key(candidate + self.extension) in self._taken:
            n += 1
            candidate = f"{stem} ({n})"
        self._taken.add(name_key(candidate + self.extension))
        return candidate + self.extension
