"""SQL for hub members: add, list, revoke, and whose token a token is (migrations/0100_members.sql).
Member tokens arrive here only as their sha256."""

from __future__ import annotations

from typing import Any

from .connection import Conn

ADD = """
INSERT INTO hub_members (hub_id, name, token_hash) VALUES (%s, %s, %s)
ON CONFLICT (hub_id, name) WHERE revoked_at IS NULL DO NOTHING
RETURNING name, created_at
"""


async def add(conn: Conn, hub_id: int, name: str, token_hash: str) -> dict[str, Any] | None:
    """The new member {"name", "created_at"}, or None when the hub already has a live member of that name."""
    return await (await conn.execute(ADD, (hub_id, name, token_hash))).fetchone()


async def live(conn: Conn, hub_id: int) -> list[dict[str, Any]]:
    """The hub's members, oldest first."""
    return await (
        await conn.execute(
            "SELECT name, created_at FROM hub_members WHERE hub_id = %s AND revoked_at IS NULL ORDER BY created_at, name",
            (hub_id,),
        )
    ).fetchall()


async def revoke(conn: Conn, hub_id: int, name: str) -> bool:
    """End a member's token at once; whether there was a live member of that name."""
    cur = await conn.execute(
        "UPDATE hub_members SET revoked_at = now() WHERE hub_id = %s AND name = %s AND revoked_at IS NULL",
        (hub_id, name),
    )
    return cur.rowcount > 0


async def member(conn: Conn, hub_id: int, token_hash: str) -> dict[str, Any] | None:
    """The live member of the hub holding this token ({"id", "name"}), or None."""
    return await (
        await conn.execute(
            "SELECT id, name FROM hub_members WHERE hub_id = %s AND token_hash = %s AND revoked_at IS NULL",
            (hub_id, token_hash),
        )
    ).fetchone()


async def member_name(conn: Conn, hub_id: int, token_hash: str) -> str | None:
    """The name of the live member of the hub holding this token, or None."""
    row = await member(conn, hub_id, token_hash)
    return row["name"] if row else None
