"""What curation shows: a doc's enrichment block, its related docs, a hub's concept digest,
its suggested bundles (accepting or dismissing one), a topic's reading list.

Anything another reader may see (related docs, bundles, digest, suggestions) is read on
the public pool, so row-level security, not this code, keeps private docs out.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..curation import suggest
from ..curation.concepts import Concept, concept_key
from ..curation.concepts import hub_concepts as hub_index
from ..curation.extractive import _units
from ..curation.markdown import digest_markdown, enrichment_fields, enrichment_markdown
from ..curation.suggest import as_list
from ..curation.terms import term_key
from ..errors import BadRequest, Conflict, not_found, unknown_hub
from ..store import analyses as analysis_store
from ..store import bundles as bundle_store
from ..store import concepts as concept_store
from ..store import enrichments as enrichment_store
from ..store import hubs as hub_store
from ..store import recall
from ..store import suggestions as suggestion_store
from ..store.connection import Conn
from ..store.space import current_space
from ..tokens import looks_like_id, new_id
from . import docs, redaction
from .access import Access, Credentials
from .context import Context
from .recall import question_vector
from .urls import Urls

MAX_INTENT = 500


async def public_hub(ctx: Context, urls: Urls, slug: str) -> dict[str, Any]:
    async with ctx.db.public.connection() as conn:
        hub = await hub_store.find_hub(conn, slug)
    if hub is None:
        raise unknown_hub(slug)
    return {"id": hub["id"], "slug": slug, "url": urls.hub(slug)}


async def doc_view(ctx: Context, urls: Urls, doc: dict[str, Any]) -> dict[str, Any]:
    """The doc's enrichment (None while owed), the public bundles holding it, and the front
    matter fields and markdown block built from them. The caller has already established
    that the reader may see `doc`."""
    async with ctx.db.owner.connection() as conn:
        enrichment = await enrichment_store.current(conn, doc["id"])
    async with ctx.db.public.connection() as conn:
        bundles = await concept_store.bundles_of_doc(conn, doc["id"])
    bundle_list = [
        {"id": b["id"], "title": b["title"], "description": b["description"], "url": urls.bundle(b["id"])}
        for b in bundles
    ]
    slug = doc.get("hub_slug")
    hub_url = urls.hub(slug) if slug else None
    digest_url = f"{urls.base}/raw/hub/{slug}?digest=1" if slug else None
    return {
        "enrichment": enrichment,
        "bundles": bundle_list,
        "hub_url": hub_url,
        "digest_url": digest_url,
        "fields": enrichment_fields(enrichment, bundle_list),
        "markdown": enrichment_markdown(
            enrichment, bundle_list, hub_url, digest_url, body_chars=len(doc.get("markdown") or "")
        ),
    }


async def related_docs(ctx: Context, urls: Urls, doc_id: str, k: int) -> list[dict[str, Any]]:
    """Nearest public docs of the doc's hub by vector, closer than the graph's limit for the
    embedding space (past it texts are unrelated, and a small hub's nearest may be far), then
    (to fill up, or with no vectors) the public docs holding most of its concepts."""
    async with ctx.db.owner.connection() as conn:  # the doc itself may be the reader's private one
        vector, dim, hub_id = await concept_store.doc_vector(conn, doc_id)
        own = [(c["key"], term_key(c["name"]), c["name"]) for c in await concept_store.doc_concepts(conn, doc_id)]
        space = await current_space(conn)
    if hub_id is None:
        return []
    out: list[dict[str, Any]] = []
    ceiling = ctx.settings.edge_rule.ceiling(space[0] if space else None)
    async with ctx.db.public.connection() as conn:
        if vector is not None and dim:
            for r in await concept_store.nearest(
                conn, doc_id=doc_id, hub_id=hub_id, vector=vector, dim=dim, k=k, max_distance=ceiling
            ):
                out.append(
                    {
                        "id": r["id"],
                        "title": r["title"],
                        "url": urls.doc(r["id"]),
                        "via": "vector",
                        "similarity": round(float(r["similarity"]), 4),
                    }
                )
        if len(out) < k and own:
            seen = {r["id"] for r in out}
            for r in await concept_store.sharing_concepts(
                conn, doc_id=doc_id, hub_id=hub_id, concepts=own, k=k + len(seen)
            ):
                if r["id"] not in seen and len(out) < k:
                    out.append(
                        {
                            "id": r["id"],
                            "title": r["title"],
                            "url": urls.doc(r["id"]),
                            "via": "concepts",
                            "shared_concepts": sorted(r["names"]),
                        }
                    )
    return out


async def related(ctx: Context, credentials: Credentials, urls: Urls, doc_id: str, k: int) -> dict[str, Any]:
    """The related docs of a doc these credentials may read."""
    doc, _ = await docs.readable(ctx, credentials, doc_id)
    return {"id": doc["id"], "k": k, "results": await related_docs(ctx, urls, doc["id"], k)}


async def enrichment(ctx: Context, credentials: Credentials, urls: Urls, doc_id: str) -> dict[str, Any]:
    """A readable doc's enrichment as JSON ("pending" while it is owed)."""
    doc, _ = await docs.readable(ctx, credentials, doc_id)
    view = await doc_view(ctx, urls, doc)
    e = view["enrichment"]
    return {
        "id": doc["id"],
        "status": e["mode"] if e else "pending",
        "model": e["model"] if e else None,
        "missing": list(e["missing"]) if e else [],
        "data": e["data"] if e else None,
        "bundles": view["bundles"],
        "calls": e["calls"] if e else 0,
        "tokens": (e["prompt_tokens"] + e["completion_tokens"]) if e else 0,
    }


async def hub_concepts(ctx: Context, urls: Urls, hub_id: int) -> tuple[list[Concept], int]:
    """The hub's public concepts (those two or more pages hold, or a page's title names), each
    with every public page that holds it, and its public doc count."""
    async with ctx.db.public.connection() as conn:
        mentions = await concept_store.hub_mentions(conn, hub_id)
        keys = sorted({term_key(concept_key(n)) for m in mentions for n in [m["name"], *(m["aliases"] or [])]})
        terms = await concept_store.hub_terms(conn, hub_id, keys)
        count = await concept_store.hub_doc_count(conn, hub_id)
    docs: dict[str, dict[str, Any]] = {}
    for row in sorted([*mentions, *terms], key=lambda r: (r["updated_at"], r["doc_id"]), reverse=True):
        docs.setdefault(row["doc_id"], {"id": row["doc_id"], "title": row["title"], "url": urls.doc(row["doc_id"])})
    concepts = hub_index(
        (
            {
                "doc_id": m["doc_id"],
                **docs[m["doc_id"]],
                "name": m["name"],
                "kind": m["kind"],
                "gloss": m["gloss"],
                "aliases": m["aliases"],
            }
            for m in mentions
        ),
        terms,
        docs,
    )
    return concepts, count


def concept_json(c: Concept) -> dict[str, Any]:
    return {
        "name": c.name,
        "kind": c.kind,
        "gloss": c.gloss,
        "aliases": c.aliases,
        "docs": [{"id": d["id"], "title": d["title"], "url": d["url"]} for d in c.docs],
    }


async def digest(ctx: Context, urls: Urls, slug: str) -> dict[str, Any]:
    """The hub's concept digest as JSON."""
    hub = await public_hub(ctx, urls, slug)
    concepts, count = await hub_concepts(ctx, urls, hub["id"])
    return {"hub": hub["slug"], "url": hub["url"], "docs": count, "concepts": [concept_json(c) for c in concepts]}


async def digest_text(ctx: Context, urls: Urls, slug: str, *, compact: bool) -> str:
    """The hub's concept digest as markdown; `compact`: the one that fits the digest budget."""
    hub = await public_hub(ctx, urls, slug)
    concepts, count = await hub_concepts(ctx, urls, hub["id"])
    return digest_markdown(
        hub,
        concepts,
        count,
        compact=compact,
        budget_tokens=ctx.settings.digest_compact_tokens,
        full_url=f"{urls.base}/raw/hub/{hub['slug']}?digest=1",
    )


async def open_suggestions(ctx: Context, urls: Urls, hub_id: int) -> list[dict[str, Any]]:
    async with ctx.db.public.connection() as conn:
        rows = await suggestion_store.open_for_hub(conn, hub_id)
        ids = sorted({d for r in rows for d in r["doc_ids"]})
        titles = await concept_store.doc_titles(conn, ids)
    return [
        {
            "id": r["id"],
            "title": r["title"],
            "description": r["description"],
            "mode": r["mode"],
            "docs": [{"id": d, "title": titles.get(d, ""), "url": urls.doc(d)} for d in r["doc_ids"]],
        }
        for r in rows
    ]


async def suggestions(ctx: Context, urls: Urls, slug: str) -> dict[str, Any]:
    """The hub's open suggested bundles."""
    hub = await public_hub(ctx, urls, slug)
    return {"hub": hub["slug"], "suggestions": await open_suggestions(ctx, urls, hub["id"])}


async def _owned_suggestion(
    conn: Conn, access: Access, slug: str, suggestion_id: str
) -> tuple[dict[str, Any], dict[str, Any]]:
    hub = await access.hub_owner(conn, slug)
    suggestion = (
        await suggestion_store.lock_open(conn, hub["id"], suggestion_id) if looks_like_id(suggestion_id) else None
    )
    if suggestion is None:
        raise not_found("suggestion")
    if suggestion["status"] != "open":
        raise Conflict("suggestion_closed", f"this suggestion was already {suggestion['status']}")
    return hub, suggestion


async def accept(
    ctx: Context,
    credentials: Credentials,
    urls: Urls,
    slug: str,
    suggestion_id: str,
    *,
    title: str | None = None,
    description: str | None = None,
) -> dict[str, Any]:
    """Owner only: turn a suggestion into a bundle (title and description as offered unless
    given, redacted as a page's text is: services/redaction.py)."""
    access = Access(ctx.limits, credentials)
    bundle_id = new_id()

    async def make(conn: Conn) -> tuple[dict[str, Any], str, list[str], dict[str, Any]]:
        hub, suggestion = await _owned_suggestion(conn, access, slug, suggestion_id)
        prepared = await redaction.prepare_fields(
            {"title": title or suggestion["title"], "description": description or suggestion["description"]}
        )
        texts, redacted = await redaction.choose_fields(conn, prepared, hub["id"])
        named, described = texts["title"].strip(), texts["description"]
        if not named:
            raise BadRequest("missing_field", "'title' holds nothing but a <private> span")
        doc_ids = await suggestion_store.public_members(conn, hub["id"], suggestion["doc_ids"])
        if len(doc_ids) < 2:
            raise Conflict("suggestion_stale", "the suggested pages are no longer public in this hub")
        await bundle_store.insert_bundle(conn, bundle_id, hub["id"], named, described, doc_ids)
        await suggestion_store.mark_accepted(conn, suggestion["id"], bundle_id)
        return suggestion, named, doc_ids, redacted

    suggestion, named, doc_ids, redacted = await ctx.db.write(make)
    ctx.wake_worker()
    return {
        "id": bundle_id,
        "url": urls.bundle(bundle_id),
        "title": named,
        "doc_ids": doc_ids,
        "suggestion": suggestion["id"],
        "redacted": redacted,
    }


async def dismiss(ctx: Context, credentials: Credentials, slug: str, suggestion_id: str) -> dict[str, Any]:
    """Owner only: never offer this group again."""
    access = Access(ctx.limits, credentials)

    async def close(conn: Conn) -> dict[str, Any]:
        _, suggestion = await _owned_suggestion(conn, access, slug, suggestion_id)
        await suggestion_store.mark_dismissed(conn, suggestion["id"])
        return suggestion

    suggestion = await ctx.db.write(close)
    return {"id": suggestion["id"], "status": "dismissed"}


async def bundle_analysis(ctx: Context, bundle_id: str) -> dict[str, Any] | None:
    async with ctx.db.public.connection() as conn:
        return await analysis_store.for_bundle(conn, bundle_id)


def _snippet(markdown: str, words: int = 24) -> str:
    units, _, _ = _units([markdown])
    text = " ".join(u.text for u in units[:2])
    cut = text.split()
    return " ".join(cut[:words]) + (" …" if len(cut) > words else "")


async def _topic_docs(
    ctx: Context, urls: Urls, hub_id: int, intent: str, k: int, *, qvec: Any, dim: int | None
) -> list[dict[str, Any]]:
    """Public docs on a topic, in a reading order, each with one line on why it belongs:
    hybrid recall over chunks, grouped by doc (a doc's best section is its reason), then
    ordered overview-first by their vectors (suggest.reading_order)."""
    async with ctx.db.public.connection() as conn:
        rows = await recall.recall_chunks(
            conn,
            hub_id=hub_id,
            question=intent,
            k=min(50, k * 4),
            qvec=qvec,
            dim=dim,
            hybrid=True,
            k1=ctx.settings.bm25_k1,
            b=ctx.settings.bm25_b,
        )
        # A doc belongs when the topic's words are in it (BM25 found it) or it is about as
        # close in meaning as the best match; in a small hub the vector list reaches everything.
        top_similarity = max((r["similarity"] or 0.0 for r in rows), default=0.0)
        best: dict[str, dict[str, Any]] = {}
        for r in rows:
            if r["fts_rank"] is not None or (r["similarity"] or 0.0) >= 0.75 * top_similarity:
                best.setdefault(r["doc_id"], r)
        chosen = list(best)[:k]
        vectors: dict[str, Sequence[float]] = {
            d["id"]: vector
            for d in await concept_store.hub_vectors(conn, hub_id)
            if d["id"] in chosen and (vector := as_list(d["embedding"])) is not None
        }
        enriched = await concept_store.enrichments_of(conn, chosen)
    out = []
    for doc_id in suggest.reading_order(chosen, vectors):
        r = best[doc_id]
        section = r["heading_path"].split(" > ")[-1]
        summary = ((enriched.get(doc_id) or {}).get("data") or {}).get("summary")
        why = f"“{section}” matches the topic: {_snippet(r['markdown'])}".strip()
        if summary:
            why += f" (Page summary: {' '.join(summary.split()[:30])})"
        out.append({"id": doc_id, "title": r["title"], "url": urls.doc(doc_id), "why": why})
    return out


async def reading_list(ctx: Context, urls: Urls, slug: str, intent: str, k: int) -> dict[str, Any]:
    """A topic's public docs in a reading order, by meaning when vectors are ready."""
    hub = await public_hub(ctx, urls, slug)
    qvec, dim, why_not = await question_vector(ctx, hub["id"], intent)
    found = await _topic_docs(ctx, urls, hub["id"], intent, k, qvec=qvec, dim=dim)
    body = {"hub": slug, "intent": intent, "mode": "hybrid" if qvec is not None else "fulltext", "docs": found}
    if why_not:
        body["vector_note"] = why_not
    return body
