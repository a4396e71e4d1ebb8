"""Bring a database to the schema on disk: migrations once each (checksummed), functions always.

The rules and the order (tables, then functions, then the triggers and policies that call
them) are explained in migrations/README.md.
"""

from __future__ import annotations

import hashlib
import logging
from dataclasses import dataclass
from importlib import resources
from importlib.resources.abc import Traversable

import psycopg

from .connection import AnyConn

log = logging.getLogger("memorywiki.store")

LOCK_ID = 0x6D656D77  # "memw": one migrator at a time across processes

# Released with name-only bookkeeping (before checksums were recorded), and the sha256 of the text they were
# released with. They stay in migrations/ exactly as released (a test holds them to these
# hashes): a database that recorded them gets these checksums and the baseline files that
# replace them recorded without running; a fresh database skips them and runs the baseline.
RELEASED = {
    "0001_core.sql": "5ca17c4005b7f27dc4504a25b911c4feed05f230049f5cc9139858d3620bb741",
    "0002_bm25.sql": "945ab2630e945eb3f70bfe8d0df5c6bdfbcf7b955187c4aee7265233c3f82873",
}

BOOKKEEPING = """
CREATE TABLE IF NOT EXISTS schema_migrations (
    name text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now());
ALTER TABLE schema_migrations ADD COLUMN IF NOT EXISTS checksum text;
-- false: recorded as applied without running, because the files it replaces were applied
ALTER TABLE schema_migrations ADD COLUMN IF NOT EXISTS ran boolean NOT NULL DEFAULT true;
"""


class MigrationError(RuntimeError):
    """The schema files and the database disagree; the server refuses to start."""


def checksum(sql: str) -> str:
    """sha256 of a file's text; line endings normalised, so a CRLF checkout is not an edit."""
    return hashlib.sha256(sql.replace("\r\n", "\n").encode("utf-8")).hexdigest()


def _header(sql: str) -> dict[str, list[str]]:
    """The `-- key: value ...` lines of the leading comment block."""
    fields: dict[str, list[str]] = {}
    for line in sql.splitlines():
        if not line.startswith("--"):
            break
        key, sep, value = line[2:].partition(":")
        if sep and key.strip() in ("replaces", "needs"):
            fields[key.strip()] = value.replace(",", " ").split()
    return fields


@dataclass(frozen=True)
class Migration:
    name: str
    sql: str

    @property
    def checksum(self) -> str:
        return checksum(self.sql)

    @property
    def replaces(self) -> tuple[str, ...]:
        return tuple(_header(self.sql).get("replaces", ()))

    @property
    def needs_functions(self) -> bool:
        return "functions" in _header(self.sql).get("needs", ())


def _store_root() -> Traversable:
    return resources.files("memorywiki.server.store")


def _sql_files(folder: Traversable) -> list[tuple[str, str]]:
    files = sorted((p for p in folder.iterdir() if p.name.endswith(".sql")), key=lambda p: p.name)
    return [(p.name, p.read_text(encoding="utf-8")) for p in files]


def migration_files(root: Traversable | None = None) -> list[Migration]:
    return [Migration(name, sql) for name, sql in _sql_files((root or _store_root()) / "migrations")]


def function_files(root: Traversable | None = None) -> list[tuple[str, str]]:
    return _sql_files((root or _store_root()) / "functions")


def schema_fingerprint(root: Traversable | None = None) -> str:
    """One hash of every migration and function file (the benchmarks key cached builds by it)."""
    parts = [m.checksum for m in migration_files(root)] + [checksum(sql) for _, sql in function_files(root)]
    return hashlib.sha256("".join(parts).encode()).hexdigest()


@dataclass(frozen=True)
class Step:
    migration: Migration
    run: bool  # False: record as applied without running (it replaces applied files)


