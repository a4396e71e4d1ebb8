"""Installers: real files in a temporary HOME and project, no mocks."""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path

import pytest
import yaml
from memorywiki.adapters import install as inst
from memorywiki.adapters.install.files import sha
from memorywiki.adapters.install.launch import mcp_server_command, shell_command
from memorywiki.adapters.install.manifest import Manifest
from memorywiki.skill.render import render

EXE, *ARGS = mcp_server_command()
ENTRY = {"command": EXE, "args": ARGS}
CLI = shell_command()  # what the installed skill files run


@pytest.fixture
def dirs(tmp_path):
    home, project = tmp_path / "home", tmp_path / "proj"
    home.mkdir()
    project.mkdir()
    return home, project


def _snapshot(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): p.read_text() for p in sorted(root.rglob("*")) if p.is_file()}


def _ops(actions):
    return [a.op for a in actions]


EXPECTED = {
    "claude-code": [".claude/commands/memory.wiki.md", ".claude/skills/memory-wiki/SKILL.md"],
    "cursor": [".cursor/commands/memory.wiki.md"],
    "codex": [".agents/skills/memory-wiki/SKILL.md"],
    "aider": [".aider.memorywiki.md", ".aider.conf.yml"],
}


@pytest.mark.parametrize("tool", list(EXPECTED))
@pytest.mark.parametrize("scope", ["project", "user"])
def test_install_reinstall_uninstall(dirs, tool, scope):
    home, project = dirs
    root = project if scope == "project" else home
    env = {}
    before = _snapshot(root)
    acts = inst.install(tool, scope, project, home, env=env, codex_version="0.145.0")
    assert _ops(acts) == ["create"] * len(EXPECTED[tool])
    rendered = render(tool, command=CLI)
    for rel in EXPECTED[tool]:
        p = root / rel
        assert p.is_file(), rel
        if rel in rendered:
            assert p.read_text() == rendered[rel]
    if tool == "aider":
        conf = yaml.safe_load((root / ".aider.conf.yml").read_text())
        want = ".aider.memorywiki.md" if scope == "project" else str(home / ".aider.memorywiki.md")
        assert conf == {"read": [want]}
    # idempotent
    again = inst.install(tool, scope, project, home, env=env, codex_version="0.145.0")
    assert set(_ops(again)) == {"unchanged"}
    listed = inst.list_installed(project, home)
    assert {(e["tool"], e["status"]) for e in listed} == {(tool, "installed")}
    # uninstall restores exactly the previous tree (manifest lives under home/.config)
    removed = inst.uninstall(tool, scope, project, home, env=env)
    assert set(_ops(removed)) == {"remove"}
    after = {k: v for k, v in _snapshot(root).items() if not k.startswith(".config/")}
    assert after == before
    assert not any(p for p in root.rglob("*") if p.is_dir() and not str(p.relative_to(root)).startswith(".config"))
    assert inst.list_installed(project, home) == []


def test_dry_run_writes_nothing(dirs):
    home, project = dirs
    for tool in EXPECTED:
        acts = inst.install(tool, "project", project, home, dry_run=True, env={})
        assert acts and all(not a.applied for a in acts)
        acts = inst.write_mcp_registration(
            tool if tool != "aider" else "cursor", "project", project, home, dry_run=True, env={}
        )
        assert not acts[0].applied
    assert list(project.iterdir()) == [] and list(home.iterdir()) == []
    inst.install("cursor", "project", project, home, env={})
    snap = _snapshot(project), _snapshot(home)
    assert all(not a.applied for a in inst.uninstall("cursor", "project", project, home, dry_run=True, env={}))
    assert (_snapshot(project), _snapshot(home)) == snap


