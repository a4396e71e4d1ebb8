"""Claude Code, for real: the pinned `claude` binary, pointed at the scripted model, runs the
installed /memory.wiki command and skill and the MCP server against a live Memory.Wiki.

Each `claude -p` run is one user turn; `--resume` continues the same session, so later
captures read the transcript Claude Code itself wrote for the earlier turns.
"""

from __future__ import annotations

import json
import os
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


# ---- the hooks: memory that follows the person from one session to the next ------------------

DECIDE = "Should the cache keep SQLite in WAL mode? Decide it for this project."
DECIDED = "Decided: we keep the cache in SQLite WAL mode, because readers never block the writer."
NEXT = "What did we decide about the cache last time?"
# Secrets in their providers' real formats, made up (tests/data/secrets/make_secrets.py).
SECRETS = {
    k["name"]: k
    for k in json.loads((Path(__file__).parent / "data" / "secrets" / "kinds.json").read_text())
    if k["name"] in ("aws-access-key", "aws-secret-key", "openai-api-key")
}


def hooked(ws: Workspace, *extra: str) -> None:
    """A project in git with its origin, `memorywiki install claude-code --hooks` run in it."""
    git_init(ws.project)
    ws.run(["git", "remote", "add", "origin", "git@github.com:acme/api.git"])
    ws.memorywiki("install", "claude-code", "--hooks", *extra)
    # A test server's first recall is cold (seconds on a loaded machine); what these tests show
    # is what the hooks do, bench/ measures how fast (bench/results/hooks.md).
    cfg = ws.home / ".config" / "memorywiki" / "config.toml"
    cfg.write_text(cfg.read_text() + "\n[hooks]\nstart_timeout = 30\nprompt_timeout = 30\n", encoding="utf-8")


def session_pages(ws: Workspace) -> list[dict]:
    import httpx

    token = ws.owner_token()
    docs = httpx.get(f"{ws.server_url}/api/hub/{ws.hub}", headers={"Authorization": f"Bearer {token}"}).json()
    pages = [ws.doc(d["url"]) for d in docs["docs"]]
    return [p for p in pages if p["meta"].get("session_id")]


def wait_session_page(ws: Workspace, sid: str, turns: int = 2) -> dict:
    from tests.polling import wait_until

    def found():
        pages = [p for p in session_pages(ws) if p["meta"]["session_id"] == sid]
        return pages[0] if pages and pages[0]["meta"]["capture"]["turns"] >= turns else None

    return wait_until(found, f"the page of session {sid} with {turns} turns", timeout=120)


def first_request(server, after: int, prompt: str):
    """The first model request after exchange `after` that carries the user's `prompt`."""
    for exchange in server.exchanges[after:]:
        if any(prompt in m.text for m in exchange.turn.messages):
            return exchange.turn
    raise AssertionError(f"no request carried {prompt!r}")


def test_the_next_session_starts_with_what_the_last_one_decided(workspace, model_server, claude):
    hooked(workspace)
    model = model_server.model
    model.chat["WAL mode"] = DECIDED
    model.chat["decide about the cache"] = "Last time we decided on WAL mode."

    first = run_claude(workspace, model_server, claude, DECIDE)
    sid = first["session_id"]
    assert first["result"] == DECIDED
    # The session ended: its transcript became one draft page of the project, summary on top.
    page = wait_session_page(workspace, sid)
    assert page["is_draft"] is True and page["source"] == "claude-code"
    assert page["meta"]["project"]["keys"][:2] == ["remote:github.com/acme/api", f"path:{workspace.project}"]
    summary = page["markdown"].split("\n## User", 1)[0]
    assert summary.startswith("## Summary") and "WAL mode" in summary
    assert f"## User\n\n{DECIDE}\n\n## Assistant\n\n{DECIDED}" in page["markdown"]

    # A new session: its first model request carries what the first one decided, with its URL.
    seen = len(model_server.exchanges)
    second = run_claude(workspace, model_server, claude, NEXT)
    assert second["session_id"] != sid
    request = first_request(model_server, seen, NEXT)
    context = request.system if "<memorywiki" in request.system else request.all_text()
    injected = context[context.index("<memorywiki") : context.index("</memorywiki>") + len("</memorywiki>")]
    print("\n--- injected at the start of the second session ---\n" + injected)
    assert page["url"] in injected and "WAL mode" in injected
    assert f"## Lately in {workspace.project.name}" in injected
    # `request` is the session's first request carrying the user's prompt (first_request): any
    # the tool made before it are its own, without the prompt
    note = os.environ.get("MEMORYWIKI_HOOKS_SESSION_MD")
    if note:  # the record for bench/results/hooks-session.md (docs/coding-tools.md links it)
        write_session_note(Path(note), claude, page, second, request, injected)
    assert_model_clean(model_server)


