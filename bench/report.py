"""bench/results/README.md: the latest tables of each section, the machine, the commands, plots."""

from __future__ import annotations

import json
import time

from .common import Options, machine

ORDER = [("findings.md", None), ("ranking.md", None), ("quality.md", "quality"), ("locomo.md", "locomo"),
         ("ranking-study.md", None), ("latency.md", "latency"), ("pgstorage.md", None), ("embedding.md", "embedding"),
         ("underload.md", "underload"), ("cost.md", "cost"), ("curation.md", "curation"),
         ("soak.md", "soak"), ("scaleout.md", "scaleout"), ("fulltext.md", None)]


def write_readme(opts: Options, timings: dict[str, float]) -> None:
    runs_path = opts.out / "runs.json"
    runs = json.loads(runs_path.read_text()) if runs_path.exists() else {}
    m = machine()
    for name, seconds in timings.items():
        runs[name] = {"command": opts.command, "seconds": round(seconds), "finished": time.strftime("%Y-%m-%d %H:%M"),
                      "load_after": m["load"]}
    runs_path.write_text(json.dumps(runs, indent=2, sort_keys=True) + "\n")

    lines = [
        "# Memory.Wiki benchmarks",
        "",
        "Benchmarks, not tests: numbers measured on the machine below, written by",
        "`python -m bench` (see `bench/__main__.py`). CI runs only `--smoke`",
        "(tests/test_bench_smoke.py).",
        "",
        f"Machine: {m['nproc']} CPUs ({m['cpu']}), {m['ram']} RAM, Python {m['python']}. The machine is",
        "shared with other engineers' test runs, so timings may be skewed by load (see the load",
        "average recorded after each section).",
        "",
        "Reproduce from the repository root (bench/ is not installed with the package; the embedder",
        "all-MiniLM-L6-v2 runs on ONNX Runtime, the `onnx` extra; torch is needed only for the torch",
        "rows of the embedding section and for \"before\" servers whose baseline commit predates ONNX",
        "(underload's; latency's before 55b2c91); a section without its data says where to get it):",
        "",
        "```",
        "pip install torch==2.13.0   # the CPU build, first",
        "pip install -e '.[onnx,local,bench]'",
        "python -m bench all            # quality + locomo + latency + cost + curation + embedding + underload + soak + scaleout",
        "python -m bench soak           # 16 clients, mixed load, 10 minutes (--soak-seconds)",
        "python -m bench scaleout       # 2 servers + 2 workers on one PostgreSQL, one worker killed",
        "python -m bench latency --large # adds the 1M-chunk hub",
        "```",
        "",
        "Sections can run separately; each of the runs below used its own `--pg-dir` so that two",
        "could run at once. Quality and LoCoMo were re-measured for issue 14 (ranking) with",
        "`--embed-cache` (vectors of texts embedded before read from disk; same model, same vectors),",
        "so their indexing times are not embedding times; `bench/results/before-i14/` holds the",
        "same runs on the ranking before issue 14, `ranking-study.md` the factor-by-factor study",
        "(`python -m bench.ablation`).",
        "`latency --large` adds a 1M-chunk hub: ~20 GB on disk; its build time is in the latency",
        "section (`--build-only` builds and caches the hubs without measuring).",
        "",
        "| section | last command | finished | wall time | load avg after |",
        "|---|---|---|---|---|",
    ]
    for name, run in sorted(runs.items()):
        lines.append(f"| {name} | `{run['command']}` | {run['finished']} | {run['seconds']} s | {run['load_after']} |")
    lines.append("")
    names = [fname for fname, _ in ORDER]
    extra = sorted(p.name for p in opts.out.glob("locomo-window*.md"))
    names = names[:names.index("locomo.md") + 1] + extra + names[names.index("locomo.md") + 1:]
    for fname in names:
        path = opts.out / fname
        if path.exists():
            body = path.read_text().strip()
            # demote the section's headings one level under this README's title
            body = "\n".join(("#" + line) if line.startswith("#") else line for line in body.splitlines())
            lines += [body, ""]
    (opts.out / "README.md").write_text("\n".join(lines).rstrip() + "\n")
