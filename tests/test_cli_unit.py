"""The CLI's pure parts, no server needed: config file, section replacement, URL -> id,
the "server not running" message, --help everywhere, argument errors."""

from __future__ import annotations

import socket
import stat
import tomllib

import pytest
from memorywiki.cli.main import app
from memorywiki.cli.output import breadcrumb, snippet
from memorywiki.client import MemoryWikiError, doc_id_from
from memorywiki.client.config import DEFAULT_SERVER, Config, config_path
from memorywiki.client.http import not_running_message
from memorywiki.client.sections import headings, replace_section
from typer.testing import CliRunner

runner = CliRunner()

ENV_VARS = [
    "MEMORYWIKI_CONFIG",
    "MEMORYWIKI_URL",
    "MEMORYWIKI_TOKEN",
    "MEMORYWIKI_HUB",
    "XDG_CONFIG_HOME",
    "MEMORYWIKI_DEBUG",
]


@pytest.fixture
def clean_env(monkeypatch, tmp_path):
    for name in ENV_VARS:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    return tmp_path


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# ---- config ---------------------------------------------------------------------------


def test_config_path_precedence(clean_env, monkeypatch):
    home = clean_env / "home"
    assert config_path() == home / ".config" / "memorywiki" / "config.toml"
    monkeypatch.setenv("XDG_CONFIG_HOME", str(clean_env / "xdg"))
    assert config_path() == clean_env / "xdg" / "memorywiki" / "config.toml"
    monkeypatch.setenv("XDG_CONFIG_HOME", "relative/ignored")  # the XDG spec: relative values are ignored
    assert config_path() == home / ".config" / "memorywiki" / "config.toml"
    monkeypatch.setenv("MEMORYWIKI_CONFIG", str(clean_env / "elsewhere.toml"))
    assert config_path() == clean_env / "elsewhere.toml"


def test_config_roundtrip_mode_0600(clean_env, monkeypatch):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(clean_env / "xdg"))
    cfg = Config.load()
    assert cfg.data == {} and not cfg.path.exists()
    assert cfg.remember_hub("myhub", "owner-secret", "http://127.0.0.1:8000/hub/myhub") is True
    assert cfg.remember_hub("other", "other-secret", None) is False  # the first hub stays the default
    cfg.remember_doc("abc123", "edit-secret", "http://127.0.0.1:8000/d/abc123", "myhub")
    cfg.data["server"] = "http://example.test:9000"
    cfg.save()

    path = clean_env / "xdg" / "memorywiki" / "config.toml"
    assert cfg.path == path
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    on_disk = tomllib.loads(path.read_text())
    assert on_disk["server"] == "http://example.test:9000"
    assert on_disk["hub"] == "myhub"
    assert on_disk["hubs"]["myhub"] == {"owner_token": "owner-secret", "url": "http://127.0.0.1:8000/hub/myhub"}
    assert on_disk["docs"]["abc123"]["edit_token"] == "edit-secret"

    again = Config.load()
    assert again.hub_token("myhub") == "owner-secret"
    assert again.doc_token("abc123") == "edit-secret"
    assert again.doc_token("unknown") == "owner-secret"  # falls back to the default hub's owner token
    assert again.forget_doc("abc123") and not again.forget_doc("abc123")

    # an existing file with loose permissions is tightened on save
    path.chmod(0o644)
    again.save()
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_remember_doc_keeps_a_stored_edit_token(clean_env):
    """A re-capture the server reports as unchanged (no new edit token) keeps the stored one."""
    cfg = Config(clean_env / "c.toml", {})
    cfg.remember_doc("abc", "mwe_first", "http://x/abc", "h")
    cfg.remember_doc("abc", None, "http://x/abc", "h")
    assert cfg.doc_entry("abc")["edit_token"] == "mwe_first"


