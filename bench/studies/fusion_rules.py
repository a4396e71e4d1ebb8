"""Fusion rules side by side, from the pools `bench fusion --pools FILE` writes (no server).

Each question's two candidate pools (top 40 by vector, top 40 by BM25, as the server reads them
at k = 10) are fused here by each rule and scored as `bench fusion` scores them (nDCG@10 over
docs). The hub's chunk count caps a short pool's padding as the server's vector pool does.

    python -m bench.studies.fusion_rules POOLS.pkl [POOLS2.pkl ...]

Rules:
- z-sum, pool floor: each pool's (score - min) / stddev, a lone candidate or equal scores 1
  (the default before issue 37);
- z-sum, zeros padded: the same, but a full-text pool shorter than the vector pool is read as its
  matches among the zeros of the chunks that did not match;
- padded + identifiers (the default since issue 37): and one ranker more per identifier the
  question names that full text's top candidate holds: 1 for a candidate holding it whole, 0
  otherwise, normalised as the short pool is;
- RRF: sum 1 / (60 + rank) over both top 40s.
The vectors weigh 0 for a question mostly in a script the embedder does not read (the server's
rule), in every z rule.
"""

from __future__ import annotations

import math
import pickle
import sys
from pathlib import Path

from ..common import md_table
from ..suite.fusion import K, ndcg

FLAT = 1e-9


def _z_floor(pool: list[tuple[int, float]]) -> dict[int, float]:
    if not pool:
        return {}
    scores = [s for _, s in pool]
    mean = sum(scores) / len(scores)
    sd = math.sqrt(sum((s - mean) ** 2 for s in scores) / len(scores))
    low = min(scores)
    flat = sd <= FLAT * max(abs(s) for s in scores)
    return {c: 1.0 if flat else (s - low) / sd for c, s in pool}


def _z_padded(pool: list[tuple[int, float]], n: int) -> dict[int, float]:
    m = len(pool)
    if m == 0 or n <= m:
        return _z_floor(pool)
    s1 = sum(s for _, s in pool)
    s2 = sum(s * s for _, s in pool)
    var = s2 / n - (s1 / n) ** 2
    return {c: (s / math.sqrt(var) if var > 0 else 1.0) for c, s in pool}


def _order(scores: dict[int, float], vec, fts) -> list[int]:
    vrank = {c: i for i, (c, _) in enumerate(vec)}
    frank = {c: i for i, (c, _) in enumerate(fts)}
    big = 10**9
    return sorted(scores, key=lambda c: (-scores[c], vrank.get(c, big), frank.get(c, big), c))[:K]


def _z_holders(holders: list[set[int]], n: int) -> dict[int, float]:
    """The exact-identifier rankers, one per identifier the question names: 1 for a candidate
    whose text holds it, 0 otherwise, over a pool of n, normalised as the others (floor 0), summed."""
    z: dict[int, float] = {}
    for held in holders:
        h = len(held)
        if not h or n <= 0:
            continue
        p = min(h / n, 1.0)
        for c in held:
            z[c] = z.get(c, 0.0) + (1.0 / math.sqrt(p * (1 - p)) if p < 1 else 1.0)
    return z


def fuse(rule: str, vec, fts, vector_weight: float = 1.0, holders: list[set[int]] | None = None) -> list[int]:
    if rule == "rrf":
        scores: dict[int, float] = {}
        for pool in (vec, fts):
            for i, (c, _) in enumerate(pool):
                scores[c] = scores.get(c, 0.0) + 1.0 / (60 + i + 1)
        return _order(scores, vec, fts)
    zv = _z_floor(vec)
    zf = _z_padded(fts, len(vec)) if rule in ("padded", "identifiers") else _z_floor(fts)
    zi = _z_holders(holders or [], max(len(vec), len(fts))) if rule == "identifiers" else {}
    scores = {c: vector_weight * zv.get(c, 0.0) + zf.get(c, 0.0) + zi.get(c, 0.0) for c in set(zv) | set(zf)}
    return _order(scores, vec, fts)


RULES = {
    "vector": None,
    "full text": None,
    "z-sum, pool floor": "floor",
    "z-sum, zeros padded": "padded",
    "padded + identifiers": "identifiers",
    "RRF": "rrf",
}
KEPT = "padded + identifiers"  # the rule the server runs


def holders_by_question(pools: dict) -> dict[tuple[str, int], list[set[int]]]:
    """For each question, per identifier it names (server/store/identifiers.py) and full text's
    top candidate holds, the candidates (either pool) whose text holds it."""
    from memorywiki.server.store.identifiers import held, identifiers

    chunks = pools["chunks"]
    out = {}
    for name, questions in pools["collections"].items():
        for i, (text, _relevant, _evidence) in enumerate(questions):
            p = pools["pools"][(name, i)]
            cand = {c for c, _ in p["vec"]} | {c for c, _ in p["fts"]}
            top = p["fts"][0][0] if p["fts"] else None
            per = [{c for c in cand if c in chunks and held(token, chunks[c][1])} for token in identifiers(text)]
            out[(name, i)] = [h for h in per if top in h]  # counted only when full text's top holds it
    return out


def rows(pools: dict, holders: dict[tuple[str, int], list[set[int]]] | None = None) -> list[list]:
    from memorywiki.server.embedding.scripts import reads

    chunks = pools["chunks"]

    def keys(ids):
        return [chunks[c][0] for c in ids if c in chunks]

    out = []
    for name, questions in pools["collections"].items():
        sums = dict.fromkeys(RULES, 0.0)
        for i, (text, relevant, _evidence) in enumerate(questions):
            p = pools["pools"][(name, i)]
            weight = 1.0 if reads("latin", text) else 0.0
            for label, rule in RULES.items():
                if label == "vector":
                    ranked = [c for c, _ in p["vec"][:K]]
                elif label == "full text":
                    ranked = p["fulltext"]
                else:
                    ranked = fuse(rule, p["vec"], p["fts"], weight, (holders or {}).get((name, i)))
                sums[label] += ndcg(relevant, keys(ranked))
        n = len(questions)
        figures = {label: total / n for label, total in sums.items()}
        better = max(figures["vector"], figures["full text"])
        out.append([name, n, *figures.values(), "yes" if figures[KEPT] >= better - 0.0005 else "**no**"])
    return out


def main(argv: list[str] | None = None) -> int:
    paths = [Path(a) for a in (argv if argv is not None else sys.argv[1:])]
    if not paths:
        print(__doc__)
        return 2
    table = []
    for path in paths:
        pools = pickle.loads(path.read_bytes())
        table += rows(pools, holders_by_question(pools))
    print(md_table(["collection", "questions", *RULES, "kept >= better ranker?"], table))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
