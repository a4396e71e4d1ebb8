"""`memorywiki install | uninstall | install --list` into a temporary HOME and project dir."""

from __future__ import annotations

import asyncio
import json
import re
import shlex
import tomllib
from pathlib import Path

import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client
from memorywiki.adapters.install.launch import mcp_server_command
from memorywiki.adapters.tools import ALIASES
from memorywiki.cli.main import app
from typer.testing import CliRunner

from tests.agents.workspace import PROFILE

runner = CliRunner()
EXE, *ARGS = mcp_server_command()
ENTRY = {"command": EXE, "args": ARGS}

CLAUDE_CMD = Path(".claude/commands/memory.wiki.md")
CLAUDE_SKILL = Path(".claude/skills/memory-wiki/SKILL.md")


@pytest.fixture
def dirs(tmp_path, monkeypatch):
    home = tmp_path / "home"
    project = tmp_path / "project"
    home.mkdir()
    project.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("CODEX_HOME", raising=False)
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    monkeypatch.setenv("PATH", "/usr/bin:/bin")  # no `codex` binary: no version probing
    monkeypatch.chdir(project)
    return home, project


def run(*args: str, code: int = 0):
    result = runner.invoke(app, list(args))
    assert "Traceback" not in result.output, result.output
    assert result.exit_code == code, f"exit {result.exit_code}: {result.output}"
    return result


