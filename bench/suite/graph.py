"""The hub graph on collections whose topics are known: edges within topics against edges
across them, for main's rule and the rule that follows the embedding space and the hub.

    python -m bench graph                       # results in bench/results/graph.md
    python -m bench graph --fixture tests/data/graph/three_topics.json   # and the notes' vectors

Collections, one hub each, captured once through a real server (the local embedder unless
MEMORYWIKI_EMBEDDER says otherwise):
- notes: three tight topics of four short notes each (sourdough, Postgres vacuum, a ridge
  hike), the notes of tests/data/graph/three_topics.json;
- locomo: the sessions of LoCoMo's ten conversations, imported as chats (bench.suite.locomo's
  rendering); a conversation is a topic: its sessions should join, across conversations rarely;
- mixed: the notes and the sessions of three conversations in one hub: short notes beside
  long pages, whose vectors (the mean of many sections') sit closer to everything;
- scifact: the SciFact abstracts judged relevant to a claim, plus 700 others drawn at random
  (seed 7): no topics, so only the edges per doc and how many pairs of abstracts relevant to
  one claim are joined.

Each rule is a run of the server with its settings on the same database: the server's own
worker measures every doc again from its stored vectors when the rule changed (as after an
upgrade), with no embedding call (counted), and the edges are read from doc_edges:
- before: main's rule, cosine distance below 0.42, each doc its 50 nearest;
- limit only: the model's own limit alone (MEMORYWIKI_GRAPH_RELATIVE=0), each doc its 10 nearest;
- after: the default, what is near for the hub under the model's limit, each doc its 10 nearest.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import sys
import time
from itertools import combinations
from pathlib import Path

import httpx
import networkx as nx
import psycopg

from ..common import (
    CACHE,
    RESULTS,
    ROOT,
    SHARED_DATA,
    MissingData,
    Postgres,
    Proc,
    count_summary,
    create_hub,
    load_beir,
    log,
    machine_line,
    md_table,
    post_docs,
    require_beir,
    require_locomo,
    wait_indexed,
    write_result,
)
from .locomo import chat_sessions

NOTES = ROOT / "tests" / "data" / "graph" / "three_topics.json"
MIXED_CONVERSATIONS = 3
SCIFACT_OTHERS = 700
SEED = 7
RULES = {
    "before (main: distance < 0.42, 50 nearest)": {
        "MEMORYWIKI_GRAPH_MAX_DISTANCE": "0.42",
        "MEMORYWIKI_GRAPH_RELATIVE": "0",
        "MEMORYWIKI_GRAPH_MAX_NEIGHBOURS": "50",
    },
    "model's limit only, 10 nearest": {"MEMORYWIKI_GRAPH_RELATIVE": "0"},
    "after (default: near for the hub)": {},
}


# --------------------------------------------------------------------------- collections


def notes_docs() -> list[dict]:
    return [
        {"title": n["title"], "markdown": n["markdown"], "topic": n["topic"]}
        for n in json.loads(NOTES.read_text())["notes"]
    ]


def locomo_docs(folder: Path, conversations: int | None = None) -> list[dict]:
    samples = json.loads((folder / "locomo10.json").read_text())[:conversations]
    return [
        {"title": s.title, "markdown": s.markdown, "source": s.source, "topic": sample["sample_id"]}
        for sample in samples
        for s in chat_sessions(sample)
    ]


def scifact_docs(folder: Path, others: int) -> list[dict]:
    data = load_beir(folder)
    claims: dict[str, set[str]] = {}
    for qid, judged in data.qrels.items():
        for doc_id in judged:
            claims.setdefault(doc_id, set()).add(qid)
    rest = [d["_id"] for d in data.corpus if d["_id"] not in claims]
    wanted = set(claims) | set(random.Random(SEED).sample(rest, min(others, len(rest))))
    return [
        {"title": d["title"] or d["_id"], "markdown": d["text"], "claims": sorted(claims.get(d["_id"], ()))}
        for d in data.corpus
        if d["_id"] in wanted
    ]


# --------------------------------------------------------------------------- scores


def score_topics(ids: list[str], topic: dict[str, str], edges: list[tuple[str, str]]) -> dict:
    """Edges within and across topics; docs joined to a doc of their topic; topics whose docs
    are all connected by within-topic edges; docs with no edge at all."""
    within = [(a, b) for a, b in edges if topic[a] == topic[b]]
    inside = nx.Graph()
    inside.add_nodes_from(ids)
    inside.add_edges_from(within)
    ends = {d for e in edges for d in e}
    topics = sorted(set(topic.values()))
    connected = sum(nx.is_connected(inside.subgraph([d for d in ids if topic[d] == t])) for t in topics)
    return {
        "edges": len(edges),
        "within": len(within),
        "across": len(edges) - len(within),
        "joined": sum(inside.degree(d) > 0 for d in ids),
        "docs": len(ids),
        "connected": connected,
        "topics": len(topics),
        "alone": len(ids) - len(ends),
    }


def score_claims(ids: list[str], claims: dict[str, list[str]], edges: list[tuple[str, str]]) -> dict:
    """Edges per doc, and pairs of abstracts relevant to one claim that are joined."""
    by_claim: dict[str, list[str]] = {}
    for d in ids:
        for c in claims[d]:
            by_claim.setdefault(c, []).append(d)
    related = {frozenset(p) for members in by_claim.values() for p in combinations(members, 2)}
    joined = {frozenset(e) for e in edges}
    ends = {d for e in edges for d in e}
    return {
        "edges": len(edges),
        "docs": len(ids),
        "per_doc": 2 * len(edges) / max(1, len(ids)),
        "related": len(related),
        "related_joined": len(related & joined),
        "alone": len(ids) - len(ends),
    }


# --------------------------------------------------------------------------- the server


def read_edges(url: str, hub_id: int) -> list[tuple[str, str]]:
    with psycopg.connect(url) as conn:
        return [
            (r[0], r[1])
            for r in conn.execute("SELECT source, target FROM doc_edges WHERE hub_id = %s ORDER BY 1, 2", (hub_id,))
        ]


async def wait_settled(url: str, env: dict[str, str], timeout: float = 3600.0) -> float:
    """Seconds until no doc's reach is out of date under the rule these settings make."""
    from memorywiki.server.config import Settings
    from memorywiki.server.store.graph import stale_docs

    rule = Settings.from_env(env).edge_rule
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < timeout:
        async with await psycopg.AsyncConnection.connect(url) as conn:
            if not await stale_docs(conn, rule, 1):
                return time.perf_counter() - t0
        await asyncio.sleep(0.5)
    raise TimeoutError("the graph did not settle")


