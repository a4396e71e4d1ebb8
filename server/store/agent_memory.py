"""SQL for what coding tools bring and take: the pages of captured sessions, a project's latest
pages, and the tokens the hooks injected (migrations/0140_agent_memory.sql). Owner pool:
callers have checked what the credential may see and pass it as `private`."""

from __future__ import annotations

from typing import Any

from .connection import Conn

# Every page a session was captured to, live or deleted, first one first: "<key>" and, once its
# owner deleted that one and the session went on, "<key>#2", "<key>#3", ... `edited`: its title
# or text is no longer what the capture last saved (a change of who may read it is no edit).
SESSION_PAGES = """
SELECT d.id, d.external_id, d.title, d.markdown, d.meta, d.version, d.is_draft, d.deleted_at,
       d.saved_action IS DISTINCT FROM 'import' AND coalesce((
           SELECT v.title IS DISTINCT FROM d.title OR v.markdown IS DISTINCT FROM d.markdown
           FROM doc_versions v
           WHERE v.doc_id = d.id AND v.saved_action = 'import'
           ORDER BY v.version DESC LIMIT 1), true) AS edited
FROM docs d
WHERE d.hub_id = %(hub)s AND (d.external_id = %(key)s OR left(d.external_id, %(n)s) = %(prefix)s)
ORDER BY d.created_at, d.id
"""


async def session_pages(conn: Conn, hub_id: int, key: str) -> list[dict[str, Any]]:
    prefix = f"{key}#"
    return await (
        await conn.execute(SESSION_PAGES, {"hub": hub_id, "key": key, "prefix": prefix, "n": len(prefix)})
    ).fetchall()


# The project's latest live pages: tied to it by one of its keys (meta.project.keys), or a
# session captured in its folder (meta.cwd). Drafts and gated pages only for a caller who
# may see them (`private`). Only the head of each page is read: its summary is at the top.
PROJECT_DOCS = """
SELECT d.id, d.title, d.updated_at, d.is_draft, d.meta, doc_visibility(d) AS visibility,
       left(d.markdown, %(head)s) AS head,
       (SELECT e.data ->> 'summary' FROM enrichments e
        WHERE e.doc_id = d.id AND e.source_hash = d.source_hash) AS enriched_summary
FROM docs d
WHERE d.hub_id = %(hub)s AND d.deleted_at IS NULL
  AND ((d.meta -> 'project' -> 'keys') ?| %(keys)s::text[] OR d.meta ->> 'cwd' = ANY (%(paths)s::text[]))
  AND (%(private)s OR doc_is_public(d))
  AND (d.external_id IS NULL OR d.external_id <> ALL (%(skip)s::text[]))
ORDER BY d.updated_at DESC, d.id
LIMIT %(limit)s
"""


async def project_docs(
    conn: Conn,
    hub_id: int,
    *,
    keys: list[str],
    paths: list[str],
    private: bool,
    skip: list[str],
    limit: int,
    head: int = 6000,
) -> list[dict[str, Any]]:
    """The project's latest pages, newest first; `skip`: external ids left out (the session
    asking, whose own page it already has)."""
    return await (
        await conn.execute(
            PROJECT_DOCS,
            {
                "hub": hub_id,
                "keys": keys,
                "paths": paths,
                "private": private,
                "skip": skip,
                "limit": limit,
                "head": head,
            },
        )
    ).fetchall()


COUNT_USAGE = """
INSERT INTO context_usage AS u (hub_id, day, kind, calls, tokens) VALUES (%s, current_date, %s, 1, %s)
ON CONFLICT (hub_id, day, kind) DO UPDATE SET calls = u.calls + 1, tokens = u.tokens + excluded.tokens
"""


async def count_usage(conn: Conn, hub_id: int, kind: str, tokens: int) -> None:
    """One injection of `tokens` of `kind` ("start" or "prompt") today. A count is no save
    worth waiting for the disk: the transaction does not wait for its commit to be flushed."""
    await conn.execute("SET LOCAL synchronous_commit = off")
    await conn.execute(COUNT_USAGE, (hub_id, kind, tokens))


USAGE = """
SELECT day, kind, calls, tokens FROM context_usage
WHERE hub_id = %s AND day > current_date - %s::int
ORDER BY day DESC, kind
"""


async def usage(conn: Conn, hub_id: int, days: int) -> list[dict[str, Any]]:
    """The hub's injections of the last `days` days, per day and kind, newest first."""
    return await (await conn.execute(USAGE, (hub_id, days))).fetchall()
