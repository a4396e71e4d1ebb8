"""The benchmark suite runs end to end (--smoke) on tiny generated data, without torch, and
says where to get its data when that is missing.

Benchmarks are not tests: this only checks that every section still runs and writes its
results, using the test embedding server instead of all-MiniLM-L6-v2. bench/ is not installed,
so it runs from the checkout (`python -m bench` in the repository root).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def bench(*args: str, env: dict[str, str], timeout: float = 240) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", *args], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=timeout)


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


@pytest.mark.slow
def test_bench_all_smoke(smoke_env, tmp_path):
    out = tmp_path / "results"
    proc = bench("bench", "all", "--smoke", "--dataset", str(tmp_path / "beir"), "--locomo", str(tmp_path / "locomo"),
                 "--out", str(out), env=smoke_env, timeout=480)
    assert proc.returncode == 0, proc.stderr[-4000:]
    for name in ("quality.md", "locomo.md", "latency.md", "cost.md", "curation.md", "curation-sample-extractive.md",
                 "embedding.md", "underload.md", "soak.md", "scaleout.md", "longdocs.md", "README.md", "quality.png",
                 "latency.png"):
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
    assert "enrichment: \"extractive\"" in (out / "curation-sample-extractive.md").read_text()
    # load held: no error, no lost write (the section itself exits non-zero otherwise)
    soak = (out / "soak.md").read_text()
    assert "Lost writes: **0**" in soak and "-> **met**" in soak, soak
    # two servers + two workers, one killed: every chunk embedded once, nothing owed
    scaleout = (out / "scaleout.md").read_text()
    assert "| owed at the end | 0 |" in scaleout and "-> **met**" in scaleout, scaleout
    readme = (out / "README.md").read_text()
    assert "python -m bench" in readme


def test_bench_locomo_smoke_with_the_embedding_cache(smoke_env, tmp_path):
    """--embed-cache wraps the servers' embedder: recall's questions go through it too (they
    once answered 500: the cache had no question path)."""
    out = tmp_path / "results"
    proc = bench("bench", "locomo", "--smoke", "--locomo", str(tmp_path / "locomo"), "--out", str(out),
                 "--embed-cache", str(tmp_path / "vectors"), env=smoke_env)
    assert proc.returncode == 0, proc.stderr[-4000:]
    assert "recall@10" in (out / "locomo.md").read_text()
    assert (tmp_path / "vectors" / "vectors.sqlite").stat().st_size > 0


@pytest.mark.slow
def test_bench_micro_smoke(smoke_env):
    proc = bench("bench", "micro", "--smoke", env=smoke_env)
    assert proc.returncode == 0, proc.stderr[-4000:]
    rows = [line for line in proc.stdout.splitlines() if line.startswith("| ") and not line.startswith("| what")]
    assert [row.split(" | ")[0] for row in rows] == [
        "| chunk 500 docs of 1,500 chars",
        "| convert a 200-conversation ChatGPT export (1.4 MB JSON)",
        "| insert 200 chunks of 120 words (BM25 postings at commit)",
    ]


@pytest.mark.slow
def test_bench_pages_smoke(smoke_env, tmp_path):
    proc = bench("bench", "pages", "--smoke", "--out", str(tmp_path), env=smoke_env)
    assert proc.returncode == 0, proc.stderr[-4000:]
    text = (tmp_path / "pages.md").read_text()
    assert "| 1,000-row table | " in text and "| 500-deep nested list | " in text
    weights = [line.split(" | ")[0] for line in text.splitlines() if line.startswith("| /")]
    assert weights == ["| /", "| /hub/field-notes", "| /hub/field-notes?q=how+do+I+roll+back+the+upgrade", "| /{doc}",
                       "| /b/{bundle}", "| /{doc}/edit", "| /new", "| /hub/field-notes/graph", "| /{doc}/history"]


@pytest.mark.parametrize("args, missing", [
    (("bench", "all"), ("scifact.zip", "snap-research/locomo")),
    (("bench", "quality"), ("scifact.zip",)),
    (("bench", "locomo"), ("snap-research/locomo",)),
    (("bench.studies.fulltext",), ("scifact.zip",)),
    (("bench.studies.plan", "bench_lat_100000"), ("scifact.zip",)),
    (("bench.studies.ablation",), ("scifact.zip", "snap-research/locomo")),
])
def test_bench_without_its_data_says_where_to_get_it(tmp_path, args, missing):
    """No traceback, nothing started: a message naming the folder and the source, exit 2."""
    env = {k: v for k, v in os.environ.items() if k != "DATABASE_URL"}
    env.update({"MEMORYWIKI_BENCH_DATA": str(tmp_path / "data"), "SCIFACT_DIR": str(tmp_path / "data" / "scifact")})
    pg_dir = tmp_path / "pg"
    extra = ("--pg-dir", str(pg_dir)) if args[0] in ("bench", "bench.studies.plan", "bench.studies.ablation") else ()
    proc = bench(*args, *extra, env=env, timeout=60)
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr and proc.stdout == ""
    assert f"is not in {tmp_path / 'data'}" in proc.stderr
    for source in missing:
        assert source in proc.stderr
    assert not pg_dir.exists()  # it stopped before starting PostgreSQL


def test_bench_help_lists_every_section():
    from bench.suite import SECTIONS

    proc = bench("bench", "--help", env=dict(os.environ), timeout=60)
    assert proc.returncode == 0, proc.stderr
    listed = {line.split()[0] for line in proc.stdout.split("sections (")[1].splitlines()[1:] if line.strip()}
    assert listed == {section.name for section in SECTIONS} | {"report"}


def test_bench_baseline_must_name_a_commit_of_the_repository(tmp_path):
    """No 'before' rows unless asked; asked for with a ref the repository lacks: exit 2 before anything starts."""
    env = {k: v for k, v in os.environ.items() if k != "DATABASE_URL"}
    pg_dir = tmp_path / "pg"
    proc = bench("bench", "latency", "--baseline", "no-such-ref-here", "--pg-dir", str(pg_dir), env=env, timeout=60)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert "--baseline no-such-ref-here is not a commit of this repository" in proc.stderr
    assert not pg_dir.exists()


def _squad(path: Path, paragraphs: list[tuple[str, str, list[str]]]) -> None:
    """A reading-comprehension file in SQuAD layout: (title, context, questions) per paragraph."""
    data = [{"title": title, "paragraphs": [{"context": context, "qas": [
        {"id": f"{path.stem}-{i}-{j}", "question": question, "answers": []} for j, question in enumerate(questions)]}]}
        for i, (title, context, questions) in enumerate(paragraphs)]
    path.write_text(json.dumps({"data": data}, ensure_ascii=False), encoding="utf-8")


def test_bench_cjk_smoke(smoke_env, tmp_path):
    """Before (every script through the English parser) and after (bigrams), on tiny sets made
    from the tests' own notes: the Chinese, Japanese and Korean questions find their notes only
    after; English ranks exactly as before."""
    from bench.suite.cjk import SOURCES

    notes = json.loads((ROOT / "tests" / "data" / "cjk" / "notes.json").read_text(encoding="utf-8"))
    arabic = [("مدن", "القاهرة عاصمة مصر وأكبر مدنها.", ["ما هي عاصمة مصر؟"]),
              ("أنهار", "نهر النيل أطول نهر في أفريقيا.", ["ما أطول نهر في أفريقيا؟"])]
    raw, out = tmp_path / "raw", tmp_path / "results"
    raw.mkdir()
    for key, source in SOURCES.items():
        _squad(raw / source.file, arabic if key == "ar" else
               [(n["title"], n["markdown"], [n["question"]]) for n in notes[key]])
    proc = bench("bench", "cjk", "--smoke", "--data", str(raw), "--dataset", str(tmp_path / "beir"),
                 "--out", str(out), env=smoke_env)
    assert proc.returncode == 0, proc.stderr[-4000:]
    text = (out / "cjk.md").read_text(encoding="utf-8")
    quality = text.split("## Quality", 1)[1].split("## Speed", 1)[0]
    rows = {line.split(" | ")[0][2:]: line.split(" | ") for line in quality.splitlines() if line.startswith("| ")}
    for key in ("zh", "ja", "ko"):
        cells = rows[SOURCES[key].name]
        assert float(cells[4]) < float(cells[5]) == 1.0, cells  # nDCG@10 before, after
        assert cells[8] == "0 / 10" and cells[9].startswith("10 / 10"), cells  # the probe
    english = next(line for line in text.splitlines() if line.startswith("English control:"))
    same, _, total = english.split()[2:5]
    assert same == total, english
    assert "whitespace words + bigrams" in text and "indexing chunks/CPU-s" in text


def test_bench_cjk_without_its_data_says_where_to_get_it(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "DATABASE_URL"}
    proc = bench("bench", "cjk", "--data", str(tmp_path / "raw"), "--dataset", str(tmp_path / "scifact"),
                 "--pg-dir", str(tmp_path / "pg"), env=env, timeout=60)
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr and proc.stdout == ""
    assert f"is not in {tmp_path / 'raw'}" in proc.stderr and f"is not in {tmp_path / 'scifact'}" in proc.stderr
    for source in ("ymcui/cmrc2018", "yahoojapan/JGLUE", "korquad/korquad.github.io", "husseinmozannar/SOQAL",
                   "scifact.zip"):
        assert source in proc.stderr
    assert not (tmp_path / "pg").exists()