def write_fixture(path: Path, url: str, hub_id: int, posted: list[dict]) -> None:
    """The notes with the vectors the server stored for them (a one-section note's vector is
    its section's), so tests can give the test embedder this model's geometry."""
    with psycopg.connect(url) as conn:
        space = conn.execute("SELECT model FROM embedding_space").fetchone()[0]
        vectors = {
            r[0]: r[1] for r in conn.execute("SELECT id, embedding::text FROM docs WHERE hub_id = %s", (hub_id,))
        }
    notes = [
        {
            "topic": d["topic"],
            "title": d["title"],
            "markdown": d["markdown"],
            "vector": [round(float(x), 6) for x in json.loads(vectors[d["id"]])],
        }
        for d in posted
    ]
    text = json.dumps({"space": space, "notes": [{**n, "vector": "@"} for n in notes]}, indent=1)
    for n in notes:  # a vector to a line
        text = text.replace('"@"', json.dumps(n["vector"]), 1)
    path.write_text(text + "\n")
    log(f"[graph] wrote {len(notes)} notes' vectors ({space}) to {path}")


async def _run(args) -> str:
    collections = {
        "notes": notes_docs(),
        "locomo": locomo_docs(args.locomo),
        "mixed": notes_docs() + locomo_docs(args.locomo, MIXED_CONVERSATIONS),
        "scifact": scifact_docs(args.dataset, 20 if args.smoke else SCIFACT_OTHERS),
    }
    pg = Postgres(args.pg_dir)
    url = pg.fresh("bench_graph")
    logs = args.out / ".logs"
    logs.mkdir(parents=True, exist_ok=True)
    counts = logs / "graph-embed-counts.jsonl"
    counts.unlink(missing_ok=True)
    hubs: dict[str, int] = {}
    posted: dict[str, list[dict]] = {}
    results: dict[str, dict[str, dict]] = {}
    runs = []
    try:
        for n, (label, env) in enumerate(RULES.items()):
            cache = {"MEMORYWIKI_BENCH_EMBED_CACHE": str(args.embed_cache)} if args.embed_cache else {}
            with Proc("serve", url, logs, counts=counts, extra_env={**env, **cache}) as srv:
                async with httpx.AsyncClient(base_url=srv.url, timeout=600) as client:
                    mark = count_summary(counts)["mark"]
                    t0 = time.perf_counter()
                    if n == 0:
                        for name, docs in collections.items():
                            token = await create_hub(client, f"graph-{name}")
                            made = await post_docs(
                                client,
                                token,
                                f"graph-{name}",
                                [{k: v for k, v in d.items() if k in ("title", "markdown", "source")} for d in docs],
                                concurrency=4,
                            )
                            posted[name] = [{**d, "id": m["id"]} for d, m in zip(docs, made, strict=False)]
                        log(f"[graph] captured {sum(map(len, posted.values()))} docs; indexing ...")
                        await wait_indexed(client, progress=True)
                        with psycopg.connect(url) as conn:
                            hubs = {
                                name: conn.execute(
                                    "SELECT id FROM hubs WHERE slug = %s", (f"graph-{name}",)
                                ).fetchone()[0]
                                for name in collections
                            }
                    settle_s = await wait_settled(url, env)
                    embedded = count_summary(counts, mark)["inputs"]
                    runs.append([label, time.perf_counter() - t0 if n == 0 else settle_s, embedded])
                    log(f"[graph] {label}: settled in {settle_s:.1f}s, {embedded} texts embedded")
                    results[label] = {}
                    for name in collections:
                        ids = [d["id"] for d in posted[name]]
                        edges = read_edges(url, hubs[name])
                        results[label][name] = (
                            score_claims(ids, {d["id"]: d["claims"] for d in posted[name]}, edges)
                            if name == "scifact"
                            else score_topics(ids, {d["id"]: d["topic"] for d in posted[name]}, edges)
                        )
        if args.fixture:
            write_fixture(args.fixture, url, hubs["notes"], posted["notes"])
        with psycopg.connect(url) as conn:
            space = conn.execute("SELECT model FROM embedding_space").fetchone()[0]
    finally:
        pg.drop("bench_graph")
        pg.close()
    return report(results, runs, space, {name: len(docs) for name, docs in collections.items()}, args)


