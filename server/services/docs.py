"""Docs: save, read as the reader may see them, edit, delete, and access tokens for restricted docs."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any, NotRequired, TypedDict

from memorywiki.formats.mdutil import split_title

from ..errors import BadRequest, Conflict, Forbidden, not_found
from ..store import access as access_store
from ..store import docs as doc_store
from ..store import graph as graph_store
from ..store import hubs as hub_store
from ..store.connection import Conn
from ..tokens import acceptable_password_hash, hash_password, hash_token, looks_like_id, new_token, verify_password
from . import redaction, sharing
from .access import ANONYMOUS, Access, Credentials
from .context import Context
from .urls import Urls

MAX_TITLE = 500
MAX_SOURCE = 200


@dataclass(frozen=True)
class NewDoc:
    """A page to save, its title and body already through `page_content`."""

    title: str
    markdown: str
    hub: str | None = None
    source: str | None = None
    meta: dict[str, Any] = field(default_factory=dict)
    is_draft: bool = False
    password: str | None = None
    allowed_emails: list[str] = field(default_factory=list)
    external_id: str | None = None
    dedupe: bool = True
    password_hash: str | None = None  # an export's argon2 hash, instead of a password
    # the privacy fields the request named ("is_draft", "password", "password_hash",
    # "allowed_emails"): an upsert by external_id sets these and leaves the others as they are
    named: frozenset[str] = frozenset()
    # "created_at", "updated_at": an import's dates from the server the page came from
    dates: dict[str, Any] = field(default_factory=dict)


def page_content(
    title: str | None, markdown: str, *, max_title: int, default_title: str | None = None
) -> tuple[str, str]:
    """A page's title and body as stored, the same for every way a page comes in.

    The title rule (`split_title`) runs first; then a page needs a title and some text:
    a page with an empty body is refused, whether it is sent to the API or by the CLI.
    """
    title, body = split_title(title, markdown)
    title = title or default_title
    if not title:
        raise BadRequest("missing_field", "'title' is required (or open 'markdown' with a `# Title` line)")
    if len(title) > max_title:
        raise BadRequest("invalid_field", f"'title' is longer than {max_title} characters")
    if not body.strip():
        said = "holds nothing but its title" if markdown.strip() else "is empty"
        raise BadRequest("empty_markdown", f"'markdown' {said}: a page needs some text")
    return title, body


class DocJson(TypedDict):
    id: str
    url: str
    title: str
    markdown: str
    hub: str | None
    source: str | None
    meta: dict[str, Any]
    version: int
    created_at: str
    updated_at: str
    # the owner's view
    is_draft: NotRequired[bool]
    has_password: NotRequired[bool]
    allowed_emails: NotRequired[list[str]]
    indexed: NotRequired[bool]


class Told(TypedDict, total=False):
    sharing: dict[str, Any]  # what the save told the page's people (services/sharing.py)


class EditedDoc(DocJson, Told):
    redacted: dict[str, Any]  # what was redacted (services/redaction.py)


class SavedDoc(TypedDict):
    id: str
    url: str
    version: int
    status: str  # "created", "updated", "unchanged" or "exists"
    edit_token: str | None  # only when the save created the doc
    message: NotRequired[str]  # "exists": where it was captured already


class CreatedDoc(SavedDoc, Told):
    redacted: dict[str, Any]


class DeletedDoc(TypedDict):
    id: str
    deleted: bool


class AccessGrant(TypedDict):
    access_token: str
    email: str
    url: str


def doc_json(urls: Urls, doc: dict[str, Any], hub_slug: str | None, *, owner_view: bool) -> DocJson:
    body: DocJson = {
        "id": doc["id"],
        "url": urls.doc(doc["id"]),
        "title": doc["title"],
        "markdown": doc["markdown"],
        "hub": hub_slug,
        "source": doc.get("source"),
        "meta": doc.get("meta") or {},
        "version": doc["version"],
        "created_at": doc["created_at"].isoformat(),
        "updated_at": doc["updated_at"].isoformat(),
    }
    if owner_view:
        body["is_draft"] = doc["is_draft"]
        body["has_password"] = doc["password_hash"] is not None
        body["allowed_emails"] = doc["allowed_emails"]
        body["indexed"] = doc["embedded_hash"] == doc["source_hash"]
    return body


def already_captured(urls: Urls, doc_id: str) -> str:
    return f'already captured as {urls.doc(doc_id)}; send "dedupe": false for a separate page'


def saved_json(urls: Urls, doc: dict[str, Any], status: str, edit_token: str) -> SavedDoc:
    """What a save answers: the edit token only when the doc was created by it."""
    body: SavedDoc = {
        "id": doc["id"],
        "url": urls.doc(doc["id"]),
        "version": doc["version"],
        "status": status,
        "edit_token": edit_token if status == "created" else None,
    }
    if status == "exists":
        body["message"] = already_captured(urls, doc["id"])
    return body


async def create(ctx: Context, credentials: Credentials, urls: Urls, new: NewDoc) -> CreatedDoc:
    """Save a page: a new doc, the hub's doc with this importer id, or (with `dedupe`) the
    hub's live doc that already holds this content."""
    if new.external_id is not None and not new.hub:
        raise BadRequest("missing_field", "'external_id' needs a 'hub': ids are unique per hub")
    if new.dates and new.external_id is None:
        raise BadRequest(
            "missing_field",
            "'created_at' and 'updated_at' need an 'external_id': they are for importing a page into a hub you own",
        )
    password_hash = _carried_hash(new) or (hash_password(new.password) if new.password else None)
    access = Access(ctx.limits, credentials)
    edit_token = new_token("mwe")
    prepared = await redaction.prepare(
        redaction.Page(title=new.title, markdown=new.markdown, source=new.source, meta=new.meta)
    )

    async def save(conn: Conn) -> tuple[dict[str, Any], str, sharing.Invited, dict[str, Any]]:
        writer = await access.hub_writer(conn, new.hub) if new.hub else ANONYMOUS
        hub, via = writer.hub, writer.via
        if new.dates and via != "owner":
            raise Forbidden("forbidden", "only the hub's owner may date an imported page")
        privacy = await _named_privacy(conn, hub, new, password_hash)
        chosen = await redaction.choose(conn, prepared, hub["id"] if hub else None)
        page = chosen.page
        doc, status = await doc_store.save_doc(
            conn,
            hub_id=hub["id"] if hub else None,
            external_id=new.external_id,
            title=page.title if page.title is not None else new.title,
            markdown=page.markdown if page.markdown is not None else new.markdown,
            source=page.source,
            meta=page.meta if page.meta is not None else new.meta,
            is_draft=new.is_draft,
            password_hash=password_hash,
            allowed_emails=new.allowed_emails,
            edit_token_hash=hash_token(edit_token),
            edit_token_member=writer.member_id,
            via=via,
            dedupe=new.dedupe,
            privacy=privacy,
            dates=new.dates,
        )
        # an import brings a page as it was, its people told already: it mails nobody
        invited = await sharing.invite(ctx, credentials, conn, urls, doc["id"], mail=new.external_id is None)
        return doc, status, invited, chosen.report

    doc, status, invited, redacted = await ctx.db.write(save)
    ctx.wake_worker()
    # an import's answer stays as it was: it told nobody
    told = _tell(ctx, doc, invited, named="allowed_emails" in new.named) if new.external_id is None else {}
    return {**saved_json(urls, doc, status, edit_token), "redacted": redacted, **told}


