"""Codex rollout reader: fixture, injected text, de-duplication, discovery."""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

from memorywiki.adapters.codex import reader

FIXTURES = Path(__file__).parent / "data" / "fixtures"
DATA = Path(__file__).parent / "data" / "adapters"
FIXTURE = FIXTURES / "codex" / "rollout-2026-01-02T03-04-05-11111111-1111-4111-8111-111111111111.jsonl"


def test_public_fixture():
    t = reader.read_session(FIXTURE)
    md = t.markdown
    assert t.session_id == "11111111-1111-4111-8111-111111111111"
    assert t.cwd == "/workspace/synthetic-project" and t.started_at == "2026-01-02T03:04:05.000Z"
    assert md.count("List the synthetic files.") == 1  # event_msg + response_item deduped
    assert md.count("The synthetic files are alpha.txt and beta.txt.") == 1
    assert "- Tool `exec_command`: `find . -maxdepth 1 -type f`" in md
    assert "- Tool `apply_patch`: `gamma.txt`" in md
    assert "- Tool `mcp__synthetic__lookup`: `fixture`" in md
    assert "SYNTHETIC_ENCRYPTED_CONTENT_MUST_NOT_RENDER" not in md
    assert "./alpha.txt\n./beta.txt" not in md  # tool output dropped
    assert "safe" not in md  # unknown record type ignored
    assert md.index("## User") < md.index("## Assistant")


def test_realistic_rollout_filters_injections():
    t = reader.read_session(DATA / "codex_rollout_realistic.jsonl")
    md = t.markdown
    for bad in (
        "AGENTS TEXT",
        "DEVELOPER TEXT",
        "environment_context",
        "BASE INSTRUCTIONS",
        "SHELL OUTPUT",
        "COMPACTED SUMMARY",
        "ENCRYPTED",
    ):
        assert bad not in md
    assert md.count("Why is the build slow?") == 1 and md.count("Thanks, fix it.") == 1
    assert md.count("The build recompiles everything") == 1
    assert "- Tool `shell`: `bash -lc time make`" in md
    assert "- Tool `apply_patch`: `Makefile`" in md
    assert md.count("## User") == 2 and md.count("## Assistant") == 2
    assert t.git_branch == "main" and t.extra["cli_version"] == "0.145.0"


def _place(home: Path, day: str, name: str, src: Path, cwd: str, mtime: float) -> Path:
    d = home / ".codex" / "sessions" / day
    d.mkdir(parents=True, exist_ok=True)
    p = d / name
    p.write_text(
        src.read_text().replace('"/work/codexproj"', f'"{cwd}"').replace('"/workspace/synthetic-project"', f'"{cwd}"')
    )
    os.utime(p, (mtime, mtime))
    return p


def test_find_session(tmp_path):
    home, cwd = tmp_path / "home", tmp_path / "proj"
    cwd.mkdir()
    now = time.time()
    a = _place(home, "2026/01/02", FIXTURE.name, FIXTURE, str(cwd), now - 10)
    b = _place(
        home,
        "2026/04/01",
        "rollout-2026-04-01T08-00-00-019b64e5-57fa-7463-b644-fba7e456f905.jsonl",
        DATA / "codex_rollout_realistic.jsonl",
        str(cwd),
        now,
    )
    _place(
        home,
        "2026/04/02",
        "rollout-2026-04-02T08-00-00-22222222-2222-4222-8222-222222222222.jsonl",
        FIXTURE,
        "/somewhere/else",
        now + 10,
    )
    assert reader.find_session(None, cwd, home, env={}) == b
    assert reader.find_session("11111111-1111-4111-8111-111111111111", cwd, home, env={}) == a
    assert reader.find_session(None, cwd, home, env={"CODEX_THREAD_ID": "11111111-1111-4111-8111-111111111111"}) == a
    assert reader.find_session("does-not-exist", cwd, home, env={}) is None
    assert reader.find_session(None, tmp_path, home, env={}) is None
    # CODEX_HOME
    moved = tmp_path / "ch"
    shutil.copytree(home / ".codex", moved)
    assert reader.find_session(None, cwd, tmp_path / "x", env={"CODEX_HOME": str(moved)}).name == b.name
    # archived sessions are found by id
    arch = home / ".codex" / "archived_sessions"
    arch.mkdir()
    (arch / "rollout-2025-01-01T00-00-00-33333333-3333-4333-8333-333333333333.jsonl").write_text(FIXTURE.read_text())
    assert reader.find_session("33333333-3333-4333-8333-333333333333", cwd, home, env={}) is not None
