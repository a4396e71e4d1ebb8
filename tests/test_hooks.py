"""The hooks as a coding tool runs them (`python -m memorywiki.adapters.hooks TOOL EVENT`, its
JSON on stdin) against a live server, and what `memorywiki install --hooks` writes and
`uninstall` takes out. The real tools run them in tests/test_agents_*.py."""

from __future__ import annotations

import asyncio
import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
from memorywiki.adapters.hooks import lean
from memorywiki.adapters.hooks.capture import fit
from memorywiki.adapters.hooks.project import project_of
from memorywiki.adapters.install.hook_config import hook_command
from memorywiki.cli.main import app
from memorywiki.client.config import Config
from starlette.applications import Starlette
from starlette.responses import JSONResponse
from starlette.routing import Route
from typer.testing import CliRunner

from tests.hook_helpers import claude_transcript, git_project, make_machine
from tests.polling import wait_until
from tests.threaded_server import ThreadedServer

runner = CliRunner()
DECISION = "We decided to keep the cache in SQLite WAL mode, because readers never block the writer."
TURNS = [("Should the cache keep SQLite in WAL mode?", DECISION)]


@pytest.fixture
def machine(live_server, tmp_path):
    hub = "dev"
    token = httpx.post(f"{live_server.url}/api/hubs", json={"slug": hub}).json()["owner_token"]
    return make_machine(tmp_path, live_server.url, hub, token)


def payload(machine, sid: str, transcript: Path | None = None, **extra) -> dict:
    return {
        "session_id": sid,
        "transcript_path": str(transcript) if transcript else None,
        "cwd": str(machine.project),
        **extra,
    }


def output(out) -> dict:
    assert out.returncode == 0, out.stderr
    assert "Traceback" not in out.stderr, out.stderr
    return json.loads(out.stdout) if out.stdout.strip() else {}


# ---- a session's start ---------------------------------------------------------------------


def test_session_start_injects_the_projects_memory_in_each_tools_shape(machine):
    page = httpx.put(
        f"{machine.server}/api/hub/dev/agent-sessions/claude-code/earlier",
        json={
            "title": "api: cache mode",
            "transcript": f"## User\n\nWAL?\n\n## Assistant\n\n{DECISION}\n",
            "project": project_of(machine.project),
        },
        headers=machine.headers,
    ).json()

    out, _ = machine.hook("claude-code", "session-start", payload(machine, "now", source="startup"))
    data = output(out)
    assert "hookSpecificOutput" in data, data
    context = data["hookSpecificOutput"]
    assert context["hookEventName"] == "SessionStart"
    assert page["url"] in context["additionalContext"] and "WAL mode" in context["additionalContext"]

    # the tokens it injected are in its output, as the server counted them
    def counted():  # counted once the answer is sent
        usage = httpx.get(f"{machine.server}/api/hub/dev/agent-context/usage", headers=machine.headers).json()
        return usage["by_kind"]["start"]["tokens"]

    tokens = wait_until(counted, "the injection to be counted")
    assert data["systemMessage"] == f"Memory.Wiki: {tokens} tokens of memory for api from hub dev (1 sources)"

    codex = output(machine.hook("codex", "session-start", payload(machine, "c1"))[0])
    assert codex["hookSpecificOutput"]["additionalContext"] == context["additionalContext"]
    cursor = output(
        machine.hook("cursor", "session-start", {"session_id": "x", "workspace_roots": [str(machine.project)]})[0]
    )
    assert cursor == {"additional_context": context["additionalContext"]}
    # a hub with nothing on this project injects nothing, and says nothing
    other = machine.project.parent / "other"
    other.mkdir()
    quiet = output(machine.hook("claude-code", "session-start", {"session_id": "q", "cwd": str(other)})[0])
    assert quiet == {}


def test_a_prompt_gets_the_passages_above_the_floor(machine, live_server):
    from tests.polling import wait_indexed

    created = httpx.post(
        f"{machine.server}/api/docs",
        json={
            "hub": "dev",
            "title": "Runbook",
            "markdown": "## Rollback\n\nTo roll back the deploy, run make rollback.",
        },
        headers=machine.headers,
    ).json()
    wait_indexed(live_server, doc_ids=[created["id"]])
    data = output(
        machine.hook("claude-code", "prompt", payload(machine, "p", prompt="how do I roll back the deploy?"))[0]
    )
    assert data["hookSpecificOutput"]["hookEventName"] == "UserPromptSubmit"
    assert created["url"] in data["hookSpecificOutput"]["additionalContext"]
    assert data["systemMessage"].startswith("Memory.Wiki: +")
    assert output(machine.hook("claude-code", "prompt", payload(machine, "p", prompt="ok go"))[0]) == {}


