#!/usr/bin/env bash
# Run the test suite: installs the package with its test extras into .venv (no torch:
# tests embed through a local OpenAI-compatible server), then runs pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
    "$PYTHON" -m venv .venv
fi
.venv/bin/pip install -q --upgrade pip
.venv/bin/pip install -q -e ".[dev,bench]"
exec .venv/bin/python -m pytest -q "$@"
