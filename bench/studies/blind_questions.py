"""Questions one ranker is blind to, from the pools `bench fusion --pools FILE` writes.

Per collection: the questions where full text finds nothing relevant in its top 10 (nDCG@10 = 0)
while vectors do, and the reverse; for each group the seeing ranker's nDCG@10 beside the hybrid's
(the z-score sum of the two pools) and the blind ranker's top score against the collection's
median top score, which says whether the blindness can be seen in the scores.

    python -m bench.studies.blind_questions POOLS.pkl
"""

from __future__ import annotations

import pickle
import statistics
import sys
from pathlib import Path

from ..common import md_table
from ..suite.fusion import K, ndcg, zscore_sum


def rows(pools: dict) -> list[list]:
    chunks = pools["chunks"]

    def keys(ids):
        return [chunks[c][0] for c in ids if c in chunks]

    out = []
    for name, questions in pools["collections"].items():
        seen = []
        for i, (_text, relevant, _evidence) in enumerate(questions):
            p = pools["pools"][(name, i)]
            vec = ndcg(relevant, keys([c for c, _ in p["vec"][:K]]))
            fts = ndcg(relevant, keys(p["fulltext"]))
            hyb = ndcg(relevant, keys(zscore_sum(p["vec"], p["fts"])))
            seen.append((vec, fts, hyb, p["vec"][0][1] if p["vec"] else 0.0, p["fts"][0][1] if p["fts"] else 0.0))
        top_cos = statistics.median(s[3] for s in seen)
        top_bm25 = statistics.median(s[4] for s in seen)

        def mean(xs):
            xs = list(xs)
            return sum(xs) / len(xs) if xs else float("nan")

        fts_blind = [s for s in seen if s[1] == 0 and s[0] > 0]
        vec_blind = [s for s in seen if s[0] == 0 and s[1] > 0]
        out.append(
            [
                name,
                len(seen),
                len(fts_blind),
                mean(s[0] for s in fts_blind),
                mean(s[2] for s in fts_blind),
                f"{mean(s[4] for s in fts_blind):.1f} / {top_bm25:.1f}" if fts_blind else "–",
                len(vec_blind),
                mean(s[1] for s in vec_blind),
                mean(s[2] for s in vec_blind),
                f"{mean(s[3] for s in vec_blind):.2f} / {top_cos:.2f}" if vec_blind else "–",
            ]
        )
    return out


def main(argv: list[str] | None = None) -> int:
    args = argv if argv is not None else sys.argv[1:]
    if len(args) != 1:
        print(__doc__.strip().splitlines()[-1].strip(), file=sys.stderr)
        return 2
    pools = pickle.loads(Path(args[0]).read_bytes())
    print(
        md_table(
            [
                "collection",
                "questions",
                "full text blind",
                "vector there",
                "hybrid there",
                "top BM25 there / median",
                "vector blind",
                "full text there",
                "hybrid there",
                "top cosine there / median",
            ],
            rows(pools),
        )
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