def test_user_edits_are_protected_and_force(dirs):
    home, project = dirs
    inst.install("claude-code", "project", project, home, env={})
    cmd = project / ".claude/commands/memory.wiki.md"
    cmd.write_text(cmd.read_text() + "\nmy own note\n")
    acts = inst.install("claude-code", "project", project, home, env={})
    assert _ops(acts) == ["conflict", "unchanged"]
    assert "my own note" in cmd.read_text()
    assert [e["status"] for e in inst.list_installed(project, home) if e["path"] == str(cmd)] == ["modified"]
    # uninstall keeps the edited file, removes the other
    acts = inst.uninstall("claude-code", "project", project, home, env={})
    assert sorted(_ops(acts)) == ["keep", "remove"]
    assert "my own note" in cmd.read_text()
    # force overwrites
    acts = inst.install("claude-code", "project", project, home, force=True, env={})
    assert _ops(acts) == ["update", "create"]
    assert cmd.read_text() == render("claude-code", command=CLI)[".claude/commands/memory.wiki.md"]
    # a file we never wrote is a conflict too
    other = project / ".cursor/commands/memory.wiki.md"
    other.parent.mkdir(parents=True)
    other.write_text("mine\n")
    assert _ops(inst.install("cursor", "project", project, home, env={})) == ["conflict"]
    assert other.read_text() == "mine\n"


def test_outdated_but_unedited_file_is_updated(dirs):
    home, project = dirs
    inst.install("cursor", "project", project, home, env={})
    p = project / ".cursor/commands/memory.wiki.md"
    # simulate an older version we wrote: rewrite file and manifest hash together
    old = "old generated text\n"
    p.write_text(old)
    m = Manifest(home)
    m.entries[str(p)]["sha256"] = sha(old)
    m.save()
    assert _ops(inst.install("cursor", "project", project, home, env={})) == ["update"]
    assert p.read_text() == render("cursor", command=CLI)[".cursor/commands/memory.wiki.md"]


def test_aider_conf_keeps_user_settings(dirs):
    home, project = dirs
    conf = project / ".aider.conf.yml"
    original = "# my settings\nmodel: sonnet  # favourite\nread:\n  - CONVENTIONS.md\n\nauto-commits: false\n"
    conf.write_text(original)
    inst.install("aider", "project", project, home, env={})
    text = conf.read_text()
    assert "# my settings" in text and "# favourite" in text
    assert yaml.safe_load(text) == {
        "model": "sonnet",
        "read": ["CONVENTIONS.md", ".aider.memorywiki.md"],
        "auto-commits": False,
    }
    inst.uninstall("aider", "project", project, home, env={})
    assert conf.read_text() == original
    assert not (project / ".aider.memorywiki.md").exists()


@pytest.mark.parametrize(
    "original,expected_read",
    [
        ("read: CONVENTIONS.md\n", ["CONVENTIONS.md", ".aider.memorywiki.md"]),
        ("read: [a.md, b.md]\nmodel: x\n", ["a.md", "b.md", ".aider.memorywiki.md"]),
        ("model: x\n", [".aider.memorywiki.md"]),
        ("", [".aider.memorywiki.md"]),
    ],
)
def test_aider_conf_shapes(dirs, original, expected_read):
    home, project = dirs
    conf = project / ".aider.conf.yml"
    conf.write_text(original)
    before = yaml.safe_load(original) or {}
    inst.install("aider", "project", project, home, env={})
    after = yaml.safe_load(conf.read_text())
    assert after["read"] == expected_read
    assert {k: v for k, v in after.items() if k != "read"} == {k: v for k, v in before.items() if k != "read"}
    inst.uninstall("aider", "project", project, home, env={})
    assert (yaml.safe_load(conf.read_text()) or {}) == before


def test_aider_conf_invalid_yaml_left_alone(dirs):
    home, project = dirs
    conf = project / ".aider.conf.yml"
    conf.write_text("read: [unclosed\n")
    acts = inst.install("aider", "project", project, home, env={})
    assert _ops(acts) == ["create", "conflict"]
    assert conf.read_text() == "read: [unclosed\n"