# ---- a session's end -------------------------------------------------------------------------


def test_a_session_end_becomes_its_draft_page_and_a_compaction_updates_it(machine):
    sid = "7f0c-session"
    transcript = claude_transcript(machine.home / "t" / f"{sid}.jsonl", sid, machine.project, TURNS)
    out, _ = machine.hook("claude-code", "session-end", payload(machine, sid, transcript, reason="exit"))
    assert output(out) == {}  # nothing for the tool: the capture runs on, detached

    page = machine.wait_page(sid)
    assert page["is_draft"] is True and page["title"] == "api: Should the cache keep SQLite in WAL mode?"
    assert page["meta"]["project"]["remote"] == "github.com/acme/api"
    assert page["meta"]["project"]["path"] == str(machine.project)
    assert page["markdown"].startswith("## Summary") and DECISION in page["markdown"]

    more = [*TURNS, ("And checkpoints?", "Every 1000 pages, with wal_autocheckpoint.")]
    claude_transcript(transcript, sid, machine.project, more)
    machine.hook("claude-code", "pre-compact", payload(machine, sid, transcript, trigger="auto"))
    updated = machine.wait_page(sid, turns=4)
    assert updated["id"] == page["id"] and "wal_autocheckpoint" in updated["markdown"]
    assert len(machine.session_pages()) == 1
    wait_until(lambda: not list((machine.state / "spool").glob("*.json")), "the spool to empty")


def test_a_session_resumed_after_its_page_was_edited_or_deleted_by_hand_loses_nothing(machine):
    """The owner's hand wins, and the session's later turns are still kept: below the text they
    edited, or on a new page once they deleted the session's page. The tool waits for neither."""
    sid = "resumed"
    transcript = machine.home / "t" / f"{sid}.jsonl"
    turns = list(TURNS)
    claude_transcript(transcript, sid, machine.project, turns)
    machine.hook("claude-code", "session-end", payload(machine, sid, transcript))
    page = machine.wait_page(sid)
    owner = machine.headers

    edited = "## Notes\n\nMy own words on the cache: WAL, decided on Monday.\n"
    r = httpx.patch(f"{machine.server}/api/docs/{page['id']}", json={"markdown": edited}, headers=owner)
    assert r.status_code == 200, r.text
    turns.append(("And checkpoints?", "Every 1000 pages, with wal_autocheckpoint."))
    claude_transcript(transcript, sid, machine.project, turns)
    out, elapsed = machine.hook("claude-code", "session-end", payload(machine, sid, transcript))
    assert output(out) == {} and elapsed < 10  # the capture runs on, detached
    kept = machine.wait_page(sid, turns=4)
    assert kept["id"] == page["id"]
    assert kept["markdown"].startswith(edited.strip())  # their text, as they left it
    assert "wal_autocheckpoint" in kept["markdown"] and "Session continued" in kept["markdown"]

    assert httpx.delete(f"{machine.server}/api/docs/{page['id']}", headers=owner).status_code == 200
    turns.append(("And the backup?", "Nightly, with the online backup API."))
    claude_transcript(transcript, sid, machine.project, turns)
    out, elapsed = machine.hook("claude-code", "session-end", payload(machine, sid, transcript))
    assert output(out) == {} and elapsed < 10
    fresh = machine.wait_page(sid, turns=6)
    assert fresh["id"] != page["id"]  # a new page: the deleted one stays deleted
    assert httpx.get(f"{machine.server}/api/docs/{page['id']}", headers=owner).status_code == 404
    for _, answer in turns:  # every turn of the session is on it
        assert answer in fresh["markdown"]
    wait_until(lambda: not list((machine.state / "spool").glob("*.json")), "the spool to empty")


