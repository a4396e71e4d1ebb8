"""Where things go: the project or the user's home per scope, and $CODEX_HOME for Codex."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

SCOPES = ("project", "user")


def env_or_os(env: Mapping[str, str] | None) -> Mapping[str, str]:
    return os.environ if env is None else env


def codex_home(home: Path, env: Mapping[str, str]) -> Path:
    return Path(env["CODEX_HOME"]) if env.get("CODEX_HOME") else home / ".codex"


def resolve(project_dir: Path | str | None, home: Path | str | None) -> tuple[Path, Path]:
    """(project dir, home dir), defaulting to the current directory and ~."""
    project = Path(project_dir).resolve() if project_dir else Path.cwd().resolve()
    home_p = Path(home).resolve() if home else Path.home()
    return project, home_p


def check_scope(scope: str) -> str:
    if scope not in SCOPES:
        raise ValueError(f"unknown scope {scope!r}; expected 'project' or 'user'")
    return scope


def target(rel: str, scope: str, project: Path, home: Path, env: Mapping[str, str]) -> Path:
    """Where a rendered file (path relative to the scope's root) is written."""
    if scope == "user" and rel.startswith(".codex/"):
        return codex_home(home, env) / rel[len(".codex/") :]
    return (project if scope == "project" else home) / rel
