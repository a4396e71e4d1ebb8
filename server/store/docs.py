"""SQL for docs: create, read, update, soft delete. Callers pass an owner connection."""

from __future__ import annotations

from typing import Any

import psycopg
from psycopg.types.json import Jsonb

from ..tokens import new_id, source_hash
from .chunks import sync_chunks

DOC_COLUMNS = """id, hub_id, title, markdown, source, meta, external_id, is_draft, deleted_at,
    password_hash, allowed_emails, edit_token_hash, source_hash, embedded_hash, version,
    created_at, updated_at"""

NOTIFY_OWED = "SELECT pg_notify('memorywiki_owed', %s)"


async def insert_doc(conn: psycopg.AsyncConnection, *, hub_id: int | None, title: str, markdown: str,
                     source: str | None, meta: dict, external_id: str | None, is_draft: bool,
                     password_hash: str | None, allowed_emails: list[str],
                     edit_token_hash: str) -> dict[str, Any]:
    """Insert a doc and its chunks in the caller's transaction."""
    for _ in range(5):
        doc_id = new_id()
        row = await (await conn.execute(
            f"""INSERT INTO docs (id, hub_id, title, markdown, source, meta, external_id, is_draft,
                                  password_hash, allowed_emails, edit_token_hash, source_hash)
                VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)
                ON CONFLICT (id) DO NOTHING
                RETURNING {DOC_COLUMNS}""",
            (doc_id, hub_id, title, markdown, source, Jsonb(meta), external_id, is_draft,
             password_hash, allowed_emails, edit_token_hash, source_hash(title, markdown)),
        )).fetchone()
        if row is not None:
            await sync_chunks(conn, doc_id, hub_id, title, markdown)
            await conn.execute(NOTIFY_OWED, (doc_id,))
            return row
    raise RuntimeError("could not allocate a doc id")


async def lock_doc(conn: psycopg.AsyncConnection, doc_id: str) -> dict[str, Any] | None:
    return await (await conn.execute(
        f"SELECT {DOC_COLUMNS} FROM docs WHERE id = %s AND deleted_at IS NULL FOR UPDATE", (doc_id,)
    )).fetchone()


async def find_doc(conn: psycopg.AsyncConnection, doc_id: str) -> dict[str, Any] | None:
    return await (await conn.execute(
        f"SELECT {DOC_COLUMNS} FROM docs WHERE id = %s AND deleted_at IS NULL", (doc_id,)
    )).fetchone()


async def find_by_external_id(conn: psycopg.AsyncConnection, hub_id: int | None,
                              external_id: str) -> dict[str, Any] | None:
    return await (await conn.execute(
        f"""SELECT {DOC_COLUMNS} FROM docs
            WHERE hub_id IS NOT DISTINCT FROM %s AND external_id = %s FOR UPDATE""",
        (hub_id, external_id),
    )).fetchone()


UPDATABLE = ("hub_id", "title", "markdown", "source", "meta", "is_draft", "password_hash", "allowed_emails")


async def update_doc(conn: psycopg.AsyncConnection, current: dict[str, Any],
                     changes: dict[str, Any]) -> dict[str, Any]:
    """Apply `changes` to a doc locked by the caller; bump its version; re-chunk if needed."""
    fields = {k: v for k, v in changes.items() if k in UPDATABLE and v != current.get(k)}
    if not fields:
        return current
    merged = {**current, **fields}
    fields["source_hash"] = source_hash(merged["title"], merged["markdown"])
    if "meta" in fields:
        fields["meta"] = Jsonb(fields["meta"])
    assignments = ", ".join(f"{name} = %({name})s" for name in fields)
    row = await (await conn.execute(
        f"""UPDATE docs SET {assignments}, version = version + 1, updated_at = now()
            WHERE id = %(doc_id)s RETURNING {DOC_COLUMNS}""",
        {**fields, "doc_id": current["id"]},
    )).fetchone()
    if {"title", "markdown", "hub_id"} & fields.keys():
        await sync_chunks(conn, row["id"], row["hub_id"], row["title"], row["markdown"])
    if row["source_hash"] != current["source_hash"]:
        await conn.execute(NOTIFY_OWED, (row["id"],))
    return row


async def soft_delete(conn: psycopg.AsyncConnection, doc_id: str) -> None:
    await conn.execute(
        "UPDATE docs SET deleted_at = now(), version = version + 1, updated_at = now() WHERE id = %s",
        (doc_id,),
    )