def write_session_note(path: Path, exe: str, page: dict, second: dict, request, injected: str) -> None:
    import subprocess

    version = subprocess.run([exe, "--version"], capture_output=True, text=True).stdout.strip()
    where = "the system prompt" if "<memorywiki" in request.system else "a message"
    path.write_text(
        "## Two real Claude Code sessions, one after another\n\n"
        "`tests/test_agents_claude_code.py::test_the_next_session_starts_with_what_the_last_one_decided`,\n"
        f"run with `MEMORYWIKI_HOOKS_SESSION_MD={path.name}`: Claude Code {version} (pinned,\n"
        "scripts/install-agent-tools.sh), `memorywiki install claude-code --hooks` in a fresh git project,\n"
        "a scripted model server on loopback, a live Memory.Wiki server.\n\n"
        f"1. First session (`claude -p`): {DECIDE!r}, answered {DECIDED!r}. Its end made the draft\n"
        f"   page {page['url']} (summary on top).\n"
        f"2. Second session (`claude -p`, session {second['session_id']}): {NEXT!r}. Its first model\n"
        f"   request carried, in {where}, what the SessionStart hook injected:\n\n"
        f"```\n{injected}\n```\n",
        encoding="utf-8",
    )


def test_a_resumed_session_updates_its_page_and_never_makes_a_second(workspace, model_server, claude):
    hooked(workspace, "--recall-prompts")
    model_server.model.chat["WAL mode"] = DECIDED
    model_server.model.chat["checkpoint"] = "Checkpoint every 1000 pages with wal_autocheckpoint."
    sid = run_claude(workspace, model_server, claude, DECIDE)["session_id"]
    page = wait_session_page(workspace, sid)

    run_claude(workspace, model_server, claude, "And how often should the WAL checkpoint run?", "--resume", sid)
    resumed = wait_session_page(workspace, sid, turns=4)
    assert resumed["id"] == page["id"] and resumed["version"] > page["version"]
    assert "wal_autocheckpoint" in resumed["markdown"] and resumed["is_draft"] is True
    assert [p["id"] for p in session_pages(workspace) if p["meta"]["session_id"] == sid] == [page["id"]]
    assert_model_clean(model_server)


def test_a_secret_typed_in_a_session_is_in_no_page_version_or_recall(workspace, model_server, claude):
    import httpx

    hooked(workspace)
    keys = [k["secret"] for k in SECRETS.values()]
    prompt = "For the WAL mode migration, use these:\n" + "\n".join(k["line"] for k in SECRETS.values())
    model_server.model.chat["WAL mode"] = DECIDED
    sid = run_claude(workspace, model_server, claude, prompt)["session_id"]
    page = wait_session_page(workspace, sid)
    owner = {"Authorization": f"Bearer {workspace.owner_token()}"}
    # published, so that public recall and the markdown twin can see it at all
    httpx.patch(f"{workspace.server_url}/api/docs/{page['id']}", json={"is_draft": False}, headers=owner)
    workspace.wait_indexed(page["id"])
    seen = [workspace.doc(page["url"])["markdown"], httpx.get(page["url"], headers={"Accept": "text/markdown"}).text]
    versions = httpx.get(f"{workspace.server_url}/api/docs/{page['id']}/versions", headers=owner).json()["versions"]
    for v in versions:
        number = v["version"]
        seen.append(httpx.get(f"{workspace.server_url}/api/docs/{page['id']}/versions/{number}", headers=owner).text)
    for secret in keys:
        found = httpx.post(
            f"{workspace.server_url}/api/hub/{workspace.hub}/recall", json={"question": secret, "k": 10}
        ).json()
        seen.append(json.dumps(found))
    context = httpx.post(
        f"{workspace.server_url}/api/hub/{workspace.hub}/agent-context",
        json={"kind": "start", "project": page["meta"]["project"]},
        headers=owner,
    ).json()
    seen.append(context["text"])
    assert "[redacted: " in seen[0]  # the page says what was there
    for text in seen:
        assert not [k for k in keys if k in text]
