"""Best-effort reader for Cursor's IDE chat store (state.vscdb SQLite files).

Cursor documents none of this (reverse-engineered, composer
`_v` ~10 / bubble `_v` ~3 as of 2025-12): the workspace DB's ItemTable
`composer.composerData` lists composers; the global DB's cursorDiskKV holds
`composerData:<id>` (with `fullConversationHeadersOnly` [{bubbleId, type 1 user | 2 AI}]) and
`bubbleId:<composerId>:<bubbleId>` (with `text`). Older builds keep `conversation[]` inline.

Anything unexpected yields None / an empty transcript instead of an error: the reliable
Cursor path is the model piping its own record into `memorywiki capture --title T -`.

Paths: `find_session` returns `<globalStorage>/state.vscdb/<composerId>`, a virtual path
(the database file plus the composer id); `read_session` also accepts a bare state.vscdb
(newest composer in it).
"""

from __future__ import annotations

import json
import os
import sqlite3
import sys
from collections.abc import Mapping
from datetime import UTC
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

from memorywiki.adapters.common import (
    ASSISTANT,
    USER,
    MarkdownBuilder,
    Transcript,
    same_path,
    strip_injected,
    tool_line,
)

TOOL = "cursor"


def user_dir(home: Path, env: Mapping[str, str] | None = None) -> Path:
    """Cursor's `User` directory for this platform."""
    env = os.environ if env is None else env
    home = Path(home)
    if sys.platform == "darwin":
        return home / "Library" / "Application Support" / "Cursor" / "User"
    if sys.platform.startswith("win"):
        appdata = env.get("APPDATA")
        return (Path(appdata) if appdata else home / "AppData" / "Roaming") / "Cursor" / "User"
    base = env.get("XDG_CONFIG_HOME")
    return (Path(base) if base else home / ".config") / "Cursor" / "User"


def _connect(db: Path) -> sqlite3.Connection | None:
    try:
        conn = sqlite3.connect(f"{db.resolve().as_uri()}?mode=ro", uri=True, timeout=1.0)
        conn.execute("SELECT 1")
        return conn
    except (sqlite3.Error, OSError, ValueError):
        return None


def _get(conn: sqlite3.Connection, table: str, key: str) -> Any:
    try:
        row = conn.execute(f"SELECT value FROM {table} WHERE key = ?", (key,)).fetchone()
    except sqlite3.Error:
        return None
    if not row or row[0] is None:
        return None
    value = row[0]
    if isinstance(value, bytes):
        value = value.decode("utf-8", "replace")
    try:
        return json.loads(value)
    except (ValueError, TypeError):
        return None


def _workspace_db(udir: Path, cwd: Path) -> Path | None:
    storage = udir / "workspaceStorage"
    if not storage.is_dir():
        return None
    for ws in storage.iterdir():
        meta = ws / "workspace.json"
        try:
            folder = json.loads(meta.read_text(encoding="utf-8")).get("folder", "")
        except (OSError, ValueError, AttributeError):
            continue
        if folder.startswith("file://") and same_path(unquote(urlparse(folder).path), cwd):
            db = ws / "state.vscdb"
            if db.is_file():
                return db
    return None


def _composers(conn: sqlite3.Connection) -> list[dict[str, Any]]:
    data = _get(conn, "ItemTable", "composer.composerData")
    items = data.get("allComposers") if isinstance(data, dict) else None
    return [c for c in items or [] if isinstance(c, dict) and c.get("composerId")]


def _newest(composers: list[dict[str, Any]]) -> dict[str, Any] | None:
    def stamp(c: dict[str, Any]) -> float:
        v = c.get("lastUpdatedAt") or c.get("createdAt") or 0
        return float(v) if isinstance(v, (int, float)) else 0.0

    return max(composers, key=stamp) if composers else None


def find_session(
    session_id: str | None,
    cwd: Path,
    home: Path,
    env: Mapping[str, str] | None = None,
) -> Path | None:
    """`<globalStorage>/state.vscdb/<composerId>` for `session_id` (a composer id) or the most
    recently updated composer of the workspace opened at `cwd`."""
    udir = user_dir(Path(home), env)
    global_db = udir / "globalStorage" / "state.vscdb"
    if not global_db.is_file():
        return None
    if session_id:
        return global_db / session_id
    ws_db = _workspace_db(udir, Path(cwd))
    if ws_db is None:
        return None
    conn = _connect(ws_db)
    if conn is None:
        return None
    try:
        newest = _newest(_composers(conn))
    finally:
        conn.close()
    return global_db / str(newest["composerId"]) if newest else None


def _bubble_parts(bubble: dict[str, Any]) -> tuple[str | None, list[str], list[str]]:
    """(role, texts, tool lines) of one bubble."""
    btype = bubble.get("type")
    role = USER if btype in (1, "user") else ASSISTANT if btype in (2, "ai", "assistant") else None
    texts: list[str] = []
    tools: list[str] = []
    text = bubble.get("text")
    if isinstance(text, str) and text.strip():
        texts.append(strip_injected(text))
    tool = bubble.get("toolFormerData")
    if isinstance(tool, dict) and tool.get("name"):
        args = tool.get("rawArgs") or tool.get("params")
        tools.append(tool_line(str(tool["name"]), args))
    return role, texts, tools


def read_session(path: Path) -> Transcript:
    path = Path(path)
    if path.is_file():
        db, composer_id = path, None
    else:
        db, composer_id = path.parent, path.name
    md = MarkdownBuilder()
    meta: dict[str, Any] = {}
    conn = _connect(db) if db.is_file() else None
    if conn is not None:
        try:
            if composer_id is None:
                try:
                    rows = conn.execute("SELECT key FROM cursorDiskKV WHERE key LIKE 'composerData:%'").fetchall()
                except sqlite3.Error:
                    rows = []
                candidates = []
                for (key,) in rows:
                    data = _get(conn, "cursorDiskKV", key)
                    if isinstance(data, dict):
                        candidates.append({**data, "composerId": key.split(":", 1)[1]})
                newest = _newest(candidates)
                composer_id = newest["composerId"] if newest else None
            data = _get(conn, "cursorDiskKV", f"composerData:{composer_id}") if composer_id else None
            if isinstance(data, dict):
                meta = data
                headers = data.get("fullConversationHeadersOnly")
                if isinstance(headers, list) and headers:
                    bubbles = (
                        _get(conn, "cursorDiskKV", f"bubbleId:{composer_id}:{h.get('bubbleId')}")
                        for h in headers
                        if isinstance(h, dict) and h.get("bubbleId")
                    )
                else:  # older layout: the conversation is inline
                    bubbles = (bubble for bubble in data.get("conversation") or [])
                for bubble in bubbles:
                    if not isinstance(bubble, dict):
                        continue
                    role, texts, tools = _bubble_parts(bubble)
                    if role is None:
                        continue
                    for text in texts:
                        md.text(role, text)
                    for line in tools:
                        md.tool(line)
        finally:
            conn.close()

    created = meta.get("createdAt")
    started = None
    if isinstance(created, (int, float)):
        from datetime import datetime

        started = datetime.fromtimestamp(created / 1000, tz=UTC).isoformat()
    return Transcript(
        markdown=md.build(),
        tool=TOOL,
        session_id=composer_id,
        cwd=None,
        git_branch=None,
        started_at=started,
        title=meta.get("name") if isinstance(meta.get("name"), str) else None,
        path=str(path),
        turns=md.turns,
    )
