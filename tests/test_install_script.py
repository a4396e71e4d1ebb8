"""scripts/install.sh, which serve.sh and test.sh source: it installs on the first run and
never again while the packaging inputs stay the same.

The script runs as it is, in a copy of the checkout's packaging files. Its `.venv/bin/python`
is a stand-in that logs each call and does what `pip install -e .` leaves behind in the
project folder (a `memorywiki.egg-info/` folder) without downloading anything, so the test
takes a second.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

FAKE_PYTHON = """#!/bin/sh
# Stand-in for .venv/bin/python: log the call; pip install -e . makes the egg-info folder.
echo "$*" >> "$MW_CALLS"
case "$*" in
    "-m pip install --progress-bar on -e "*) mkdir -p memorywiki.egg-info ;;
    "-c "*) exec "$MW_REAL_PYTHON" "$@" ;;
esac
exit 0
"""


def _checkout_copy(tmp_path: Path) -> Path:
    copy = tmp_path / "checkout"
    (copy / "scripts").mkdir(parents=True)
    for name in ("pyproject.toml", "setup.py", "scripts/install.sh"):
        shutil.copy2(ROOT / name, copy / name)
    for folder in ("adapters", "bench", "cli", "client", "docs", "formats", "server", "skill", "tests"):
        (copy / folder).mkdir()
    venv_bin = copy / ".venv" / "bin"
    venv_bin.mkdir(parents=True)
    (venv_bin / "python").write_text(FAKE_PYTHON)
    (venv_bin / "python").chmod(0o755)
    return copy


def _install(copy: Path, calls: Path) -> str:
    result = subprocess.run(
        ["bash", "-c", '. scripts/install.sh && mw_venv && mw_install onnx "a test" "import json"'],
        cwd=copy,
        env={**os.environ, "MW_CALLS": str(calls), "MW_REAL_PYTHON": sys.executable},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout


def test_the_second_run_does_not_reinstall(tmp_path):
    copy = _checkout_copy(tmp_path)
    calls = tmp_path / "calls.log"
    first = _install(copy, calls)
    assert "==> Installing memorywiki[onnx]" in first
    assert (copy / "memorywiki.egg-info").is_dir(), "the install left its egg-info, as pip does"
    installs = calls.read_text().count("pip install --progress-bar on -e")
    assert installs == 1

    second = _install(copy, calls)
    assert "Installing" not in second, "the egg-info the first install made is no reason to reinstall"
    assert calls.read_text().count("pip install --progress-bar on -e") == 1

    (copy / "newpackage").mkdir()  # a new top-level folder is a packaging change
    assert "==> Installing" in _install(copy, calls)
    assert "Installing" not in _install(copy, calls)
