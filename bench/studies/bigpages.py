"""Big pages: how long one POST /api/docs takes for a hostile page, before and after.

    python -m bench.studies.bigpages                   # baseline: main; results in bench/results/bigpages.md
    python -m bench.studies.bigpages --baseline REF --rounds 3
    python -m bench.studies.bigpages --no-baseline     # this checkout only

The pages are the ones tests/test_big_pages.py saves: a 5 MB page of one line, a 10,000-row
table, a 50,000-character code fence, 3,000 phrases in mixed scripts, and a 1 KB page for
reference. Each side runs the real server (bench.proc serve, no embedder, indexing left to an
external worker that never runs, so only the save is timed) on a database of its own: the
baseline's server is the code of --baseline (bench/baseline.py), the other this checkout's.
Rounds alternate the sides (before, after, before, ...) so a change in the machine's load hits
both; a case's figure is its best round. Time = from sending the request until the 201 arrives.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import httpx

from ..baseline import baseline_env, describe, is_commit
from ..common import CACHE, RESULTS, Postgres, Proc, log, machine_line, md_table


def pages() -> dict[str, str]:
    """The case name -> the markdown saved."""
    marker = "the seashell Pelagia hides here"
    line = " ".join(f"grain{i % 997} of sand number {i} drifts" for i in range(200_000))
    line = line[: line.rindex(" ", 0, 5_000_000 - len(marker))] + " " + marker
    header = "| id | animal | note |\n| ---: | --- | --- |"
    rows = [f"| {i} | animal {i} | seen in pen {i % 50} |" for i in range(10_000)]
    table = "## Census\n\n" + header + "\n" + "\n".join(rows) + "\n"
    code = "\n".join(f"def step_{i}(x):\n    return x * {i}  # plain step" for i in range(1_000))
    fence = "```python\n" + code[: 50_000 - 14] + "\n```"
    parts = [
        "Ångström naïve café",
        "e\u0301te\u0301 n\u0303",
        "北京是中国的首都",
        "東京は日本の首都です",
        "한국어 문장입니다",
        "مرحبا بالعالم",
        "नमस्ते दुनिया",
        "👨\u200d👩\u200d👧\u200d👦 🇫🇷 👍🏽",
    ]
    scripts = " ".join(parts[i % len(parts)] for i in range(3_000))
    normal = (
        "# Notes\n\nA normal page: a heading, two short paragraphs and a list.\n\n"
        + "The quick brown fox jumps over the lazy dog, then naps in the afternoon sun. " * 8
        + "\n\n- one item\n- another item\n"
    ) * 2
    return {
        "5 MB page, one line": line,
        "10,000-row table": table,
        "50,000-character code fence": fence,
        "mixed scripts, 3,000 phrases": scripts,
        "normal page (1 KB)": normal[:1_000],
    }


def save_time(http: httpx.Client, headers: dict, markdown: str, title: str) -> float:
    t0 = time.perf_counter()
    r = http.post("/api/docs", json={"hub": "big", "title": title, "markdown": markdown}, headers=headers)
    elapsed = time.perf_counter() - t0
    if r.status_code != 201:
        raise RuntimeError(f"save failed: {r.status_code} {r.text[:300]}")
    return elapsed


class Side:
    """One server on its own database, a hub "big" and its owner token."""

    def __init__(self, name: str, pg: Postgres, env: dict | None, log_dir: Path):
        self.name = name
        self.url = pg.fresh(f"bench_bigpages_{name}", migrate=False)  # its server migrates it
        self.proc = Proc("serve", self.url, log_dir, embedder="none", worker="external", extra_env=env)
        self.http = httpx.Client(base_url=self.proc.url, timeout=600)
        r = self.http.post("/api/hubs", json={"slug": "big"})
        r.raise_for_status()
        self.headers = {"Authorization": f"Bearer {r.json()['owner_token']}"}

    def close(self) -> None:
        self.http.close()
        self.proc.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--baseline", default="main", help="the commit whose server is 'before' (default: main)")
    parser.add_argument("--no-baseline", action="store_true", help="time this checkout only")
    parser.add_argument("--rounds", type=int, default=2, help="rounds per side (default 2)")
    parser.add_argument("--only", help="run only the cases whose name contains this")
    parser.add_argument("--pg-dir", type=Path, default=CACHE / "pg-bigpages")
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args()

    cases = {k: v for k, v in pages().items() if not args.only or args.only in k}
    with_before = not args.no_baseline and is_commit(args.baseline)
    pg = Postgres(args.pg_dir)
    sides: list[Side] = []
    try:
        if with_before:
            sides.append(Side("before", pg, baseline_env(args.baseline), CACHE / "bigpages-logs"))
        sides.append(Side("after", pg, None, CACHE / "bigpages-logs"))
        times: dict[str, dict[str, list[float]]] = {s.name: {c: [] for c in cases} for s in sides}
        for n in range(args.rounds):
            for case, markdown in cases.items():
                for side in sides:
                    t = save_time(side.http, side.headers, markdown, f"{case} {n}")
                    times[side.name][case].append(t)
                    log(f"[bigpages] round {n + 1} {side.name:>6} {case}: {t:.3f} s")
        rows = []
        for case in cases:
            after = min(times["after"][case])
            if with_before:
                before = min(times["before"][case])
                rows.append([case, f"{len(cases[case]):,}", f"{before:.3f}", f"{after:.3f}", f"{before / after:.1f}x"])
            else:
                rows.append([case, f"{len(cases[case]):,}", f"{after:.3f}"])
    finally:
        for side in sides:
            side.close()
        pg.close()
    headers = ["case", "characters", "before s", "after s", "ratio"] if with_before else ["case", "characters", "s"]
    text = (
        "## Big pages: one POST /api/docs until 201\n\n"
        f"Real server per side, its own database, no embedder (only the save is timed); best of {args.rounds} "
        f"interleaved rounds. Before: {describe(args.baseline) if with_before else '-'}; after: this checkout.\n\n"
        + md_table(headers, rows)
        + "\n\n"
        + machine_line()
        + "\n"
    )
    print(text)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "bigpages.md").write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