def report(results: dict[str, dict[str, dict]], runs: list, space: str, sizes: dict[str, int], args) -> str:
    topical = []
    for name in ("notes", "locomo", "mixed"):
        for label, per in results.items():
            r = per[name]
            topical.append(
                [
                    name,
                    r["docs"],
                    label,
                    r["edges"],
                    r["within"],
                    r["across"],
                    f"{r['joined']}/{r['docs']}",
                    f"{r['connected']}/{r['topics']}",
                    r["alone"],
                ]
            )
    science = []
    for label, per in results.items():
        r = per["scifact"]
        science.append(
            [label, r["docs"], r["edges"], r["per_doc"], f"{r['related_joined']}/{r['related']}", r["alone"]]
        )
    return f"""## Hub graph: edges within and across known topics

`{args.command}`, embedding space `{space}`. One hub per collection, captured once through
the server (bench/suite/graph.py); each rule is a run of the server with its settings, whose
worker measured every doc again from the stored vectors. Collections: **notes**, three tight
topics of four short notes (tests/data/graph/three_topics.json); **locomo**, the
{sizes["locomo"]} sessions of LoCoMo's conversations imported as chats, a conversation a
topic; **mixed**, the notes and the sessions of {MIXED_CONVERSATIONS} conversations in one hub
({sizes["mixed"]} docs).
*Joined*: docs with an edge to a doc of their own topic; *topics connected*: topics whose docs
are all connected by edges within the topic; *alone*: docs with no edge at all.

{
        md_table(
            [
                "collection",
                "docs",
                "rule",
                "edges",
                "within topics",
                "across topics",
                "joined",
                "topics connected",
                "alone",
            ],
            topical,
        )
    }

**scifact**: {sizes["scifact"]} abstracts (those judged relevant to a claim, and
{SCIFACT_OTHERS if not args.smoke else 20} others drawn at random): no topics; pairs of
abstracts relevant to one claim are related.

{md_table(["rule", "docs", "edges", "edges per doc", "related pairs joined", "alone"], science, digits=1)}

Capture and indexing, then each change of rule (no embedding: texts embedded counted):

{md_table(["run", "seconds until settled", "texts embedded"], [[a, b, c] for a, b, c in runs], digits=1)}

{machine_line()}
"""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench graph", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--locomo", type=Path, default=SHARED_DATA / "locomo", help="folder with locomo10.json")
    parser.add_argument("--dataset", type=Path, default=SHARED_DATA / "scifact", help="BEIR-layout SciFact folder")
    parser.add_argument("--out", type=Path, default=RESULTS, help="where graph.md goes")
    parser.add_argument("--pg-dir", type=Path, default=CACHE / "pg", help="embedded PostgreSQL folder")
    parser.add_argument(
        "--fixture",
        type=Path,
        default=None,
        help="also write the notes with their stored vectors to this file (the tests' fixture)",
    )
    parser.add_argument(
        "--embed-cache",
        type=Path,
        default=None,
        help="reuse vectors of texts embedded before (bench/embcache.py): a rerun embeds nothing",
    )
    parser.add_argument("--smoke", action="store_true", help="20 random SciFact abstracts instead of 700 (CI)")
    args = parser.parse_args(argv)
    args.command = "python -m bench graph " + " ".join(argv or [])
    if args.embed_cache:  # read by the server processes, started elsewhere
        args.embed_cache = args.embed_cache.resolve()
    try:
        require_locomo(args.locomo)
        require_beir(args.dataset, "SciFact")
    except MissingData as error:
        print(error, file=sys.stderr)
        return 2
    text = asyncio.run(_run(args))
    print(text)
    write_result(args, "graph.md", text)
    return 0