def test_mcp_command_is_absolute():
    """An MCP client does not run in the user's shell: a bare `memorywiki` would not start."""
    exe, *args = mcp_server_command()
    assert Path(exe).is_absolute() and Path(exe).is_file()
    assert args[-1] == "mcp"


@pytest.mark.parametrize("tool", list(EXPECTED))
def test_installed_skill_files_run_the_absolute_command(dirs, tool):
    """A tool may run commands in a shell whose PATH lacks the venv (Codex: a login shell):
    every command the installed files show starts with this installation's absolute path."""
    home, project = dirs
    exe = Path(CLI)
    assert exe.is_absolute() and exe.is_file() and exe.name == "memorywiki"
    inst.install(tool, "project", project, home, env={})
    for rel in EXPECTED[tool]:
        if rel.endswith(".yml"):
            continue
        text = (project / rel).read_text()
        runs = re.findall(r"(?:^\s*|Run `|/run |\| )(\S*memorywiki) (?=[a-z])", text, re.MULTILINE)
        assert len(runs) >= 10 and set(runs) == {CLI}, (rel, sorted(set(runs)))
        if tool == "claude-code":
            assert yaml.safe_load(text.split("---\n")[1])["allowed-tools"] == f"Bash({CLI}:*)"
    # a command given explicitly is the one written
    inst.install(tool, "project", project, home, env={}, force=True, command="/opt/mw/bin/memorywiki")
    assert (
        "Run `/opt/mw/bin/memorywiki recall '<question>' --hybrid --json`" in (project / EXPECTED[tool][0]).read_text()
    )


def test_mcp_snippets():
    cc = json.loads(inst.mcp_registration("claude-code"))
    assert cc["mcpServers"]["memorywiki"] == {"type": "stdio", **ENTRY}
    assert json.loads(inst.mcp_registration("cursor")) == {"mcpServers": {"memorywiki": ENTRY}}
    assert tomllib.loads(inst.mcp_registration("codex")) == {"mcp_servers": {"memorywiki": ENTRY}}
    with pytest.raises(ValueError):
        inst.mcp_registration("aider")
    assert inst.mcp_command("claude-code") == f"claude mcp add memorywiki -- {EXE} {' '.join(ARGS)}"
    assert inst.mcp_command("codex-cli") == f"codex mcp add memorywiki -- {EXE} {' '.join(ARGS)}"


def test_write_mcp_json_merges_and_uninstalls(dirs):
    home, project = dirs
    p = project / ".cursor" / "mcp.json"
    p.parent.mkdir()
    p.write_text(json.dumps({"mcpServers": {"other": {"command": "x"}}, "keep": 1}))
    assert _ops(inst.write_mcp_registration("cursor", "project", project, home, env={})) == ["update"]
    data = json.loads(p.read_text())
    assert data["mcpServers"]["other"] == {"command": "x"} and data["keep"] == 1
    assert data["mcpServers"]["memorywiki"] == ENTRY
    assert _ops(inst.write_mcp_registration("cursor", "project", project, home, env={})) == ["unchanged"]
    inst.uninstall("cursor", "project", project, home, env={})
    assert json.loads(p.read_text()) == {"mcpServers": {"other": {"command": "x"}}, "keep": 1}
    # someone else's memorywiki entry is not replaced without force
    p.write_text(json.dumps({"mcpServers": {"memorywiki": {"url": "http://x/mcp"}}}))
    assert _ops(inst.write_mcp_registration("cursor", "project", project, home, env={})) == ["conflict"]
    assert _ops(inst.write_mcp_registration("cursor", "project", project, home, force=True, env={})) == ["update"]
    # invalid JSON is never touched
    p.write_text("{oops")
    assert _ops(inst.write_mcp_registration("cursor", "project", project, home, force=True, env={})) == ["conflict"]
    assert p.read_text() == "{oops"


