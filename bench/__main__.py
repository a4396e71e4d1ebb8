"""The benchmark suite: `python -m bench SECTION` (or `all`), results in bench/results/.

    python -m bench all                     # every section marked * below
    python -m bench quality --dataset DIR   # any BEIR-layout dataset
    python -m bench latency --large         # adds the 1M-chunk hub
    python -m bench latency --baseline REF  # adds 'before' rows from that commit's server
    python -m bench all --smoke --dataset DIR --locomo DIR --out DIR
    python -m bench pages --screenshots docs/screenshots
    python -m bench report                  # rewrite the results index

Run from the repository root (bench/ is not part of the installed package). The datasets
are not in the repository; a section whose data is missing says where to get it and exits 2.

The embedder comes from MEMORYWIKI_EMBEDDER (default here: `local`, all-MiniLM-L6-v2);
PostgreSQL from DATABASE_URL (databases bench_* are created and dropped on it), else an
embedded PostgreSQL under bench/.cache/pg (or --pg-dir).
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
import time
from pathlib import Path

from .baseline import is_commit
from .common import CACHE, RESULTS, SHARED_DATA, MissingData, Options, Postgres, log, require_beir, require_locomo
from .suite import BY_NAME, SECTIONS

IN_ALL = tuple(section.name for section in SECTIONS if section.runs_in_all)
OWN_ARGS = tuple(section.name for section in SECTIONS if not section.runs_in_all)
REQUIRE = {"beir": ("dataset", require_beir), "locomo": ("locomo", require_locomo)}


def _sections_help() -> str:
    width = max(len(section.name) for section in SECTIONS)
    lines = ["sections (* runs in `all`; the others take their own arguments, see NAME --help):"]
    lines += [
        f"  {section.name:<{width}} {'*' if section.runs_in_all else ' '} {section.summary}" for section in SECTIONS
    ]
    lines.append(f"  {'report':<{width}}   rewrite bench/results/README.md, the index of the results")
    return "\n".join(lines)


def parse(argv: list[str] | None = None) -> tuple[str, Options]:
    parser = argparse.ArgumentParser(
        prog="python -m bench",
        description=__doc__,
        epilog=_sections_help(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "section", choices=("all", *IN_ALL, "report"), metavar="SECTION", help="all, report, or a section below"
    )
    parser.add_argument(
        "--dataset",
        type=Path,
        default=SHARED_DATA / "scifact",
        help="BEIR-layout folder: corpus.jsonl, queries*.jsonl, qrels/test.tsv",
    )
    parser.add_argument(
        "--locomo",
        type=Path,
        default=SHARED_DATA / "locomo",
        help="folder with locomo10.json and locomo10_qa_normalized.jsonl",
    )
    parser.add_argument("--out", type=Path, default=RESULTS, help="where the .md and .png results go")
    parser.add_argument(
        "--pg-dir", type=Path, default=CACHE / "pg", help="embedded PostgreSQL folder when DATABASE_URL is not set"
    )
    parser.add_argument("--large", action="store_true", help="latency: add the 1M-chunk hub")
    parser.add_argument("--smoke", action="store_true", help="tiny, fast run of each section (CI)")
    parser.add_argument("--requests", type=int, default=None, help="latency: requests per configuration")
    parser.add_argument(
        "--locomo-window",
        type=int,
        default=0,
        help="locomo: 0 = as a chat import (default: the chat renderer, conversation chunks);"
        " N >= 1 = the earlier layouts, N turns per section",
    )
    parser.add_argument(
        "--build-only", action="store_true", help="latency: build (and cache) the hubs, measure nothing"
    )
    parser.add_argument("--sizes", type=str, default=None, help="latency: hub sizes, e.g. 1000,10000")
    parser.add_argument("--soak-seconds", type=float, default=None, help="soak: how long the load runs (default 600)")
    parser.add_argument(
        "--baseline",
        type=str,
        default=None,
        metavar="REF",
        help="latency, underload: a commit of this repository whose server gives 'before' rows (default: none)",
    )
    parser.add_argument(
        "--embed-cache",
        type=Path,
        default=None,
        help="quality/locomo: reuse vectors of texts embedded before (bench/embcache.py); "
        "indexing times then do not measure embedding",
    )
    args = parser.parse_args(argv)
    opts = Options(
        dataset=args.dataset,
        locomo=args.locomo,
        out=args.out,
        smoke=args.smoke,
        large=args.large,
        pg_dir=args.pg_dir,
        requests=args.requests,
        sizes=[int(x) for x in args.sizes.split(",")] if args.sizes else None,
        extra={
            "build_only": args.build_only,
            "locomo_window": args.locomo_window,
            "soak_seconds": args.soak_seconds,
            "baseline": args.baseline,
            "embed_cache": args.embed_cache,
        },
        command="python -m bench " + " ".join(argv if argv is not None else sys.argv[1:]),
    )
    if args.baseline and not is_commit(args.baseline):
        parser.exit(
            2,
            f"bench: --baseline {args.baseline} is not a commit of this repository "
            "(a tag, branch or sha that `git rev-parse` knows here)\n",
        )
    return args.section, opts


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    os.environ.setdefault("MEMORYWIKI_EMBEDDER", "local")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    if argv and argv[0] in OWN_ARGS:
        module = importlib.import_module(f"bench.suite.{argv[0]}")
        return module.main(argv[1:]) or 0
    section, opts = parse(argv)
    if opts.extra.get("embed_cache"):  # inherited by the server and worker processes (bench/proc.py)
        os.environ["MEMORYWIKI_BENCH_EMBED_CACHE"] = str(opts.extra["embed_cache"].resolve())
    opts.out.mkdir(parents=True, exist_ok=True)
    from .suite import report

    if section == "report":
        report.write_index(opts, {})
        return 0
    wanted = IN_ALL if section == "all" else (section,)
    # before anything starts: a missing dataset is a message saying where to get it, not a traceback
    needs = [need for name in wanted for need in BY_NAME[name].needs]
    missing = []
    for need in dict.fromkeys(needs):
        option, require = REQUIRE[need]
        try:
            require(getattr(opts, option))
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
            importlib.import_module(f"bench.suite.{name}").run(opts, pg)
            timings[name] = time.perf_counter() - t0
            log(f"=== {name} done in {timings[name]:.0f}s ===")
            report.write_index(opts, timings)
    finally:
        pg.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
