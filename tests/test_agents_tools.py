"""Finding the pinned coding tools: a missing or unpinned tool fails the real-tool tests in
CI, with the reason, and only skips them elsewhere."""

from __future__ import annotations

import pytest

from tests.agents import tools


@pytest.fixture
def no_tools(tmp_path, monkeypatch):
    monkeypatch.setenv("MEMORYWIKI_AGENT_TOOLS", str(tmp_path / "nothing-here"))
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))
    (tmp_path / "bin").mkdir()
    return tmp_path / "bin"


def test_missing_tool_fails_in_ci(no_tools, monkeypatch):
    monkeypatch.setenv("CI", "true")
    why = f"CI must run the real-tool tests, but claude {tools.pinned_version('claude')} is not installed"
    with pytest.raises(pytest.fail.Exception, match=why):
        tools.require("claude")


def test_missing_tool_skips_outside_ci(no_tools, monkeypatch):
    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.skip.Exception, match=r"run scripts/install-agent-tools\.sh"):
        tools.require("aider")


def test_other_version_on_path_is_not_used(no_tools, monkeypatch):
    monkeypatch.setenv("CI", "1")
    fake = no_tools / "codex"
    fake.write_text("#!/bin/sh\necho 'codex-cli 0.0.1'\n")
    fake.chmod(0o755)
    with pytest.raises(pytest.fail.Exception, match=r"codex [0-9.]+ is pinned but .*codex-cli 0.0.1"):
        tools.require("codex")
    fake.write_text(f"#!/bin/sh\necho 'codex-cli {tools.pinned_version('codex')}'\n")
    assert tools.require("codex") == str(fake)


def test_versions_are_pinned_in_one_place():
    assert tools.pins() == {
        "CLAUDE_CODE_VERSION": tools.pinned_version("claude"),
        "CODEX_VERSION": tools.pinned_version("codex"),
        "AIDER_VERSION": tools.pinned_version("aider"),
    }
    table = (tools.REPO / "docs" / "coding-tools.md").read_text(encoding="utf-8")
    for tool in ("claude", "codex", "aider"):
        assert f"| {tools.pinned_version(tool)} |" in table, (
            f"docs/coding-tools.md's table of tested versions lacks {tool}"
        )
