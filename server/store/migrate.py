"""Apply the plain-SQL migration files in order, each once, recorded in schema_migrations."""

from __future__ import annotations

from importlib import resources

import psycopg

LOCK_ID = 0x6D656D77  # "memw": one migrator at a time across processes


def migration_files() -> list[tuple[str, str]]:
    folder = resources.files("memorywiki.server.store") / "migrations"
    files = sorted(p for p in folder.iterdir() if p.name.endswith(".sql"))
    return [(p.name, p.read_text(encoding="utf-8")) for p in files]


async def migrate(conninfo: str) -> list[str]:
    """Apply pending migrations; return the names applied now."""
    applied_now: list[str] = []
    async with await psycopg.AsyncConnection.connect(conninfo, autocommit=True) as conn:
        await conn.execute("SELECT pg_advisory_lock(%s)", (LOCK_ID,))
        try:
            await conn.execute(
                "CREATE TABLE IF NOT EXISTS schema_migrations ("
                " name text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())"
            )
            cur = await conn.execute("SELECT name FROM schema_migrations")
            done = {row[0] for row in await cur.fetchall()}
            for name, sql in migration_files():
                if name in done:
                    continue
                async with conn.transaction():
                    await conn.execute(sql)
                    await conn.execute("INSERT INTO schema_migrations (name) VALUES (%s)", (name,))
                applied_now.append(name)
        finally:
            await conn.execute("SELECT pg_advisory_unlock(%s)", (LOCK_ID,))
    return applied_now
