"""The install manifest (`<home>/.config/memorywiki/installed.json`): what memorywiki wrote,
where, and a sha256 of it, so a later run can tell our own file from one the user edited.
Also the Action record every install/uninstall step reports."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .files import read, write
from .locations import resolve


@dataclass
class Action:
    """One thing install/uninstall did (or, in a dry run, would do).

    op: create | update | unchanged | conflict | remove | keep | missing
    applied: False for dry runs and conflicts (nothing was written).
    """

    op: str
    path: Path
    detail: str = ""
    applied: bool = True

    def __str__(self) -> str:
        suffix = f" ({self.detail})" if self.detail else ""
        dry = "" if self.applied or self.op in ("unchanged", "conflict", "keep", "missing") else " [dry run]"
        return f"{self.op:9} {self.path}{suffix}{dry}"


class InstallError(Exception):
    pass


def manifest_path(home: Path | str | None = None) -> Path:
    _, home_p = resolve(None, home)
    return home_p / ".config" / "memorywiki" / "installed.json"


class Manifest:
    def __init__(self, home: Path) -> None:
        self.path = manifest_path(home)
        data: Any = {}
        text = read(self.path)
        if text:
            try:
                data = json.loads(text)
            except ValueError:
                data = {}
        self.entries: dict[str, dict[str, Any]] = data.get("entries", {}) if isinstance(data, dict) else {}

    def get(self, path: Path) -> dict[str, Any] | None:
        return self.entries.get(str(path))

    def put(self, path: Path, **record: Any) -> None:
        self.entries[str(path)] = record

    def drop(self, path: Path) -> None:
        self.entries.pop(str(path), None)

    def save(self) -> None:
        if not self.entries and not self.path.exists():
            return
        write(self.path, json.dumps({"version": 1, "entries": self.entries}, indent=2, sort_keys=True) + "\n")


def record_base(tool: str, scope: str, project: Path) -> dict[str, Any]:
    """The fields that say whose entry this is (a project entry belongs to that project only)."""
    return {"tool": tool, "scope": scope, "project": str(project) if scope == "project" else None}


def matches(rec: dict[str, Any], tool: str, scope: str, project: Path) -> bool:
    if rec.get("tool") != tool or rec.get("scope") != scope:
        return False
    return scope == "user" or rec.get("project") == str(project)
