"""One-off studies, kept as records: each wrote the result file named here and is not part of
`python -m bench`. Each runs from the repository root as `python -m bench.studies.NAME --help`."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Study:
    name: str
    summary: str
    results: str  # the file under bench/results/ that holds its findings
    dated: str  # when it was run


STUDIES: tuple[Study, ...] = (
    Study(
        "fulltext",
        "BM25 inside PostgreSQL against bm25s: quality, write cost, latency up to 1M chunks",
        "fulltext.md",
        "2026-11-29",
    ),
    Study(
        "plan",
        "chunk recall's SQL: every candidate joined before the LIMIT, or the top k first",
        "findings.md",
        "2026-11-29",
    ),
    Study(
        "ablation",
        "ranking factors one at a time (full text, fusion, doc level, chat chunks) on SciFact and LoCoMo",
        "ranking-study.md",
        "2026-11-30",
    ),
    Study(
        "fusion_cost",
        "what z-score fusion costs in SQL against the RRF statement it replaced",
        "ranking.md",
        "2026-11-30",
    ),
    Study(
        "pgstorage",
        "shared_buffers and the BM25 forward index's storage on the 100k-chunk hub",
        "pgstorage.md",
        "2026-12-01",
    ),
    Study(
        "chunk_scifact",
        "SciFact at chunk level by chunk maximum, full text on the whole corpus, vectors on a sample",
        "chunk_scifact.md",
        "2026-12-01",
    ),
    Study(
        "bigpages",
        "one save of a 5 MB page, a 10,000-row table, a 50,000-character fence, before and after",
        "bigpages.md",
        "2026-12-02",
    ),
    Study(
        "pooling",
        "a chunk past the model's window as one vector: truncation, mean of windows, weighted lead",
        "pooling.md",
        "2026-12-02",
    ),
    Study(
        "blind_questions", "questions one ranker is blind to, from the fusion bench's pools", "fusion.md", "2026-12-02"
    ),
    Study(
        "bm25_cost",
        "a hybrid recall's PostgreSQL CPU at 100k chunks, and bm25_search's per term, posting and candidate",
        "bm25-cost.md",
        "2026-12-02",
    ),
)
