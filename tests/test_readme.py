"""The README's shell examples run as written, top to bottom, in one go.

Every ```sh / ```bash block of README.md runs, in order, in ONE bash process (so `$TOKEN` from
the curl walk-through reaches the CLI section), in a fresh HOME and an empty working directory,
against a live server, with a PATH that does NOT hold the venv: the README's own activation line
has to put `memorywiki` there. A block is skipped only when an HTML comment right above it says
`not run by tests/test_readme.py: <why>`. The README's server address (127.0.0.1:8000) is
replaced by the live server's. Any failing command (curl included: HTTP errors fail) fails the
test with the command and its output.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"
README_SERVER = "http://127.0.0.1:8000"
SKIP = re.compile(r"<!--\s*not run by tests/test_readme\.py:\s*(?P<why>.+?)\s*-->")
FENCE = re.compile(r"^```(?P<lang>[\w-]*)\s*$")


def shell_blocks(text: str) -> list[tuple[int, str]]:
    """(line number, code) of each sh/bash block not marked as skipped."""
    blocks: list[tuple[int, str]] = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        start = i
        j = i + 1
        while j < len(lines) and not lines[j].startswith("```"):
            j += 1
        previous = next((lines[k] for k in range(start - 1, -1, -1) if lines[k].strip()), "")
        if m.group("lang") in ("sh", "bash", "shell") and not SKIP.search(previous):
            blocks.append((start + 1, "\n".join(lines[start + 1 : j])))
        i = j + 1
    return blocks


def test_shell_blocks_parser_honours_the_skip_marker():
    text = (
        "# t\n\n```sh\necho a\n```\n\n<!-- not run by tests/test_readme.py: long -->\n```bash\necho b\n```\n"
        "```json\n{}\n```\n```\nplain\n```\n```bash\necho c\n```\n"
    )
    assert shell_blocks(text) == [(3, "echo a"), (17, "echo c")]


@pytest.mark.slow
def test_readme_examples_run_top_to_bottom(live_server, tmp_path):
    blocks = shell_blocks(README.read_text(encoding="utf-8"))
    script = "\n".join(code for _, code in blocks)
    # the walk-through this test exists for: if these vanish, the README changed shape
    for needed in (
        "source .venv/bin/activate",
        "/api/hubs",
        "memorywiki hub use demo",
        "memorywiki recall",
        "memorywiki install claude-code --user --mcp",
        "command -v memorywiki",
    ):
        assert needed in script, f"the README no longer runs {needed!r}"

    work = tmp_path / "work"
    home = tmp_path / "home"
    work.mkdir()
    home.mkdir()
    venv = Path(sys.prefix)
    assert (venv / "bin" / "activate").is_file(), "the test suite runs from a venv (scripts/test.sh makes .venv)"
    (work / ".venv").symlink_to(venv)  # where the README's activation line expects the checkout's venv

    url = live_server.url.rstrip("/")
    parts = [
        "set -euo pipefail",
        # curl -s exits 0 on an HTTP error; the README's commands must not fail quietly
        'curl() { command curl --fail-with-body "$@"; }',
        "trap 'echo \"README command failed (exit $?): $BASH_COMMAND\" >&2' ERR",
    ]
    for line, code in blocks:
        parts.append(f"echo '--- README.md line {line}' >&2")
        parts.append(code.replace(README_SERVER, url))
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("MEMORYWIKI_", "CODEX_", "CLAUDE_", "XDG_", "VIRTUAL_ENV", "PYTHON"))
    }
    env.update({"HOME": str(home), "PATH": "/usr/bin:/bin", "MEMORYWIKI_URL": url})
    result = subprocess.run(
        ["bash", "-c", "\n".join(parts)], cwd=work, env=env, capture_output=True, text=True, timeout=600
    )
    assert result.returncode == 0, f"stdout:\n{result.stdout[-4000:]}\nstderr:\n{result.stderr[-4000:]}"

    # what a reader sees along the way
    assert f"{url}/hub/demo" in result.stdout  # `hub use demo`
    assert "mode: " in result.stdout  # recall says which search ran
    assert (home / ".config" / "memorywiki" / "config.toml").is_file()
    assert (home / ".claude.json").is_file()  # install --mcp wrote the registration