def test_config_env_overrides(clean_env, monkeypatch):
    assert Config(clean_env / "none.toml", {}).server_url() == DEFAULT_SERVER
    cfg = Config(clean_env / "c.toml", {"server": "http://from-config:1/", "hub": "h"})
    cfg.remember_hub("h", "file-token", None)
    assert cfg.server_url() == "http://from-config:1"
    monkeypatch.setenv("MEMORYWIKI_URL", "http://from-env:2")
    assert cfg.server_url() == "http://from-env:2"
    assert cfg.server_url("http://from-flag:3") == "http://from-flag:3"
    assert cfg.server_url("localhost:4") == "http://localhost:4"
    assert cfg.hub_token("h") == "file-token"
    monkeypatch.setenv("MEMORYWIKI_TOKEN", "env-token")
    assert cfg.hub_token("h") == "env-token" and cfg.doc_token("x") == "env-token"
    monkeypatch.setenv("MEMORYWIKI_HUB", "envhub")
    assert cfg.resolve_hub(None) == "envhub" and cfg.resolve_hub("flag") == "flag"


def test_config_invalid_toml_is_a_clear_error(clean_env, monkeypatch):
    bad = clean_env / "bad.toml"
    bad.write_text("server = [unclosed\n")
    monkeypatch.setenv("MEMORYWIKI_CONFIG", str(bad))
    with pytest.raises(MemoryWikiError, match="not valid TOML"):
        Config.load()
    result = runner.invoke(app, ["list", "--hub", "x"])
    assert result.exit_code == 1
    assert result.stderr.startswith("error: config file") and "Traceback" not in result.output


def test_require_hub_message(clean_env):
    with pytest.raises(MemoryWikiError, match="memorywiki hub create"):
        Config(clean_env / "c.toml", {}).require_hub(None)


# ---- doc id from URL ------------------------------------------------------------------


@pytest.mark.parametrize(
    "ref,expected",
    [
        ("abc123", "abc123"),
        ("  abc123  ", "abc123"),
        ("http://127.0.0.1:8000/d/abc123", "abc123"),
        ("https://memory.wiki/d/abc123/", "abc123"),
        ("https://memory.wiki/d/abc123?x=1#frag", "abc123"),
        ("https://memory.wiki/raw/abc123.md", "abc123"),
        ("/d/abc123", "abc123"),
    ],
)
def test_doc_id_from(ref, expected):
    assert doc_id_from(ref) == expected


def test_access_from():
    from memorywiki.client import access_from

    assert access_from("http://127.0.0.1:8000/abc123?access=mwa_x") == "mwa_x"
    assert access_from("http://127.0.0.1:8000/abc123") is None
    assert access_from("abc123") is None


def test_doc_id_from_rejects_empty():
    with pytest.raises(MemoryWikiError):
        doc_id_from("https://memory.wiki/")


# ---- section replacement --------------------------------------------------------------

DOC = """Intro text before any heading.

# Title

Lead paragraph.

## Setup

Install it:

```bash
# this is a comment, not a heading
pip install memorywiki
```

### Details

Deeper heading stays inside Setup.

## Usage

Run it.

Setext Section
--------------

Setext body.

## Last

The end.
"""


def test_headings_ignore_code_fences_and_see_setext():
    hs = [(h.level, h.text) for h in headings(DOC)]
    assert hs == [(1, "Title"), (2, "Setup"), (3, "Details"), (2, "Usage"), (2, "Setext Section"), (2, "Last")]


def test_replace_section_keeps_the_rest_byte_for_byte():
    out = replace_section(DOC, "Setup", "New setup text.\n")
    before, after = DOC.split("## Setup", 1)[0], DOC.split("## Usage", 1)[1]
    assert out.startswith(before + "## Setup\n\nNew setup text.\n\n## Usage")
    assert out.endswith("## Usage" + after)
    assert "pip install" not in out and "Details" not in out  # the deeper heading went with its section


def test_replace_section_with_heading_in_new_text_replaces_heading():
    out = replace_section(DOC, "usage", "## How to use\n\nRun it twice.\n")
    assert "## Usage" not in out
    assert "## How to use\n\nRun it twice.\n\nSetext Section\n--------------\n" in out
    assert out.replace("## How to use\n\nRun it twice.\n", "## Usage\n\nRun it.\n") == DOC


def test_replace_section_deeper_heading_in_new_text_keeps_original_heading():
    out = replace_section(DOC, "Usage", "### Step 1\n\nDo this.\n")
    assert "## Usage\n\n### Step 1\n\nDo this.\n\nSetext Section" in out


def test_replace_setext_section():
    out = replace_section(DOC, "Setext Section", "Fresh body.")
    assert "Setext Section\n--------------\n\nFresh body.\n\n## Last\n\nThe end.\n" in out
    assert out.split("Setext Section", 1)[0] == DOC.split("Setext Section", 1)[0]


