"""Migration 0011: data dirs chunked before the fix lose their heading-only chunks.

The chunks are written with plain SQL in the shapes the old chunker produced, then the
migration is run again on that data, the way an existing data dir upgrades.
"""

from __future__ import annotations

import asyncio

import psycopg
from memorywiki.server.store.migrate import migrate

MIGRATION = "0011_bare_heading_chunks.sql"


def add_doc(conn, doc_id: str, hub: int, title: str, chunks: list[tuple[str, str]]) -> None:
    conn.execute(
        "INSERT INTO docs (id, hub_id, title, markdown, edit_token_hash, source_hash, embedded_hash)"
        " VALUES (%s, %s, %s, %s, 'e', 'h', 'h')",
        (doc_id, hub, title, "\n\n".join(body for _, body in chunks)),
    )
    for ordinal, (path, body) in enumerate(chunks):
        conn.execute(
            "INSERT INTO chunks (doc_id, hub_id, ordinal, heading_path, markdown, hash, tsv)"
            " VALUES (%s, %s, %s, %s, %s, md5(%s), to_tsvector('english', %s || ' ' || %s))",
            (doc_id, hub, ordinal, path, body, body, path, body),
        )


def chunks_of(conn, doc_id: str) -> list[tuple[int, str]]:
    return conn.execute("SELECT ordinal, markdown FROM chunks WHERE doc_id = %s ORDER BY ordinal", (doc_id,)).fetchall()


def test_upgrade_drops_heading_only_chunks_and_keeps_everything_else(database_url):
    with psycopg.connect(database_url, autocommit=True) as conn:
        hub = conn.execute("INSERT INTO hubs (slug, owner_token_hash) VALUES ('ops', 'x') RETURNING id").fetchone()[0]
        add_doc(
            conn,
            "deploydoc1",
            hub,
            "Ops handbook",
            [
                ("Ops handbook > Deploy notes", "# Deploy notes"),
                ("Ops handbook > Deploy notes > Steps", "## Steps\n\nRun make deploy, then watch the health page."),
                ("Ops handbook > Deploy notes > Setext", "Setext heading\n--------------"),
                ("Ops handbook > Deploy notes > Setext > Rollback", "### Rollback\n\nRun make rollback."),
            ],
        )
        # look-alikes that carry text: a list before a rule, a #hashtag, a deeper heading, code
        add_doc(
            conn,
            "lookalike1",
            hub,
            "Look-alikes",
            [
                ("Look-alikes", "- item\n---"),
                ("Look-alikes", "#deploy is a hashtag"),
                ("Look-alikes", "#### Deep heading"),
                ("Look-alikes", "```\n# comment\n```"),
            ],
        )
        # a doc that is nothing but headings keeps them: the outline is all it says
        add_doc(
            conn, "outlineonly", hub, "Outline", [("Outline > Plan", "# Plan"), ("Outline > Plan > Ship", "## Ship")]
        )
        conn.execute("DELETE FROM schema_migrations WHERE name = %s", (MIGRATION,))

    assert MIGRATION in asyncio.run(migrate(database_url))

    with psycopg.connect(database_url, autocommit=True) as conn:
        assert chunks_of(conn, "deploydoc1") == [
            (0, "## Steps\n\nRun make deploy, then watch the health page."),
            (1, "### Rollback\n\nRun make rollback."),
        ]
        assert [m for _, m in chunks_of(conn, "lookalike1")] == [
            "- item\n---",
            "#deploy is a hashtag",
            "#### Deep heading",
            "```\n# comment\n```",
        ]
        assert [m for _, m in chunks_of(conn, "outlineonly")] == ["# Plan", "## Ship"]
        owed = dict(conn.execute("SELECT id, embedded_hash IS NULL FROM docs").fetchall())
        assert owed == {"deploydoc1": True, "lookalike1": False, "outlineonly": False}
        # the BM25 postings followed the deletes: "deploy" finds the body, never the bare heading
        found = conn.execute(
            "SELECT c.markdown FROM bm25_search(%s, 'deploy', 10, 1.2, 0.75) s JOIN chunks c ON c.id = s.chunk_id",
            (hub,),
        ).fetchall()
        assert "# Deploy notes" not in [m for (m,) in found]
        assert "## Steps\n\nRun make deploy, then watch the health page." in [m for (m,) in found]
