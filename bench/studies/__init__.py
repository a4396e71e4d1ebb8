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
    Study("fulltext", "BM25 inside PostgreSQL against bm25s: quality, write cost, latency up to 1M chunks",
          "fulltext.md", "2026-11-29"),
    Study("plan", "chunk recall's SQL: every candidate joined before the LIMIT, or the top k first",
          "findings.md", "2026-11-29"),
    Study("ablation", "ranking factors one at a time (full text, fusion, doc level, chat chunks) on SciFact and LoCoMo",
          "ranking-study.md", "2026-11-30"),
    Study("fusion_cost", "what z-score fusion costs in SQL against the RRF statement it replaced",
          "ranking.md", "2026-11-30"),
    Study("pgstorage", "shared_buffers and the BM25 forward index's storage on the 100k-chunk hub",
          "pgstorage.md", "2026-12-01"),
)
