"""SQL for version history: a doc's earlier versions, kept by the docs_keep_version trigger.

The current version lives in docs; doc_versions holds every earlier one, with the visibility
the doc had while it was current. Run on the public pool, row-level security leaves only the
versions that were public, of docs the public may read (0121_private_versions.sql). On the
owner pool `visible` names the visibilities a caller may see (None: every version, for the
doc's editors).
"""

from __future__ import annotations

from typing import Any

from .connection import Conn, one_row

LIST_VERSIONS = """
SELECT version, saved_at, octet_length(markdown) AS size, title, saved_via, saved_action, restored_from,
       deleted
FROM doc_versions
WHERE doc_id = %(doc)s AND (%(visible)s::text[] IS NULL OR visibility = ANY(%(visible)s::text[]))
ORDER BY version DESC
"""

GET_VERSION = """
SELECT version, saved_at, octet_length(markdown) AS size, title, markdown, meta, source,
       saved_via, saved_action, restored_from, deleted
FROM doc_versions
WHERE doc_id = %(doc)s AND version = %(version)s
  AND (%(visible)s::text[] IS NULL OR visibility = ANY(%(visible)s::text[]))
"""


async def list_versions(conn: Conn, doc_id: str, visible: list[str] | None = None) -> list[dict[str, Any]]:
    """The doc's earlier versions, newest first (without their text)."""
    return await (await conn.execute(LIST_VERSIONS, {"doc": doc_id, "visible": visible})).fetchall()


async def get_version(conn: Conn, doc_id: str, version: int, visible: list[str] | None = None) -> dict[str, Any] | None:
    """One earlier version with its text, or None (also for one `visible` leaves out)."""
    return await (await conn.execute(GET_VERSION, {"doc": doc_id, "version": version, "visible": visible})).fetchone()


async def last_live_version(conn: Conn, doc_id: str) -> int | None:
    """The newest earlier version that was not a deleted state: what undeleting brings back."""
    row = await one_row(
        conn, "SELECT max(version) AS version FROM doc_versions WHERE doc_id = %s AND NOT deleted", (doc_id,)
    )
    version: int | None = row["version"]
    return version


ALL_VERSIONS = """
SELECT doc_id, version, saved_at, title, markdown, meta, source, saved_via, saved_action, restored_from, deleted
FROM doc_versions
WHERE doc_id = ANY(%s)
ORDER BY doc_id, version
"""


async def all_versions(conn: Conn, doc_ids: list[str]) -> list[dict[str, Any]]:
    """Every earlier version of these docs with its text, by doc then oldest first (owner
    pool: the caller proved it may read them)."""
    return await (await conn.execute(ALL_VERSIONS, (doc_ids,))).fetchall()