def _tell(ctx: Context, doc: dict[str, Any], invited: sharing.Invited, *, named: bool) -> Told:
    """What the save told the page's people, for its answer (when the request named them, or
    someone was newly told), and send the mail queued."""
    if invited.mailed:
        ctx.wake_mail()
    if named or invited.mailed or invited.unmailed or invited.held_back:
        return {"sharing": sharing.sharing_note(ctx, doc, invited)}
    return {}


def _carried_hash(new: NewDoc) -> str | None:
    """The argon2 hash an import carries, once it is one this server may check guesses with."""
    if new.password_hash is None:
        return None
    if new.password:
        raise BadRequest("invalid_field", "send 'password' or 'password_hash', not both")
    if not new.hub:
        raise BadRequest("missing_field", "'password_hash' needs a 'hub': it is for importing into a hub you own")
    if not acceptable_password_hash(new.password_hash):
        raise BadRequest(
            "invalid_field",
            "'password_hash' must be an argon2id hash no costlier to check than this "
            "server's own (as an export carries it)",
        )
    return new.password_hash


async def _named_privacy(
    conn: Conn, hub: dict[str, Any] | None, new: NewDoc, password_hash: str | None
) -> dict[str, Any]:
    """The privacy columns an upsert by external_id sets (store/docs.py, upsert_external).
    A password sent again as text keeps the doc's hash when it still matches: a fresh salt
    would make every re-import a new version."""
    if hub is None or new.external_id is None:
        return {}
    privacy: dict[str, Any] = {}
    if "is_draft" in new.named:
        privacy["is_draft"] = new.is_draft
    if "allowed_emails" in new.named:
        privacy["allowed_emails"] = new.allowed_emails
    if new.named & {"password", "password_hash"}:
        privacy["password_hash"] = password_hash
        if new.password:
            current = await doc_store.find_by_external_id(conn, hub["id"], new.external_id)
            if current and current["password_hash"] and verify_password(current["password_hash"], new.password):
                privacy["password_hash"] = current["password_hash"]
    return privacy


