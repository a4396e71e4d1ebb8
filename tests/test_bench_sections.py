"""The benchmark sections outside `python -m bench all` run (--smoke) on tiny data, and every
entry point says where to get its data when that is missing (tests/test_bench_smoke.py runs
`all`)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.bench_runs import ROOT, bench, smoke_env  # noqa: F401  (smoke_env is a fixture)


def test_bench_locomo_smoke_with_the_embedding_cache(smoke_env, tmp_path):
    """--embed-cache wraps the servers' embedder: recall's questions go through it too (they
    once answered 500: the cache had no question path)."""
    out = tmp_path / "results"
    proc = bench(
        "bench",
        "locomo",
        "--smoke",
        "--locomo",
        str(tmp_path / "locomo"),
        "--out",
        str(out),
        "--embed-cache",
        str(tmp_path / "vectors"),
        env=smoke_env,
    )
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
    assert weights == [
        "| /",
        "| /hub/field-notes",
        "| /hub/field-notes?q=how+do+I+roll+back+the+upgrade",
        "| /{doc}",
        "| /b/{bundle}",
        "| /{doc}/edit",
        "| /new",
        "| /hub/field-notes/graph",
        "| /{doc}/history",
    ]


@pytest.mark.parametrize(
    "args, missing",
    [
        (("bench", "all"), ("scifact.zip", "snap-research/locomo")),
        (("bench", "quality"), ("scifact.zip",)),
        (("bench", "locomo"), ("snap-research/locomo",)),
        (("bench.studies.fulltext",), ("scifact.zip",)),
        (("bench.studies.plan", "bench_lat_100000"), ("scifact.zip",)),
        (("bench.studies.ablation",), ("scifact.zip", "snap-research/locomo")),
        (("bench.studies.bm25_cost",), ("scifact.zip",)),
    ],
)
def test_bench_without_its_data_says_where_to_get_it(tmp_path, args, missing):
    """No traceback, nothing started: a message naming the folder and the source, exit 2."""
    env = {k: v for k, v in os.environ.items() if k != "DATABASE_URL"}
    env.update({"MEMORYWIKI_BENCH_DATA": str(tmp_path / "data"), "SCIFACT_DIR": str(tmp_path / "data" / "scifact")})
    pg_dir = tmp_path / "pg"
    with_pg = ("bench", "bench.studies.plan", "bench.studies.ablation", "bench.studies.bm25_cost")
    extra = ("--pg-dir", str(pg_dir)) if args[0] in with_pg else ()
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
    data = [
        {
            "title": title,
            "paragraphs": [
                {
                    "context": context,
                    "qas": [
                        {"id": f"{path.stem}-{i}-{j}", "question": question, "answers": []}
                        for j, question in enumerate(questions)
                    ],
                }
            ],
        }
        for i, (title, context, questions) in enumerate(paragraphs)
    ]
    path.write_text(json.dumps({"data": data}, ensure_ascii=False), encoding="utf-8")


def test_bench_cjk_smoke(smoke_env, tmp_path):
    """Before (every script through the English parser) and after (bigrams), on tiny sets made
    from the tests' own notes: the Chinese, Japanese and Korean questions find their notes only
    after; English ranks exactly as before."""
    from bench.suite.cjk import SOURCES

    notes = json.loads((ROOT / "tests" / "data" / "cjk" / "notes.json").read_text(encoding="utf-8"))
    arabic = [
        ("مدن", "القاهرة عاصمة مصر وأكبر مدنها.", ["ما هي عاصمة مصر؟"]),
        ("أنهار", "نهر النيل أطول نهر في أفريقيا.", ["ما أطول نهر في أفريقيا؟"]),
    ]
    raw, out = tmp_path / "raw", tmp_path / "results"
    raw.mkdir()
    for key, source in SOURCES.items():
        _squad(
            raw / source.file,
            arabic if key == "ar" else [(n["title"], n["markdown"], [n["question"]]) for n in notes[key]],
        )
    proc = bench(
        "bench",
        "cjk",
        "--smoke",
        "--data",
        str(raw),
        "--dataset",
        str(tmp_path / "beir"),
        "--out",
        str(out),
        env=smoke_env,
    )
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
    proc = bench(
        "bench",
        "cjk",
        "--data",
        str(tmp_path / "raw"),
        "--dataset",
        str(tmp_path / "scifact"),
        "--pg-dir",
        str(tmp_path / "pg"),
        env=env,
        timeout=60,
    )
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr and proc.stdout == ""
    assert f"is not in {tmp_path / 'raw'}" in proc.stderr and f"is not in {tmp_path / 'scifact'}" in proc.stderr
    for source in (
        "ymcui/cmrc2018",
        "yahoojapan/JGLUE",
        "korquad/korquad.github.io",
        "husseinmozannar/SOQAL",
        "scifact.zip",
    ):
        assert source in proc.stderr
    assert not (tmp_path / "pg").exists()


def test_bench_secrets_smoke_and_without_its_data(tmp_path):
    """`bench secrets` plants the public formats in real pages and reads clean text; without
    the clean corpora it says where they come from."""
    data = tmp_path / "data"
    (data / "scifact").mkdir(parents=True)
    (data / "locomo").mkdir()
    abstracts = [
        {"_id": str(i), "title": f"Study {i}", "text": "Cells divide when nutrients allow. " * 20} for i in range(60)
    ]
    (data / "scifact" / "corpus.jsonl").write_text("".join(json.dumps(a) + "\n" for a in abstracts))
    turns = [
        {"sample_id": "c1", "session": 1, "session_date_time": "1 May 2023", "speaker": s, "text": "How was the trip?"}
        for s in ("Ann", "Bob") * 30
    ]
    (data / "locomo" / "locomo10_turns.jsonl").write_text("".join(json.dumps(t) + "\n" for t in turns))
    env = dict(os.environ)
    out = tmp_path / "out"
    proc = bench("bench", "secrets", "--smoke", "--data", str(data), "--out", str(out), env=env)
    assert proc.returncode == 0, proc.stderr[-4000:]
    text = (out / "secrets.md").read_text()
    assert "| **every format in the corpus** | 60 |" in text
    assert "| SciFact abstracts | 1 |" in text and "| base64-encoded |" in text

    proc = bench("bench", "secrets", "--smoke", "--data", str(tmp_path / "nothing"), "--out", str(out), env=env)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr and "scifact" in proc.stderr
