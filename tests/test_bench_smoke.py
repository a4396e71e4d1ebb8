"""The benchmark suite runs end to end (--smoke) on tiny generated data, without torch.

Benchmarks are not tests: this only checks that every section still runs and writes its
results, using the test embedding server instead of all-MiniLM-L6-v2.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]  # bench/ is not installed: it runs from the checkout


@pytest.fixture
def smoke_env(pg_server, embedding_server, tmp_path):
    from bench.tiny import make_beir, make_locomo

    make_beir(tmp_path / "beir")
    make_locomo(tmp_path / "locomo")
    env = dict(os.environ)
    env.update({
        "OPENAI_BASE_URL": embedding_server.base_url, "OPENAI_API_KEY": "x",
        "MEMORYWIKI_EMBEDDER": "openai", "MEMORYWIKI_OPENAI_MODEL": "test-embed",
        "DATABASE_URL": pg_server._server.get_uri("postgres"),
    })
    env.pop("MEMORYWIKI_BENCH_COUNTS", None)
    return env


def test_bench_all_smoke(smoke_env, tmp_path):
    out = tmp_path / "results"
    t0 = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-m", "bench", "all", "--smoke", "--dataset", str(tmp_path / "beir"),
         "--locomo", str(tmp_path / "locomo"), "--out", str(out)],
        env=smoke_env, capture_output=True, text=True, timeout=240, cwd=ROOT,
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    for name in ("quality.md", "locomo.md", "latency.md", "cost.md", "README.md", "quality.png", "latency.png"):
        assert (out / name).exists(), name
    quality = (out / "quality.md").read_text()
    assert "hybrid RRF" in quality and "nDCG@10" in quality
    locomo = (out / "locomo.md").read_text()
    assert "recall@10" in locomo and "tokens@10" in locomo
    latency = (out / "latency.md").read_text()
    assert "| 300 | hybrid | 16 |" in latency
    cost = (out / "cost.md").read_text()
    # the embedding-cost contract: nothing for unchanged saves, exactly the edit otherwise
    assert "MISMATCH" not in cost, cost
    assert "| (b) re-save every doc unchanged (PATCH) | 5 docs | 0 | 0 | 0 | ok |" in cost
    readme = (out / "README.md").read_text()
    assert "python -m bench" in readme
    print(f"bench smoke: {time.monotonic() - t0:.1f}s")
