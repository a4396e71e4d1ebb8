"""Version history: list a doc's versions, read one, restore one, diff two.

Versions are read by the people who can read the doc, and each keeps the privacy it was
written under: without credentials the reads run on the public pool, where row-level security
shows the versions that were public, of a doc that is public; with credentials they are
checked on the owner pool, as for the doc itself, and someone who reads the doc but may not
edit it (a password, an access link, a reader) sees the versions that were public or shared
as the doc is now, never a draft's. Its editors see every version. A deleted doc's versions
are readable, and restorable, by its hub's owner only (Access.require_restore).
A restore is a new version made from an old one's title, markdown and meta (privacy
settings and the hub stay as they are now), re-indexed like any edit.
"""

from __future__ import annotations

import contextlib
import difflib
from collections.abc import AsyncIterator
from typing import Any, TypedDict

from ..errors import BadRequest, Conflict, NotFound, not_found
from ..store import docs as doc_store
from ..store import hubs as hub_store
from ..store import versions as version_store
from ..store.connection import Conn
from ..tokens import looks_like_id
from . import redaction
from .access import Access, Credentials
from .context import Context
from .docs import DocJson, check_version, doc_json, reading
from .urls import Urls

MAX_VERSION = 2**31 - 1  # docs.version is an integer column
DIFF_CONTEXT = 3
MAX_DIFF_LINES = 5000  # a diff longer than this is cut, with a note (the twin has the texts)


def unknown_version(doc_id: str, number: int) -> NotFound:
    return NotFound(
        "unknown_version", f"doc {doc_id} has no version {number}; GET /api/docs/{doc_id}/versions lists them"
    )


PUBLIC_ONLY = ["public"]


class VersionEntry(TypedDict):
    version: int
    saved_at: str
    size: int  # bytes of its markdown
    title: str
    via: str | None  # the credential that saved it
    action: str
    restored_from: int | None
    deleted: bool
    current: bool


class VersionList(TypedDict):
    id: str
    url: str
    version: int
    deleted: bool
    versions: list[VersionEntry]  # newest first


class VersionText(VersionEntry):
    id: str
    markdown: str
    meta: dict[str, Any]
    source: str | None


class Restored(DocJson):
    restored_from: int
    changed: bool  # False when the text already was that version's
    redacted: dict[str, Any]


class History(TypedDict):
    """What the history page shows: the doc's row, its versions (rows, newest first), the
    two versions compared and the diff's (kind, line) pairs."""

    doc: dict[str, Any]
    versions: list[dict[str, Any]]
    a: int
    b: int
    diff: list[tuple[str, str]]
    cut: bool
    reader: str | None


def visibility(doc: dict[str, Any]) -> str:
    """Who may read the doc now, in one word: doc_visibility() of functions/70_owner.sql."""
    if doc["is_draft"]:
        return "draft"
    if doc["password_hash"] is not None:
        return "password"
    return "people" if doc["allowed_emails"] else "public"


async def _versions_visible(conn: Conn, access: Access, doc: dict[str, Any]) -> list[str] | None:
    """Which versions of a doc these credentials proved they may read (docs.reading) they see
    (None: all of them): a deleted doc's owner and its editors see all."""
    if doc["deleted_at"] is not None or await access.can_edit(conn, doc):
        return None
    return sorted({"public", visibility(doc)})


@contextlib.asynccontextmanager
async def _readable_doc(
    ctx: Context, credentials: Credentials, doc_id: str
) -> AsyncIterator[tuple[Conn, dict[str, Any], list[str] | None]]:
    """(connection, doc, the versions' visibilities these credentials see) for a doc they may
    read, deleted ones too (docs.reading); its versions are read on that connection, so the
    public pool's row-level security covers them too."""
    async with reading(ctx, credentials, doc_id, deleted=True) as read:
        if read.private:
            yield read.conn, read.doc, await _versions_visible(read.conn, read.access, read.doc)
        else:
            yield read.conn, {**read.doc, "deleted_at": None}, PUBLIC_ONLY


def _entry(row: dict[str, Any], *, current: bool) -> VersionEntry:
    return {
        "version": row["version"],
        "saved_at": row["saved_at"].isoformat(),
        "size": row["size"],
        "title": row["title"],
        "via": row["saved_via"],
        "action": row["saved_action"],
        "restored_from": row["restored_from"],
        "deleted": row["deleted"],
        "current": current,
    }


