#!/usr/bin/env bash
# Run the test suite: installs the package with its test extras into .venv (no torch:
# tests embed through a local OpenAI-compatible server), then runs pytest.
# Arguments go to pytest, e.g. `./scripts/test.sh -m "not slow"` or `./scripts/test.sh tests/test_recall.py`.
# Two pytest-xdist workers, a test file each at a time (each worker has its own PostgreSQL and
# test servers): on 2 cores the suite took 375 s instead of 579 s in one process; `-n 0` after
# the script's name runs it in one process.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/install.sh
mw_venv
mw_install "dev,bench" "about 130 packages, ~1.1 GB on disk; a minute or two" \
    "import memorywiki.server, pytest, pytest_asyncio, xdist, ranx"
exec .venv/bin/python -m pytest -q -n 2 --dist loadfile "$@"