def files_under(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*") if p.is_file()}


def test_install_claude_code_project(dirs):
    home, project = dirs
    r = run("install", "claude-code")
    assert f"create    {project / CLAUDE_CMD}" in r.stdout
    assert f"create    {project / CLAUDE_SKILL}" in r.stdout
    assert (project / CLAUDE_CMD).read_text().startswith("---\n")
    # the MCP snippet is shown, not written
    assert f"claude mcp add memorywiki -- {shlex.join([EXE, *ARGS])}" in r.stdout
    assert '"mcpServers"' in r.stdout and "--mcp" in r.stdout
    assert not (project / ".mcp.json").exists()
    assert "/memory.wiki capture <title>" in r.stdout
    # only the manifest lands in HOME
    assert files_under(home) == {".config/memorywiki/installed.json"}
    # installing again changes nothing
    r = run("install", "claude", "--project")
    assert r.stdout.count("unchanged") == 2


def test_dry_run_writes_nothing(dirs):
    home, project = dirs
    r = run("install", "cursor", "--dry-run", "--mcp")
    assert "[dry run]" in r.stdout and "Would install" in r.stdout
    assert str(project / ".cursor/commands/memory.wiki.md") in r.stdout
    assert str(project / ".cursor/mcp.json") in r.stdout
    assert files_under(project) == set() and files_under(home) == set()


def test_conflict_exits_1_and_force_overwrites(dirs):
    _, project = dirs
    run("install", "claude-code")
    target = project / CLAUDE_CMD
    target.write_text("my own command\n")
    r = run("install", "claude-code", code=1)
    assert "conflict" in r.stdout and str(target) in r.stdout
    assert "kept, use --force to overwrite" in r.stdout  # the real flag, not "use force"
    assert "`memorywiki install claude-code --force`" in r.stderr
    assert target.read_text() == "my own command\n"
    r = run("install", "claude-code", "--force")
    assert "update" in r.stdout and "forced" in r.stdout
    assert target.read_text() != "my own command\n"


def test_conflict_with_a_file_memorywiki_never_wrote(dirs):
    _, project = dirs
    (project / ".cursor/commands").mkdir(parents=True)
    (project / ".cursor/commands/memory.wiki.md").write_text("someone else's\n")
    r = run("install", "cursor", code=1)
    assert "not written by memorywiki" in r.stdout
    assert (project / ".cursor/commands/memory.wiki.md").read_text() == "someone else's\n"


def test_mcp_registration_written_and_removed(dirs):
    _, project = dirs
    mcp_json = project / ".mcp.json"
    mcp_json.write_text(json.dumps({"mcpServers": {"other": {"command": "x"}}}))
    r = run("install", "claude-code", "--mcp")
    assert f"update    {mcp_json}" in r.stdout
    assert "claude mcp add" not in r.stdout  # no snippet when it was written
    data = json.loads(mcp_json.read_text())
    assert data["mcpServers"]["memorywiki"] == {"type": "stdio", **ENTRY}
    assert data["mcpServers"]["other"] == {"command": "x"}
    r = run("uninstall", "claude-code")
    assert "remove" in r.stdout
    assert json.loads(mcp_json.read_text()) == {"mcpServers": {"other": {"command": "x"}}}
    assert not (project / CLAUDE_CMD).exists() and not (project / ".claude").exists()


def test_codex_user_scope_with_mcp_keeps_config(dirs, monkeypatch):
    home, _ = dirs
    codex_home = home / "codexhome"
    codex_home.mkdir()
    monkeypatch.setenv("CODEX_HOME", str(codex_home))
    config = codex_home / "config.toml"
    config.write_text('model = "o4"  # mine\n\n[mcp_servers.other]\ncommand = "other"\n')
    r = run("install", "codex", "--user", "--mcp")
    assert str(home / ".agents/skills/memory-wiki/SKILL.md") in r.stdout
    assert "user scope" in r.stdout and "$memory-wiki capture" in r.stdout
    parsed = tomllib.loads(config.read_text())
    assert parsed["mcp_servers"]["memorywiki"] == ENTRY
    assert parsed["model"] == "o4" and parsed["mcp_servers"]["other"] == {"command": "other"}
    assert config.read_text().startswith('model = "o4"  # mine\n')
    r = run("install", "--list")
    assert "codex" in r.stdout and "user" in r.stdout and str(config) in r.stdout
    run("uninstall", "codex", "--user")
    assert config.read_text().startswith('model = "o4"  # mine\n')
    assert "memorywiki" not in tomllib.loads(config.read_text()).get("mcp_servers", {})


def test_user_scope_claude_code(dirs):
    home, project = dirs
    r = run("install", "claude-code", "--user")
    assert (home / CLAUDE_CMD).is_file() and (home / CLAUDE_SKILL).is_file()
    assert files_under(project) == set()
    assert str(home / ".claude.json") in r.stdout  # where --mcp would write it
    run("uninstall", "claude-code")  # project scope: nothing there
    assert (home / CLAUDE_CMD).is_file()
    run("uninstall", "claude-code", "--user")
    assert not (home / CLAUDE_CMD).exists()


def test_aider_install_and_mcp_note(dirs):
    _, project = dirs
    r = run("install", "aider", "--mcp")
    assert (project / ".aider.memorywiki.md").is_file()
    assert ".aider.memorywiki.md" in (project / ".aider.conf.yml").read_text()
    assert "no MCP client" in r.stderr
    assert "mcpServers" not in r.stdout
    assert "/run memorywiki" in r.stdout
    run("uninstall", "aider")
    assert files_under(project) == set()


def test_list_shows_status(dirs):
    _, project = dirs
    r = run("install", "--list")
    assert "nothing installed" in r.stdout
    run("install", "claude-code", "--mcp")
    (project / CLAUDE_SKILL).write_text("edited\n")
    r = run("install", "--list")
    lines = r.stdout.splitlines()
    assert lines[0].split() == ["TOOL", "SCOPE", "STATUS", "KIND", "PATH"]
    rows = {line.split()[-1]: line.split() for line in lines[1:]}
    assert rows[str(project / CLAUDE_CMD)][:3] == ["claude-code", "project", "installed"]
    assert rows[str(project / CLAUDE_SKILL)][2] == "modified"
    assert rows[str(project / ".mcp.json")][3] == "mcp-json"
    r = run("install", "cursor", "--list")
    assert "nothing installed for cursor" in r.stdout


def test_uninstall_keeps_edited_files_unless_forced(dirs):
    _, project = dirs
    run("install", "cursor")
    target = project / ".cursor/commands/memory.wiki.md"
    target.write_text("edited\n")
    r = run("uninstall", "cursor", "--dry-run", code=1)
    assert "keep" in r.stdout
    r = run("uninstall", "cursor", code=1)  # like install: a file left alone is a failure to finish
    assert "keep" in r.stdout and "use --force to remove" in r.stdout
    assert r.stderr == (
        "error: 1 edited file(s) kept; rerun with --force to remove them too (`memorywiki uninstall cursor --force`)\n"
    )
    assert target.read_text() == "edited\n"
    r = run("uninstall", "cursor", "--force")
    assert "remove" in r.stdout and not target.exists()
    r = run("uninstall", "cursor")
    assert "nothing installed for cursor" in r.stdout


def test_bad_input_is_one_line_error(dirs):
    r = run("install", "vim", code=1)
    assert "unknown tool" in r.stderr and "claude-code" in r.stderr
    r = run("install", "--user", code=1)
    assert "which tool" in r.stderr
    r = run("uninstall", "emacs", code=1)
    assert "unknown tool" in r.stderr


def test_help_lists_the_commands(dirs):
    r = run("--help")
    for name in ("install", "uninstall", "mcp"):
        assert name in r.stdout
    r = run("install", "--help")
    assert "--user" in r.stdout and "--project" in r.stdout and "--mcp" in r.stdout and "--list" in r.stdout
    r = run("mcp", "--help")
    assert "--http" in r.stdout and "--port" in r.stdout


@pytest.mark.parametrize("alias", sorted(ALIASES))
def test_every_alias_works_for_install_list_and_uninstall(dirs, alias):
    """One registry: an alias that works for `capture --agent` works here too (e.g. `cc`)."""
    _, _project = dirs
    tool = ALIASES[alias]
    r = run("install", alias)
    assert f"/memory.wiki for {tool} (project scope" in r.stdout
    r = run("install", "--list", alias)
    assert r.stdout.splitlines()[1].split()[:3] == [tool, "project", "installed"]
    r = run("uninstall", alias)
    assert "remove" in r.stdout
    r = run("install", "--list")
    assert "nothing installed" in r.stdout


@pytest.mark.parametrize("alias", sorted(ALIASES))
def test_every_alias_reaches_the_same_session_reader(dirs, alias):
    """`capture --agent ALIAS` resolves to the tool's own reader: with no session on disk the
    error names the canonical tool, never "unknown agent"."""
    r = runner.invoke(app, ["capture", "--agent", alias, "--session", "no-such-session", "--hub", "h"])
    assert r.exit_code == 1 and "Traceback" not in r.output
    assert r.stderr == f"error: no {ALIASES[alias]} session found with id no-such-session\n"


def _written_commands(home: Path, project: Path) -> dict[str, dict]:
    """The `memorywiki` entry of every MCP config `install --mcp` wrote."""
    out = {
        ".mcp.json": json.loads((project / ".mcp.json").read_text())["mcpServers"]["memorywiki"],
        "~/.claude.json": json.loads((home / ".claude.json").read_text())["mcpServers"]["memorywiki"],
        ".cursor/mcp.json": json.loads((project / ".cursor/mcp.json").read_text())["mcpServers"]["memorywiki"],
        "~/.codex/config.toml": tomllib.loads((home / ".codex/config.toml").read_text())["mcp_servers"]["memorywiki"],
    }
    return {where: {"command": e["command"], "args": e["args"]} for where, e in out.items()}


async def _initialize(command: str, args: list[str], cwd: Path) -> str:
    """Start the command as an MCP client would (no PATH, no shell) and do an MCP initialize."""
    params = StdioServerParameters(
        command=command, args=args, env={"HOME": str(cwd), "PATH": "/nonexistent"}, cwd=str(cwd)
    )
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            result = await asyncio.wait_for(session.initialize(), 60)
            return result.server_info.name


async def test_install_mcp_writes_a_command_that_starts_the_server(dirs):
    home, project = dirs
    for tool, scope in [
        ("claude-code", "--project"),
        ("claude-code", "--user"),
        ("cursor", "--project"),
        ("codex", "--user"),
    ]:
        run("install", tool, scope, "--mcp")
    written = _written_commands(home, project)
    assert all(entry == ENTRY for entry in written.values()), written
    assert Path(EXE).is_absolute()
    # every file carries the same command, so one start proves them all
    assert await _initialize(EXE, ARGS, project) == "memorywiki"


async def test_module_fallback_command_starts_the_server(dirs):
    """Without a console script the entry is the absolute interpreter with `-m memorywiki.cli mcp`."""
    import sys

    _, project = dirs
    assert await _initialize(sys.executable, ["-m", "memorywiki.cli", "mcp"], project) == "memorywiki"


SKILL_FILES = {
    "claude-code": [CLAUDE_CMD, CLAUDE_SKILL],
    "cursor": [Path(".cursor/commands/memory.wiki.md")],
    "codex": [Path(".agents/skills/memory-wiki/SKILL.md")],
    "aider": [Path(".aider.memorywiki.md")],
}


@pytest.mark.parametrize("tool", list(SKILL_FILES))
def test_the_installed_skill_runs_in_a_login_shell_that_does_not_know_the_venv(dirs, live_server, tool):
    """Codex runs each command in a login shell (bash -lc), which resets PATH from the
    profile: the skill's commands must run there all the same, from a venv install."""
    import subprocess

    home, project = dirs
    (home / ".profile").write_text(PROFILE, encoding="utf-8")
    run("config", "--set-server", live_server.url)
    run("hub", "create", "shell")
    run("install", tool)
    venv_bin = Path(EXE).parent
    # the tool was started from an activated venv; its login shell forgets that
    env = {"HOME": str(home), "PATH": f"{venv_bin}:/usr/bin:/bin", "LANG": "C.UTF-8"}

    def login_shell(command: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            ["bash", "-lc", command],
            cwd=project,
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
            stdin=subprocess.DEVNULL,
        )

    assert login_shell("command -v memorywiki").returncode != 0  # the bare name is not found there
    for rel in SKILL_FILES[tool]:
        text = (project / rel).read_text()
        recall = re.search(r"Run `(.+) recall '<question>' --hybrid --json`", text).group(1)
        out = login_shell(f"{recall} recall 'what did we decide?' --hybrid --json")
        assert out.returncode == 0, (rel, out.stderr)
        assert json.loads(out.stdout)["results"] == []  # the server answered: an empty hub
        hub = re.search(r"Run `(.+) hub`", text).group(1)
        out = login_shell(f"{hub} hub")
        assert out.returncode == 0 and f"{live_server.url}/hub/shell" in out.stdout, (rel, out.stdout, out.stderr)