def test_a_50_mb_transcript_ends_the_session_at_once_and_is_kept_within_the_page_limit(machine):
    sid = "big-one"
    chunk = "Line of build output that goes on and on. " * 24_000  # ~1 MB a turn
    turns = [("Start the migration of the orders table.", "Starting.")]
    turns += [(f"Step {i}: paste the log", f"Log {i}:\n\n{chunk}") for i in range(50)]
    turns += [("What did we end up deciding?", "Keep the old table until the backfill is verified.")]
    transcript = claude_transcript(machine.home / "t" / f"{sid}.jsonl", sid, machine.project, turns)
    assert transcript.stat().st_size > 50_000_000

    out, elapsed = machine.hook("claude-code", "session-end", payload(machine, sid, transcript))
    assert output(out) == {}
    assert elapsed < 20  # bounds a hang; the capture itself runs on in the background

    page = machine.wait_page(sid, timeout=300)
    assert len(page["markdown"].encode()) < 3_600_000
    assert "Start the migration of the orders table." in page["markdown"]  # the first turn
    assert "Keep the old table until the backfill is verified." in page["markdown"]  # the last
    assert "turns in the middle left out" in page["markdown"] and str(transcript) in page["markdown"]


def test_fit_keeps_a_small_transcript_whole_and_cuts_a_huge_turn():
    small = "## User\n\nhi\n\n## Assistant\n\nhello\n"
    assert fit(small, 1000, "/t.jsonl") == (small, None)
    huge = "## User\n\n" + "x" * 50_000 + "\n\n## Assistant\n\n" + "y" * 50_000 + "\n"
    text, note = fit(huge, 20_000, None)
    assert len(text) < 20_000 and "left out" in text and note.startswith("0 turns")


# ---- never stalls, never loses -------------------------------------------------------------------


class Misbehaving(ThreadedServer):
    """A server that answers 500, or answers nothing for a long time."""

    name = "misbehaving"

    def __init__(self, mode: str):
        async def handle(request):
            if mode == "slow":
                await asyncio.sleep(60)
            return JSONResponse({"error": {"code": "boom", "message": "it broke"}}, status_code=500)

        self.app = Starlette(routes=[Route("/{rest:path}", handle, methods=["GET", "POST", "PUT"])])


@pytest.mark.parametrize("mode", ["down", "5xx", "slow"])
def test_a_server_down_slow_or_failing_never_stalls_the_session(tmp_path, mode):
    server = Misbehaving(mode).start()
    url = server.base_url
    if mode == "down":
        server.stop()
    try:
        machine = make_machine(tmp_path, url, "dev", "mwo_token")
        machine.write_config("mwo_token", start_timeout=0.5, prompt_timeout=0.5, capture_timeout=1)
        out, elapsed = machine.hook("claude-code", "session-start", {"session_id": "s", "cwd": str(machine.project)})
        data = output(out)
        assert "hookSpecificOutput" not in data
        line = data["systemMessage"]
        assert line.startswith("Memory.Wiki: ") and line.endswith("going on without it") and "\n" not in line
        assert {"down": "not reachable", "5xx": "answered 500: it broke", "slow": "within 0.5 s"}[mode] in line
        assert elapsed < 15  # bounds a hang: the hook gave up after its 0.5 s

        # a session that ends meanwhile is kept, not lost
        sid = "kept"
        transcript = claude_transcript(machine.home / "t.jsonl", sid, machine.project, TURNS)
        machine.hook("claude-code", "session-end", payload(machine, sid, transcript))
        wait_until(lambda: "kept for later" in machine.log(), "the capture to be kept for later")
        assert (machine.state / "spool" / f"claude-code--{sid}.json").exists()
    finally:
        server.stop()


def test_without_a_token_sessions_wait_until_one_is_set(machine):
    token = machine.token
    machine.write_config(None)
    sid = "no-token"
    transcript = claude_transcript(machine.home / "t.jsonl", sid, machine.project, TURNS)
    data = output(machine.hook("claude-code", "session-start", payload(machine, "x"))[0])
    assert "no token for hub dev" in data["systemMessage"]
    machine.hook("claude-code", "session-end", payload(machine, sid, transcript))
    wait_until(lambda: "kept for later: no token for hub dev" in machine.log(), "the capture to wait for a token")
    assert machine.session_pages() == []

    machine.write_config(token)
    output(machine.hook("claude-code", "session-start", payload(machine, "y"))[0])  # sends what waited
    assert machine.wait_page(sid)["is_draft"] is True
    wait_until(lambda: not list((machine.state / "spool").glob("*.json")), "the spool to empty")


