"""SQL for server secrets: random keys made once per database and shared by its servers."""

from __future__ import annotations

import secrets

from .connection import Conn, one_row

GET_OR_MAKE = """
INSERT INTO server_secrets (name, value) VALUES (%s, %s) ON CONFLICT (name) DO NOTHING;
"""


async def server_secret(conn: Conn, name: str) -> str:
    """The secret `name`, made now if this database has none (the first server to ask wins)."""
    await conn.execute(GET_OR_MAKE, (name, secrets.token_urlsafe(48)))
    row = await one_row(conn, "SELECT value FROM server_secrets WHERE name = %s", (name,))
    return str(row["value"])
