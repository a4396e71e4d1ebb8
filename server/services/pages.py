"""What a doc's page shows: the doc as the reader may see it, its curation, and what links to it."""

from __future__ import annotations

from typing import Any

from ..errors import NotFound
from ..store import bundles as bundle_store
from ..store import docs as doc_store
from ..store import links as link_store
from ..tokens import looks_like_id
from . import curation, docs, sharing
from .access import Access, Credentials
from .context import Context
from .urls import Urls

RELATED = 5


class PasswordRequired(NotFound):
    """The doc is not found for these credentials, and its password would open it: a browser
    gets the password form, anyone else the plain 404."""


class SharedWithPeople(NotFound):
    """The doc is not found for these credentials, and it is shared with specific people: a
    browser gets the page that says so (nothing of the doc) with the sign-in form, anyone
    else the plain 404."""

    def __init__(self, code: str, message: str, shared: dict[str, Any]):
        super().__init__(code, message)
        self.shared = shared


async def doc_markdown_view(
    ctx: Context, credentials: Credentials, urls: Urls, doc_id: str, *, curated: bool = True
) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """The readable doc and, with curation on and `curated`, its curation view."""
    doc, _ = await docs.readable(ctx, credentials, doc_id)
    view = await curation.doc_view(ctx, urls, doc) if curated and ctx.settings.curation else None
    return doc, view


async def _password_protected(ctx: Context, doc_id: str) -> bool:
    if not looks_like_id(doc_id):
        return False
    async with ctx.db.owner.connection() as conn:
        return await doc_store.is_password_protected(conn, doc_id)


async def doc_page_view(ctx: Context, credentials: Credentials, urls: Urls, doc_id: str) -> dict[str, Any]:
    """Everything the doc's HTML page shows around the body: its curation and related docs
    (curation on), the public docs linking here and the public bundles holding it (both read
    as the public role, so a private doc shows none). Raises PasswordRequired when only
    the doc's password would open it."""
    try:
        doc, editor = await docs.readable(ctx, credentials, doc_id)
    except NotFound as exc:
        if await _password_protected(ctx, doc_id):
            raise PasswordRequired(exc.code, exc.message) from None
        shared = await sharing.shared_with_people(ctx, doc_id)
        if shared is not None:
            raise SharedWithPeople(exc.code, exc.message, shared) from None
        raise
    view = await curation.doc_view(ctx, urls, doc) if ctx.settings.curation else None
    related = await curation.related_docs(ctx, urls, doc["id"], RELATED) if view is not None else []
    reader = None  # read as a person it is shared with, who may not edit it: no edit control
    if credentials.sessions and doc.get("allowed_emails") and not editor:
        async with ctx.db.owner.connection() as conn:
            reader = await Access(ctx.limits, credentials).reader_email(conn, doc)
    async with ctx.db.public.connection() as conn:
        _, inbound = await link_store.doc_cross_refs(conn, doc["id"], list(urls.hosts))
        bundles = await bundle_store.bundles_containing(conn, doc["id"])
    return {
        "doc": doc,
        "curation": view,
        "related": related,
        "reader": reader,
        "linked_from": [{"title": d["title"], "url": urls.doc(d["id"]), "hub": d["hub_slug"]} for d in inbound],
        "bundles": [{"title": b["title"], "url": urls.bundle(b["id"])} for b in bundles],
    }
