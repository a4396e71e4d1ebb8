"""Which project a coding session belongs to, as keys the server can match pages by.

A project is known by up to three things: its git remote (the same repository on every
machine), its path on this machine, and its name (the folder's name). Each becomes a key,
"remote:github.com/acme/api", "path:/home/me/api", "name:api"; a page tied to any of the keys
of the project at hand is that project's page. Dependency-free: a coding tool's hook imports it.
"""

from __future__ import annotations

import re
from typing import Any

MAX_PART = 500  # a key part longer than this is no name a person gave

_SCP_LIKE = re.compile(r"^(?:[^@/\s]+@)?([^:/\s]+):(?!//)(.+)$")  # git@github.com:acme/api.git
_URL = re.compile(r"^[a-z][a-z0-9+.-]*://(?:[^@/\s]*@)?([^/\s]+)(/.*)?$", re.I)


def normalize_remote(remote: str | None) -> str | None:
    """A git remote as one string whatever way it was cloned: host and path, lower-case host,
    no scheme, user, password, port or `.git`. `git@github.com:Acme/api.git` and
    `https://user:pw@github.com/Acme/api` both give `github.com/Acme/api`; a local path stays a path."""
    text = (remote or "").strip()
    if not text:
        return None
    m = _URL.match(text)
    if m:
        host, path = m.group(1), m.group(2) or ""
    else:
        m = _SCP_LIKE.match(text)
        if m is None or text.startswith(("/", ".", "~")):
            return text.rstrip("/")[:MAX_PART] or None
        host, path = m.group(1), "/" + m.group(2)
    host = host.rsplit(":", 1)[0] if re.search(r":\d+$", host) else host
    path = re.sub(r"\.git/?$", "", path.rstrip("/"))
    return f"{host.lower()}{path}"[:MAX_PART] or None


def project_keys(name: str | None = None, remote: str | None = None, path: str | None = None) -> list[str]:
    """The keys a project's pages are found by, strongest first."""
    keys = []
    remote = normalize_remote(remote)
    if remote:
        keys.append(f"remote:{remote}")
    if path and path.strip():
        keys.append(f"path:{path.strip().rstrip('/') or '/'}"[: MAX_PART + 5])
    if name and name.strip():
        keys.append(f"name:{name.strip()}"[: MAX_PART + 5])
    return keys


def project_record(data: Any) -> dict[str, Any] | None:
    """A project as pages store it (meta.project): name, remote, path and their keys; None
    when `data` names no project."""
    if not isinstance(data, dict):
        return None
    parts = {k: data.get(k) if isinstance(data.get(k), str) else None for k in ("name", "remote", "path")}
    parts = {k: (v.strip()[:MAX_PART] if v else None) for k, v in parts.items()}
    keys = project_keys(parts["name"], parts["remote"], parts["path"])
    if not keys:
        return None
    return {**parts, "remote": normalize_remote(parts["remote"]), "keys": keys}
