"""A released migration is never edited: server/store/migrations/RELEASED.toml names each
release (its tag and commit) and pins the sha256 of every migration it shipped. The files are
held to their pins wherever the tests run (a fresh clone, CI's copy of the files); in a clone
that has a release's commit, the pins are checked against that commit's files as well."""

from __future__ import annotations

import re
import subprocess
import tomllib
from importlib.metadata import version
from pathlib import Path

import pytest
from memorywiki.server.store.migrate import checksum, migration_files

ROOT = Path(__file__).resolve().parents[1]
FOLDER = ROOT / "server" / "store" / "migrations"
RELEASES = tomllib.loads((FOLDER / "RELEASED.toml").read_text(encoding="utf-8"))["release"]


def released_files() -> dict[str, tuple[str, str]]:
    """file name -> (the tag it was first released under, its sha256 then)."""
    pinned: dict[str, tuple[str, str]] = {}
    for release in RELEASES:
        for name, digest in release["migrations"].items():
            pinned.setdefault(name, (release["tag"], digest))
    return pinned


def test_each_release_names_its_tag_its_commit_and_its_migrations():
    assert RELEASES
    for release in RELEASES:
        assert re.fullmatch(r"v\d+\.\d+\.\d+", release["tag"]), release
        assert re.fullmatch(r"[0-9a-f]{40}", release["commit"]), release["tag"]
        assert release["migrations"] and all(name.endswith(".sql") for name in release["migrations"])
    tags = [r["tag"] for r in RELEASES]
    assert len(set(tags)) == len(tags)


def test_every_released_migration_is_on_disk_as_released():
    on_disk = {m.name: m.checksum for m in migration_files()}
    edited = [
        f"{name} (released in {tag}) was edited or removed"
        for name, (tag, digest) in released_files().items()
        if on_disk.get(name) != digest
    ]
    assert not edited, "\n".join(edited) + "\nadd a new migration instead"


def test_a_later_release_never_pins_another_text_for_a_released_file():
    seen: dict[str, str] = {}
    for release in RELEASES:
        for name, digest in release["migrations"].items():
            assert seen.setdefault(name, digest) == digest, f"{name} changed in {release['tag']}"


def test_a_migration_added_since_a_release_runs_after_all_of_its_files():
    """A new file numbered among the released ones would run before files an existing data dir
    applied long ago: a change after a release goes after the last released file."""
    last = max(released_files())
    unreleased = [m.name for m in migration_files() if m.name not in released_files()]
    early = [name for name in unreleased if name < last]
    assert not early, f"{early} sort before {last}, the last released migration: give them a later number"


def test_the_version_is_the_latest_release_or_later():
    """pyproject.toml declares the version (read back through the installed metadata)."""
    latest = tuple(int(n) for n in RELEASES[-1]["tag"][1:].split("."))
    current = tuple(int(n) for n in re.findall(r"\d+", version("memorywiki"))[:3])
    assert current >= latest, f"memorywiki {version('memorywiki')} is older than the release {RELEASES[-1]['tag']}"


def test_the_changelog_has_a_section_per_release():
    changelog = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    for release in RELEASES:
        assert re.search(rf"^## \[{re.escape(release['tag'][1:])}\]", changelog, re.M), release["tag"]


def _git(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", "-C", str(ROOT), *args], capture_output=True, text=True, check=False)


def _has_commit(commit: str) -> bool:
    try:
        return _git("cat-file", "-e", f"{commit}^{{commit}}").returncode == 0
    except OSError:  # no git on the machine
        return False


@pytest.mark.parametrize("release", RELEASES, ids=[r["tag"] for r in RELEASES])
def test_a_release_pins_exactly_the_migrations_of_its_commit(release):
    if not _has_commit(release["commit"]):
        pytest.skip(f"{release['commit'][:12]} is not in this clone (a copy of the files, or a shallow clone)")
    listing = _git("ls-tree", "--name-only", f"{release['commit']}:server/store/migrations").stdout.split()
    shipped = {
        name: checksum(_git("show", f"{release['commit']}:server/store/migrations/{name}").stdout)
        for name in listing
        if name.endswith(".sql")
    }
    assert release["migrations"] == shipped
