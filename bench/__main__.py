"""The benchmark suite: `python -m bench all|quality|locomo|latency|cost|curation|report`.

    python -m bench all                     # every section, results in bench/results/
    python -m bench quality --dataset DIR   # any BEIR-layout dataset
    python -m bench latency --large         # adds the 1M-chunk hub
    python -m bench all --smoke --dataset tiny --locomo tiny-locomo --out /tmp/r
    python -m bench soak                    # 16 clients, mixed load, 10 minutes
    python -m bench scaleout                # 2 servers + 2 workers on one PostgreSQL

Run from the repository root (bench/ is not part of the installed package). The datasets
are not in the repository; a section whose data is missing says where to get it and exits 2.

The embedder comes from MEMORYWIKI_EMBEDDER (default here: `local`, all-MiniLM-L6-v2);
PostgreSQL from DATABASE_URL (databases bench_* are created and dropped on it), else an
embedded PostgreSQL under bench/.cache/pg (or --pg-dir).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

from .common import CACHE, RESULTS, SHARED_DATA, MissingData, Options, Postgres, log, require_beir, require_locomo

SECTIONS = ("quality", "locomo", "latency", "cost", "curation", "embedding", "underload", "soak", "scaleout")


def parse(argv: list[str] | None = None) -> tuple[str, Options]:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("section", choices=("all", *SECTIONS, "report"))
    parser.add_argument("--dataset", type=Path, default=SHARED_DATA / "scifact",
                        help="BEIR-layout folder: corpus.jsonl, queries*.jsonl, qrels/test.tsv")
    parser.add_argument("--locomo", type=Path, default=SHARED_DATA / "locomo",
                        help="folder with locomo10.json and locomo10_qa_normalized.jsonl")
    parser.add_argument("--out", type=Path, default=RESULTS, help="where the .md and .png results go")
    parser.add_argument("--pg-dir", type=Path, default=CACHE / "pg",
                        help="embedded PostgreSQL folder when DATABASE_URL is not set")
    parser.add_argument("--large", action="store_true", help="latency: add the 1M-chunk hub")
    parser.add_argument("--smoke", action="store_true", help="tiny, fast run of each section (CI)")
    parser.add_argument("--requests", type=int, default=None, help="latency: requests per configuration")
    parser.add_argument("--locomo-window", type=int, default=0,
                        help="locomo: 0 = as a chat import (default: the chat renderer, conversation chunks);"
                             " N >= 1 = the earlier layouts, N turns per section")
    parser.add_argument("--build-only", action="store_true", help="latency: build (and cache) the hubs, measure nothing")
    parser.add_argument("--sizes", type=str, default=None, help="latency: hub sizes, e.g. 1000,10000")
    parser.add_argument("--soak-seconds", type=float, default=None, help="soak: how long the load runs (default 600)")
    parser.add_argument("--baseline", type=str, default="i9-landed",
                        help="latency, underload: the git commit whose server gives the 'before' figures "
                             "(none: no 'before' rows)")
    parser.add_argument("--embed-cache", type=Path, default=None,
                        help="quality/locomo: reuse vectors of texts embedded before (bench/embcache.py); "
                             "indexing times then do not measure embedding")
    args = parser.parse_args(argv)
    opts = Options(dataset=args.dataset, locomo=args.locomo, out=args.out, smoke=args.smoke, large=args.large,
                   pg_dir=args.pg_dir, requests=args.requests,
                   sizes=[int(x) for x in args.sizes.split(",")] if args.sizes else None,
                   extra={"build_only": args.build_only, "locomo_window": args.locomo_window,
                          "soak_seconds": args.soak_seconds, "baseline": args.baseline, "embed_cache": args.embed_cache},
                   command="python -m bench " + " ".join(argv if argv is not None else sys.argv[1:]))
    return args.section, opts


def main(argv: list[str] | None = None) -> int:
    os.environ.setdefault("MEMORYWIKI_EMBEDDER", "local")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    section, opts = parse(argv)
    if opts.extra.get("embed_cache"):  # inherited by the server and worker processes (bench/proc.py)
        os.environ["MEMORYWIKI_BENCH_EMBED_CACHE"] = str(opts.extra["embed_cache"].resolve())
    opts.out.mkdir(parents=True, exist_ok=True)
    from . import report

    if section == "report":
        report.write_readme(opts, {})
        return 0
    wanted = SECTIONS if section == "all" else (section,)
    # before anything starts: a missing dataset is a message saying where to get it, not a traceback
    checks = [(require_beir, opts.dataset)] if set(wanted) & {"quality", "latency", "cost", "embedding", "underload"} else []
    checks += [(require_locomo, opts.locomo)] if set(wanted) & {"locomo", "curation"} else []
    missing = []
    for require, folder in checks:
        try:
            require(folder)
        except MissingData as error:
            missing.append(str(error))
    if missing:
        print("\n\n".join(missing), file=sys.stderr)
        return 2
    pg = Postgres(opts.pg_dir)
    timings: dict[str, float] = {}
    try:
        for name in wanted:
            t0 = time.perf_counter()
            log(f"=== {name} ===")
            module = __import__(f"bench.{name}", fromlist=["run"])
            module.run(opts, pg)
            timings[name] = time.perf_counter() - t0
            log(f"=== {name} done in {timings[name]:.0f}s ===")
            report.write_readme(opts, timings)
    finally:
        pg.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
