"""Cursor state.vscdb reader (best effort; the schema as adapters/cursor/reader.py describes it)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from memorywiki.adapters.cursor import reader


def _db(path: Path, rows: dict[str, object], table: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE IF NOT EXISTS ItemTable (key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB)")
    conn.execute("CREATE TABLE IF NOT EXISTS cursorDiskKV (key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB)")
    for k, v in rows.items():
        conn.execute(f"INSERT INTO {table} VALUES (?, ?)", (k, json.dumps(v).encode()))
    conn.commit()
    conn.close()


def _setup(tmp_path: Path) -> tuple[Path, Path]:
    home, project = tmp_path / "home", tmp_path / "proj"
    project.mkdir()
    udir = reader.user_dir(home, env={})
    ws = udir / "workspaceStorage" / "abc123"
    ws.mkdir(parents=True)
    (ws / "workspace.json").write_text(json.dumps({"folder": project.resolve().as_uri()}))
    _db(
        ws / "state.vscdb",
        {
            "composer.composerData": {
                "allComposers": [
                    {"composerId": "c-old", "name": "Old chat", "lastUpdatedAt": 1000},
                    {"composerId": "c-new", "name": "New chat", "lastUpdatedAt": 2000},
                ]
            }
        },
        "ItemTable",
    )
    _db(
        udir / "globalStorage" / "state.vscdb",
        {
            "composerData:c-new": {
                "_v": 10,
                "composerId": "c-new",
                "name": "New chat",
                "createdAt": 1767225600000,
                "fullConversationHeadersOnly": [
                    {"bubbleId": "b1", "type": 1},
                    {"bubbleId": "b2", "type": 2},
                    {"bubbleId": "b3", "type": 2},
                    {"bubbleId": "missing", "type": 2},
                ],
            },
            "bubbleId:c-new:b1": {"_v": 3, "type": 1, "bubbleId": "b1", "text": "How do I rebase?"},
            "bubbleId:c-new:b2": {
                "_v": 3,
                "type": 2,
                "bubbleId": "b2",
                "text": "",
                "toolFormerData": {"name": "run_terminal_cmd", "rawArgs": '{"command": "git status"}'},
            },
            "bubbleId:c-new:b3": {"_v": 3, "type": 2, "bubbleId": "b3", "text": "Run `git rebase -i main`."},
            "composerData:c-old": {
                "composerId": "c-old",
                "conversation": [{"type": 1, "text": "legacy question"}, {"type": 2, "text": "legacy answer"}],
            },
        },
        "cursorDiskKV",
    )
    return home, project


def test_find_and_read(tmp_path):
    home, project = _setup(tmp_path)
    path = reader.find_session(None, project, home, env={})
    assert path is not None and path.name == "c-new"
    t = reader.read_session(path)
    assert t.session_id == "c-new" and t.title == "New chat" and t.started_at.startswith("2026-01-01")
    assert t.markdown.startswith("## User\n\nHow do I rebase?")
    assert "- Tool `run_terminal_cmd`: `git status`" in t.markdown
    assert "Run `git rebase -i main`." in t.markdown
    legacy = reader.read_session(path.parent / "c-old")
    assert "legacy question" in legacy.markdown and "legacy answer" in legacy.markdown


def test_tolerant(tmp_path):
    home, project = _setup(tmp_path)
    assert reader.find_session(None, tmp_path / "nowhere", home, env={}) is None
    assert reader.find_session(None, project, tmp_path / "empty", env={}) is None
    bad = tmp_path / "bad.vscdb"
    bad.write_bytes(b"not sqlite at all")
    assert reader.read_session(bad).markdown == ""
    assert reader.read_session(tmp_path / "missing.vscdb" / "x").markdown == ""
