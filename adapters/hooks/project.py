"""The project a session runs in: its git root (else the folder itself), its `origin` remote and
its name, read from the files git keeps (no `git` process: a hook has no time for one)."""

from __future__ import annotations

import os
import re
from pathlib import Path

# `[remote "origin"]` and `url = ...` lines of a git config (configparser, a costlier import
# for a hook, reads no more of it than this)
_SECTION = re.compile(r'^\s*\[\s*remote\s+"([^"]*)"\s*\]')
_URL = re.compile(r"^\s*url\s*=\s*(.*?)\s*$", re.IGNORECASE)


def _git_dir(root: Path) -> Path | None:
    """The repository's git directory: `.git`, or where a worktree's `.git` file points."""
    dot = root / ".git"
    if dot.is_dir():
        return dot
    try:
        text = dot.read_text(encoding="utf-8").strip()
    except OSError:
        return None
    if not text.startswith("gitdir:"):
        return None
    git_dir = Path(text[len("gitdir:") :].strip())
    return git_dir if git_dir.is_absolute() else (root / git_dir).resolve()


def _common_dir(git_dir: Path) -> Path:
    """A worktree's config lives in the main repository's git directory."""
    try:
        common = (git_dir / "commondir").read_text(encoding="utf-8").strip()
    except OSError:
        return git_dir
    path = Path(common)
    return path if path.is_absolute() else (git_dir / path).resolve()


def origin_url(git_dir: Path) -> str | None:
    """The `origin` remote's URL, else the first remote's."""
    try:
        lines = (_common_dir(git_dir) / "config").read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return None
    urls: dict[str, str] = {}
    remote = None
    for line in lines:
        section = _SECTION.match(line)
        if section:
            remote = section.group(1)
        elif line.lstrip().startswith("["):
            remote = None
        elif remote is not None and remote not in urls:
            url = _URL.match(line)
            if url and url.group(1):
                urls[remote] = url.group(1).strip('"')
    return urls.get("origin") or next(iter(urls.values()), None)


def project_of(cwd: str | os.PathLike[str] | None) -> dict[str, str | None] | None:
    """{"name", "remote", "path"} of the project at `cwd`, None when there is no folder."""
    if not cwd:
        return None
    try:
        start = Path(cwd).resolve()
    except OSError:
        return None
    for candidate in (start, *start.parents):
        if (candidate / ".git").exists():
            git_dir = _git_dir(candidate)
            remote = origin_url(git_dir) if git_dir else None
            return {"name": candidate.name or str(candidate), "remote": remote, "path": str(candidate)}
    return {"name": start.name or str(start), "remote": None, "path": str(start)}
