"""A migration released under a tag is never edited: server/store/migrations/RELEASED.toml pins
each released file's sha256, and, in a git checkout, every tag's files are pinned under it."""

from __future__ import annotations

import subprocess
import tomllib
from pathlib import Path

import pytest
from memorywiki.server.store.migrate import checksum, migration_files

ROOT = Path(__file__).resolve().parents[1]
FOLDER = ROOT / "server" / "store" / "migrations"
RELEASED = tomllib.loads((FOLDER / "RELEASED.toml").read_text(encoding="utf-8"))


def released_files() -> dict[str, tuple[str, str]]:
    """file name -> (the tag it was first released under, its sha256 then)."""
    pinned: dict[str, tuple[str, str]] = {}
    for tag, files in RELEASED.items():
        for name, digest in files.items():
            pinned.setdefault(name, (tag, digest))
    return pinned


def test_every_released_migration_is_on_disk_as_released():
    on_disk = {m.name: m.checksum for m in migration_files()}
    edited = [
        f"{name} (released in {tag}) was edited or removed"
        for name, (tag, digest) in released_files().items()
        if on_disk.get(name) != digest
    ]
    assert not edited, "\n".join(edited) + "\nadd a new migration instead"


def test_a_later_tag_never_pins_another_text_for_a_released_file():
    seen: dict[str, str] = {}
    for tag, files in RELEASED.items():
        for name, digest in files.items():
            assert seen.setdefault(name, digest) == digest, f"{name} changed in {tag}"


def _git(*args: str) -> str:
    return subprocess.run(["git", "-C", str(ROOT), *args], capture_output=True, text=True, check=True).stdout


def _tags() -> list[str]:
    try:
        return [t for t in _git("tag", "--list", "v*").split() if t]
    except (OSError, subprocess.CalledProcessError):
        return []


@pytest.mark.skipif(not _tags(), reason="not a git checkout with release tags (CI tests a copy of the files)")
def test_every_tag_pins_the_migrations_it_released():
    pinned = released_files()
    for tag in _tags():
        listing = _git("ls-tree", "--name-only", f"{tag}:server/store/migrations")
        for name in (n for n in listing.split() if n.endswith(".sql")):
            text = _git("show", f"{tag}:server/store/migrations/{name}")
            assert name in pinned, f"{name} was released in {tag} but RELEASED.toml does not pin it"
            assert pinned[name][1] == checksum(text), f"RELEASED.toml pins another text of {name} than {tag} has"
