"""SQL for docs: create, read, update, soft delete. Callers pass an owner connection.

Every save says how it was made: `via` is the credential that proved the right to make it
("owner": the hub's owner token, "edit_token": the doc's edit token, "anonymous": a hubless
create with no token) and `action` what it did (create, edit, import, restore, delete). Both
are kept on the row and travel into doc_versions when the next save archives it
(migrations/0020_doc_versions.sql).
"""

from __future__ import annotations

from typing import Any

from memorywiki.formats.hubfolder import OWN_ID, own_id
from psycopg import sql
from psycopg.types.json import Jsonb

from ..tokens import new_id, source_hash
from .chunks import sync_chunks
from .connection import Conn, one_row
from .links import sync_links

# edit_token_live: whether the doc's edit token still opens it. One minted through a member
# (edit_token_member, migrations/0120_member_edit_tokens.sql) ends with the membership.
DOC_COLUMNS = sql.SQL("""id, hub_id, title, markdown, source, meta, external_id, is_draft, deleted_at,
    password_hash, allowed_emails, edit_token_hash, source_hash, embedded_hash, version,
    created_at, updated_at, saved_via, saved_action, restored_from, edit_token_member,
    (edit_token_member IS NULL OR EXISTS (SELECT 1 FROM hub_members m
                                          WHERE m.id = edit_token_member AND m.revoked_at IS NULL))
        AS edit_token_live""")

VIAS = ("owner", "edit_token", "anonymous")
ACTIONS = ("create", "edit", "import", "restore", "delete")

INSERT_DOC = sql.SQL("""
INSERT INTO docs (id, hub_id, title, markdown, source, meta, external_id, is_draft,
                  password_hash, allowed_emails, edit_token_hash, edit_token_member, source_hash, saved_via,
                  saved_action, created_at, updated_at)
VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s,
        coalesce(%s::timestamptz, %s::timestamptz, now()), coalesce(%s::timestamptz, now()))
ON CONFLICT (id) DO NOTHING
RETURNING {columns}""").format(columns=DOC_COLUMNS)

LOCK_DOC = sql.SQL("SELECT {columns} FROM docs WHERE id = %s AND deleted_at IS NULL FOR UPDATE").format(
    columns=DOC_COLUMNS
)

# deleted ones too: only a restore may touch a deleted doc
LOCK_ANY_DOC = sql.SQL("SELECT {columns} FROM docs WHERE id = %s FOR UPDATE").format(columns=DOC_COLUMNS)
FIND_ANY_DOC = sql.SQL("SELECT {columns} FROM docs WHERE id = %s").format(columns=DOC_COLUMNS)

FIND_DOC = sql.SQL("SELECT {columns} FROM docs WHERE id = %s AND deleted_at IS NULL").format(columns=DOC_COLUMNS)

# An importer id names a doc of the hub; so does "memorywiki:<its id>" (formats/hubfolder.py)
# for a doc that has no importer id of its own: an export's page imported back into the hub
# it came from. Deleted ones too: a doc its owner deleted stays deleted on re-import.
LOCK_BY_EXTERNAL_ID = sql.SQL("""
SELECT {columns} FROM docs
WHERE hub_id IS NOT DISTINCT FROM %(hub)s
  AND (external_id = %(key)s OR (id = %(own)s AND external_id IS NULL))
ORDER BY external_id IS NULL
LIMIT 1 FOR UPDATE""").format(columns=DOC_COLUMNS)

NOTIFY_OWED = "SELECT pg_notify('memorywiki_owed', %s)"


async def insert_doc(
    conn: Conn,
    *,
    hub_id: int | None,
    title: str,
    markdown: str,
    source: str | None,
    meta: dict[str, Any],
    external_id: str | None,
    is_draft: bool,
    password_hash: str | None,
    allowed_emails: list[str],
    edit_token_hash: str,
    via: str,
    action: str = "create",
    dates: dict[str, Any] | None = None,
    edit_token_member: int | None = None,
) -> dict[str, Any]:
    """Insert a doc and its chunks in the caller's transaction; `dates` ("created_at",
    "updated_at") an import carries, else now (a lone updated_at dates its making too);
    `edit_token_member`: the membership the edit token is handed out through, if any."""
    made, changed = (dates or {}).get("created_at"), (dates or {}).get("updated_at")
    for _ in range(5):
        doc_id = new_id()
        row = await (
            await conn.execute(
                INSERT_DOC,
                (
                    doc_id,
                    hub_id,
                    title,
                    markdown,
                    source,
                    Jsonb(meta),
                    external_id,
                    is_draft,
                    password_hash,
                    allowed_emails,
                    edit_token_hash,
                    edit_token_member,
                    source_hash(title, markdown),
                    via,
                    action,
                    made,
                    changed,
                    changed,
                ),
            )
        ).fetchone()
        if row is not None:
            await sync_chunks(conn, doc_id, hub_id, title, markdown, source)
            await sync_links(conn, doc_id, markdown)
            await conn.execute(NOTIFY_OWED, (doc_id,))
            return row
    raise RuntimeError("could not allocate a doc id")


