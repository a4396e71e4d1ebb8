"""Claude Code transcript reader: fixtures, branching, compaction, discovery, big files."""

from __future__ import annotations

import json
import os
import shutil
import time
import tracemalloc
from pathlib import Path

from memorywiki.adapters.claude_code import reader
from memorywiki.adapters.sessions import capture_session

FIXTURES = Path(__file__).parent / "data" / "fixtures"
DATA = Path(__file__).parent / "data" / "adapters"


def test_representative_fixture():
    t = reader.read_session(FIXTURES / "claude-code" / "representative_messages.jsonl")
    md = t.markdown
    assert t.tool == "claude-code" and t.session_id == "test_session" and t.cwd == "/tmp"
    assert t.started_at == "2025-06-14T10:00:00Z"
    assert md.startswith("## User\n\nHello Claude!")
    assert md.count("## User") == 4 and md.count("## Assistant") == 3
    assert "```python\ndef my_decorator(func):" in md  # code kept verbatim
    assert "- Tool `Edit`: `/tmp/decorator_example.py`" in md
    assert "- Tool `Bash`: `python /tmp/decorator_example.py`" in md
    assert "tool_result" not in md and "tool_use_id" not in md
    assert t.title.startswith("User learned about Python decorators")


def test_branching_meta_commands_and_noise():
    t = reader.read_session(DATA / "claude_branching.jsonl")
    md = t.markdown
    assert "OLD QUESTION" not in md and "OLD ANSWER" not in md  # abandoned branch
    assert "DUPLICATE UUID" not in md
    assert "SIDECHAIN" not in md
    assert "EXPANDED COMMAND BODY" not in md and "LOCAL STDOUT" not in md
    assert "<system-reminder>" not in md and "Injected reminder" not in md
    assert "private chain of thought" not in md and "TOOL_OUTPUT_MUST_NOT_RENDER" not in md
    assert "`/memory.wiki recall streaming parsers`" in md  # command args kept as one line
    assert "/clear" not in md
    # blocks of one message id merged into one assistant turn, code fence intact
    assert md.count("## Assistant") == 2
    assert "```python\nfor line in fh:\n    obj = json.loads(line)\n# not a heading\n```" in md
    assert "\n#### Heading inside answer\n" in md  # demoted below the turn level
    assert "- Tool `Bash`: `wc -l big.jsonl # count`" in md
    assert md.count("Memory stays bounded by the longest line.") == 1  # re-written block
    assert md.index("The file has 42 lines.") < md.index("New question")
    assert t.title == "Lazy JSONL parsing" and t.git_branch == "feature/x"
    assert t.session_id == "sess-branch"


def test_compaction_keeps_history_and_drops_summary():
    t = reader.read_session(DATA / "claude_compaction.jsonl")
    md = t.markdown
    assert "First question before compaction" in md and "First answer before compaction" in md
    assert "Question after compaction" in md and "Answer after compaction" in md
    assert "SUMMARY TEXT" not in md
    assert "compacted" in md.lower()
    assert t.extra["compactions"] == 1


def test_compaction_summary_kept_when_history_missing(tmp_path):
    lines = (DATA / "claude_compaction.jsonl").read_text().splitlines()[2:]  # no pre-history
    p = tmp_path / "s.jsonl"
    p.write_text("\n".join(lines) + "\n")
    md = reader.read_session(p).markdown
    assert "SUMMARY TEXT" in md and "Answer after compaction" in md


def test_empty_and_garbage_file(tmp_path):
    p = tmp_path / "x.jsonl"
    p.write_text('garbage\n[1,2]\n{"type": "unknown"}\n')
    t = reader.read_session(p)
    assert t.markdown == "" and t.turns == 0 and t.is_empty


def _project(home: Path, cwd: Path, name: str, src: Path, mtime: float, cwd_field: str | None = None) -> Path:
    d = home / ".claude" / "projects" / reader.encode_cwd(cwd)
    d.mkdir(parents=True, exist_ok=True)
    p = d / name
    text = src.read_text().replace('"/work/proj"', json.dumps(cwd_field or str(cwd)))
    p.write_text(text)
    os.utime(p, (mtime, mtime))
    return p


