"""Hubs: create one, list or describe it, and read its public docs and bundles (and search them)."""

from __future__ import annotations

import math
import re
from collections.abc import AsyncIterator
from typing import Any, NotRequired, TypedDict

from memorywiki.formats.mdutil import plain_text, summary

from ..errors import BadRequest, Conflict, unknown_hub
from ..store import agent_memory as agent_memory_store
from ..store import hubs as hub_store
from ..store import recall as recall_store
from ..store.connection import Conn
from ..tokens import hash_token, new_token
from . import curation, recall, redaction, sessions
from .access import NO_CREDENTIALS, Access, Credentials
from .context import Context
from .urls import Urls

SLUG = re.compile(r"^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$")
RESERVED = {"api", "raw", "hub", "b", "healthz", "static", "admin", "new", "login"}
MAX_DESCRIPTION = 500
SEARCH_RESULTS = 10
RELATIVE_FTS = 0.6  # of the best full-text score: what still answers the words asked
FULL_BATCH = 100
PAGE_CONCEPTS = 60
PAGE_TRASH = 50  # deleted pages the owner's hub page lists (the trash API pages through all)


class NewHub(TypedDict):
    slug: str
    url: str
    owner_token: str  # shown once


class HubSettings(TypedDict):
    slug: str
    url: str
    listed: bool
    description: str
    redact_secrets: bool
    redacted: NotRequired[dict[str, Any]]  # a new description: what was redacted of it


class DocEntry(TypedDict):
    id: str
    title: str
    url: str
    updated_at: str
    summary: str
    visibility: NotRequired[str]  # the owner's view
    allowed_emails: NotRequired[list[str]]


class BundleEntry(TypedDict):
    id: str
    title: str
    description: str
    url: str
    public: NotRequired[bool]  # the owner's view


class HubContents(TypedDict):
    slug: str
    url: str
    description: str
    listed: bool
    hub_id: int
    view: str  # "public" or "owner"
    docs: list[DocEntry]
    bundles: list[BundleEntry]
    total_docs: int
    page: int
    pages: int
    trash: NotRequired[int]  # the owner's view: how many docs are in the trash
    redact_secrets: NotRequired[bool]


class HubListing(TypedDict):
    """HubContents as the API answers it: no hub id, and the next page's URL."""

    slug: str
    url: str
    description: str
    listed: bool
    view: str
    docs: list[DocEntry]
    bundles: list[BundleEntry]
    total_docs: int
    page: int
    pages: int
    trash: NotRequired[int]
    redact_secrets: NotRequired[bool]
    per_page: int
    next: str | None


class TrashEntry(TypedDict):
    id: str
    title: str
    url: str
    deleted_at: str
    version: int
    visibility: str


class Trash(TypedDict):
    slug: str
    url: str
    docs: list[TrashEntry]
    total_docs: int
    page: int
    pages: int
    per_page: int
    next: str | None


class Found(TypedDict):
    title: str
    url: str
    sections: list[str]
    snippet: str


class SearchAnswer(TypedDict):
    results: list[Found]  # above the relevance floor
    more: list[Found]
    mode: str
    vector_note: str | None


class ContextUsage(TypedDict):
    days: int
    calls: int
    tokens: int


class PageCuration(TypedDict, total=False):
    """With curation on: the hub's concepts and its open suggested bundles."""

    concepts: list[dict[str, Any]]
    suggestions: list[dict[str, Any]]


class OwnerPage(TypedDict, total=False):
    """The owner's view: the trash, and what the coding tools' hooks handed out."""

    trash_docs: list[TrashEntry]
    context_usage: ContextUsage


class HubPage(HubContents, PageCuration, OwnerPage):
    found: SearchAnswer | None  # the search's answer, when there is a question
    session: sessions.SessionStatus | None


async def create(ctx: Context, urls: Urls, slug: str) -> NewHub:
    """A new hub; the answer holds its owner token, shown once."""
    slug = slug.strip().lower()
    if not SLUG.match(slug):
        raise BadRequest(
            "invalid_slug",
            "a hub slug is 1-63 lowercase letters, digits or dashes, not starting or ending with a dash",
        )
    if slug in RESERVED:
        raise BadRequest("invalid_slug", f"'{slug}' is a word this server keeps for its own pages: choose another")
    token = new_token("mwo")
    async with ctx.db.owner.connection() as conn:
        hub_id = await hub_store.create_hub(conn, slug, hash_token(token))
    if hub_id is None:
        raise Conflict("hub_taken", f"hub '{slug}' already exists")
    return {"slug": slug, "url": urls.hub(slug), "owner_token": token}