async def lock_doc(conn: Conn, doc_id: str) -> dict[str, Any] | None:
    return await (await conn.execute(LOCK_DOC, (doc_id,))).fetchone()


async def find_doc(conn: Conn, doc_id: str) -> dict[str, Any] | None:
    return await (await conn.execute(FIND_DOC, (doc_id,))).fetchone()


async def lock_any_doc(conn: Conn, doc_id: str) -> dict[str, Any] | None:
    """The doc, live or deleted, row-locked for this transaction."""
    return await (await conn.execute(LOCK_ANY_DOC, (doc_id,))).fetchone()


async def find_any_doc(conn: Conn, doc_id: str) -> dict[str, Any] | None:
    """The doc, live or deleted."""
    return await (await conn.execute(FIND_ANY_DOC, (doc_id,))).fetchone()


async def find_by_external_id(conn: Conn, hub_id: int | None, external_id: str) -> dict[str, Any] | None:
    return await (
        await conn.execute(LOCK_BY_EXTERNAL_ID, {"hub": hub_id, "key": external_id, "own": own_id(external_id)})
    ).fetchone()


PUBLIC_DOC = """
SELECT d.id, d.hub_id, d.title, d.markdown, d.source, d.meta, d.version, d.created_at, d.updated_at,
       d.saved_via, d.saved_action, d.restored_from, h.slug AS hub_slug
FROM docs d LEFT JOIN hubs h ON h.id = d.hub_id
WHERE d.id = %s
"""


async def public_doc(conn: Conn, doc_id: str) -> dict[str, Any] | None:
    """The doc as the public sees it (run on the public pool: row-level security decides)."""
    return await (await conn.execute(PUBLIC_DOC, (doc_id,))).fetchone()


async def is_password_protected(conn: Conn, doc_id: str) -> bool:
    """A live, published doc that only its password opens (the browser gets a password form)."""
    row = await (
        await conn.execute(
            "SELECT 1 FROM docs WHERE id = %s AND deleted_at IS NULL AND NOT is_draft AND password_hash IS NOT NULL",
            (doc_id,),
        )
    ).fetchone()
    return row is not None


# deleted_at: only a restore sets it (back to NULL); routes never take it from a request
UPDATABLE = (
    "hub_id",
    "title",
    "markdown",
    "source",
    "meta",
    "is_draft",
    "password_hash",
    "allowed_emails",
    "deleted_at",
)


