"""The session readers on files the real tools wrote (recorded by the end-to-end tests in
tests/test_agents_*.py with the pinned versions; temp paths, ports and long prompt text that
the readers skip were shortened). These run without the tools installed, so what the real
files showed stays covered everywhere."""

from __future__ import annotations

from pathlib import Path

from memorywiki.adapters.aider.reader import read_session as read_aider
from memorywiki.adapters.claude_code.reader import read_session as read_claude
from memorywiki.adapters.codex.reader import read_session as read_codex

DATA = Path(__file__).parent / "data" / "adapters"
QUESTION = "Why did the HNSW index build deadlock?"
ANSWER_START = "Build the HNSW index after the bulk load: `SET maintenance_work_mem = '1GB'`"


def test_claude_code_2_1_332_transcript():
    t = read_claude(DATA / "claude_code_2.1.332.jsonl")
    md = t.markdown
    assert md.startswith(f"## User\n\n{QUESTION}\n\n## Assistant\n\n{ANSWER_START}")
    # The command's expanded body (isMeta), attachments, prompt snapshots and request blobs
    # are not conversation.
    assert "Memory.Wiki keeps answers" not in md and "system-reminder" not in md
    assert "`/memory.wiki capture --transcript HNSW deadlock session`" in md
    assert "- Tool `Bash`: `memorywiki capture --agent claude-code --session" in md
    assert t.session_id == "868b3a34-2de7-4f63-93fe-34e32ff72c04" and t.cwd == "/home/user/project"
    assert t.git_branch is None  # recorded as "HEAD" outside a git repo
    assert t.extra["version"] == "2.1.332"


def test_codex_0_171_0_rollout():
    t = read_codex(DATA / "codex_0.171.0.jsonl")
    md = t.markdown
    assert md.startswith(f"## User\n\n{QUESTION}\n\n## Assistant\n\n{ANSWER_START}")
    assert md.count(QUESTION) == 1
    # `$memory-wiki` attaches the whole SKILL.md as a user message: not a turn of the user's.
    assert "<skill>" not in md and "Memory.Wiki keeps answers" not in md
    assert "<environment_context>" not in md and "skills_instructions" not in md
    assert "## User\n\n$memory-wiki capture --transcript HNSW deadlock session\n" in md
    assert "- Tool `exec_command`: `memorywiki capture --agent codex" in md
    assert t.session_id == "01a22ce6-0135-7b32-82e5-4cb0ff99f70d"
    assert (t.cwd, t.git_branch, t.extra["cli_version"]) == ("/home/user/project", "main", "0.171.0")


def test_aider_0_86_2_history():
    first = read_aider(DATA / "aider_0.86.2.chat.history.md", "2026-11-30 14:38:48")
    md = first.markdown
    assert md.startswith(f"## User\n\n{QUESTION}\n\n## Assistant\n\n{ANSWER_START}")
    assert "printf '%s\\n' '## Question'" in md  # the model's one-line capture, kept as code
    assert "Run shell command?" not in md and "Tokens:" not in md  # aider's own output lines
    assert md.rstrip().endswith("- Command `/run memorywiki capture --agent aider --title 'HNSW deadlock session'`")
    last = read_aider(DATA / "aider_0.86.2.chat.history.md")
    assert last.session_id == "2026-11-30 14:39:05"
    assert "memory.wiki recall why did the HNSW index build deadlock?" in last.markdown
