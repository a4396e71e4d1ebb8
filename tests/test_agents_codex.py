"""Codex CLI, for real: the pinned `codex exec`, pointed at the scripted model through a
custom Responses provider, runs the installed `$memory-wiki` skill against a live Memory.Wiki.

Each `codex exec` is one user turn; `codex exec resume <id>` continues the thread, so later
captures read the rollout Codex itself wrote for the earlier turns.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from memorywiki.adapters.codex.reader import read_session

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
def codex() -> str:
    return tools.require("codex")


def configure(ws: Workspace, server) -> None:
    """A model provider speaking the Responses API (Codex refuses the chat wire API)."""
    codex_home = ws.home / ".codex"
    codex_home.mkdir(exist_ok=True)
    (codex_home / "config.toml").write_text(
        f'''model = "scripted-model"
model_provider = "scripted"

[model_providers.scripted]
name = "Scripted model"
base_url = "{server.base_url}/v1"
env_key = "SCRIPTED_MODEL_KEY"
wire_api = "responses"
''',
        encoding="utf-8",
    )


def run_codex(ws: Workspace, exe: str, prompt: str, thread: str | None = None, network: bool = True) -> tuple[str, str]:
    """One `codex exec` turn: (thread id, the agent's last message).

    workspace-write is the sandbox users run in; it blocks the network, even to 127.0.0.1,
    unless network access is allowed, and memorywiki has to reach its server.
    """
    argv = [exe, "exec", "--json", "--skip-git-repo-check", "--sandbox", "workspace-write"]
    if network:
        argv += ["-c", "sandbox_workspace_write.network_access=true"]
    argv += ["resume", thread, prompt] if thread else [prompt]
    out = ws.run(argv, env={"SCRIPTED_MODEL_KEY": "not-a-real-key"})
    assert out.returncode == 0, f"codex exited {out.returncode}:\n{out.stdout[-2000:]}\n{out.stderr[-2000:]}"
    events = [json.loads(line) for line in out.stdout.splitlines() if line.startswith("{")]
    thread_id = next(e["thread_id"] for e in events if e.get("type") == "thread.started")
    messages = [
        e["item"]["text"]
        for e in events
        if e.get("type") == "item.completed" and e.get("item", {}).get("type") == "agent_message"
    ]
    assert messages, out.stdout[-2000:]
    return thread_id, messages[-1]


def rollout(ws: Workspace, thread_id: str) -> Path:
    hits = list((ws.home / ".codex" / "sessions").rglob(f"rollout-*-{thread_id}.jsonl"))
    assert len(hits) == 1, hits
    return hits[0]


def test_capture_and_recall_through_the_skill(workspace, model_server, codex):
    git_init(workspace.project)
    workspace.memorywiki("install", "codex")
    configure(workspace, model_server)
    model = model_server.model
    model.chat["HNSW"] = ANSWER

    thread, answer = run_codex(workspace, codex, QUESTION)
    assert answer == ANSWER

    # $memory-wiki capture <title>: a written record through exec_command and a heredoc.
    _, answer = run_codex(workspace, codex, "$memory-wiki capture Bob's fix", thread)
    step = model.steps[-1]
    assert (step.invocation, step.action, step.argument) == ("$memory-wiki", "capture", "Bob's fix")
    # `$memory-wiki` attached the installed SKILL.md whole, frontmatter included.
    installed = (workspace.project / ".agents" / "skills" / "memory-wiki" / "SKILL.md").read_text()
    assert installed.strip() in step.skill_text
    record = workspace.doc(step.output.strip().splitlines()[-1])
    assert record["title"] == "Bob's fix"
    assert f"## Question\n\n{QUESTION}" in record["markdown"] and ANSWER in record["markdown"]
    assert record["url"] in answer

    # $memory-wiki capture --transcript: the page is the rollout Codex wrote.
    _, answer = run_codex(workspace, codex, "$memory-wiki capture --transcript HNSW deadlock session", thread)
    step = model.steps[-1]
    assert step.argument == "HNSW deadlock session"
    page = workspace.doc(step.output.strip().splitlines()[-1])
    assert page["title"] == "HNSW deadlock session" and page["source"] == "codex"
    assert page["meta"] == {"tool": "codex", "session_id": thread, "cwd": str(workspace.project), "git_branch": "main"}
    assert f"## User\n\n{QUESTION}\n\n## Assistant\n\n{ANSWER}" in page["markdown"]
    assert "Memory.Wiki keeps answers" not in page["markdown"]  # the attached skill is not a turn
    assert read_session(rollout(workspace, thread)).markdown.startswith(page["markdown"].rstrip())

    # $memory-wiki recall: the answer cites a page that exists.
    workspace.wait_indexed(record["id"], page["id"])
    _, answer = run_codex(workspace, codex, "$memory-wiki recall why did the HNSW index build deadlock?", thread)
    step = model.steps[-1]
    assert step.command == f"{CLI} recall 'why did the HNSW index build deadlock?' --hybrid --json"
    cited = answer.rsplit("](", 1)[-1].rstrip(")")
    assert cited in (record["url"], page["url"]) and workspace.page_exists(cited)
    assert_model_clean(model_server)


def test_user_scope_install_is_found(workspace, model_server, codex):
    """`install codex --user` must put the skill where Codex looks for a user's skills."""
    workspace.memorywiki("install", "codex", "--user")
    configure(workspace, model_server)
    thread, answer = run_codex(workspace, codex, "$memory-wiki capture --transcript First steps")
    step = model_server.model.steps[-1] if model_server.model.steps else None
    assert step is not None and step.argument == "First steps", (
        f"Codex did not attach the user-scope skill; it answered {answer!r}"
    )
    page = workspace.doc(step.output.strip().splitlines()[-1])
    assert page["meta"]["session_id"] == thread
    assert_model_clean(model_server)


def test_sandbox_without_network_says_so(workspace, model_server, codex):
    """By default the sandbox blocks the network; memorywiki must name the sandbox as the
    cause, not tell the user to start a server that is running (the skill has the model relay
    the error verbatim)."""
    workspace.memorywiki("install", "codex")
    configure(workspace, model_server)
    _, answer = run_codex(workspace, codex, "$memory-wiki capture --transcript Offline", network=False)
    assert "Codex's sandbox blocks network access" in answer and "network_access = true" in answer
    assert "memorywiki serve" not in answer
    assert model_server.model.problems and not model_server.errors  # the capture printed no URL


def test_not_running_message_names_the_codex_sandbox():
    from memorywiki.client.http import not_running_message

    url = "http://127.0.0.1:8000"
    assert "start it with `memorywiki serve`" in not_running_message(url, env={})
    sandboxed = not_running_message(url, env={"CODEX_SANDBOX_NETWORK_DISABLED": "1"})
    assert url in sandboxed and "sandbox blocks network access" in sandboxed and "memorywiki serve" not in sandboxed


def test_hooks_carry_the_last_sessions_decision_into_the_next(workspace, model_server, codex):
    """`install codex --hooks`: a session's end becomes its draft page, and the next session's
    first request carries it. Codex runs a hook only once the user has trusted it (/hooks in
    its TUI); a script says so with --dangerously-bypass-hook-trust, as here."""
    import httpx

    from tests.polling import wait_until

    git_init(workspace.project)
    workspace.run(["git", "remote", "add", "origin", "git@github.com:acme/api.git"])
    workspace.memorywiki("install", "codex", "--hooks", "--user")
    configure(workspace, model_server)
    cfg = workspace.home / ".config" / "memorywiki" / "config.toml"  # a cold test server: see bench/
    cfg.write_text(cfg.read_text() + "\n[hooks]\nstart_timeout = 30\n", encoding="utf-8")
    decided = "Decided: we keep the cache in SQLite WAL mode, because readers never block the writer."
    model_server.model.chat["WAL mode"] = decided

    def run(prompt: str) -> str:
        argv = [codex, "exec", "--dangerously-bypass-hook-trust", "--json", "--skip-git-repo-check"]
        out = workspace.run([*argv, "--sandbox", "workspace-write", prompt], env={"SCRIPTED_MODEL_KEY": "x"})
        assert out.returncode == 0, out.stderr[-2000:]
        events = [json.loads(line) for line in out.stdout.splitlines() if line.startswith("{")]
        return next(e["thread_id"] for e in events if e.get("type") == "thread.started")

    thread = run("Should the cache keep SQLite in WAL mode? Decide it.")
    token = workspace.owner_token()

    def page():
        docs = httpx.get(
            f"{workspace.server_url}/api/hub/{workspace.hub}", headers={"Authorization": f"Bearer {token}"}
        )
        for d in docs.json()["docs"]:
            full = workspace.doc(d["url"])
            if full["meta"].get("session_id") == thread:
                return full
        return None

    captured = wait_until(page, "the Codex session's page", timeout=120)
    assert captured["is_draft"] is True and captured["source"] == "codex" and decided in captured["markdown"]

    seen = len(model_server.exchanges)
    prompt = "What did we decide about the cache?"
    run(prompt)
    first = next(e.turn for e in model_server.exchanges[seen:] if prompt in e.turn.all_text())
    assert captured["url"] in first.all_text() and "WAL mode" in first.all_text()
    assert_model_clean(model_server)
