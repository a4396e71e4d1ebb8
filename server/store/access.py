"""SQL for access tokens: what an owner issues to a reader of an email-restricted doc."""

from __future__ import annotations

from .connection import Conn


async def issue(conn: Conn, token_hash: str, doc_id: str, email: str) -> None:
    await conn.execute(
        "INSERT INTO access_tokens (token_hash, doc_id, email) VALUES (%s, %s, %s)",
        (token_hash, doc_id, email),
    )


async def email_for(conn: Conn, token_hash: str, doc_id: str) -> str | None:
    """The email an access token was issued to, for this doc; None for an unknown token."""
    row = await (
        await conn.execute(
            "SELECT email FROM access_tokens WHERE token_hash = %s AND doc_id = %s", (token_hash, doc_id)
        )
    ).fetchone()
    return row["email"] if row else None
