"""Micro-benchmarks of single components, timed here rather than asserted in tests.

    python -m bench micro            # chunker, chat-export streaming, BM25 bulk insert
    python -m bench micro --smoke    # the same at a tenth of the size (tests/test_bench_sections.py)

Prints one markdown table. The tests keep what is behaviour (chunk counts, bounded memory,
exact BM25 counters); how fast it goes depends on the machine and its load, so it is measured
here. PostgreSQL: DATABASE_URL if set (database bench_micro is created and dropped), else an
embedded PostgreSQL under bench/.cache/pg-micro (or --pg-dir).
"""

from __future__ import annotations

import argparse
import gc
import json
import random
import tempfile
import time
import tracemalloc
import zipfile
from pathlib import Path

import psycopg

from ..common import CACHE, Postgres, machine_line, md_table


def chunker(n_docs: int) -> list:
    """Chunk n ~1,500-character docs of four sections each (lists, code, inline code)."""
    from memorywiki.server.indexing.chunker import chunk_markdown

    section = (
        "## Section {n} about `things`\n\n" + "Some words here and there. " * 12 + "\n\n"
        "- one\n- two\n\n```py\n# x\nprint(1)\n```\n"
    )
    docs = ["\n".join(section.format(n=n) for n in range(4))[:1500] for _ in range(n_docs)]
    t0 = time.perf_counter()
    chunks = sum(len(chunk_markdown("Doc", d)) for d in docs)
    seconds = time.perf_counter() - t0
    return [
        f"chunk {n_docs:,} docs of 1,500 chars",
        f"{seconds:.2f} s",
        f"{n_docs / seconds:,.0f} docs/s, {chunks:,} chunks",
    ]


def _conversation(i: int, turns: int = 8) -> dict:
    """A ChatGPT export conversation: a linear chain of user/assistant turns with code and a table."""
    mapping = {"root": {"id": "root", "message": None, "parent": None, "children": []}}
    prev = "root"
    for t in range(turns):
        role = "user" if t % 2 == 0 else "assistant"
        text = (
            f"Question {t} of conversation {i}: how do I tune HNSW ef_search for recall?"
            if role == "user"
            else f"Answer {t}.\n\n```sql\nSET hnsw.ef_search = {40 + t};\n```\n\n"
            "| ef_search | recall |\n|---|---|\n| 40 | 0.95 |\n\n" + "Filler sentence for size. " * 40
        )
        nid = f"m{t}"
        mapping[prev]["children"] = [nid]
        mapping[nid] = {
            "id": nid,
            "parent": prev,
            "children": [],
            "message": {
                "id": nid,
                "author": {"role": role, "metadata": {}},
                "create_time": 1760000000.0 + t,
                "content": {"content_type": "text", "parts": [text]},
                "metadata": {},
                "recipient": "all",
            },
        }
        prev = nid
    return {
        "id": f"conv-{i:05d}",
        "conversation_id": f"conv-{i:05d}",
        "title": f"Tuning HNSW #{i}",
        "create_time": 1760000000.0 + i,
        "update_time": 1760000100.0 + i,
        "current_node": prev,
        "mapping": mapping,
    }


def export_streaming(n_conversations: int) -> list:
    """Count and convert an n-conversation ChatGPT export zip; peak Python memory while converting."""
    from memorywiki.formats import count_conversations, iter_chatgpt_export

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "export.zip"
        with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as zf:
            with zf.open("conversations.json", "w", force_zip64=True) as out:
                out.write(
                    b"[" + b",".join(json.dumps(_conversation(i)).encode() for i in range(n_conversations)) + b"]"
                )
            size = zf.getinfo("conversations.json").file_size
        t0 = time.perf_counter()
        count = count_conversations(path)
        count_s = time.perf_counter() - t0
        gc.collect()
        tracemalloc.start()
        t0 = time.perf_counter()
        converted = sum(1 for _ in iter_chatgpt_export(path))
        seconds = time.perf_counter() - t0
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    assert count == converted == n_conversations
    return [
        f"convert a {n_conversations:,}-conversation ChatGPT export ({size / 1e6:.1f} MB JSON)",
        f"{seconds:.2f} s",
        f"under tracemalloc; peak {peak / 1e6:.2f} MB; counting first took {count_s:.2f} s",
    ]


def bm25_bulk_insert(pg: Postgres, n_chunks: int) -> list:
    """Insert n chunks in one statement; the BM25 triggers post them at commit."""
    url = pg.fresh("bench_micro")
    rng = random.Random(1)
    vocab = [f"word{i}" for i in range(3000)] + ["the", "memory", "wiki", "server", "recall"]
    bodies = [" ".join(rng.choice(vocab) for _ in range(120)) for _ in range(n_chunks)]
    try:
        with psycopg.connect(url, autocommit=True) as conn:
            hub = conn.execute(
                "INSERT INTO hubs (slug, owner_token_hash) VALUES ('micro', 'x') RETURNING id"
            ).fetchone()[0]
            t0 = time.perf_counter()
            with conn.transaction():
                conn.execute(
                    "INSERT INTO docs (id, hub_id, title, markdown, edit_token_hash, source_hash)"
                    " VALUES ('bulk', %s, 'Bulk', '', 'e', 's')",
                    (hub,),
                )
                conn.execute(
                    "INSERT INTO chunks (doc_id, hub_id, ordinal, heading_path, markdown, hash, tsv)"
                    " SELECT 'bulk', %s, o, 'Bulk > Part', m, md5(m), ''::tsvector"
                    " FROM unnest(%s::text[]) WITH ORDINALITY AS u(m, o)",
                    (hub, bodies),
                )
            seconds = time.perf_counter() - t0
            posted = conn.execute("SELECT n_chunks FROM bm25_hubs WHERE hub_id = %s", (hub,)).fetchone()[0]
    finally:
        pg.drop("bench_micro")
    assert posted == n_chunks
    return [
        f"insert {n_chunks:,} chunks of 120 words (BM25 postings at commit)",
        f"{seconds:.2f} s",
        f"{n_chunks / seconds:,.0f} chunks/s",
    ]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m bench micro", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--smoke", action="store_true", help="a tenth of the sizes (CI)")
    parser.add_argument(
        "--pg-dir",
        type=Path,
        default=CACHE / "pg-micro",
        help="embedded PostgreSQL folder when DATABASE_URL is not set",
    )
    args = parser.parse_args(argv)
    scale = 10 if args.smoke else 1
    rows = [chunker(5000 // scale), export_streaming(2000 // scale)]
    pg = Postgres(args.pg_dir)
    try:
        rows.append(bm25_bulk_insert(pg, 2000 // scale))
    finally:
        pg.close()
    print(md_table(["what", "time", "notes"], rows))
    print(f"\n{machine_line()}")


if __name__ == "__main__":
    main()
