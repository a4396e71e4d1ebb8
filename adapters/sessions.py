"""Find and read a coding tool's session by tool name (any alias): what `capture --agent` uses."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from .common import Transcript
from .tools import get_reader, normalize_tool


def capture_session(
    tool: str,
    session_id: str | None = None,
    cwd: Path | None = None,
    home: Path | None = None,
    env: Mapping[str, str] | None = None,
) -> Transcript | None:
    """Find and read the current (or given) session of `tool`; None when nothing is found."""
    reader = get_reader(tool)
    cwd = Path(cwd) if cwd else Path.cwd()
    home = Path(home) if home else Path.home()
    path = reader.find_session(session_id, cwd, home, env=env)
    if path is None:
        return None
    transcript: Transcript
    if normalize_tool(tool) == "aider" and session_id:
        transcript = reader.read_session(path, session_id)  # aider's session id is a block timestamp
    else:
        transcript = reader.read_session(path)
    return transcript
