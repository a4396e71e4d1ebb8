"""Aider chat-history reader."""

from __future__ import annotations

import shutil
from pathlib import Path

from memorywiki.adapters.aider import reader

FIXTURES = Path(__file__).parent / "data" / "fixtures"
FIXTURE = FIXTURES / "aider" / "chat-history.excerpt.md"


def test_last_session_block():
    t = reader.read_session(FIXTURE)
    assert t.session_id == "2024-08-05 20:39:59" and t.started_at == "2024-08-05 20:39:59"
    md = t.markdown
    assert md.startswith("## User\n\nhi\n\n## Assistant\n\nIt seems like you want")
    assert "Tokens:" not in md and "Aider v0.47.2-dev" not in md and "^C" not in md
    assert "Spinner" not in md  # earlier sessions are not included


def test_specific_block_with_code_and_commands():
    t = reader.read_session(FIXTURE, session_id="2024-08-05 19:33:32")
    md = t.markdown
    assert "## User\n\nUse the Spinner instead of the inlined custom spinner\n" in md
    assert "<<<<<<< SEARCH\ndef run_install(cmd):" in md and ">>>>>>> REPLACE\n```" in md
    assert "- Applied edit to aider/utils.py" in md
    assert "- Command `/diff`" in md and "- Command `/ex`" in md
    assert "Tokens:" not in md and "hi\n" not in md.split("## User")[-1]


def test_multiline_user_and_fenced_quote_lines(tmp_path):
    p = tmp_path / ".aider.chat.history.md"
    p.write_text(
        "\n# aider chat started at 2025-01-01 10:00:00\n\n"
        "> Aider v0.86.2  \n\n"
        "#### first line  \n#### second line  \n\n"
        "Here is a markdown file:\n\n```markdown\n> a quote inside code\n#### a heading inside code\n```\n\nDone.\n\n"
        "> Tokens: 1k sent, 2 received.  \n\n"
        "#### /ask what about this?  \n\n"
        "It is fine.\n\n"
        "#### /run pytest -q  \n"
        "> 3 passed  \n"
    )
    md = reader.read_session(p).markdown
    assert "first line\nsecond line" in md
    assert "```markdown\n> a quote inside code\n#### a heading inside code\n```" in md
    assert "what about this?" in md and "/ask" not in md
    assert "- Command `/run pytest -q`" in md and "3 passed" not in md


def test_find_session(tmp_path):
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / ".git" / "HEAD").write_text("ref: refs/heads/dev\n")
    sub = repo / "src" / "pkg"
    sub.mkdir(parents=True)
    assert reader.find_session(None, sub, tmp_path, env={}) is None
    shutil.copy(FIXTURE, repo / ".aider.chat.history.md")
    found = reader.find_session(None, sub, tmp_path, env={})
    assert found == repo / ".aider.chat.history.md"
    t = reader.read_session(found)
    assert t.git_branch == "dev" and t.cwd == str(repo)
    custom = tmp_path / "h.md"
    shutil.copy(FIXTURE, custom)
    assert reader.find_session(None, sub, tmp_path, env={"AIDER_CHAT_HISTORY_FILE": str(custom)}) == custom