def _current_entry(doc: dict[str, Any]) -> dict[str, Any]:
    return {
        **doc,
        "saved_at": doc["updated_at"],
        "size": len(doc["markdown"].encode("utf-8")),
        "deleted": doc["deleted_at"] is not None,
    }


async def list_versions(ctx: Context, credentials: Credentials, urls: Urls, doc_id: str) -> VersionList:
    """A readable doc's versions, newest first, the current one marked."""
    async with _readable_doc(ctx, credentials, doc_id) as (conn, doc, visible):
        rows = await version_store.list_versions(conn, doc_id, visible)
    versions = [_entry(_current_entry(doc), current=True)]
    versions += [_entry(row, current=False) for row in rows if row["version"] != doc["version"]]
    return {
        "id": doc_id,
        "url": urls.doc(doc_id),
        "version": doc["version"],
        "deleted": doc["deleted_at"] is not None,
        "versions": versions,
    }


async def get_version(ctx: Context, credentials: Credentials, doc_id: str, number: int) -> VersionText:
    """One version of a readable doc, with its markdown."""
    async with _readable_doc(ctx, credentials, doc_id) as (conn, doc, visible):
        current = number == doc["version"]
        row = _current_entry(doc) if current else await version_store.get_version(conn, doc_id, number, visible)
    if row is None:
        raise unknown_version(doc_id, number)
    return {
        "id": doc_id,
        **_entry(row, current=current),
        "markdown": row["markdown"],
        "meta": row["meta"] or {},
        "source": row["source"],
    }


async def _bring_back(
    conn: Conn, via: str, doc: dict[str, Any], number: int
) -> tuple[dict[str, Any], str | None, dict[str, Any]]:
    """A new version of the locked doc with version `number`'s title, markdown and meta (live
    again if it was deleted), saved through the credential `via`; the doc as saved, its hub,
    and what was redacted: a version saved before secrets were redacted is redacted now, so
    restoring it never publishes them again."""
    old = doc if number == doc["version"] else await version_store.get_version(conn, doc["id"], number)
    if old is None:
        raise unknown_version(doc["id"], number)
    chosen = await redaction.redact_in(
        conn, redaction.Page(title=old["title"], markdown=old["markdown"], meta=old["meta"] or {}), doc["hub_id"]
    )
    changes = redaction.merged(chosen.page, {"deleted_at": None})
    updated = await doc_store.update_doc(conn, doc, changes, via=via, action="restore", restored_from=number)
    return updated, await hub_store.hub_slug(conn, updated["hub_id"]), chosen.report


def _restored(
    urls: Urls,
    doc: dict[str, Any],
    updated: dict[str, Any],
    slug: str | None,
    number: int,
    redacted: dict[str, Any],
) -> Restored:
    return {
        **doc_json(urls, updated, slug, owner_view=True),
        "restored_from": number,
        "changed": updated["version"] != doc["version"],
        "redacted": redacted,
    }


async def restore(
    ctx: Context, credentials: Credentials, urls: Urls, doc_id: str, number: int, expected: int | None
) -> Restored:
    """A new version with that version's title, markdown and meta, if the doc is still at `expected`."""
    access = Access(ctx.limits, credentials)

    async def restore_in(conn: Conn) -> tuple[dict[str, Any], dict[str, Any], str | None, dict[str, Any]]:
        doc = await doc_store.lock_any_doc(conn, doc_id)
        if doc is None:
            raise not_found("doc")
        via = await access.require_restore(conn, doc)
        check_version(doc, expected)
        return (doc, *await _bring_back(conn, via, doc, number))

    doc, updated, slug, redacted = await ctx.db.write(restore_in)
    ctx.wake_worker()
    return _restored(urls, doc, updated, slug, number, redacted)


