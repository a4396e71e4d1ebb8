"""Upgrading a data dir chunked by the previous chunker (blocks over the maximum kept whole,
no chunker recorded): the worker re-chunks every doc, keeps the rows and vectors of chunks
whose text is unchanged, embeds only the new pieces, and loses no doc.

The rows are written with plain SQL in the shapes the previous release wrote (its chunks and
sha256 hashes, vectors from the test embedder, the doc marked indexed), the chunker column and
its migration removed, then the migration runs again, the way an existing data dir upgrades.
"""

from __future__ import annotations

import asyncio
import hashlib

import psycopg
from memorywiki.server.indexing.chunker import ChunkSize
from memorywiki.server.indexing.indexer import chunk_text
from memorywiki.server.store.migrate import migrate

from tests.embedding_server import embed_text
from tests.polling import wait_indexed, wait_until

MIGRATION = "0065_docs_chunker.sql"
SPACE = "openai:test-embed"  # the name the test settings' embedder records
SMALL = [
    ("Garden > Roses", "# Roses\n\nRoses need sun, water and patience."),
    ("Garden > Tulips", "# Tulips\n\nTulips are planted in autumn, bulbs pointing up."),
]
# a pasted transcript: single newlines, no blank line, so the previous chunker kept it whole
LONG = (
    "\n".join(
        f"Line {i}: the ferry timetable for pier {i} changes every season, ask the harbour office." for i in range(300)
    )
    + "\nThe lighthouse keeper Ostrowski keeps the last log."
)


def sha(path: str, markdown: str) -> str:
    return hashlib.sha256(f"{path}\n{markdown}".encode()).hexdigest()


def seed_previous_release(url: str) -> dict[str, str]:
    """Three docs as the previous release left them, indexed: ids by name."""
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("ALTER TABLE docs DROP COLUMN chunker")
        conn.execute("DELETE FROM schema_migrations WHERE name = %s", (MIGRATION,))
        hub = conn.execute("INSERT INTO hubs (slug, owner_token_hash) VALUES ('notes', 'x') RETURNING id").fetchone()[0]
        docs = {
            "garden": ("gardenpag2", "Garden", "\n\n".join(m for _, m in SMALL), SMALL, None),
            "log": ("harbrwatch", "Harbour log", LONG, [("Harbour log", LONG)], None),
            "trash": ("trashedpag", "Old log", LONG, [("Old log", LONG)], "now()"),
        }
        for doc_id, title, markdown, chunks, deleted in docs.values():
            vectors = [embed_text(chunk_text(path, md)) for path, md in chunks]
            mean = [sum(col) / len(vectors) for col in zip(*vectors, strict=True)]
            conn.execute(
                "INSERT INTO docs (id, hub_id, title, markdown, edit_token_hash, source_hash, embedded_hash,"
                " embedded_chunk_hashes, embedding, deleted_at)"
                f" VALUES (%s, %s, %s, %s, 'e', %s, %s, %s, l2_normalize(%s::vector), {deleted or 'NULL'})",
                (doc_id, hub, title, markdown, doc_id, doc_id, [sha(p, m) for p, m in chunks], str(mean)),
            )
            for ordinal, ((path, md), vector) in enumerate(zip(chunks, vectors, strict=True)):
                conn.execute(
                    "INSERT INTO chunks (doc_id, hub_id, ordinal, heading_path, markdown, hash, embedding, tsv)"
                    " VALUES (%s, %s, %s, %s, %s, %s, %s::vector, setweight(to_tsvector('english', %s), 'A')"
                    " || setweight(to_tsvector('english', %s), 'B'))",
                    (doc_id, hub, ordinal, path, md, sha(path, md), str(vector), path, md),
                )
        conn.execute("INSERT INTO embedding_space (model, dim) VALUES (%s, %s)", (SPACE, len(embed_text("x"))))
    return {name: spec[0] for name, spec in docs.items()}


def chunk_rows(url: str, doc_id: str) -> list[tuple]:
    with psycopg.connect(url) as conn:
        return conn.execute(
            "SELECT id, markdown, embedding::text FROM chunks WHERE doc_id = %s ORDER BY ordinal", (doc_id,)
        ).fetchall()


def test_upgrade_rechunks_every_doc_and_embeds_only_what_changed(database_url, settings, make_client, embedding_server):
    ids = seed_previous_release(database_url)
    garden_before = chunk_rows(database_url, ids["garden"])
    assert MIGRATION in asyncio.run(migrate(database_url))
    embedding_server.reset()

    client = make_client()  # its worker re-chunks what another chunker made, then indexes
    size = ChunkSize()

    def recorded() -> dict:
        with psycopg.connect(database_url) as conn:
            return dict(conn.execute("SELECT id, chunker FROM docs").fetchall())

    wait_until(lambda: set(recorded().values()) == {size.version}, "every doc re-chunked")
    assert recorded().keys() == set(ids.values())  # every doc, the deleted one too
    wait_indexed(client, [ids["garden"], ids["log"]])
    assert chunk_rows(database_url, ids["garden"]) == garden_before  # same rows, same vectors
    log = chunk_rows(database_url, ids["log"])
    assert len(log) > 5 and all(len(md) <= size.max_chars for _, md, _ in log)
    assert all(vector is not None for _, _, vector in log)
    trash = chunk_rows(database_url, ids["trash"])
    assert len(trash) == len(log) and all(vector is None for _, _, vector in trash)  # never embedded while deleted
    assert embedding_server.inputs == len(log)  # the new pieces, nothing else

    # nothing lost: every doc is there, and the log's last line (past the old chunk's window) is found
    assert client.get(f"/api/docs/{ids['garden']}").status_code == 200
    r = client.post("/api/hub/notes/recall", json={"question": "lighthouse keeper Ostrowski", "hybrid": False})
    assert r.status_code == 200, r.text
    top = r.json()["results"][0]
    assert top["doc_id"] == ids["log"] and "Ostrowski" in top["markdown"]


def test_a_server_without_embedder_rechunks_too(database_url, make_client):
    ids = seed_previous_release(database_url)
    assert MIGRATION in asyncio.run(migrate(database_url))
    client = make_client(embedder="none")  # no embedder: no indexing worker, full text only
    size = ChunkSize()

    def stale() -> int:
        with psycopg.connect(database_url) as conn:
            return conn.execute(
                "SELECT count(*) FROM docs WHERE chunker IS DISTINCT FROM %s", (size.version,)
            ).fetchone()[0]

    wait_until(lambda: stale() == 0, "every doc re-chunked without an embedder")
    log = chunk_rows(database_url, ids["log"])
    assert len(log) > 5 and all(len(md) <= size.max_chars for _, md, _ in log)
    r = client.post("/api/hub/notes/recall", json={"question": "lighthouse keeper Ostrowski"})
    assert r.status_code == 200, r.text
    top = r.json()["results"][0]
    assert top["doc_id"] == ids["log"] and "Ostrowski" in top["markdown"] and len(top["markdown"]) <= size.max_chars
