"""Curation over HTTP: related docs, the concept digest, suggested bundles (and accepting
one), a topic's reading list, and a doc's enrichment as JSON."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from ..web.auth import require_hub_owner
from ..curation import reads
from ..curation.markdown import digest_markdown
from ..errors import Conflict, not_found, unknown_hub
from ..store import bundles as bundle_store
from ..store import hubs as hub_store
from ..store import suggestions as suggestion_store
from ..tokens import looks_like_id, new_id
from ..web.validate import get_int, get_str, query_int, read_json
from ..web.state import app_state, base_url, bundle_url, doc_url, hub_url
from ..web.negotiate import markdown_response
from ..web.openapi import NULLABLE_TEXT, TEXT, body_schema, json_response, obj, operation
from .docs import load_readable_doc

MAX_INTENT = 500
ACCEPT_FIELDS = ("title", "description")
TOPIC_FIELDS = ("hub", "intent", "k")

_ITEMS = {"type": "array", "items": {"type": "object"}}
_K = {"k": {"type": "string", "pattern": "^[0-9]+$", "description": "how many (an integer, default 5)"}}
RELATED = obj(["id", "k", "results"], id=TEXT, k={"type": "integer"}, results=_ITEMS)
ENRICHMENT = obj(["id", "status", "model", "missing", "data", "bundles", "calls", "tokens"], id=TEXT,
                 status={"enum": ["model", "extractive", "pending"]}, model=NULLABLE_TEXT,
                 missing={"type": "array", "items": TEXT}, data={"type": ["object", "null"]},
                 bundles={"type": "array"}, calls={"type": "integer"}, tokens={"type": "integer"})
DIGEST = obj(["hub", "url", "docs", "concepts"], hub=TEXT, url=TEXT, docs={"type": "integer"}, concepts=_ITEMS)
SUGGESTIONS = obj(["hub", "suggestions"], hub=TEXT, suggestions=_ITEMS)
ACCEPTED = obj(["id", "url", "title", "doc_ids", "suggestion"], id=TEXT, url=TEXT, title=TEXT,
               doc_ids={"type": "array", "items": TEXT}, suggestion=TEXT)
READING_LIST = obj(["hub", "intent", "mode", "docs"], hub=TEXT, intent=TEXT, mode={"enum": ["hybrid", "fulltext"]},
                   docs=_ITEMS, vector_note=TEXT)


def _k(request: Request, default: int = 5, high: int = 50) -> int:
    return query_int(request, "k", default=default, low=1, high=high)


async def _public_hub(request: Request, slug: str) -> dict:
    async with app_state(request).db.public.connection() as conn:
        hub = await hub_store.find_hub(conn, slug)
    if hub is None:
        raise unknown_hub(slug)
    return {"id": hub["id"], "slug": slug, "url": hub_url(request, slug)}


@operation("Nearest public docs of the doc's hub (by vector, then shared concepts)", tag="curation",
           query=_K, auth=True, errors=(400, 404), responses={200: json_response(RELATED, "Related docs")})
async def related_endpoint(request: Request) -> Response:
    k = _k(request)
    doc, _ = await load_readable_doc(request, request.path_params["doc_id"])
    results = await reads.related(app_state(request).db, doc["id"], k, doc_url=lambda i: doc_url(request, i))
    return JSONResponse({"id": doc["id"], "k": k, "results": results})


@operation("A doc's enrichment (summary, themes, concepts...) as JSON", tag="curation", auth=True, errors=(404,),
           responses={200: json_response(ENRICHMENT, "The enrichment, or pending")})
async def enrichment_endpoint(request: Request) -> Response:
    doc, _ = await load_readable_doc(request, request.path_params["doc_id"])
    view = await reads.doc_curation(app_state(request).db, doc, doc_url=lambda i: doc_url(request, i),
                                    base=base_url(request))
    e = view["enrichment"]
    return JSONResponse({
        "id": doc["id"], "status": e["mode"] if e else "pending",
        "model": e["model"] if e else None, "missing": list(e["missing"]) if e else [],
        "data": e["data"] if e else None, "bundles": view["bundles"],
        "calls": e["calls"] if e else 0,
        "tokens": (e["prompt_tokens"] + e["completion_tokens"]) if e else 0,
    })


async def hub_digest(request: Request, slug: str) -> tuple[dict, list, int]:
    hub = await _public_hub(request, slug)
    concepts, count = await reads.hub_concepts(app_state(request).db, hub["id"],
                                               doc_url=lambda i: doc_url(request, i))
    return hub, concepts, count


def digest_text(request: Request, hub: dict, concepts: list, count: int, compact: bool) -> str:
    settings = app_state(request).settings
    return digest_markdown(hub, concepts, count, compact=compact, budget_tokens=settings.digest_compact_tokens,
                           full_url=f"{base_url(request)}/raw/hub/{hub['slug']}?digest=1")


@operation("The hub's concept digest (JSON; format=markdown for markdown)", tag="curation", errors=(404,),
           query={"format": {"type": "string", "enum": ["json", "markdown"]}, "compact": TEXT},
           responses={200: {"description": "The digest", "content": {
               "application/json": {"schema": DIGEST}, "text/markdown": {"schema": TEXT}}}})
async def digest_endpoint(request: Request) -> Response:
    """JSON digest; `?format=markdown` (or Accept: text/markdown) gives the markdown one."""
    hub, concepts, count = await hub_digest(request, request.path_params["slug"])
    compact = request.query_params.get("compact") in ("1", "true", "yes")
    if request.query_params.get("format") == "markdown":
        return markdown_response(digest_text(request, hub, concepts, count, compact))
    return JSONResponse({"hub": hub["slug"], "url": hub["url"], "docs": count,
                         "concepts": [reads.concept_json(c) for c in concepts]})


@operation("Suggested bundles of the hub", tag="curation", errors=(404,),
           responses={200: json_response(SUGGESTIONS, "Open suggestions")})
async def suggestions_endpoint(request: Request) -> Response:
    hub = await _public_hub(request, request.path_params["slug"])
    items = await reads.open_suggestions(app_state(request).db, hub["id"], doc_url=lambda i: doc_url(request, i))
    return JSONResponse({"hub": hub["slug"], "suggestions": items})


async def _owned_suggestion(conn, request: Request) -> tuple[dict, dict]:
    hub = await require_hub_owner(conn, request, request.path_params["slug"])
    suggestion_id = request.path_params["suggestion_id"]
    suggestion = await suggestion_store.lock_open(conn, hub["id"], suggestion_id) if looks_like_id(suggestion_id) else None
    if suggestion is None:
        raise not_found("suggestion")
    if suggestion["status"] != "open":
        raise Conflict("suggestion_closed", f"this suggestion was already {suggestion['status']}")
    return hub, suggestion


@operation("Accept a suggested bundle (owner token; an empty body takes it as offered)", tag="curation",
           auth=True, body=body_schema((), title={"type": ["string", "null"], "maxLength": 500},
                                       description={"type": ["string", "null"], "maxLength": 5000}),
           errors=(400, 401, 403, 404, 409, 413), responses={201: json_response(ACCEPTED, "The bundle made")})
async def accept_endpoint(request: Request) -> Response:
    """Owner only: turn a suggestion into a bundle (title/description may be overridden)."""
    state = app_state(request)
    # an empty body accepts the suggestion as offered
    data = await read_json(request, fields=ACCEPT_FIELDS) if (await request.body()).strip() else {}
    bundle_id = new_id()

    async def accept(conn):
        hub, suggestion = await _owned_suggestion(conn, request)
        title = (get_str(data, "title", max_len=500) or suggestion["title"]).strip()
        description = get_str(data, "description", max_len=5000) or suggestion["description"]
        doc_ids = await suggestion_store.public_members(conn, hub["id"], suggestion["doc_ids"])
        if len(doc_ids) < 2:
            raise Conflict("suggestion_stale", "the suggested pages are no longer public in this hub")
        await bundle_store.insert_bundle(conn, bundle_id, hub["id"], title, description, doc_ids)
        await suggestion_store.mark_accepted(conn, suggestion["id"], bundle_id)
        return suggestion, title, doc_ids

    suggestion, title, doc_ids = await state.db.write(accept)
    state.wake_worker()
    return JSONResponse({"id": bundle_id, "url": bundle_url(request, bundle_id), "title": title,
                         "doc_ids": doc_ids, "suggestion": suggestion["id"]}, status_code=201)


@operation("Dismiss a suggested bundle for good (owner token)", tag="curation", auth=True,
           errors=(401, 403, 404, 409),
           responses={200: json_response(obj(["id", "status"], id=TEXT, status={"const": "dismissed"}), "Dismissed")})
async def dismiss_endpoint(request: Request) -> Response:
    """Owner only: never offer this group again."""

    async def dismiss(conn):
        _, suggestion = await _owned_suggestion(conn, request)
        await suggestion_store.mark_dismissed(conn, suggestion["id"])
        return suggestion

    suggestion = await app_state(request).db.write(dismiss)
    return JSONResponse({"id": suggestion["id"], "status": "dismissed"})


@operation("A topic's docs in a reading order, one line each on why", tag="curation",
           body=body_schema(["hub", "intent"], hub={"type": "string", "examples": ["notes"]},
                            intent={"type": "string", "maxLength": MAX_INTENT},
                            k={"type": ["integer", "null"], "minimum": 2, "maximum": 20}),
           errors=(400, 404, 413), responses={200: json_response(READING_LIST, "The reading list")})
async def topic_endpoint(request: Request) -> Response:
    """POST /api/bundles/suggest {"hub", "intent", "k"}: a reading list for a topic."""
    from .recall import question_vector

    state = app_state(request)
    data = await read_json(request, state.settings.max_query_bytes, fields=TOPIC_FIELDS)
    slug = get_str(data, "hub", required=True, allow_empty=False)
    intent = get_str(data, "intent", required=True, allow_empty=False, max_len=MAX_INTENT).strip()
    k = get_int(data, "k", default=8, low=2, high=20)
    hub = await _public_hub(request, slug)
    qvec, dim, why_not = await question_vector(request, hub["id"], intent)
    docs = await reads.topic_reading_list(state.db, hub["id"], intent, k, qvec=qvec, dim=dim,
                                          k1=state.settings.bm25_k1, b=state.settings.bm25_b,
                                          doc_url=lambda i: doc_url(request, i))
    body = {"hub": slug, "intent": intent, "mode": "hybrid" if qvec is not None else "fulltext", "docs": docs}
    if why_not:
        body["vector_note"] = why_not
    return JSONResponse(body)


routes = [
    Route("/api/docs/{doc_id}/related", related_endpoint, methods=["GET"]),
    Route("/api/docs/{doc_id}/enrichment", enrichment_endpoint, methods=["GET"]),
    Route("/api/hub/{slug}/digest", digest_endpoint, methods=["GET"]),
    Route("/api/hub/{slug}/suggestions", suggestions_endpoint, methods=["GET"]),
    Route("/api/hub/{slug}/suggestions/{suggestion_id}/accept", accept_endpoint, methods=["POST"]),
    Route("/api/hub/{slug}/suggestions/{suggestion_id}/dismiss", dismiss_endpoint, methods=["POST"]),
    Route("/api/bundles/suggest", topic_endpoint, methods=["POST"]),
]