def test_replace_last_section_and_heading_with_hashes():
    out = replace_section(DOC, "## Last", "Changed ending.\n")
    assert out == DOC.replace("The end.\n", "Changed ending.\n")


def test_replace_section_no_trailing_newline_and_crlf():
    assert replace_section("# A\nold", "A", "new") == "# A\nnew"
    crlf = "# A\r\n\r\nold\r\n\r\n# B\r\n\r\nkeep\r\n"
    assert replace_section(crlf, "A", "new\nlines\n") == "# A\r\n\r\nnew\r\nlines\r\n\r\n# B\r\n\r\nkeep\r\n"


def test_hash_inside_fence_is_not_a_section():
    doc = "# Real\n\n```\n# Fake\n```\n\n# Other\n\nx\n"
    with pytest.raises(MemoryWikiError, match=r"no section 'Fake'.*'Real', 'Other'"):
        replace_section(doc, "Fake", "y")
    out = replace_section(doc, "Real", "z\n")
    assert out == "# Real\n\nz\n\n# Other\n\nx\n"


def test_heading_in_list_or_quote_does_not_split():
    doc = "# A\n\n> # quoted\n\n- # listed\n\nbody\n\n# B\n\nb\n"
    assert [h.text for h in headings(doc)] == ["A", "B"]
    assert replace_section(doc, "A", "new\n") == "# A\n\nnew\n\n# B\n\nb\n"


def test_empty_section_gets_a_body():
    assert replace_section("# A\n# B\nb\n", "A", "text") == "# A\n\ntext\n\n# B\nb\n"


# ---- rendering helpers ----------------------------------------------------------------


def test_snippet_and_breadcrumb():
    assert snippet("a\n\n  b\tc") == "a b c"
    long = "word " * 200
    s = snippet(long)
    assert len(s) <= 301 and s.endswith("…")
    assert breadcrumb(["Doc", "Section", "Sub"]) == "Doc > Section > Sub"
    assert breadcrumb("Doc > Section") == "Doc > Section"
    assert breadcrumb(None, "Title") == "Title"


# ---- CLI without a server -------------------------------------------------------------

COMMANDS = [
    [],
    ["serve"],
    ["worker"],
    ["config"],
    ["hub"],
    ["hub", "create"],
    ["hub", "show"],
    ["hub", "use"],
    ["list"],
    ["capture"],
    ["recall"],
    ["pull"],
    ["update"],
    ["embed"],
    ["bundle"],
    ["bundle", "create"],
    ["delete"],
    ["import"],
    ["install"],
    ["uninstall"],
    ["mcp"],
]


@pytest.mark.parametrize("cmd", COMMANDS, ids=lambda c: " ".join(c) or "root")
def test_help(cmd, clean_env):
    result = runner.invoke(app, [*cmd, "--help"])
    assert result.exit_code == 0, result.output
    assert "Usage:" in result.output and "Traceback" not in result.output


@pytest.mark.parametrize(
    "args",
    [
        ["recall", "what?", "--hub", "h"],
        ["hub", "show", "h"],
        ["hub", "h"],
        ["list", "--hub", "h"],
        ["hub", "create", "h"],
        ["hub", "use", "h", "--token", "t"],
        ["pull", "abc"],
        ["embed", "abc"],
        ["delete", "abc"],
        ["bundle", "create", "--title", "T", "--hub", "h", "a", "b"],
    ],
    ids=lambda a: " ".join(a[:2]),
)
def test_server_not_running(args, clean_env):
    url = f"http://127.0.0.1:{closed_port()}"
    result = runner.invoke(app, ["--url", url, *args])
    assert result.exit_code == 1
    assert result.stderr == f"error: {not_running_message(url, origin='from --server')}\n"
    assert "start it with `memorywiki serve`" in result.stderr
    assert "Traceback" not in result.output


def test_server_not_running_via_env_and_per_command_flag(clean_env, monkeypatch):
    url = f"http://127.0.0.1:{closed_port()}"
    monkeypatch.setenv("MEMORYWIKI_URL", url)
    result = runner.invoke(app, ["capture", "--title", "T", "--hub", "h", "-"], input="# hi\n\nbody\n")
    assert result.exit_code == 1 and f"not running at {url}" in result.stderr
    other = f"http://127.0.0.1:{closed_port()}"
    result = runner.invoke(app, ["recall", "q", "--hub", "h", "--url", other])
    assert f"not running at {other}" in result.stderr
    result = runner.invoke(app, ["capture", "--server", other, "--title", "T", "-"], input="body")
    assert f"not running at {other}" in result.stderr


