"""Finding the pinned coding tools (scripts/agent-tools.env) for the end-to-end tests.

scripts/install-agent-tools.sh installs them under $MEMORYWIKI_AGENT_TOOLS (default
.agent-tools in the repo). A tool found there, or on PATH, counts only at its pinned version,
so a test never passes against a release nobody pinned. When a tool is missing the test
fails in CI (CI set, as .ci/run does) with the reason, and skips with the same one-line
reason elsewhere.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PINS_FILE = REPO / "scripts" / "agent-tools.env"
INSTALL_HINT = "run scripts/install-agent-tools.sh"

# tool -> (pin key in agent-tools.env, path under the install prefix)
_TOOLS = {
    "claude": ("CLAUDE_CODE_VERSION", "npm/node_modules/.bin/claude"),
    "codex": ("CODEX_VERSION", "npm/node_modules/.bin/codex"),
    "aider": ("AIDER_VERSION", "aider/bin/aider"),
}


def pins() -> dict[str, str]:
    """KEY=VALUE lines of scripts/agent-tools.env."""
    out: dict[str, str] = {}
    for line in PINS_FILE.read_text(encoding="utf-8").splitlines():
        line = line.strip()
        if line and not line.startswith("#") and "=" in line:
            key, _, value = line.partition("=")
            out[key.strip()] = value.strip()
    return out


def pinned_version(tool: str) -> str:
    return pins()[_TOOLS[tool][0]]


def prefix() -> Path:
    return Path(os.environ.get("MEMORYWIKI_AGENT_TOOLS") or REPO / ".agent-tools")


def in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


def _version(exe: str) -> str:
    try:
        out = subprocess.run([exe, "--version"], capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.SubprocessError) as exc:
        return f"<failed: {exc}>"
    return (out.stdout or out.stderr).strip()


def find(tool: str) -> tuple[str | None, str]:
    """(executable, "") for the pinned tool, or (None, why it is not usable)."""
    want = pinned_version(tool)
    seen = []
    for candidate in (prefix() / _TOOLS[tool][1], shutil.which(tool)):
        if not candidate or not Path(candidate).exists():
            continue
        version = _version(str(candidate))
        if want in re.findall(r"\d+(?:\.\d+)+", version):
            return str(candidate), ""
        seen.append(f"{candidate} is {version!r}")
    if seen:
        return None, f"{tool} {want} is pinned but " + "; ".join(seen) + f" ({INSTALL_HINT})"
    return None, f"{tool} {want} is not installed in {prefix()} or on PATH ({INSTALL_HINT})"


def require(tool: str) -> str:
    """The pinned tool's executable; fail (CI) or skip (elsewhere) with the reason."""
    exe, why = find(tool)
    if exe:
        return exe
    if in_ci():
        pytest.fail(f"CI must run the real-tool tests, but {why}", pytrace=False)
    pytest.skip(why)