@dataclass(frozen=True)
class Reading:
    """A doc as a reader may see it, and the connection it was read on (read more of it there)."""

    conn: Conn
    doc: dict[str, Any]
    access: Access
    private: bool  # read on the owner pool: the credentials proved they may read it


@contextlib.asynccontextmanager
async def reading(
    ctx: Context, credentials: Credentials, doc_id: str, *, deleted: bool = False
) -> AsyncIterator[Reading]:
    """The read rule of a page, private or public. Credentials are checked one by one on the
    owner pool (Access.can_read_private; with `deleted`, a deleted doc too, for its hub's owner:
    Access.owns_deleted); without them, or when they open nothing, the read runs on the public
    pool, where row-level security decides. A doc neither shows is a 404, or the refusal of the
    credentials given. Whatever else is read of the doc is read on the connection yielded, so
    the public pool's row-level security covers it too."""
    access = Access(ctx.limits, credentials)
    if credentials.given:
        async with ctx.db.owner.connection() as conn:
            doc = await (doc_store.find_any_doc if deleted else doc_store.find_doc)(conn, doc_id)
            if doc is not None and await _may_read(conn, access, doc):
                yield Reading(conn, doc, access, private=True)
                return
    async with ctx.db.public.connection() as conn:
        doc = await doc_store.public_doc(conn, doc_id)
        if doc is None:
            if credentials.given:
                await access.refused()
            raise not_found("doc")
        yield Reading(conn, doc, access, private=False)


async def _may_read(conn: Conn, access: Access, doc: dict[str, Any]) -> bool:
    if doc["deleted_at"] is not None:
        return await access.owns_deleted(conn, doc)
    return await access.can_read_private(conn, doc)


async def readable(ctx: Context, credentials: Credentials, doc_id: str) -> tuple[dict[str, Any], bool]:
    """The doc as these credentials may see it (`reading`), and whether they see it as an editor."""
    if not looks_like_id(doc_id):
        raise not_found("doc")
    async with reading(ctx, credentials, doc_id) as read:
        if not read.private:
            return read.doc, False
        read.doc["hub_slug"] = await hub_store.hub_slug(read.conn, read.doc["hub_id"])
        return read.doc, await read.access.can_edit(read.conn, read.doc)


async def read(ctx: Context, credentials: Credentials, urls: Urls, doc_id: str) -> DocJson:
    """The doc as JSON; its private fields only for a credential that may edit it."""
    doc, owner_view = await readable(ctx, credentials, doc_id)
    return doc_json(urls, doc, doc.get("hub_slug"), owner_view=owner_view)


async def _lock_for_edit(conn: Conn, access: Access, doc_id: str) -> tuple[dict[str, Any], str]:
    """The doc, row-locked for this transaction, once the credentials proved they may edit
    it, and the credential that proved it ("owner" or "edit_token")."""
    doc = await doc_store.lock_doc(conn, doc_id)
    if doc is None:
        raise not_found("doc")
    return doc, await access.require_edit(conn, doc)


def check_version(doc: dict[str, Any], expected: int | None) -> None:
    """409 when the doc moved on since the caller read it. The body carries the current
    version (number, title, markdown, updated_at), so an editor can show both sides; only
    callers that proved they may edit the doc get here."""
    if expected is None or expected == doc["version"]:
        return
    raise Conflict(
        "version_conflict",
        f"the doc is at version {doc['version']}, not {expected}; reload and retry",
        expected=expected,
        current={
            "version": doc["version"],
            "title": doc["title"],
            "markdown": doc["markdown"],
            "updated_at": doc["updated_at"].isoformat(),
        },
    )


def _apply_title_rule(doc: dict[str, Any], changes: dict[str, Any]) -> None:
    """The title rule for an edit: a new body is checked like a new page; a rename alone
    only drops a body heading that now repeats the title (never empties a page)."""
    if "markdown" in changes:
        changes["title"], changes["markdown"] = page_content(
            changes.get("title", doc["title"]), changes["markdown"], max_title=MAX_TITLE
        )
    elif "title" in changes:
        _, body = split_title(changes["title"], doc["markdown"])
        if body.strip() and body != doc["markdown"]:
            changes["markdown"] = body


