"""File primitives for the installer: read, atomic write (remembering which directories it
created, so uninstall can remove exactly those), and pruning those directories again."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path


def sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None


def write(path: Path, text: str) -> list[str]:
    """Atomic write; returns the directories it had to create (outermost first)."""
    created: list[str] = []
    missing = []
    d = path.parent
    while not d.exists():
        missing.append(d)
        d = d.parent
    for d in reversed(missing):
        d.mkdir()
        created.append(str(d))
    tmp = path.with_name(f".{path.name}.memorywiki-tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)
    return created


def prune_dirs(dirs: list[str]) -> None:
    for d in reversed(dirs or []):
        try:
            Path(d).rmdir()  # only succeeds when empty
        except OSError:
            pass