def test_encode_cwd():
    assert reader.encode_cwd("/Users/me/my_repo.v2") == "-Users-me-my-repo-v2"
    assert reader.encode_cwd("/home/u/.agents") == "-home-u--agents"


def test_find_session_by_id_and_by_cwd(tmp_path):
    home, cwd = tmp_path / "home", tmp_path / "proj"
    cwd.mkdir()
    now = time.time()
    old = _project(home, cwd, "aaaa.jsonl", DATA / "claude_branching.jsonl", now - 100)
    new = _project(home, cwd, "bbbb.jsonl", DATA / "claude_compaction.jsonl", now)
    # a newer transcript in the same folder recorded for another cwd is skipped
    _project(home, cwd, "cccc.jsonl", DATA / "claude_compaction.jsonl", now + 50, cwd_field="/elsewhere")
    # subagent transcripts are not sessions
    _project(home, cwd, "agent-1234.jsonl", DATA / "claude_compaction.jsonl", now + 60)
    env: dict[str, str] = {}
    assert reader.find_session(None, cwd, home, env=env) == new
    assert reader.find_session("aaaa", cwd, home, env=env) == old
    assert reader.find_session(None, cwd, home, env={"CLAUDE_CODE_SESSION_ID": "aaaa"}) == old
    assert reader.find_session("nope", cwd, home, env=env) is None
    assert reader.find_session("../etc", cwd, home, env=env) is None
    assert reader.find_session(None, tmp_path / "other", home, env=env) is None
    # CLAUDE_CONFIG_DIR moves the root
    moved = tmp_path / "cfg"
    shutil.copytree(home / ".claude", moved)
    assert (
        reader.find_session("aaaa", cwd, tmp_path / "nohome", env={"CLAUDE_CONFIG_DIR": str(moved)}).name
        == "aaaa.jsonl"
    )
    t = capture_session("claude", "aaaa", cwd=cwd, home=home, env=env)
    assert t is not None and "New question" in t.markdown


def test_find_session_scans_other_dirs_when_name_differs(tmp_path):
    home, cwd = tmp_path / "home", tmp_path / "proj"
    cwd.mkdir()
    d = home / ".claude" / "projects" / "truncated-name-abc123"
    d.mkdir(parents=True)
    p = d / "zzzz.jsonl"
    p.write_text((DATA / "claude_compaction.jsonl").read_text().replace('"/work/proj"', json.dumps(str(cwd))))
    assert reader.find_session(None, cwd, home, env={}) == p


def test_big_transcript_bounded_memory(tmp_path):
    """~50 MB of JSONL (large tool results, as in real sessions) read in bounded memory."""
    p = tmp_path / "big.jsonl"
    blob = "x" * 40_000
    parent = None
    n = 0
    with open(p, "w") as fh:
        while fh.tell() < 50 * 1024 * 1024:
            u, a, r = f"u{n}", f"a{n}", f"r{n}"
            fh.write(
                json.dumps(
                    {
                        "type": "user",
                        "uuid": u,
                        "parentUuid": parent,
                        "sessionId": "big",
                        "cwd": "/w",
                        "message": {"role": "user", "content": f"question {n}"},
                    }
                )
                + "\n"
            )
            fh.write(
                json.dumps(
                    {
                        "type": "assistant",
                        "uuid": a,
                        "parentUuid": u,
                        "sessionId": "big",
                        "message": {
                            "id": f"m{n}",
                            "role": "assistant",
                            "content": [
                                {
                                    "type": "tool_use",
                                    "id": f"t{n}",
                                    "name": "Read",
                                    "input": {"file_path": f"/w/f{n}.py"},
                                }
                            ],
                        },
                    }
                )
                + "\n"
            )
            fh.write(
                json.dumps(
                    {
                        "type": "user",
                        "uuid": r,
                        "parentUuid": a,
                        "sessionId": "big",
                        "message": {
                            "role": "user",
                            "content": [{"type": "tool_result", "tool_use_id": f"t{n}", "content": blob}],
                        },
                    }
                )
                + "\n"
            )
            parent = r
            n += 1
    size = p.stat().st_size
    assert size >= 50 * 1024 * 1024
    tracemalloc.start()
    try:
        t = reader.read_session(p)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert t.markdown.count("## User") == n
    assert f"question {n - 1}" in t.markdown
    assert peak < 12 * 1024 * 1024, peak  # far below the file size
