"""Claude Code, for real: the pinned `claude` binary, pointed at the scripted model, runs the
installed /memory.wiki command and skill and the MCP server against a live Memory.Wiki.

Each `claude -p` run is one user turn; `--resume` continues the same session, so later
captures read the transcript Claude Code itself wrote for the earlier turns.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from memorywiki.adapters.claude_code.reader import encode_cwd, read_session
from memorywiki.skill.render import render_body

from tests.agents import tools
from tests.agents.workspace import (  # noqa: F401 - fixtures
    ANSWER,
    CLI,
    QUESTION,
    Workspace,
    assert_model_clean,
    git_init,
    model_server,
    workspace,
)


@pytest.fixture
def claude() -> str:
    return tools.require("claude")


def run_claude(ws: Workspace, server, exe: str, prompt: str, *extra: str, env: dict | None = None) -> dict:
    """One `claude -p` turn; its JSON result. No permission flags: the command's own
    `allowed-tools` must be what lets Bash run memorywiki."""
    env = {
        "ANTHROPIC_BASE_URL": server.base_url,
        "ANTHROPIC_API_KEY": "sk-test-not-a-real-key",
        "DISABLE_TELEMETRY": "1",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_AUTOUPDATER": "1",
        **(env or {}),
    }
    out = ws.run([exe, "-p", prompt, "--output-format", "json", *extra], env=env)
    assert out.returncode == 0, f"claude exited {out.returncode}:\n{out.stdout[-2000:]}\n{out.stderr[-2000:]}"
    result = json.loads(out.stdout)
    assert not result.get("is_error"), result
    assert result.get("permission_denials") == [], result.get("permission_denials")
    return result


def transcript_path(ws: Workspace, session_id: str) -> Path:
    return ws.home / ".claude" / "projects" / encode_cwd(ws.project) / f"{session_id}.jsonl"


def test_capture_and_recall_through_the_command_and_the_skill(workspace, model_server, claude):
    git_init(workspace.project)
    workspace.memorywiki("install", "claude-code")
    model = model_server.model
    model.chat["HNSW"] = ANSWER

    first = run_claude(workspace, model_server, claude, QUESTION)
    sid = first["session_id"]
    assert first["result"] == ANSWER

    # /memory.wiki capture <title>: a written record, piped through the quoted heredoc.
    result = run_claude(workspace, model_server, claude, "/memory.wiki capture Bob's fix", "--resume", sid)
    step = model.steps[-1]
    assert (step.invocation, step.action, step.argument) == ("", "capture", "Bob's fix")
    # The command body arrived whole, frontmatter gone, $ARGUMENTS and the session id filled.
    body = render_body("claude-code", "command", CLI).replace("$ARGUMENTS", "capture Bob's fix")
    assert body.replace("${CLAUDE_SESSION_ID}", sid).strip() in step.skill_text
    record = workspace.doc(step.output.strip())
    assert record["title"] == "Bob's fix"
    assert f"## Question\n\n{QUESTION}" in record["markdown"]
    assert ANSWER in record["markdown"]  # $, backticks, quotes and backslashes kept verbatim
    assert record["url"] in result["result"]

    # /memory-wiki (the skill) capture --transcript: the page is the session Claude Code wrote.
    result = run_claude(
        workspace, model_server, claude, "/memory-wiki capture --transcript HNSW deadlock session", "--resume", sid
    )
    step = model.steps[-1]
    assert (step.action, step.argument) == ("capture", "HNSW deadlock session")
    assert f'--session "{sid}"' in step.command  # ${CLAUDE_SESSION_ID} is filled in skills too
    page = workspace.doc(step.output.strip())
    assert page["title"] == "HNSW deadlock session" and page["source"] == "claude-code"
    assert page["meta"] == {
        "tool": "claude-code",
        "session_id": sid,
        "cwd": str(workspace.project),
        "git_branch": "main",
    }
    assert f"## User\n\n{QUESTION}\n\n## Assistant\n\n{ANSWER}" in page["markdown"]
    assert "Memory.Wiki keeps answers" not in page["markdown"]  # the expanded command is not a turn
    # Built by the reader from the real transcript: the file, read now, starts with the page.
    transcript = transcript_path(workspace, sid)
    assert read_session(transcript).markdown.startswith(page["markdown"].rstrip())

    # /memory.wiki recall: the answer cites a page that exists.
    workspace.wait_indexed(record["id"], page["id"])
    result = run_claude(
        workspace, model_server, claude, "/memory.wiki recall why did the HNSW index build deadlock?", "--resume", sid
    )
    step = model.steps[-1]
    assert step.command == f"{CLI} recall 'why did the HNSW index build deadlock?' --hybrid --json"
    cited = json.loads(step.output)["results"][0]["doc_url"]
    assert cited in (record["url"], page["url"]) and workspace.page_exists(cited)
    assert f"]({cited})" in result["result"]
    assert_model_clean(model_server)


def test_user_scope_install_is_found(workspace, model_server, claude):
    """`install --user` writes under ~/.claude; Claude Code finds the command there."""
    workspace.memorywiki("install", "claude-code", "--user")
    result = run_claude(workspace, model_server, claude, "/memory.wiki capture --transcript First steps")
    step = model_server.model.steps[-1]
    assert step.action == "capture" and step.argument == "First steps"
    page = workspace.doc(step.output.strip())
    assert page["meta"]["session_id"] == result["session_id"]
    assert page["meta"]["git_branch"] is None  # not a git repo: Claude Code records "HEAD"
    assert_model_clean(model_server)


@pytest.mark.parametrize("scope", ["--project", "--user"])
def test_mcp_recall(workspace, model_server, claude, scope):
    """`install --mcp` registers `memorywiki mcp`; Claude Code starts it, loads the deferred
    recall tool through ToolSearch, and the scripted model's call returns the saved page."""
    workspace.memorywiki("install", "claude-code", scope, "--mcp")
    url = workspace.memorywiki(
        "capture", "--title", "HNSW deadlock fix", "-", stdin=f"## Answer\n\n{ANSWER}\n"
    ).stdout.strip()
    workspace.wait_indexed(url.rsplit("/", 1)[-1])
    # `claude -p` does not wait for MCP servers unless told to (the first request would go out
    # before the tools are listed), and asks before an MCP tool runs: grant recall.
    result = run_claude(
        workspace,
        model_server,
        claude,
        "recall from my memory wiki: how did we fix the HNSW deadlock?",
        "--allowedTools",
        "mcp__memorywiki__recall",
        env={"MCP_CONNECTION_NONBLOCKING": "false"},
    )
    step = model_server.model.steps[-1]
    assert step.action == "mcp-recall" and step.command, step
    assert url in step.output and url in result["result"]
    assert_model_clean(model_server)
