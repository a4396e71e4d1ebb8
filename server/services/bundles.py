"""Bundles: a curated reading order of docs in a hub, embedded as one vector."""

from __future__ import annotations

from typing import Any, TypedDict

from ..curation.markdown import analysis_markdown
from ..errors import BadRequest, not_found
from ..store import bundles as bundle_store
from ..store.connection import Conn
from ..tokens import looks_like_id, new_id
from . import curation, hubs, redaction
from .access import Access, Credentials
from .context import Context
from .urls import Urls

MAX_TITLE = 500
MAX_DESCRIPTION = 5000
EDITOR_PAGES = 1000  # the hub's newest pages the editor offers to add (any other by its id or URL)


class BundleRef(TypedDict):
    id: str
    url: str


class EditedBundle(BundleRef):
    redacted: dict[str, Any]  # what was redacted of its title and description (services/redaction.py)


class SavedBundle(EditedBundle):
    status: str  # "created", "updated" or "unchanged"


class DeletedBundle(TypedDict):
    id: str
    deleted: bool


class EditorPage(TypedDict):
    id: str
    title: str
    url: str
    visibility: str


class BundleEditor(TypedDict):
    bundle: dict[str, Any] | None  # the bundle's row; None for a new one
    hub_slug: str
    members: list[EditorPage]
    pages: list[EditorPage]  # the hub's live pages to choose from
    more_pages: bool


def _titled(texts: dict[str, str]) -> dict[str, str]:
    """The texts, or 400 when the title was nothing but a `<private>` span."""
    if "title" in texts:
        texts["title"] = texts["title"].strip()
        if not texts["title"]:
            raise BadRequest("missing_field", "'title' holds nothing but a <private> span")
    return texts


async def _check_members(conn: Conn, hub_id: int, doc_ids: list[str]) -> list[str]:
    if len(set(doc_ids)) != len(doc_ids):
        raise BadRequest("invalid_field", "'doc_ids' lists a doc twice")
    missing = await bundle_store.not_in_hub(conn, hub_id, doc_ids)
    if missing:
        raise BadRequest("unknown_doc", f"not a doc of this hub: {', '.join(sorted(missing))}")
    return doc_ids


async def create(
    ctx: Context,
    credentials: Credentials,
    urls: Urls,
    *,
    hub: str,
    title: str,
    description: str,
    doc_ids: list[str],
    external_id: str | None = None,
    dates: dict[str, Any] | None = None,
) -> SavedBundle:
    """A bundle of the hub's docs in this order (owner token). With an importer's
    `external_id`, the hub's live bundle known by it is set to this instead ("updated", or
    "unchanged" when it already was), dated by `dates` (created_at, updated_at) if given.
    Title and description are redacted as a page's text is (services/redaction.py)."""
    if dates and external_id is None:
        raise BadRequest(
            "missing_field", "'created_at' and 'updated_at' need an 'external_id': they are for importing a bundle"
        )
    access = Access(ctx.limits, credentials)
    prepared = await redaction.prepare_fields({"title": title, "description": description})

    async def save(conn: Conn) -> tuple[str, str, dict[str, Any]]:
        owned = await access.hub_owner(conn, hub)
        texts, redacted = await redaction.choose_fields(conn, prepared, owned["id"])
        title, description = _titled(texts)["title"], texts["description"]
        members = await _check_members(conn, owned["id"], doc_ids)
        existing = await bundle_store.find_by_external_id(conn, owned["id"], external_id) if external_id else None
        if existing is None:
            bundle_id = new_id()
            await bundle_store.insert_bundle(
                conn, bundle_id, owned["id"], title, description, members, external_id, dates
            )
            return bundle_id, "created", redacted
        wanted = {"title": title, "description": description}
        if wanted == {k: existing[k] for k in wanted} and list(existing["doc_ids"]) == members:
            return existing["id"], "unchanged", redacted
        await bundle_store.update_bundle(conn, existing["id"], wanted, members, dates)
        return existing["id"], "updated", redacted

    bundle_id, status, redacted = await ctx.db.write(save)
    if status != "unchanged":
        ctx.wake_worker()
    return {"id": bundle_id, "url": urls.bundle(bundle_id), "status": status, "redacted": redacted}


