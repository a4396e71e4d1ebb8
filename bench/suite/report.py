"""bench/results/README.md: an index of the results, one line per table, from the registries."""

from __future__ import annotations

import json
import time

from ..common import Options, machine
from ..studies import STUDIES
from . import SECTIONS

# Written by hand from the tables: what the benchmarks found, and the ranking's summary.
NOTES = (
    ("findings.md", "server problems the benchmarks exposed, and how each was measured and fixed"),
    ("ranking.md", "hybrid recall against its better ranker on every collection, and the fusion's SQL cost"),
)


def _links(names, out) -> str:
    present = [name for name in names if (out / name).exists()]
    return ", ".join(f"[{name}]({name})" for name in present) or "not run yet"


def write_index(opts: Options, timings: dict[str, float]) -> None:
    runs_path = opts.out / "runs.json"
    runs = json.loads(runs_path.read_text()) if runs_path.exists() else {}
    m = machine()
    for name, seconds in timings.items():
        runs[name] = {
            "command": opts.command,
            "seconds": round(seconds),
            "finished": time.strftime("%Y-%m-%d %H:%M"),
            "load_after": m["load"],
        }
    runs_path.write_text(json.dumps(runs, indent=2, sort_keys=True) + "\n")

    lines = [
        "# Memory.Wiki benchmarks",
        "",
        "Benchmarks, not tests: figures measured on a shared 2-CPU machine, written by `python -m bench`",
        "(`python -m bench --help` lists the sections). CI runs only `--smoke` (tests/test_bench_smoke.py).",
        "Each file below starts with what it measured and how; the machine and its load average are",
        "recorded in each file and in [runs.json](runs.json).",
        "",
        "```",
        "pip install -e '.[onnx,local,bench]'   # torch==2.13.0 (CPU) first, for the embedding section's torch rows",
        "python -m bench all                    # every section marked * in --help",
        "python -m bench latency --baseline REF # with 'before' rows from another commit's server",
        "```",
        "",
        "The datasets (BEIR SciFact, LoCoMo) are not in the repository: a section without its data says",
        "where to get it and exits 2.",
        "",
        "## Suite",
        "",
        "| section | what it measures | results | last run |",
        "|---|---|---|---|",
    ]
    for section in SECTIONS:
        names = list(section.results)
        names += sorted(p.name for p in opts.out.glob(f"{section.name}-*.md") if p.name not in names)
        run = runs.get(section.name)
        when = f"{run['finished']}, {run['seconds']} s" if run else ""
        lines.append(
            f"| {section.name} | {section.summary} | {_links(names, opts.out) if names else 'stdout'} | {when} |"
        )
    lines += [
        "",
        "## Studies",
        "",
        "One-off, dated studies (`python -m bench.studies.NAME`), kept as records of how a choice was made.",
        "",
        "| study | question | results | run |",
        "|---|---|---|---|",
    ]
    for study in STUDIES:
        lines.append(f"| {study.name} | {study.summary} | {_links([study.results], opts.out)} | {study.dated} |")
    lines += ["", "## Notes", ""]
    lines += [f"- [{name}]({name}): {what}." for name, what in NOTES if (opts.out / name).exists()]
    if (opts.out / "ranking-before").is_dir():
        lines.append(
            "- [ranking-before/](ranking-before/): quality and LoCoMo on the ranking before z-score fusion, "
            "the 'before' of ranking.md."
        )
    (opts.out / "README.md").write_text("\n".join(lines).rstrip() + "\n")