def test_reinstall_replaces_a_bare_command_written_before(dirs):
    """An entry an older memorywiki wrote (`"command": "memorywiki"`, unusable from a venv) is
    ours per the manifest, so re-installing rewrites it with the absolute command."""
    home, project = dirs
    inst.write_mcp_registration("cursor", "project", project, home, env={}, command=["memorywiki", "mcp"])
    p = project / ".cursor" / "mcp.json"
    assert json.loads(p.read_text())["mcpServers"]["memorywiki"] == {"command": "memorywiki", "args": ["mcp"]}
    assert _ops(inst.write_mcp_registration("cursor", "project", project, home, env={})) == ["update"]
    assert json.loads(p.read_text())["mcpServers"]["memorywiki"] == ENTRY


def test_write_mcp_claude_paths(dirs):
    home, project = dirs
    inst.write_mcp_registration("claude-code", "project", project, home, env={})
    assert json.loads((project / ".mcp.json").read_text())["mcpServers"]["memorywiki"]["type"] == "stdio"
    (home / ".claude.json").write_text(json.dumps({"numStartups": 3, "projects": {}}))
    inst.write_mcp_registration("claude-code", "user", project, home, env={})
    data = json.loads((home / ".claude.json").read_text())
    assert data["numStartups"] == 3 and "memorywiki" in data["mcpServers"]
    inst.uninstall("claude-code", "user", project, home, env={})
    assert json.loads((home / ".claude.json").read_text()) == {"numStartups": 3, "projects": {}}
    inst.uninstall("claude-code", "project", project, home, env={})
    assert not (project / ".mcp.json").exists()


def test_write_mcp_codex_toml(dirs, tmp_path):
    home, project = dirs
    codex_home = tmp_path / "codexhome"
    codex_home.mkdir()
    cfg = codex_home / "config.toml"
    original = '# my codex config\nmodel = "gpt-5"\n\n[mcp_servers.other]\ncommand = "other"\n'
    cfg.write_text(original)
    env = {"CODEX_HOME": str(codex_home)}
    assert _ops(inst.write_mcp_registration("codex", "user", project, home, env=env)) == ["update"]
    text = cfg.read_text()
    assert text.startswith(original)
    data = tomllib.loads(text)
    assert data["mcp_servers"]["memorywiki"] == ENTRY
    assert data["mcp_servers"]["other"] == {"command": "other"} and data["model"] == "gpt-5"
    assert _ops(inst.write_mcp_registration("codex", "user", project, home, env=env)) == ["unchanged"]
    inst.uninstall("codex", "user", project, home, env=env)
    assert cfg.read_text().rstrip("\n") == original.rstrip("\n")


def test_codex_user_scope_legacy_prompt(dirs, tmp_path):
    home, project = dirs
    codex_home = tmp_path / "ch"
    env = {"CODEX_HOME": str(codex_home)}
    acts = inst.install("codex", "user", project, home, codex_version="codex-cli 0.116.0", env=env)
    paths = {str(a.path) for a in acts}
    assert str(home / ".agents/skills/memory-wiki/SKILL.md") in paths
    assert str(codex_home / "prompts/memory.wiki.md") in paths
    assert (codex_home / "prompts/memory.wiki.md").is_file()
    inst.uninstall("codex", "user", project, home, env=env)
    assert not (codex_home / "prompts/memory.wiki.md").exists()
    assert not (home / ".agents").exists()


def test_bad_arguments(dirs):
    home, project = dirs
    with pytest.raises(ValueError):
        inst.install("vim", "project", project, home)
    with pytest.raises(ValueError):
        inst.install("cursor", "global", project, home)


def test_aider_conf_edited_after_install(dirs):
    home, project = dirs
    conf = project / ".aider.conf.yml"
    conf.write_text("read:\n  - CONVENTIONS.md\n")
    inst.install("aider", "project", project, home, env={})
    conf.write_text(conf.read_text() + "dark-mode: true  # added later\n")
    inst.uninstall("aider", "project", project, home, env={})
    text = conf.read_text()
    assert yaml.safe_load(text) == {"read": ["CONVENTIONS.md"], "dark-mode": True}
    assert "# added later" in text and "memorywiki" not in text