async def _owned_bundle(conn: Conn, access: Access, bundle_id: str) -> dict[str, Any]:
    if not looks_like_id(bundle_id):
        raise not_found("bundle")
    bundle = await bundle_store.lock_bundle(conn, bundle_id)
    if bundle is None:
        raise not_found("bundle")
    await access.hub_owner(conn, bundle["slug"])
    return bundle


async def edit(
    ctx: Context,
    credentials: Credentials,
    urls: Urls,
    bundle_id: str,
    changes: dict[str, Any],
    doc_ids: list[str] | None,
) -> EditedBundle:
    """Change title or description (`changes`, redacted as a page's text is) or the members
    (`doc_ids`, None: unchanged); the bundle alone is re-embedded."""
    access = Access(ctx.limits, credentials)
    prepared = await redaction.prepare_fields({k: changes[k] for k in ("title", "description") if k in changes})

    async def apply(conn: Conn) -> dict[str, Any]:
        bundle = await _owned_bundle(conn, access, bundle_id)
        texts, redacted = await redaction.choose_fields(conn, prepared, bundle["hub_id"])
        members = await _check_members(conn, bundle["hub_id"], doc_ids) if doc_ids is not None else None
        await bundle_store.update_bundle(conn, bundle_id, {**changes, **_titled(texts)}, members)
        return redacted

    redacted = await ctx.db.write(apply)
    ctx.wake_worker()
    return {"id": bundle_id, "url": urls.bundle(bundle_id), "redacted": redacted}


async def delete(ctx: Context, credentials: Credentials, bundle_id: str) -> DeletedBundle:
    """Delete a bundle (its hub's owner: the owner token or the owner signed in). The pages
    it listed stay as they are; the bundle leaves the hub page, its markdown, llms.txt,
    recall and its own URL at once."""
    access = Access(ctx.limits, credentials)

    async def remove(conn: Conn) -> None:
        await _owned_bundle(conn, access, bundle_id)
        await bundle_store.delete_bundle(conn, bundle_id)

    await ctx.db.write(remove)
    return {"id": bundle_id, "deleted": True}


async def read(
    ctx: Context, bundle_id: str, *, analysis: bool = False
) -> tuple[dict[str, Any], list[dict[str, Any]], str | None]:
    """The bundle, its public members in reading order (read as the public role) and, when
    asked for and there is one, its analysis as markdown."""
    if not looks_like_id(bundle_id):
        raise not_found("bundle")
    async with ctx.db.public.connection() as conn:
        bundle, members = await bundle_store.public_bundle(conn, bundle_id)
    if bundle is None:
        raise not_found("bundle")
    found = await curation.bundle_analysis(ctx, bundle["id"]) if analysis else None
    return bundle, members, analysis_markdown(found) if found else None


async def for_editor(
    ctx: Context, credentials: Credentials, urls: Urls, *, bundle_id: str | None = None, slug: str | None = None
) -> BundleEditor:
    """What the bundle editor shows its hub's owner: the bundle (None for a new one in hub
    `slug`), all its live members in order, and every live page of the hub to choose from,
    each with its visibility. Anyone else gets 401 or 403, never a member's title."""
    access = Access(ctx.limits, credentials)
    bundle: dict[str, Any] | None = None
    members: list[dict[str, Any]] = []
    if bundle_id is not None:
        if not looks_like_id(bundle_id):
            raise not_found("bundle")
        async with ctx.db.owner.connection() as conn:
            found = await bundle_store.find_bundle_hub(conn, bundle_id)
            if found is None:
                raise not_found("bundle")
            await access.hub_owner(conn, found["slug"])
            bundle, members = await bundle_store.owner_bundle(
                conn, bundle_id, credentials.bearer_hash, credentials.session_hashes
            )
        if bundle is None:
            raise not_found("bundle")
        slug = bundle["hub_slug"]
    elif slug is None:
        raise not_found("hub")
    else:
        async with ctx.db.owner.connection() as conn:
            await access.hub_owner(conn, slug)
    hub = await hubs.contents(ctx, urls, slug, per_page=EDITOR_PAGES, credentials=credentials)
    return {
        "bundle": bundle,
        "hub_slug": slug,
        "members": [
            {"id": m["id"], "title": m["title"], "url": urls.doc(m["id"]), "visibility": m["visibility"]}
            for m in members
        ],
        "pages": [
            {"id": d["id"], "title": d["title"], "url": d["url"], "visibility": d["visibility"]} for d in hub["docs"]
        ],
        "more_pages": hub["total_docs"] > len(hub["docs"]),
    }