async def update_doc(
    conn: Conn,
    current: dict[str, Any],
    changes: dict[str, Any],
    *,
    via: str,
    action: str = "edit",
    restored_from: int | None = None,
    dates: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Apply `changes` to a doc locked by the caller; bump its version (the trigger keeps
    the previous one in doc_versions); re-chunk if needed. No change, no new version.
    `dates` ("created_at", "updated_at") an import carries replace now for the new version."""
    fields = {k: v for k, v in changes.items() if k in UPDATABLE and v != current.get(k)}
    if not fields:
        return current
    merged = {**current, **fields}
    fields["source_hash"] = source_hash(merged["title"], merged["markdown"])
    if "meta" in fields:
        fields["meta"] = Jsonb(fields["meta"])
    fields["saved_via"], fields["saved_action"], fields["restored_from"] = via, action, restored_from
    if dates and dates.get("created_at") is not None:
        fields["created_at"] = dates["created_at"]
    assignments = sql.SQL(", ").join(
        sql.SQL("{} = {}").format(sql.Identifier(name), sql.Placeholder(name)) for name in fields
    )
    row = await one_row(
        conn,
        sql.SQL("""UPDATE docs SET {}, version = version + 1, updated_at = coalesce(%(updated_at)s::timestamptz, now())
                   WHERE id = %(doc_id)s RETURNING {}""").format(assignments, DOC_COLUMNS),
        {**fields, "doc_id": current["id"], "updated_at": (dates or {}).get("updated_at")},
    )
    if {"title", "markdown", "hub_id", "source"} & fields.keys():
        counts = await sync_chunks(conn, row["id"], row["hub_id"], row["title"], row["markdown"], row["source"])
        if row["source_hash"] == current["source_hash"] and counts["added"]:
            # Same text, new chunks (the source switched how it is chunked): owed all the same,
            # or the new chunks would never get vectors.
            row = await one_row(
                conn,
                sql.SQL("UPDATE docs SET embedded_hash = NULL WHERE id = %s RETURNING {}").format(DOC_COLUMNS),
                (row["id"],),
            )
            await conn.execute(NOTIFY_OWED, (row["id"],))
    if "markdown" in fields:
        await sync_links(conn, row["id"], row["markdown"])
    if row["source_hash"] != current["source_hash"]:
        await conn.execute(NOTIFY_OWED, (row["id"],))
    return row


async def soft_delete(conn: Conn, doc_id: str, *, via: str) -> None:
    """Mark the doc deleted (a new version; its text stays, so its owner can restore it)."""
    await conn.execute(
        "UPDATE docs SET deleted_at = now(), version = version + 1, updated_at = now(),"
        " saved_via = %s, saved_action = 'delete', restored_from = NULL WHERE id = %s",
        (via, doc_id),
    )


# One save of a given content (or import id) per hub at a time: the second of two identical
# saves waits here for the first to commit, then finds its doc (two-key form: its own lock space).
SAVE_LOCK = "SELECT pg_advisory_xact_lock(%s::integer, hashtext(%s))"
CONTENT_LOCK_CLASS = 0x6D77  # "mw"
EXTERNAL_ID_LOCK_CLASS = 0x6D78


PRIVACY_COLUMNS = ("is_draft", "password_hash", "allowed_emails")


async def upsert_external(
    conn: Conn,
    *,
    hub_id: int,
    external_id: str,
    title: str,
    markdown: str,
    source: str | None,
    meta: dict[str, Any],
    is_draft: bool,
    edit_token_hash: str,
    via: str = "owner",
    privacy: dict[str, Any] | None = None,
    dates: dict[str, Any] | None = None,
    edit_token_member: int | None = None,
) -> tuple[dict[str, Any], str]:
    """Create or update the doc an importer knows by `external_id`.

    `privacy` holds the privacy columns the importer names (PRIVACY_COLUMNS): a new doc
    gets them, an existing one is set to them; a column it leaves out keeps what the doc has,
    so a re-imported conversation keeps the draft its owner made of it. `dates` (the page's
    created_at and updated_at where it came from) date the save, when it makes or changes one.

    Returns the row and "created", "updated", "unchanged" or "deleted" (a doc its owner
    deleted stays deleted: re-importing never resurrects it).
    """
    privacy = {k: v for k, v in (privacy or {}).items() if k in PRIVACY_COLUMNS}
    # without it two imports of one conversation at once both find nothing and both insert
    await conn.execute(SAVE_LOCK, (EXTERNAL_ID_LOCK_CLASS, f"{hub_id}:{external_id}"))
    existing = await find_by_external_id(conn, hub_id, external_id)
    if existing is None:
        row = await insert_doc(
            conn,
            hub_id=hub_id,
            title=title,
            markdown=markdown,
            source=source,
            meta=meta,
            external_id=external_id,
            is_draft=privacy.get("is_draft", is_draft),
            password_hash=privacy.get("password_hash"),
            allowed_emails=privacy.get("allowed_emails", []),
            edit_token_hash=edit_token_hash,
            via=via,
            action="import",
            dates=dates,
            edit_token_member=edit_token_member,
        )
        return row, "created"
    if existing["deleted_at"] is not None:
        return existing, "deleted"
    updated = await update_doc(
        conn,
        existing,
        {"title": title, "markdown": markdown, "source": source, "meta": meta, **privacy},
        via=via,
        action="import",
        dates=dates,
    )
    return updated, "updated" if updated["version"] != existing["version"] else "unchanged"


LIVE_BY_CONTENT = sql.SQL("""
SELECT {columns} FROM docs
WHERE hub_id = %s AND source_hash = %s AND deleted_at IS NULL
ORDER BY created_at LIMIT 1""").format(columns=DOC_COLUMNS)


async def find_same_content(conn: Conn, hub_id: int, title: str, markdown: str) -> dict[str, Any] | None:
    """The hub's live doc with exactly this title and body, holding a transaction lock on
    that content so a concurrent identical save waits instead of creating a twin."""
    digest = source_hash(title, markdown)
    await conn.execute(SAVE_LOCK, (CONTENT_LOCK_CLASS, f"{hub_id}:{digest}"))
    return await (await conn.execute(LIVE_BY_CONTENT, (hub_id, digest))).fetchone()


async def save_doc(
    conn: Conn,
    *,
    hub_id: int | None,
    external_id: str | None,
    title: str,
    markdown: str,
    source: str | None,
    meta: dict[str, Any],
    is_draft: bool,
    password_hash: str | None,
    allowed_emails: list[str],
    edit_token_hash: str,
    via: str,
    dedupe: bool = False,
    privacy: dict[str, Any] | None = None,
    dates: dict[str, Any] | None = None,
    edit_token_member: int | None = None,
) -> tuple[dict[str, Any], str]:
    """Insert a doc, or upsert it when it carries an importer's external id in a hub
    (`privacy`: the privacy columns the upsert names, `dates` an import's dates, see
    upsert_external; only such an upsert takes them).

    With `dedupe`, a hub that already holds a live doc with the same title and body gets
    that doc back with the status "exists" (importers and hubless docs never dedupe).
    """
    if hub_id is not None and external_id:
        return await upsert_external(
            conn,
            hub_id=hub_id,
            external_id=external_id,
            title=title,
            markdown=markdown,
            source=source,
            meta=meta,
            is_draft=is_draft,
            edit_token_hash=edit_token_hash,
            via=via,
            privacy=privacy,
            dates=dates,
            edit_token_member=edit_token_member,
        )
    if hub_id is not None and dedupe:
        existing = await find_same_content(conn, hub_id, title, markdown)
        if existing is not None:
            return existing, "exists"
    row = await insert_doc(
        conn,
        hub_id=hub_id,
        title=title,
        markdown=markdown,
        source=source,
        meta=meta,
        external_id=external_id,
        is_draft=is_draft,
        password_hash=password_hash,
        allowed_emails=allowed_emails,
        edit_token_hash=edit_token_hash,
        via=via,
        edit_token_member=edit_token_member,
    )
    return row, "created"


# ---- a hub taken out as files, and what an import asks first ---------------------------

# Every live doc of the hub (drafts and private ones too: callers proved the owner token),
# oldest first: the order its files are named in, so names are the same on every run.
EXPORT_TITLES = """
SELECT id, title, is_draft, password_hash IS NOT NULL AS has_password,
       cardinality(allowed_emails) > 0 AS has_people
FROM docs
WHERE hub_id = %s AND deleted_at IS NULL
ORDER BY created_at, id
"""

EXPORT_BATCH = """
SELECT id, title, markdown, source, meta, external_id, is_draft, password_hash, allowed_emails,
       version, created_at, updated_at
FROM docs
WHERE hub_id = %(hub)s AND deleted_at IS NULL AND (created_at, id) > (%(after_at)s, %(after_id)s)
ORDER BY created_at, id
LIMIT %(limit)s
"""


async def export_titles(conn: Conn, hub_id: int) -> list[dict[str, Any]]:
    """(id, title, and which gates apply) of every live doc of the hub, oldest first (owner pool)."""
    return await (await conn.execute(EXPORT_TITLES, (hub_id,))).fetchall()


async def export_batch(conn: Conn, hub_id: int, after: tuple[Any, str] | None, limit: int) -> list[dict[str, Any]]:
    """The next `limit` live docs of the hub after `after` ((created_at, id) of the last one
    read), whole, privacy columns included (owner pool)."""
    after_at, after_id = after or ("-infinity", "")
    return await (
        await conn.execute(EXPORT_BATCH, {"hub": hub_id, "after_at": after_at, "after_id": after_id, "limit": limit})
    ).fetchall()


# Which of these importer ids name a doc of the hub (by LOCK_BY_EXTERNAL_ID's rule).
LOOKUP_EXTERNAL = """
SELECT k.key AS external_id, d.id, d.deleted_at IS NOT NULL AS deleted, d.source_hash, d.source, d.meta,
       d.is_draft, d.password_hash, d.allowed_emails
FROM unnest(%(keys)s::text[]) AS k(key)
CROSS JOIN LATERAL (
    SELECT id, deleted_at, source_hash, source, meta, is_draft, password_hash, allowed_emails FROM docs
    WHERE hub_id = %(hub)s
      AND (external_id = k.key
           OR (starts_with(k.key, %(prefix)s) AND id = substr(k.key, %(skip)s) AND external_id IS NULL))
    ORDER BY external_id IS NULL
    LIMIT 1
) d
"""


async def lookup_external(conn: Conn, hub_id: int, keys: list[str]) -> list[dict[str, Any]]:
    """For each of `keys` that names a doc of the hub: its id, whether it is deleted, and what
    an import would set (source_hash, source, meta and the privacy columns)."""
    return await (
        await conn.execute(LOOKUP_EXTERNAL, {"hub": hub_id, "keys": keys, "prefix": OWN_ID, "skip": len(OWN_ID) + 1})
    ).fetchall()