async def update(
    ctx: Context,
    credentials: Credentials,
    urls: Urls,
    slug: str,
    *,
    listed: bool | None,
    description: str | None,
    redact_secrets: bool | None = None,
) -> HubSettings:
    """The owner lists the hub on the home page and /llms.txt (or unlists it), gives it the
    one-line description those show, and turns redaction of secrets off for a hub that
    wants raw text, or on again (None: unchanged). Turning it on changes no page saved
    while it was off; their next edit is redacted. The description is redacted as a page's
    text is (services/redaction.py), by the setting as this change leaves it."""
    access = Access(ctx.limits, credentials)
    if description is not None:
        description = " ".join(description.split())
    prepared = await redaction.prepare_fields({"description": description})

    async def change(conn: Conn) -> tuple[dict[str, Any], dict[str, Any] | None]:
        hub = await access.hub_owner(conn, slug)
        redacted = None
        texts: dict[str, str] = {}
        if description is not None:
            texts, redacted = await redaction.choose_fields(conn, prepared, hub["id"], redacts=redact_secrets)
        changed = await hub_store.update_hub(
            conn,
            hub["id"],
            listed=listed,
            description=" ".join(texts["description"].split()) if description is not None else None,
            redact_secrets=redact_secrets,
        )
        return changed, redacted

    hub, redacted = await ctx.db.write(change)
    settings: HubSettings = {
        "slug": hub["slug"],
        "url": urls.hub(hub["slug"]),
        "listed": hub["listed"],
        "description": hub["description"],
        "redact_secrets": hub["redact_secrets"],
    }
    if redacted is not None:
        settings["redacted"] = redacted
    return settings


async def listed(ctx: Context) -> list[dict[str, Any]]:
    """The hubs their owners listed, with their public page counts."""
    async with ctx.db.public.connection() as conn:
        return await hub_store.listed_hubs(conn)


def _doc_entry(urls: Urls, d: dict[str, Any]) -> DocEntry:
    entry: DocEntry = {
        "id": d["id"],
        "title": d["title"],
        "url": urls.doc(d["id"]),
        "updated_at": d["updated_at"].isoformat(),
        "summary": summary(d["head"]),
    }
    if "visibility" in d:  # the owner's view
        entry["visibility"] = d["visibility"]
        entry["allowed_emails"] = list(d["allowed_emails"])
    return entry


def _bundle_entry(urls: Urls, b: dict[str, Any]) -> BundleEntry:
    entry: BundleEntry = {
        "id": b["id"],
        "title": b["title"],
        "description": b["description"],
        "url": urls.bundle(b["id"]),
    }
    if "public" in b:  # the owner's view: a bundle with no public page is hidden from everyone else
        entry["public"] = b["public"]
    return entry


def _pages(total: int, per_page: int | None) -> int:
    return max(1, math.ceil(total / per_page)) if per_page else 1


async def contents(
    ctx: Context,
    urls: Urls,
    slug: str,
    *,
    page: int = 1,
    per_page: int | None = None,
    credentials: Credentials = NO_CREDENTIALS,
) -> HubContents:
    """The hub's contents: one page of docs (newest first) or, with no `per_page`, all of them.
    For credentials that own the hub, the owner's view (every live doc with its visibility,
    and how many are in the trash); for anyone else, what the public role reads."""
    if credentials.bearer or credentials.sessions:
        owned = await _owner_contents(ctx, credentials, urls, slug, page=page, per_page=per_page)
        if owned is not None:
            return owned
    async with ctx.db.public.connection() as conn:
        hub = await hub_store.find_hub(conn, slug)
        if hub is None:
            raise unknown_hub(slug)
        docs, total, bundles = await hub_store.hub_contents(
            conn, hub["id"], limit=per_page, offset=_offset(page, per_page)
        )
    return _contents_json(urls, hub, "public", docs, bundles, total, page=page, per_page=per_page)


def _offset(page: int, per_page: int | None) -> int:
    return (page - 1) * per_page if per_page else 0


