"""The benchmark suite runs end to end (`python -m bench all --smoke`) on tiny generated data,
without torch: every section of `all` still runs and writes its results.

Benchmarks are not tests: this only checks that the sections run, using the test embedding
server instead of all-MiniLM-L6-v2. The sections outside `all`, and the messages for missing
data, are in tests/test_bench_sections.py (a file of their own, so the suite's two workers share
the bench runs).
"""

from __future__ import annotations

import pytest

from tests.bench_runs import bench, smoke_env  # noqa: F401  (smoke_env is a fixture)


@pytest.mark.slow
def test_bench_all_smoke(smoke_env, tmp_path):
    out = tmp_path / "results"
    proc = bench(
        "bench",
        "all",
        "--smoke",
        "--dataset",
        str(tmp_path / "beir"),
        "--locomo",
        str(tmp_path / "locomo"),
        "--out",
        str(out),
        env=smoke_env,
        timeout=480,
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    for name in (
        "quality.md",
        "locomo.md",
        "latency.md",
        "cost.md",
        "curation.md",
        "curation-sample-extractive.md",
        "embedding.md",
        "underload.md",
        "soak.md",
        "scaleout.md",
        "longdocs.md",
        "hooks.md",
        "README.md",
        "quality.png",
        "latency.png",
    ):
        assert (out / name).exists(), name
    quality = (out / "quality.md").read_text()
    assert "hybrid (z-score fusion)" in quality and "nDCG@10" in quality
    locomo = (out / "locomo.md").read_text()
    assert "recall@10" in locomo and "tokens@10" in locomo
    latency = (out / "latency.md").read_text()
    assert "| 300 | after | hybrid | 16 |" in latency
    assert "| 300 | after, cache | hybrid | 16 |" in latency and "Rerank stage" in latency
    for mode in ("vector", "fulltext", "hybrid"):
        row = next(line for line in latency.splitlines() if line.startswith(f"| 300 | after | {mode} | 1 |"))
        cells = row.split("|")
        assert float(cells[13]) < float(cells[5]), row  # paired: each request against its own floor
        assert 0 < float(cells[14]) < float(cells[5]), row  # HTTP + Python alone, from its Server-Timing
    underload = (out / "underload.md").read_text()
    assert "| after | in-process | idle |" in underload and "| after | in-process | loaded |" in underload
    cost = (out / "cost.md").read_text()
    # the embedding-cost contract: nothing for unchanged saves, exactly the edit otherwise
    assert "MISMATCH" not in cost, cost
    assert "| (b) re-save every doc unchanged (PATCH) | 5 docs | 0 | 0 | 0 | ok |" in cost
    curation = (out / "curation.md").read_text()
    # idempotency: a re-import of the same captures costs no model call
    assert "| extractive | extractive |" in curation and "| model | openai:stand-in |" in curation, curation
    model_row = next(line for line in curation.splitlines() if line.startswith("| model |"))
    assert "| 0 (unchanged) |" in model_row, model_row
    assert 'enrichment: "extractive"' in (out / "curation-sample-extractive.md").read_text()
    # load held: no error, no lost write (the section itself exits non-zero otherwise)
    soak = (out / "soak.md").read_text()
    assert "Lost writes: **0**" in soak and "-> **met**" in soak, soak
    # two servers + two workers, one killed: every chunk embedded once, nothing owed
    scaleout = (out / "scaleout.md").read_text()
    assert "| owed at the end | 0 |" in scaleout and "-> **met**" in scaleout, scaleout
    readme = (out / "README.md").read_text()
    assert "python -m bench" in readme
