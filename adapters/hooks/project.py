"""The project a session runs in: its git root (else the folder itself), its `origin` remote and
its name, read from the files git keeps (no `git` process: a hook has no time for one). Paths
are os.path's and the config's lines are read with str's methods: pathlib's and re's imports
cost a hook more than these few look-ups (configparser's, more still)."""

from __future__ import annotations

import os


def _remote_section(line: str) -> str | None:
    """The remote's name of a `[remote "origin"]` line, else None."""
    inner = line.strip()[1:].lstrip()
    if not inner.startswith("remote") or not inner[6:7].isspace():
        return None
    rest = inner[6:].lstrip()
    end = rest.find('"', 1)
    if not rest.startswith('"') or end < 0 or not rest[end + 1 :].lstrip().startswith("]"):
        return None
    return rest[1:end]


def _url(line: str) -> str | None:
    """The value of a `url = ...` line, else None."""
    key, eq, value = line.partition("=")
    return value.strip() if eq and key.strip().lower() == "url" else None


def _read(path: str) -> str:
    with open(path, encoding="utf-8", errors="replace") as fh:
        return fh.read()


def _git_dir(root: str) -> str | None:
    """The repository's git directory: `.git`, or where a worktree's `.git` file points."""
    dot = os.path.join(root, ".git")
    if os.path.isdir(dot):
        return dot
    try:
        text = _read(dot).strip()
    except OSError:
        return None
    if not text.startswith("gitdir:"):
        return None
    git_dir = text[len("gitdir:") :].strip()
    return git_dir if os.path.isabs(git_dir) else os.path.realpath(os.path.join(root, git_dir))


def _common_dir(git_dir: str) -> str:
    """A worktree's config lives in the main repository's git directory."""
    try:
        common = _read(os.path.join(git_dir, "commondir")).strip()
    except OSError:
        return git_dir
    return common if os.path.isabs(common) else os.path.realpath(os.path.join(git_dir, common))


def origin_url(git_dir: str) -> str | None:
    """The `origin` remote's URL, else the first remote's."""
    try:
        lines = _read(os.path.join(_common_dir(git_dir), "config")).splitlines()
    except OSError:
        return None
    urls: dict[str, str] = {}
    remote = None
    for line in lines:
        if line.lstrip().startswith("["):
            remote = _remote_section(line)
        elif remote is not None and remote not in urls:
            url = _url(line)
            if url:
                urls[remote] = url.strip('"')
    return urls.get("origin") or next(iter(urls.values()), None)


def project_of(cwd: str | os.PathLike[str] | None) -> dict[str, str | None] | None:
    """{"name", "remote", "path"} of the project at `cwd`, None when there is no folder."""
    if not cwd:
        return None
    try:
        start = os.path.realpath(os.fspath(cwd))
    except (OSError, ValueError):
        return None
    candidate = start
    while True:
        if os.path.exists(os.path.join(candidate, ".git")):
            git_dir = _git_dir(candidate)
            remote = origin_url(git_dir) if git_dir else None
            return {"name": os.path.basename(candidate) or candidate, "remote": remote, "path": candidate}
        parent = os.path.dirname(candidate)
        if parent == candidate:
            return {"name": os.path.basename(start) or start, "remote": None, "path": start}
        candidate = parent