def _contents_json(
    urls: Urls,
    hub: dict[str, Any],
    view: str,
    docs: list[dict[str, Any]],
    bundles: list[dict[str, Any]],
    total: int,
    *,
    page: int,
    per_page: int | None,
) -> HubContents:
    return {
        "slug": hub["slug"],
        "url": urls.hub(hub["slug"]),
        "description": hub["description"],
        "listed": hub["listed"],
        "hub_id": hub["id"],
        "view": view,
        "docs": [_doc_entry(urls, d) for d in docs],
        "bundles": [_bundle_entry(urls, b) for b in bundles],
        "total_docs": total,
        "page": page,
        "pages": _pages(total, per_page),
    }


async def _owner_contents(
    ctx: Context, credentials: Credentials, urls: Urls, slug: str, *, page: int, per_page: int | None
) -> HubContents | None:
    """The owner's view, or None when the credentials do not own the hub. Read on the owner
    pool by statements that prove the token or session themselves (store/hubs.py)."""
    access = Access(ctx.limits, credentials)
    async with ctx.db.owner.connection() as conn:
        hub = await hub_store.find_hub(conn, slug)
        if hub is None:
            raise unknown_hub(slug)
        if not await access.owns(conn, hub):
            return None
        docs, total, in_trash, bundles = await hub_store.owner_contents(
            conn,
            hub["id"],
            credentials.bearer_hash,
            credentials.session_hashes,
            limit=per_page,
            offset=_offset(page, per_page),
        )
        redact_secrets = await hub_store.redacts_secrets(conn, hub["id"])
    owned = _contents_json(urls, hub, "owner", docs, bundles, total, page=page, per_page=per_page)
    owned["trash"] = in_trash
    owned["redact_secrets"] = redact_secrets
    return owned


def _next_page(urls: Urls, path: str, page: int, pages: int, per_page: int) -> str | None:
    return f"{urls.base}{path}?page={page + 1}&per_page={per_page}" if page < pages else None


async def listing(
    ctx: Context, credentials: Credentials, urls: Urls, slug: str, *, page: int, per_page: int
) -> HubListing:
    """One page of the hub's docs as the API answers it (the owner's view for its owner, the
    public docs for anyone else), with the next page's URL."""
    hub = await contents(ctx, urls, slug, page=page, per_page=per_page, credentials=credentials)
    listed: HubListing = {
        "slug": hub["slug"],
        "url": hub["url"],
        "description": hub["description"],
        "listed": hub["listed"],
        "view": hub["view"],
        "docs": hub["docs"],
        "bundles": hub["bundles"],
        "total_docs": hub["total_docs"],
        "page": hub["page"],
        "pages": hub["pages"],
        "per_page": per_page,
        "next": _next_page(urls, f"/api/hub/{hub['slug']}", page, hub["pages"], per_page),
    }
    if "trash" in hub:  # the owner's view
        listed["trash"] = hub["trash"]
    if "redact_secrets" in hub:
        listed["redact_secrets"] = hub["redact_secrets"]
    return listed


async def trash(ctx: Context, credentials: Credentials, urls: Urls, slug: str, *, page: int, per_page: int) -> Trash:
    """One page of the hub's deleted docs, newest deletion first (its owner only)."""
    access = Access(ctx.limits, credentials)
    async with ctx.db.owner.connection() as conn:
        hub = await access.hub_owner(conn, slug)
        rows = await hub_store.trash(
            conn,
            hub["id"],
            credentials.bearer_hash,
            credentials.session_hashes,
            limit=per_page,
            offset=(page - 1) * per_page,
        )
        _, total = await hub_store.owner_counts(conn, hub["id"], credentials.bearer_hash, credentials.session_hashes)
    pages = _pages(total, per_page)
    return {
        "slug": slug,
        "url": urls.hub(slug),
        "docs": [
            {
                "id": d["id"],
                "title": d["title"],
                "url": urls.doc(d["id"]),
                "deleted_at": d["deleted_at"].isoformat(),
                "version": d["version"],
                "visibility": d["visibility"],
            }
            for d in rows
        ],
        "total_docs": total,
        "page": page,
        "pages": pages,
        "per_page": per_page,
        "next": _next_page(urls, f"/api/hub/{slug}/trash", page, pages, per_page),
    }