def test_capture_empty_body_is_an_error(clean_env):
    result = runner.invoke(app, ["capture", "--title", "T", "-"], input="  \n\n")
    assert result.exit_code == 1 and result.stderr == "error: empty body: nothing to capture\n"
    result = runner.invoke(app, ["capture", "--title", "T"], input="")
    assert result.exit_code == 1 and "empty body" in result.stderr


def test_capture_missing_file(clean_env):
    result = runner.invoke(app, ["capture", "--title", "T", str(clean_env / "nope.md")])
    assert result.exit_code == 1 and result.stderr.startswith("error: no such file:")


def test_capture_needs_a_title(clean_env):
    result = runner.invoke(app, ["capture", "-"], input="no heading here\n")
    assert result.exit_code == 1 and "--title is required" in result.stderr


def test_capture_unknown_agent(clean_env):
    result = runner.invoke(app, ["capture", "--agent", "nosuchtool"])
    assert result.exit_code == 1
    assert result.stderr == (
        "error: unknown agent 'nosuchtool'; expected claude-code (cc), cursor, "
        "codex (codex-cli) or aider (aider-chat)\n"
    )


def test_recall_needs_a_hub_and_a_question(clean_env):
    result = runner.invoke(app, ["recall", "what?"])
    assert result.exit_code == 1 and "no hub given" in result.stderr
    result = runner.invoke(app, ["recall", "  ", "--hub", "h"])
    assert result.exit_code == 1 and "question is empty" in result.stderr
    result = runner.invoke(app, ["recall", "q", "--hub", "h", "--level", "nope"])
    assert result.exit_code == 2  # a usage error from typer, still no traceback
    assert "Traceback" not in result.output


def test_update_needs_something(clean_env):
    result = runner.invoke(app, ["update", "abc"], input="")
    assert result.exit_code == 1 and "error:" in result.stderr


def test_invalid_server_url(clean_env):
    result = runner.invoke(app, ["--url", "ftp://nope", "pull", "abc"])
    assert result.exit_code == 1 and result.stderr.startswith("error: ")
    assert "Traceback" not in result.output


def test_config_command(clean_env, monkeypatch):
    monkeypatch.setenv("MEMORYWIKI_CONFIG", str(clean_env / "cfg" / "config.toml"))
    result = runner.invoke(app, ["config", "--set-server", "http://example.test:8123/", "--set-hub", "mine"])
    assert result.exit_code == 0, result.output
    assert "server: http://example.test:8123" in result.stdout and "hub: mine" in result.stdout
    path = clean_env / "cfg" / "config.toml"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert tomllib.loads(path.read_text()) == {"server": "http://example.test:8123", "hub": "mine"}


def test_serve_fails_fast_on_a_taken_port(clean_env):
    """Before the server (and its PostgreSQL) starts."""
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        taken = busy.getsockname()[1]
        result = runner.invoke(app, ["serve", "--port", str(taken)])
    assert result.exit_code == 1 and f"port {taken} on 127.0.0.1 is already in use" in result.stderr


def test_strip_leading_headings():
    from memorywiki.cli.output import strip_leading_headings

    assert strip_leading_headings("## Setup\n\nInstall it.\n") == "Install it.\n"
    assert strip_leading_headings("# A\n## B\ntext") == "text"
    assert strip_leading_headings("## Only a heading\n") == "## Only a heading\n"
    assert strip_leading_headings("#hashtag is text") == "#hashtag is text"


def test_strip_pulled_front_matter():
    from memorywiki.client.sections import strip_pulled_front_matter

    pulled = '---\ntitle: "T: x"\nurl: "http://h:1/abc123"\nhub: "h"\n---\n\n# Body\n\ntext\n'
    assert strip_pulled_front_matter(pulled, "abc123") == ("# Body\n\ntext\n", "T: x")
    # front matter of another doc, or the user's own, stays
    assert strip_pulled_front_matter(pulled, "other")[0] == pulled
    own = "---\nlayout: post\n---\n\nbody\n"
    assert strip_pulled_front_matter(own, "abc123") == (own, None)
    assert strip_pulled_front_matter("no front matter", "abc123") == ("no front matter", None)


