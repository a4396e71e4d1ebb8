"""Keep a doc's chunk rows in step with its markdown, inside the save transaction.

Chunks are matched by content hash: an unchanged section keeps its row and its vector,
a new or edited one gets a fresh row with no vector (so it is owed embedding), and a
removed one is deleted. Full text (tsv and the BM25 postings, kept by triggers) is
therefore current the moment the save commits.
"""

from __future__ import annotations

import asyncio
from collections import defaultdict

import psycopg

from memorywiki.formats.model import CONVERSATION_SOURCES

from ..indexing.chunker import chunk_conversation, chunk_markdown

# A larger doc is chunked in a thread: a 5 MB page is ~0.3 s of parsing, which on the event
# loop held up every request for that long; in a thread the loop still gets the interpreter
# every few ms (the GIL's switch interval). A small doc is chunked in place (no thread hop).
THREAD_CHARS = 100_000

INSERT_CHUNK = """
INSERT INTO chunks (doc_id, hub_id, ordinal, heading_path, markdown, hash, tsv)
VALUES (%(doc_id)s, %(hub_id)s, %(ordinal)s, %(heading_path)s, %(markdown)s, %(hash)s,
        setweight(to_tsvector('english', %(heading_path)s), 'A')
        || setweight(to_tsvector('english', %(markdown)s), 'B'))
"""


def chunks_of(title: str, markdown: str, source: str | None) -> list:
    """A conversation (by its source) is chunked as overlapping windows of turns, any other
    doc by its headings."""
    if source in CONVERSATION_SOURCES:
        return chunk_conversation(title, markdown)
    return chunk_markdown(title, markdown)


async def sync_chunks(conn: psycopg.AsyncConnection, doc_id: str, hub_id: int | None,
                      title: str, markdown: str, source: str | None = None) -> dict[str, int]:
    """Make the chunk rows match `markdown`; return counts of kept/added/removed rows."""
    if len(markdown) > THREAD_CHARS:
        wanted = await asyncio.to_thread(chunks_of, title, markdown, source)
    else:
        wanted = chunks_of(title, markdown, source)
    rows = await (await conn.execute(
        "SELECT id, hash, ordinal, hub_id FROM chunks WHERE doc_id = %s ORDER BY ordinal", (doc_id,)
    )).fetchall()
    by_hash: dict[str, list[dict]] = defaultdict(list)
    for row in rows:
        by_hash[row["hash"]].append(row)

    moves: list[tuple[int, int]] = []
    inserts: list[dict] = []
    for chunk in wanted:
        existing = by_hash.get(chunk.hash)
        if existing:
            row = existing.pop(0)
            if row["ordinal"] != chunk.ordinal:
                moves.append((chunk.ordinal, row["id"]))
        else:
            inserts.append({
                "doc_id": doc_id, "hub_id": hub_id, "ordinal": chunk.ordinal,
                "heading_path": chunk.heading_path, "markdown": chunk.markdown, "hash": chunk.hash,
            })
    removed = [row["id"] for leftover in by_hash.values() for row in leftover]

    async with conn.cursor() as cur:
        if removed:
            await cur.execute("DELETE FROM chunks WHERE id = ANY(%s)", (removed,))
        if moves:
            await cur.executemany("UPDATE chunks SET ordinal = %s WHERE id = %s", moves)
        if inserts:
            await cur.executemany(INSERT_CHUNK, inserts)
        if any(row["hub_id"] != hub_id for row in rows):
            await cur.execute(
                "UPDATE chunks SET hub_id = %s WHERE doc_id = %s AND hub_id IS DISTINCT FROM %s",
                (hub_id, doc_id, hub_id),
            )
    return {"kept": len(rows) - len(removed), "added": len(inserts), "removed": len(removed)}
