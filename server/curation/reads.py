"""What the curation surfaces show, gathered from the store: a doc's enrichment block, its
related docs, a hub's concept digest, its open suggestions, a topic's reading list.

Anything another reader may see (related docs, bundles, digest, suggestions) is read on
the public pool, so row-level security, not this code, keeps private docs out.
"""

from __future__ import annotations

from typing import Any, Callable

from ..store import analyses as analysis_store
from ..store import concepts as concept_store
from ..store import enrichments as enrichment_store
from ..store import suggestions as suggestion_store
from ..store.db import Database
from .concepts import Concept, fold
from .markdown import enrichment_fields, enrichment_markdown

DocUrl = Callable[[str], str]


async def doc_curation(db: Database, doc: dict[str, Any], *, doc_url: DocUrl, base: str) -> dict[str, Any]:
    """The doc's enrichment (None while owed), the public bundles holding it, and the front
    matter fields and markdown block built from them. The caller has already established
    that the reader may see `doc`."""
    async with db.owner.connection() as conn:
        enrichment = await enrichment_store.current(conn, doc["id"])
    async with db.public.connection() as conn:
        bundles = await concept_store.bundles_of_doc(conn, doc["id"])
    bundle_list = [{"id": b["id"], "title": b["title"], "description": b["description"],
                    "url": f"{base}/b/{b['id']}"} for b in bundles]
    slug = doc.get("hub_slug")
    hub_url = f"{base}/hub/{slug}" if slug else None
    digest_url = f"{base}/raw/hub/{slug}?digest=1" if slug else None
    return {
        "enrichment": enrichment,
        "bundles": bundle_list,
        "hub_url": hub_url,
        "digest_url": digest_url,
        "fields": enrichment_fields(enrichment, bundle_list),
        "markdown": enrichment_markdown(enrichment, bundle_list, hub_url, digest_url),
    }


async def related(db: Database, doc_id: str, k: int, *, doc_url: DocUrl) -> list[dict[str, Any]]:
    """Nearest public docs of the doc's hub by vector, then (to fill up, or with no
    vectors) the public docs sharing most of its concepts."""
    async with db.owner.connection() as conn:  # the doc itself may be the reader's private one
        vector, dim, hub_id = await concept_store.doc_vector(conn, doc_id)
        keys = [c["key"] for c in await concept_store.doc_concepts(conn, doc_id)]
    if hub_id is None:
        return []
    out: list[dict[str, Any]] = []
    async with db.public.connection() as conn:
        if vector is not None and dim:
            for r in await concept_store.nearest(conn, doc_id=doc_id, hub_id=hub_id, vector=vector, dim=dim, k=k):
                out.append({"id": r["id"], "title": r["title"], "url": doc_url(r["id"]), "via": "vector",
                            "similarity": round(float(r["similarity"]), 4)})
        if len(out) < k and keys:
            seen = {r["id"] for r in out}
            for r in await concept_store.sharing_concepts(conn, doc_id=doc_id, hub_id=hub_id, keys=keys, k=k + len(seen)):
                if r["id"] not in seen and len(out) < k:
                    out.append({"id": r["id"], "title": r["title"], "url": doc_url(r["id"]), "via": "concepts",
                                "shared_concepts": sorted(r["names"])})
    return out


async def hub_concepts(db: Database, hub_id: int, *, doc_url: DocUrl) -> tuple[list[Concept], int]:
    """The hub's public concepts folded across docs, and its public doc count."""
    async with db.public.connection() as conn:
        mentions = await concept_store.hub_mentions(conn, hub_id)
        count = await concept_store.hub_doc_count(conn, hub_id)
    concepts = fold({"doc_id": m["doc_id"], "id": m["doc_id"], "title": m["title"], "url": doc_url(m["doc_id"]),
                     "name": m["name"], "kind": m["kind"], "gloss": m["gloss"], "aliases": m["aliases"]}
                    for m in mentions)
    return concepts, count


def concept_json(c: Concept) -> dict[str, Any]:
    return {"name": c.name, "kind": c.kind, "gloss": c.gloss, "aliases": c.aliases,
            "docs": [{"id": d["id"], "title": d["title"], "url": d["url"]} for d in c.docs]}


async def open_suggestions(db: Database, hub_id: int, *, doc_url: DocUrl) -> list[dict[str, Any]]:
    async with db.public.connection() as conn:
        rows = await suggestion_store.open_for_hub(conn, hub_id)
        ids = sorted({d for r in rows for d in r["doc_ids"]})
        titles = await concept_store.doc_titles(conn, ids)
    return [{"id": r["id"], "title": r["title"], "description": r["description"], "mode": r["mode"],
             "docs": [{"id": d, "title": titles.get(d, ""), "url": doc_url(d)} for d in r["doc_ids"]]}
            for r in rows]


async def bundle_analysis(db: Database, bundle_id: str) -> dict[str, Any] | None:
    async with db.public.connection() as conn:
        return await analysis_store.for_bundle(conn, bundle_id)


def _snippet(markdown: str, words: int = 24) -> str:
    from .extractive import _units

    units, _, _ = _units([markdown])
    text = " ".join(u.text for u in units[:2])
    cut = text.split()
    return " ".join(cut[:words]) + (" …" if len(cut) > words else "")


async def topic_reading_list(db: Database, hub_id: int, intent: str, k: int, *, qvec: Any, dim: int | None,
                             k1: float, b: float, doc_url: DocUrl) -> list[dict[str, Any]]:
    """Public docs on a topic, in a reading order, each with one line on why it belongs:
    hybrid recall over chunks, grouped by doc (a doc's best section is its reason), then
    ordered overview-first by their vectors (suggest.reading_order)."""
    from ..store import recall
    from . import suggest
    from .suggest import as_list

    async with db.public.connection() as conn:
        rows = await recall.recall_chunks(conn, hub_id=hub_id, question=intent, k=min(50, k * 4), qvec=qvec, dim=dim,
                                          hybrid=True, k1=k1, b=b)
        # A doc belongs when the topic's words are in it (BM25 found it) or it is about as
        # close in meaning as the best match; in a small hub the vector list reaches everything.
        top_similarity = max((r["similarity"] or 0.0 for r in rows), default=0.0)
        best: dict[str, dict[str, Any]] = {}
        for r in rows:
            if r["fts_rank"] is not None or (r["similarity"] or 0.0) >= 0.75 * top_similarity:
                best.setdefault(r["doc_id"], r)
        chosen = list(best)[:k]
        vectors = {d["id"]: as_list(d["embedding"]) for d in await concept_store.hub_vectors(conn, hub_id)
                   if d["id"] in chosen and d["embedding"] is not None}
        enriched = await concept_store.enrichments_of(conn, chosen)
    out = []
    for doc_id in suggest.reading_order(chosen, vectors):
        r = best[doc_id]
        section = r["heading_path"].split(" > ")[-1]
        summary = ((enriched.get(doc_id) or {}).get("data") or {}).get("summary")
        why = f"“{section}” matches the topic: {_snippet(r['markdown'])}".strip()
        if summary:
            why += f" (Page summary: {' '.join(summary.split()[:30])})"
        out.append({"id": doc_id, "title": r["title"], "url": doc_url(doc_id), "why": why})
    return out
