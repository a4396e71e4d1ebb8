#!/usr/bin/env bash
# Run the test suite: installs the package with its test extras into .venv (no torch:
# tests embed through a local OpenAI-compatible server), then runs pytest.
# Arguments go to pytest, e.g. `./scripts/test.sh -m "not slow"` or `./scripts/test.sh tests/test_recall.py`.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/install.sh
mw_venv
mw_install "dev,bench" "about 130 packages, ~1.1 GB on disk; a minute or two" \
    "import memorywiki.server, pytest, pytest_asyncio, ranx"
exec .venv/bin/python -m pytest -q "$@"