def test_serve_says_how_to_put_memorywiki_on_path(clean_env):
    """Started as .venv/bin/memorywiki (as scripts/serve.sh does) with the venv
    not on PATH, `serve` prints the one line that puts the command on PATH, and that line works."""
    import os
    import subprocess

    from memorywiki.adapters.install.launch import memorywiki_executable

    exe = memorywiki_executable()
    assert exe is not None, "tests run from an install with the memorywiki console script"
    with socket.socket() as busy:  # a taken port: serve stops right after the hint
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        bare = {**os.environ, "PATH": "/usr/bin:/bin", "HOME": str(clean_env / "home")}
        bare.pop("VIRTUAL_ENV", None)
        result = subprocess.run(
            [str(exe), "serve", "--port", str(port)], env=bare, capture_output=True, text=True, timeout=120
        )
        on_path = {**bare, "PATH": f"{exe.parent}:/usr/bin:/bin"}
        quiet = subprocess.run(
            [str(exe), "serve", "--port", str(port)], env=on_path, capture_output=True, text=True, timeout=120
        )
    assert result.returncode == 1 and "already in use" in result.stderr
    tip = result.stderr.splitlines()[0]
    assert tip.startswith("tip: the memorywiki command is not on your PATH; in another shell, run:  ")
    line = tip.split("run:  ", 1)[1]
    found = subprocess.run(
        ["bash", "-c", f"{line} && command -v memorywiki && memorywiki --version"],
        env=bare,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert found.returncode == 0, found.stderr
    lines = found.stdout.splitlines()
    assert lines[0] == str(exe) and lines[1].startswith("memorywiki ")
    assert "tip:" not in quiet.stderr and quiet.returncode == 1  # already on PATH: no tip


def test_running_the_cli_loads_no_server_module():
    """The CLI (but serve/worker), the client package and the MCP server speak only HTTP: importing
    them, and running a command, loads nothing of memorywiki.server."""
    import subprocess
    import sys

    code = (
        "import sys, memorywiki.client, memorywiki.cli.main, memorywiki.adapters.mcp.server\n"
        "from typer.testing import CliRunner\n"
        "CliRunner().invoke(memorywiki.cli.main.app, ['capture', '--help'])\n"
        "print(sorted(m for m in sys.modules if m.startswith('memorywiki.server')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


@pytest.mark.parametrize("value", ["1", "on", "yes", "off", "0", ""])
def test_memorywiki_debug_is_the_declared_flag(clean_env, monkeypatch, value):
    """MEMORYWIKI_DEBUG reads as every flag setting does (docs/configuration.md): on, a bug
    shows its traceback; off (also "off", which used to turn it on), one line."""
    from memorywiki.client.config import Config

    def broken(cls, path=None):
        raise RuntimeError("boom")

    monkeypatch.setattr(Config, "load", classmethod(broken))
    monkeypatch.setenv("MEMORYWIKI_DEBUG", value)
    result = runner.invoke(app, ["list", "--hub", "h"])
    assert result.exit_code == 1
    if value in ("1", "on", "yes"):
        assert isinstance(result.exception, RuntimeError), "the traceback is shown"
    else:
        assert result.stderr == "error: RuntimeError: boom\n"


def test_every_variable_the_cli_reads_for_itself_is_documented():
    """The command's own switch is declared with the settings, so docs/configuration.md names it."""
    from memorywiki.server.config import configuration_markdown

    assert "| `MEMORYWIKI_DEBUG` | `off` |" in configuration_markdown()


def test_a_results_scores_say_rrf_only_when_rrf_ordered_the_list():
    from memorywiki.cli.output import _scores

    rrf = 1 / 61 + 1 / 63
    assert _scores({"score": rrf, "rrf_score": rrf, "vector_rank": 1, "fts_rank": 3}).startswith("rrf 0.0323")
    zscore = _scores({"score": 5.12, "rrf_score": rrf, "vector_rank": 1, "fts_rank": 3})
    assert zscore.startswith("score 5.12") and "vector #1" in zscore and "text #3" in zscore
    assert _scores({"rrf_score": rrf}).startswith("score 0.03")  # an older server's RRF-only answer