async def undelete(ctx: Context, credentials: Credentials, urls: Urls, doc_id: str) -> Restored:
    """Bring a deleted doc back, as a new version holding the text it had when it was deleted
    (its owner only, as for any restore of a deleted doc)."""
    access = Access(ctx.limits, credentials)

    async def undelete_in(conn: Conn) -> tuple[dict[str, Any], int, dict[str, Any], str | None, dict[str, Any]]:
        doc = await doc_store.lock_any_doc(conn, doc_id)
        if doc is None:
            raise not_found("doc")
        via = await access.require_restore(conn, doc)
        if doc["deleted_at"] is None:
            raise Conflict("not_deleted", f"doc {doc_id} is not deleted: there is nothing to undelete")
        number = await version_store.last_live_version(conn, doc_id) or doc["version"]
        return (doc, number, *await _bring_back(conn, via, doc, number))

    doc, number, updated, slug, redacted = await ctx.db.write(undelete_in)
    ctx.wake_worker()
    return _restored(urls, doc, updated, slug, number, redacted)


def _page_versions(doc: dict[str, Any], rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    current = {
        "version": doc["version"],
        "saved_at": doc["updated_at"],
        "size": len(doc["markdown"].encode()),
        "title": doc["title"],
        "saved_action": "current",
        "saved_via": doc.get("saved_via"),
        "restored_from": None,
        "current": True,
    }
    return [current] + [{**r, "current": False} for r in rows if r["version"] != doc["version"]]


def diff_lines(old: str, new: str) -> tuple[list[tuple[str, str]], bool]:
    """(kind, line) of a unified diff, kind in hunk/add/del/same; and whether it was cut."""
    out: list[tuple[str, str]] = []
    lines = difflib.unified_diff(old.splitlines(), new.splitlines(), lineterm="", n=DIFF_CONTEXT)
    for i, line in enumerate(lines):
        if i < 2:  # the ---/+++ header
            continue
        if len(out) >= MAX_DIFF_LINES:
            return out, True
        kind = (
            "hunk"
            if line.startswith("@@")
            else "add"
            if line.startswith("+")
            else "del"
            if line.startswith("-")
            else "same"
        )
        out.append((kind, line))
    return out, False


async def _text(conn: Conn, doc: dict[str, Any], number: int, visible: list[str] | None) -> dict[str, Any] | None:
    if number == doc["version"]:
        return {"title": doc["title"], "markdown": doc["markdown"]}
    return await version_store.get_version(conn, doc["id"], number, visible)


async def history(ctx: Context, credentials: Credentials, doc_id: str, a: int | None, b: int | None) -> History:
    """A readable doc, its versions (newest first) and the diff between versions `a` and `b`
    (default: the previous version and the current one). Without credentials it is read as the
    public role; a browser's session (its owner, or a reader the doc is shared with) reads
    what it may read, as for the doc itself."""
    if not looks_like_id(doc_id):
        raise not_found("doc")
    async with _readable_doc(ctx, credentials, doc_id) as (conn, doc, visible):
        reader = await _reader_only(conn, Access(ctx.limits, credentials), doc)
        versions = _page_versions(doc, await version_store.list_versions(conn, doc_id, visible))
        numbers = [v["version"] for v in versions]
        a = a if a is not None else numbers[1] if len(numbers) > 1 else doc["version"]
        b = b if b is not None else doc["version"]
        old, new = await _text(conn, doc, a, visible), await _text(conn, doc, b, visible)
        if "hub_slug" not in doc:
            doc = {**doc, "hub_slug": await hub_store.hub_slug(conn, doc["hub_id"])}
    missing = [n for n, text in ((a, old), (b, new)) if text is None]
    if missing:
        raise BadRequest(
            "unknown_version", f"this page has no version {missing[0]}; its versions: " + ", ".join(map(str, numbers))
        )
    assert old is not None and new is not None  # neither is missing (above)
    lines, cut = diff_lines(f"# {old['title']}\n\n{old['markdown']}", f"# {new['title']}\n\n{new['markdown']}")
    return {"doc": doc, "versions": versions, "a": a, "b": b, "diff": lines, "cut": cut, "reader": reader}


async def _reader_only(conn: Conn, access: Access, doc: dict[str, Any]) -> str | None:
    """The address of the reader this browser signed in as, when that is what opened the doc
    and nothing it holds may edit it (the page then offers no restore or edit); else None."""
    if not access.credentials.sessions or not doc.get("allowed_emails"):
        return None
    if await access.can_edit(conn, doc):
        return None
    return await access.reader_email(conn, doc)