MOVE = "hub"  # the key of `changes` that moves the doc: a hub's slug, or None for no hub


async def edit(
    ctx: Context, credentials: Credentials, urls: Urls, doc_id: str, changes: dict[str, Any], expected: int | None
) -> EditedDoc:
    """Apply `changes` (doc columns; "password" as plain text, None or "" to clear it; "hub"
    as a slug) if the doc is still at `expected`; the doc as saved."""
    access = Access(ctx.limits, credentials)
    columns = {k: v for k, v in changes.items() if k not in ("password", MOVE)}
    if "password" in changes:
        columns["password_hash"] = hash_password(changes["password"]) if changes["password"] else None
    prepared = await redaction.prepare(
        redaction.Page(
            title=changes.get("title"),
            markdown=changes.get("markdown"),
            source=changes.get("source"),
            meta=changes.get("meta"),
        )
    )

    async def apply(conn: Conn) -> tuple[dict[str, Any], str | None, sharing.Invited, dict[str, Any]]:
        doc, via = await _lock_for_edit(conn, access, doc_id)
        wanted = dict(columns)  # a retried run starts again from the request's own changes
        if MOVE in changes:
            wanted["hub_id"] = await access.require_move(conn, doc, via, changes[MOVE])
        check_version(doc, expected)
        chosen = await redaction.choose(conn, prepared, wanted.get("hub_id", doc["hub_id"]))
        wanted = redaction.merged(chosen.page, wanted)
        _apply_title_rule(doc, wanted)
        updated = await doc_store.update_doc(conn, doc, wanted, via=via)
        if updated["hub_id"] != doc["hub_id"]:  # its neighbours are in the new hub now
            await graph_store.refresh_doc_edges(conn, doc_id, ctx.settings.edge_rule)
        invited = await sharing.invite(ctx, credentials, conn, urls, doc_id)
        return updated, await hub_store.hub_slug(conn, updated["hub_id"]), invited, chosen.report

    updated, slug, invited, redacted = await ctx.db.write(apply)
    ctx.wake_worker()
    told = _tell(ctx, updated, invited, named="allowed_emails" in changes)
    return {**doc_json(urls, updated, slug, owner_view=True), "redacted": redacted, **told}


async def delete(ctx: Context, credentials: Credentials, doc_id: str) -> DeletedDoc:
    """Soft delete: the doc leaves every public read at once; its owner can restore it."""
    access = Access(ctx.limits, credentials)

    async def remove(conn: Conn) -> None:
        _, via = await _lock_for_edit(conn, access, doc_id)
        await doc_store.soft_delete(conn, doc_id, via=via)

    await ctx.db.write(remove)
    return {"id": doc_id, "deleted": True}


async def issue_access(ctx: Context, credentials: Credentials, urls: Urls, doc_id: str, email: str) -> AccessGrant:
    """The owner of an email-restricted doc gives one of its allowed readers an access token."""
    access = Access(ctx.limits, credentials)
    token = new_token("mwa")

    async def issue(conn: Conn) -> None:
        doc, _ = await _lock_for_edit(conn, access, doc_id)
        if email not in doc["allowed_emails"]:
            raise BadRequest("not_allowed", f"{email} is not in this doc's allowed_emails")
        await access_store.issue(conn, hash_token(token), doc_id, email)

    await ctx.db.write(issue)
    return {"access_token": token, "email": email, "url": f"{urls.doc(doc_id)}?access={token}"}


async def for_editor(ctx: Context, doc_id: str, credentials: Credentials | None = None) -> dict[str, Any]:
    """What the editor page may show without a token: a public doc whole; of a private one,
    only that it exists (the page's script fetches it with the browser's token). With the
    browser's cookie `credentials`: "reader", the address of the reader it signed in as when
    that is all it holds for the doc (the page then offers no editor)."""
    if not looks_like_id(doc_id):
        raise not_found("doc")
    if credentials is not None and credentials.sessions:
        async with ctx.db.owner.connection() as conn:
            doc = await doc_store.find_doc(conn, doc_id)
            access = Access(ctx.limits, credentials)
            if doc is not None and doc["allowed_emails"] and not await access.can_edit(conn, doc):
                reader = await access.reader_email(conn, doc)
                if reader is not None:
                    return {"id": doc_id, "private": True, "reader": reader}
    async with ctx.db.public.connection() as conn:
        public = await doc_store.public_doc(conn, doc_id)
    if public is not None:
        return {**public, "private": False}
    async with ctx.db.owner.connection() as conn:
        if await doc_store.find_doc(conn, doc_id) is None:
            raise not_found("doc")
    return {"id": doc_id, "private": True}