def plan(files: list[Migration], recorded: dict[str, str | None]) -> list[Step]:
    """What to do with each pending file, after checking the applied ones still match."""
    on_disk = {m.name: m for m in files}
    replaced = {name for m in files for name in m.replaces}
    for name, applied in recorded.items():
        if name in on_disk:
            now = on_disk[name].checksum
            if applied is not None and applied != now:
                raise MigrationError(
                    f"migration {name} was edited after it was applied to this database "
                    f"(applied sha256 {applied[:12]}…, the file now {now[:12]}…). A released migration "
                    f"is never edited: restore {name} as it was and put the change in a new migration "
                    "file; a function body belongs in server/store/functions/ (re-applied at every start)."
                )
        elif name not in replaced:
            raise MigrationError(
                f"this database has migration {name} applied, which this version of memorywiki does "
                "not have: a newer version ran on it. Run that version (or a newer one) on this data."
            )
    steps = []
    for m in files:
        if m.name in recorded:
            continue
        if m.name in replaced:
            continue  # superseded: a fresh database runs the baseline that replaces it instead
        have = [name for name in m.replaces if name in recorded]
        if have and len(have) < len(m.replaces):
            missing = [name for name in m.replaces if name not in recorded]
            raise MigrationError(
                f"this database has {', '.join(have)} but not {', '.join(missing)}, which {m.name} "
                "replaces together: it was made by a development build. Export its docs and import "
                "them into a fresh data dir."
            )
        steps.append(Step(m, run=not have))
    return steps


async def _recorded(conn: AnyConn, files: list[Migration]) -> dict[str, str | None]:
    """Create or upgrade the bookkeeping table in place; give rows recorded by name only the
    checksum of what they were released as."""
    async with conn.transaction():
        await conn.execute(BOOKKEEPING)
        legacy = [
            r[0]
            for r in await (await conn.execute("SELECT name FROM schema_migrations WHERE checksum IS NULL")).fetchall()
        ]
        known = {**RELEASED, **{m.name: m.checksum for m in files}}
        for name in legacy:
            if name in known:
                await conn.execute("UPDATE schema_migrations SET checksum = %s WHERE name = %s", (known[name], name))
        rows = await (await conn.execute("SELECT name, checksum FROM schema_migrations")).fetchall()
    return dict(rows)


async def apply_functions(conn: AnyConn, root: Traversable | None = None, *, check_bodies: bool = True) -> None:
    """(Re)create every function, in file name order, in one transaction."""
    async with conn.transaction():
        if not check_bodies:
            await conn.execute("SET LOCAL check_function_bodies = off")
        for name, sql in function_files(root):
            try:
                await conn.execute(sql)
            except psycopg.Error as exc:
                raise MigrationError(f"function file {name} failed: {exc}") from exc


async def migrate(conninfo: str, root: Traversable | None = None) -> list[str]:
    """Run pending migrations and re-apply the functions; return the migrations run now.

    `root` is the folder holding migrations/ and functions/ (the package's, unless a test
    passes a copy).
    """
    ran: list[str] = []
    async with await psycopg.AsyncConnection.connect(conninfo, autocommit=True) as conn:
        await conn.execute("SELECT pg_advisory_lock(%s)", (LOCK_ID,))
        try:
            files = migration_files(root)
            steps = plan(files, await _recorded(conn, files))
            functions_ready = False
            for step in steps:
                m = step.migration
                if step.run and m.needs_functions and not functions_ready:
                    await apply_functions(conn, root, check_bodies=False)
                    functions_ready = True
                async with conn.transaction():
                    if step.run:
                        try:
                            await conn.execute(m.sql)
                        except psycopg.Error as exc:
                            raise MigrationError(f"migration {m.name} failed: {exc}") from exc
                    await conn.execute(
                        "INSERT INTO schema_migrations (name, checksum, ran) VALUES (%s, %s, %s)",
                        (m.name, m.checksum, step.run),
                    )
                if step.run:
                    ran.append(m.name)
                else:
                    log.info("recorded %s as applied: it replaces %s", m.name, ", ".join(m.replaces))
            await apply_functions(conn, root)
        finally:
            await conn.execute("SELECT pg_advisory_unlock(%s)", (LOCK_ID,))
    return ran