def _answers(results: list[dict[str, Any]], min_similarity: float) -> list[bool]:
    """Which results answer the question: those full text scores at least RELATIVE_FTS of its
    best (a page matching one word of a two-word question scores about half), and those whose
    meaning is as close as the hub graph's neighbours (the embedding space's limit). The first
    result always does; the rest of a small hub's ten are whatever was left."""
    best = max((r["fts_score"] or 0.0 for r in results), default=0.0)
    return [
        i == 0
        or (best > 0 and (r["fts_score"] or 0.0) >= RELATIVE_FTS * best)
        or (r["similarity"] is not None and r["similarity"] >= min_similarity)
        for i, r in enumerate(results)
    ]


async def search(ctx: Context, urls: Urls, slug: str, question: str) -> SearchAnswer:
    """The recall endpoint's answer for the search box, with snippets (their matches between
    recall_store.MARK_START and MARK_END) and breadcrumbs: `results` above the relevance floor,
    `more` the rest, each in the recall's order."""
    found = await recall.answer(ctx, urls, recall.Question(slug, recall.check_question(question), k=SEARCH_RESULTS))
    async with ctx.db.public.connection() as conn:
        snippets = await recall_store.headlines(conn, question, [plain_text(r["markdown"]) for r in found["results"]])
    results: list[Found] = []
    for r, snippet in zip(found["results"], snippets, strict=True):
        crumbs = [part.strip() for part in r["heading_path"].split(" > ")]
        results.append({"title": r["title"], "url": r["doc_url"], "sections": crumbs[1:], "snippet": snippet})
    space = found.get("space")
    ceiling = ctx.settings.edge_rule.ceiling(space["model"] if space else None)
    answers = _answers(found["results"], 1.0 - ceiling)
    return {
        "results": [r for r, answer in zip(results, answers, strict=True) if answer],
        "more": [r for r, answer in zip(results, answers, strict=True) if not answer],
        "mode": found["mode"],
        "vector_note": found.get("vector_note"),
    }


USAGE_DAYS = 30  # the owner's hub page shows the hooks' injections of this many days


async def page(
    ctx: Context, credentials: Credentials, urls: Urls, slug: str, *, page: int, per_page: int, question: str
) -> HubPage:
    """What the hub's page shows: a page of its docs, its bundles, the search's answer when
    there is a question, and with curation on its concepts and suggested bundles. Its owner,
    signed in, sees every live page with its visibility and the trash; a browser whose
    sign-in to this hub has ended is told so."""
    hub = await contents(ctx, urls, slug, page=page, per_page=per_page, credentials=credentials)
    found = await search(ctx, urls, slug, question) if question else None
    curated: PageCuration = {}
    if ctx.settings.curation:
        concepts, _ = await curation.hub_concepts(ctx, urls, hub["hub_id"])
        curated["concepts"] = [curation.concept_json(c) for c in concepts[:PAGE_CONCEPTS]]
        curated["suggestions"] = await curation.open_suggestions(ctx, urls, hub["hub_id"])
    session = await sessions.status(ctx, credentials, urls, slug) if credentials.sessions else None
    owned: OwnerPage = {}
    if hub["view"] == "owner":
        owned["trash_docs"] = (await trash(ctx, credentials, urls, slug, page=1, per_page=PAGE_TRASH))["docs"]
        async with ctx.db.owner.connection() as conn:  # what the coding tools' hooks handed out
            usage = await agent_memory_store.usage(conn, hub["hub_id"], USAGE_DAYS)
        owned["context_usage"] = {
            "days": USAGE_DAYS,
            "calls": sum(r["calls"] for r in usage),
            "tokens": sum(r["tokens"] for r in usage),
        }
    return {**hub, "found": found, **curated, "session": session, **owned}


async def full_text(ctx: Context, slug: str) -> AsyncIterator[dict[str, Any]]:
    """Every public doc of the hub, oldest first, read a batch at a time so a large hub never
    sits in memory. An unknown hub raises before the first doc."""
    async with ctx.db.public.connection() as conn:
        hub = await hub_store.find_hub(conn, slug)
    if hub is None:
        raise unknown_hub(slug)

    async def docs() -> AsyncIterator[dict[str, Any]]:
        after = None
        while True:
            async with ctx.db.public.connection() as conn:
                batch = await hub_store.hub_docs_batch(conn, hub["id"], after, FULL_BATCH)
            for doc in batch:
                yield doc
            if len(batch) < FULL_BATCH:
                return
            after = (batch[-1]["created_at"], batch[-1]["id"])

    return docs()
