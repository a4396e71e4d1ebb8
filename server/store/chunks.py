"""Keep a doc's chunk rows in step with its markdown, inside the save transaction.

Chunks are matched by content hash: an unchanged section keeps its row and its vector,
a new or edited one gets a fresh row with no vector (so it is owed embedding), and a
removed one is deleted. Full text (the BM25 postings, kept by triggers) is
therefore current the moment the save commits. The doc records which chunker made its rows
(docs.chunker), so rows made by other rules or sizes are made again (rechunk_stale).
"""

from __future__ import annotations

import asyncio
from collections import defaultdict
from typing import Any

from memorywiki.formats.model import CONVERSATION_SOURCES

from ..indexing.chunker import Chunk, ChunkSize, chunk_conversation, chunk_markdown
from .connection import Conn

# A larger doc is chunked in a thread: a 5 MB page is ~0.3 s of parsing, which on the event
# loop held up every request for that long; in a thread the loop still gets the interpreter
# every few ms (the GIL's switch interval). A small doc is chunked in place (no thread hop).
THREAD_CHARS = 100_000

# One statement for all of a doc's new rows: the full-text triggers then queue and post them
# once, not once a row (a 5 MB page is thousands of rows).
INSERT_CHUNKS = """
INSERT INTO chunks (doc_id, hub_id, ordinal, heading_path, markdown, hash)
SELECT %(doc_id)s, %(hub_id)s, c.ordinal, c.heading_path, c.markdown, c.hash
FROM unnest(%(ordinals)s::int[], %(heading_paths)s::text[], %(markdowns)s::text[], %(hashes)s::text[])
     AS c (ordinal, heading_path, markdown, hash)
"""


# How this process cuts docs (Settings.chunk_size, set when its database opens): one size for
# every save and every re-chunk, so the rows of a doc never depend on which path made them.
_size = ChunkSize()


def use_chunk_size(size: ChunkSize) -> None:
    global _size
    _size = size


def chunk_size() -> ChunkSize:
    return _size


def chunks_of(title: str, markdown: str, source: str | None, size: ChunkSize | None = None) -> list[Chunk]:
    """A conversation (by its source) is chunked as overlapping windows of turns, any other
    doc by its headings."""
    size = size or _size
    if source in CONVERSATION_SOURCES:
        return chunk_conversation(title, markdown, size=size)
    return chunk_markdown(title, markdown, size)


async def sync_chunks(
    conn: Conn, doc_id: str, hub_id: int | None, title: str, markdown: str, source: str | None = None
) -> dict[str, int]:
    """Make the chunk rows match `markdown`; return counts of kept/added/removed rows."""
    size = _size
    if len(markdown) > THREAD_CHARS:
        wanted = await asyncio.to_thread(chunks_of, title, markdown, source, size)
    else:
        wanted = chunks_of(title, markdown, source, size)
    rows = await (
        await conn.execute("SELECT id, hash, ordinal, hub_id FROM chunks WHERE doc_id = %s ORDER BY ordinal", (doc_id,))
    ).fetchall()
    by_hash: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        by_hash[row["hash"]].append(row)

    moves: list[tuple[int, int]] = []
    inserts: list[Chunk] = []
    for chunk in wanted:
        existing = by_hash.get(chunk.hash)
        if existing:
            row = existing.pop(0)
            if row["ordinal"] != chunk.ordinal:
                moves.append((chunk.ordinal, row["id"]))
        else:
            inserts.append(chunk)
    removed = [row["id"] for leftover in by_hash.values() for row in leftover]

    async with conn.cursor() as cur:
        if removed:
            await cur.execute("DELETE FROM chunks WHERE id = ANY(%s)", (removed,))
        if moves:
            await cur.executemany("UPDATE chunks SET ordinal = %s WHERE id = %s", moves)
        if inserts:
            await cur.execute(
                INSERT_CHUNKS,
                {
                    "doc_id": doc_id,
                    "hub_id": hub_id,
                    "ordinals": [c.ordinal for c in inserts],
                    "heading_paths": [c.heading_path for c in inserts],
                    "markdowns": [c.markdown for c in inserts],
                    "hashes": [c.hash for c in inserts],
                },
            )
        if any(row["hub_id"] != hub_id for row in rows):
            await cur.execute(
                "UPDATE chunks SET hub_id = %s WHERE doc_id = %s AND hub_id IS DISTINCT FROM %s",
                (hub_id, doc_id, hub_id),
            )
        await cur.execute(RECORD_CHUNKER, (size.version, doc_id, size.version))
    return {"kept": len(rows) - len(removed), "added": len(inserts), "removed": len(removed)}


RECORD_CHUNKER = "UPDATE docs SET chunker = %s WHERE id = %s AND chunker IS DISTINCT FROM %s"

# Docs, deleted ones too (a restore then finds its rows current), whose rows another chunker made.
STALE_DOCS = """
SELECT id, hub_id, title, markdown, source FROM docs
WHERE chunker IS DISTINCT FROM %s
ORDER BY id
LIMIT %s
FOR UPDATE SKIP LOCKED
"""
# New rows owe vectors; fewer rows change the doc's vector (the mean of its chunks'), which
# the indexer then recomputes without embedding anything.
OWE_INDEXING = "UPDATE docs SET embedded_hash = NULL WHERE id = ANY(%s) AND embedded_hash IS NOT NULL"


async def rechunk_stale(conn: Conn, limit: int) -> list[str]:
    """Chunk again, in the caller's transaction, up to `limit` docs whose rows another chunker
    (older rules, another size) made; return their ids. Unchanged chunks keep their rows and
    vectors; a doc that got new rows or lost some is owed indexing."""
    size = _size
    docs = await (await conn.execute(STALE_DOCS, (size.version, limit))).fetchall()
    owed = []
    for doc in docs:
        counts = await sync_chunks(conn, doc["id"], doc["hub_id"], doc["title"], doc["markdown"], doc["source"])
        if counts["added"] or counts["removed"]:
            owed.append(doc["id"])
    if owed:
        await conn.execute(OWE_INDEXING, (owed,))
    return [doc["id"] for doc in docs]