def test_no_hub_configured_says_so_in_one_line(tmp_path):
    machine = make_machine(tmp_path, "http://127.0.0.1:9", "dev", None)
    (machine.home / ".config" / "memorywiki" / "config.toml").write_text('server = "http://127.0.0.1:9"\n')
    data = output(machine.hook("claude-code", "session-start", {"session_id": "s"})[0])
    assert data == {
        "systemMessage": "Memory.Wiki: no hub configured, so no memory (memorywiki hub use SLUG --token TOKEN)"
    }
    garbage = subprocess.run(
        [sys.executable, "-m", "memorywiki.adapters.hooks", "claude-code", "session-start"],
        input="not json at all",
        capture_output=True,
        text=True,
        env=machine.env,
        cwd=machine.project,
    )
    assert garbage.returncode == 0 and "Traceback" not in garbage.stderr


# ---- what the hook reads ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "env",
    [
        {},
        {"MEMORYWIKI_URL": "http://example.org:9000/", "MEMORYWIKI_HUB": "b"},
        {"MEMORYWIKI_TOKEN": "mwo_env"},
        {"MEMORYWIKI_HUB": "nope"},
    ],
)
def test_the_hook_reads_the_config_as_the_cli_does(tmp_path, monkeypatch, env):
    cfg = tmp_path / "cfg.toml"
    cfg.write_text(
        'server = "127.0.0.1:8000"\nhub = "a"\n[hubs.a]\nowner_token = "mwo_a"\n[hubs.b]\nowner_token = "mwo_b"\n'
    )
    for name in ("MEMORYWIKI_URL", "MEMORYWIKI_HUB", "MEMORYWIKI_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("MEMORYWIKI_CONFIG", str(cfg))
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    cli = Config.load()
    hook = lean.load(os.environ)
    assert hook.server == cli.server_url()
    assert hook.hub == cli.resolve_hub(None)
    assert hook.token == cli.hub_token(cli.resolve_hub(None))
    assert Path(lean.config_path(os.environ)) == cfg


@pytest.mark.parametrize(
    "text",
    [
        'server = "http://127.0.0.1:8000"\nhub = "a"\n\n[hubs.a]\nowner_token = "mwo_a"\n',
        '# mine\nhub = "a" # the default\n[hooks]\nmax_tokens = 800\nstart_timeout = 1.5\nx = true\n',
        '[hubs."dotted.slug"]\nowner_token = "t"\n',  # a quoted key: tomllib reads it
        'server = "http://h/\\u00e9"\n',  # an escape: tomllib
        "hub = 'literal'\nlist = [1, 2]\nwhen = 2026-12-02\n",
        "[hubs]\na = { owner_token = 't' }\n",
    ],
)
def test_the_hooks_config_reader_reads_what_tomllib_reads(text):
    import tomllib

    assert lean.read_toml(text) == tomllib.loads(text)


def test_a_broken_config_is_said_once_and_the_hook_goes_on(tmp_path):
    machine = make_machine(tmp_path, "http://127.0.0.1:9", "dev", None)
    (machine.home / ".config" / "memorywiki" / "config.toml").write_text('server = "http://127.0.0.1:9\n[[x')
    data = output(machine.hook("claude-code", "session-start", {"session_id": "s"})[0])
    assert data["systemMessage"].startswith("Memory.Wiki: no hub configured")
    assert "cannot read" in machine.log()


def test_the_hooks_json_is_jsons():
    for text in ('{"a": [1, 2.5, -3e5, true, false, null, "\\u00fc\\n"]}', " [] ", '"s"', "NaN"):
        assert json.dumps(lean.loads(text)) == json.dumps(json.loads(text))
    for bad in ("", "{", '{"a": 1} x', "[1,]"):
        with pytest.raises(ValueError):
            lean.loads(bad)
    value = {"a": 'ü\n"', "b": [1, 2.5, None, True], "c": {"d": -1}}
    assert lean.dumps(value) == json.dumps(value, ensure_ascii=False)
    with pytest.raises(TypeError):
        lean.dumps({"a": object()})


def test_the_installed_hook_imports_only_what_it_needs(tmp_path):
    """The installed command (-I -S, run.py) loads a handful of modules: no site, no json
    package, re, pathlib, socket, threading or tomllib (adapters/hooks/lean.py says why)."""
    machine = make_machine(tmp_path, "http://127.0.0.1:9", "dev", "mwo_t")
    python, *rest = shlex.split(hook_command("claude-code", "session-start"))
    out = subprocess.run(
        [python, "-X", "importtime", *rest],
        input=json.dumps({"session_id": "s", "cwd": str(machine.project)}),
        capture_output=True,
        text=True,
        env=machine.env,
        cwd=machine.project,
    )
    assert "not reachable" in json.loads(out.stdout)["systemMessage"]
    imported = {line.rsplit("|", 1)[1].strip() for line in out.stderr.splitlines() if line.startswith("import time:")}
    assert "memorywiki.adapters.hooks.main" in imported
    assert not imported & {"site", "json", "re", "pathlib", "socket", "threading", "tomllib", "typing", "subprocess"}


def test_a_project_is_its_git_root_and_origin(tmp_path):
    repo = tmp_path / "shop"
    (repo / "src" / "deep").mkdir(parents=True)
    git_project(repo, "https://github.com/acme/shop.git")
    assert project_of(repo / "src" / "deep") == {
        "name": "shop",
        "remote": "https://github.com/acme/shop.git",
        "path": str(repo),
    }
    worktree = tmp_path / "shop-wt"
    subprocess.run(
        ["git", "-c", "user.email=a@b", "-c", "user.name=a", "commit", "-q", "--allow-empty", "-m", "x"],
        cwd=repo,
        check=True,
    )
    subprocess.run(["git", "worktree", "add", "-q", str(worktree)], cwd=repo, check=True)
    assert project_of(worktree)["remote"] == "https://github.com/acme/shop.git"
    plain = tmp_path / "notes"
    plain.mkdir()
    assert project_of(plain) == {"name": "notes", "remote": None, "path": str(plain)}
    assert project_of(None) is None


# ---- install and uninstall -------------------------------------------------------------------


def run(*args: str, code: int = 0):
    result = runner.invoke(app, list(args))
    assert "Traceback" not in result.output, result.output
    assert result.exit_code == code, f"exit {result.exit_code}: {result.output}"
    return result


@pytest.fixture
def dirs(tmp_path, monkeypatch):
    home, project = tmp_path / "home", tmp_path / "project"
    home.mkdir()
    project.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("CODEX_HOME", raising=False)
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    monkeypatch.chdir(project)
    return home, project


def events(path: Path) -> dict:
    return dict(json.loads(path.read_text())["hooks"])


def test_install_hooks_for_claude_code_and_uninstall_exactly_them(dirs):
    _, project = dirs
    settings = project / ".claude" / "settings.local.json"
    settings.parent.mkdir()
    mine = {"matcher": "Bash", "hooks": [{"type": "command", "command": "echo mine"}]}
    settings.write_text(json.dumps({"model": "opus", "hooks": {"PreToolUse": [mine], "SessionStart": [mine]}}))

    r = run("install", "claude-code", "--hooks")
    assert f"update    {settings} (hooks: SessionStart, PreCompact, SessionEnd)" in r.stdout
    assert "memorywiki publish" in r.stdout
    hooks = events(settings)
    assert set(hooks) == {"PreToolUse", "SessionStart", "PreCompact", "SessionEnd"}
    assert hooks["SessionStart"][0] == mine  # the user's hook is kept, ours comes after
    ours = hooks["SessionStart"][1]["hooks"][0]
    assert ours == {"type": "command", "command": hook_command("claude-code", "session-start"), "timeout": 10}
    assert ours["command"].startswith(str(Path(sys.executable).absolute()))  # absolute: no PATH needed
    assert json.loads(settings.read_text())["model"] == "opus"
    assert (project / ".claude" / "commands" / "memory.wiki.md").exists()  # /memory.wiki too
    assert f"unchanged {settings} (hooks already installed)" in run("install", "claude-code", "--hooks").stdout

    # the second opt-in: prompts too; taking it out again leaves the rest
    run("install", "claude-code", "--hooks", "--recall-prompts")
    assert "UserPromptSubmit" in events(settings)
    assert "hooks" in run("install", "--list").stdout
    run("uninstall", "claude-code")
    assert json.loads(settings.read_text()) == {
        "model": "opus",
        "hooks": {"PreToolUse": [mine], "SessionStart": [mine]},
    }


def test_a_hooks_file_memorywiki_made_goes_when_uninstalled_and_an_edited_hook_stays(dirs):
    home, project = dirs
    run("install", "claude-code", "--hooks", "--user")
    settings = home / ".claude" / "settings.json"
    assert set(events(settings)) == {"SessionStart", "PreCompact", "SessionEnd"}
    run("uninstall", "claude-code", "--user")
    assert not settings.exists()

    run("install", "cursor", "--hooks")
    cursor = project / ".cursor" / "hooks.json"
    data = json.loads(cursor.read_text())
    assert data["version"] == 1
    assert data["hooks"]["sessionStart"] == [{"command": hook_command("cursor", "session-start"), "timeout": 10}]
    assert set(data["hooks"]) == {"sessionStart", "preCompact", "sessionEnd"}
    data["hooks"]["sessionEnd"][0]["timeout"] = 30  # the user changed our hook
    cursor.write_text(json.dumps(data))
    r = run("uninstall", "cursor", code=1)
    assert "edited since install (sessionEnd)" in r.output
    assert cursor.exists()
    run("uninstall", "cursor", "--force")
    assert not cursor.exists() and not (project / ".cursor").exists()


def test_codex_hooks_and_the_tools_without_hooks(dirs, monkeypatch):
    home, project = dirs
    monkeypatch.setenv("CODEX_HOME", str(home / "codex-home"))
    r = run("install", "codex", "--hooks", "--user", "--recall-prompts")
    hooks = events(home / "codex-home" / "hooks.json")
    assert set(hooks) == {"SessionStart", "UserPromptSubmit", "PreCompact", "SessionEnd"}
    assert hooks["SessionEnd"][0]["hooks"][0]["timeout"] == 3  # Codex clamps SessionEnd to 3 s
    assert "/hooks" in r.stdout  # Codex runs a new hook only once trusted: the user is told how
    r = run("install", "aider", "--hooks", code=1)
    assert "aider has no hooks" in r.output
    run("install", "claude-code", "--recall-prompts", code=1)
    bad = project / ".claude" / "settings.local.json"
    bad.parent.mkdir()
    bad.write_text("[1, 2]")
    r = run("install", "claude-code", "--hooks", code=1)
    assert "not a JSON object; left alone" in r.output and bad.read_text() == "[1, 2]"


# ---- publishing a captured session -------------------------------------------------------------


def test_publish_and_unpublish_a_captured_session(machine, monkeypatch):
    page = httpx.put(
        f"{machine.server}/api/hub/dev/agent-sessions/claude-code/pub",
        json={"title": "t", "transcript": f"## User\n\nq\n\n## Assistant\n\n{DECISION}\n"},
        headers=machine.headers,
    ).json()
    monkeypatch.setenv("MEMORYWIKI_CONFIG", str(machine.home / ".config" / "memorywiki" / "config.toml"))
    for name in ("MEMORYWIKI_URL", "MEMORYWIKI_HUB", "MEMORYWIKI_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    assert httpx.get(page["url"], headers={"Accept": "text/markdown"}).status_code == 404
    r = run("publish", page["url"])
    assert r.stdout.strip() == page["url"] and "published" in r.stderr
    assert httpx.get(page["url"], headers={"Accept": "text/markdown"}).status_code == 200
    run("unpublish", page["url"])
    assert httpx.get(page["url"], headers={"Accept": "text/markdown"}).status_code == 404


@pytest.mark.parametrize(
    "server, parts",
    [
        ("http://127.0.0.1:8000", ("http", "127.0.0.1", 8000, "")),
        ("https://wiki.example.org", ("https", "wiki.example.org", 443, "")),
        ("http://user:pw@[::1]:9000/wiki/", ("http", "::1", 9000, "/wiki")),
        ("http://example.org/mw", ("http", "example.org", 80, "/mw")),
    ],
)
def test_the_hooks_own_http_reads_server_urls_and_chunked_answers(server, parts):
    assert lean._split(server) == parts
    assert lean.quote("a b/ü") == "a%20b%2F%C3%BC"
    assert lean._unchunk(b"4\r\nWiki\r\n6\r\npedia!\r\n0\r\n\r\n") == b"Wikipedia!"
