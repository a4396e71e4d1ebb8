"""The benchmark suite's sections: one registry, read by `python -m bench` and the results index.

A section with `runs_in_all` is a module with `run(opts, pg)`, started by `python -m bench NAME`
or `all`; the others have a command line of their own (`main(argv)`), which
`python -m bench NAME ARGS...` hands the rest of its arguments to.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Section:
    name: str
    summary: str
    results: tuple[str, ...]  # files it writes under bench/results/
    needs: tuple[str, ...] = ()  # datasets: "beir", "locomo"
    runs_in_all: bool = True


SECTIONS: tuple[Section, ...] = (
    Section(
        "quality",
        "retrieval quality on a BEIR set (SciFact): nDCG@10, MRR@10, Recall@100 by level and mode",
        ("quality.md", "quality.png"),
        ("beir",),
    ),
    Section(
        "locomo", "conversation memory on LoCoMo: evidence recall@k and tokens per answer", ("locomo.md",), ("locomo",)
    ),
    Section(
        "latency",
        "recall latency and throughput over HTTP against the SQL floor, hubs of 1k-100k chunks",
        ("latency.md", "latency.png"),
        ("beir",),
    ),
    Section("cost", "indexing throughput and embedding calls per kind of save (idempotency)", ("cost.md",), ("beir",)),
    Section(
        "curation",
        "AI curation: model calls and tokens per doc, digest size, suggested bundles",
        ("curation.md", "curation-sample-extractive.md"),
        ("locomo",),
    ),
    Section("embedding", "the local embedder's backends: torch, ONNX fp32, ONNX int8", ("embedding.md",), ("beir",)),
    Section(
        "indexing",
        "indexing throughput against the model alone, and recall while a big page indexes",
        ("indexing.md",),
        ("beir",),
    ),
    Section("underload", "recall while a big page and an export are indexed", ("underload.md",), ("beir",)),
    Section("soak", "16 clients of mixed load for 10 minutes: errors, lost writes, memory", ("soak.md",)),
    Section("scaleout", "2 servers and 2 workers on one PostgreSQL, one worker killed", ("scaleout.md",)),
    Section(
        "longdocs",
        "long heading-less docs: token-level recall@5, tokens per recall, chunk sizes",
        ("longdocs.md",),
        ("beir",),
    ),
    Section(
        "hooks",
        "the coding-tool hooks as the tool runs them: session start p50/p95 on a 10k-chunk hub, prompt, session end",
        ("hooks.md",),
        ("beir",),
    ),
    Section(
        "pages",
        "page weights and render times of hostile markdown (--screenshots DIR)",
        ("pages.md",),
        runs_in_all=False,
    ),
    Section(
        "graph",
        "the hub graph: edges within vs across known topics (notes, LoCoMo, SciFact), per rule",
        ("graph.md",),
        ("locomo", "beir"),
        runs_in_all=False,
    ),
    Section(
        "fusion",
        "hybrid against each ranker on every collection, English and not (nDCG@10)",
        ("fusion.md",),
        runs_in_all=False,
    ),
    Section("micro", "chunker, chat-export streaming and BM25 insert speed (prints a table)", (), runs_in_all=False),
    Section(
        "secrets",
        "secrets found per kind in real pages, false redactions per 100k chars of clean text, speed",
        ("secrets.md",),
        runs_in_all=False,
    ),
    Section(
        "longmemeval",
        "long-term chat memory on LongMemEval-S: session recall_any/all@k, NDCG@10, evidence turns and tokens",
        ("longmemeval.md",),
        runs_in_all=False,
    ),
    Section(
        "cjk",
        "full text in Chinese, Japanese, Korean: BM25 before and after bigrams (--data DIR)",
        ("cjk.md",),
        runs_in_all=False,
    ),
)

BY_NAME = {section.name: section for section in SECTIONS}
