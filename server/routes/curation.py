"""Curation over HTTP: related docs, the concept digest, suggested bundles (and accepting
one), a topic's reading list, and a doc's enrichment as JSON."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from ..services import curation
from ..services.curation import MAX_INTENT
from ..web.negotiate import markdown_response
from ..web.openapi import NULLABLE_TEXT, TEXT, body_schema, json_response, obj, operation
from ..web.params import credentials, flag
from ..web.schemas import REDACTED
from ..web.state import app_state
from ..web.urls import urls
from ..web.validate import get_int, get_str, query_int, read_json

ACCEPT_FIELDS = ("title", "description")
TOPIC_FIELDS = ("hub", "intent", "k")

_ITEMS = {"type": "array", "items": {"type": "object"}}
_K = {"k": {"type": "string", "pattern": "^[0-9]+$", "description": "how many (an integer, default 5)"}}
RELATED = obj(["id", "k", "results"], id=TEXT, k={"type": "integer"}, results=_ITEMS)
ENRICHMENT = obj(
    ["id", "status", "model", "missing", "data", "bundles", "calls", "tokens"],
    id=TEXT,
    status={"enum": ["model", "extractive", "pending"]},
    model=NULLABLE_TEXT,
    missing={"type": "array", "items": TEXT},
    data={"type": ["object", "null"]},
    bundles={"type": "array"},
    calls={"type": "integer"},
    tokens={"type": "integer"},
)
DIGEST = obj(["hub", "url", "docs", "concepts"], hub=TEXT, url=TEXT, docs={"type": "integer"}, concepts=_ITEMS)
SUGGESTIONS = obj(["hub", "suggestions"], hub=TEXT, suggestions=_ITEMS)
ACCEPTED = obj(
    ["id", "url", "title", "doc_ids", "suggestion", "redacted"],
    id=TEXT,
    url=TEXT,
    title=TEXT,
    doc_ids={"type": "array", "items": TEXT},
    suggestion=TEXT,
    redacted={**REDACTED, "description": "what was redacted from the title and description (docs/secrets.md)"},
)
READING_LIST = obj(
    ["hub", "intent", "mode", "docs"],
    hub=TEXT,
    intent=TEXT,
    mode={"enum": ["hybrid", "fulltext"]},
    docs=_ITEMS,
    vector_note=TEXT,
)


@operation(
    "Nearest public docs of the doc's hub (by vector, then shared concepts)",
    tag="curation",
    query=_K,
    auth=True,
    errors=(400, 404),
    responses={200: json_response(RELATED, "Related docs")},
)
async def related_endpoint(request: Request) -> Response:
    k = query_int(request, "k", default=5, low=1, high=50)
    return JSONResponse(
        await curation.related(
            app_state(request), credentials(request), urls(request), request.path_params["doc_id"], k
        )
    )


@operation(
    "A doc's enrichment (summary, themes, concepts...) as JSON",
    tag="curation",
    auth=True,
    errors=(404,),
    responses={200: json_response(ENRICHMENT, "The enrichment, or pending")},
)
async def enrichment_endpoint(request: Request) -> Response:
    return JSONResponse(
        await curation.enrichment(
            app_state(request), credentials(request), urls(request), request.path_params["doc_id"]
        )
    )


@operation(
    "The hub's concept digest (JSON; format=markdown for markdown)",
    tag="curation",
    errors=(404,),
    query={"format": {"type": "string", "enum": ["json", "markdown"]}, "compact": TEXT},
    responses={
        200: {
            "description": "The digest",
            "content": {"application/json": {"schema": DIGEST}, "text/markdown": {"schema": TEXT}},
        }
    },
)
async def digest_endpoint(request: Request) -> Response:
    """JSON digest; `?format=markdown` gives the markdown one."""
    slug = request.path_params["slug"]
    if request.query_params.get("format") == "markdown":
        return markdown_response(
            await curation.digest_text(app_state(request), urls(request), slug, compact=flag(request, "compact"))
        )
    return JSONResponse(await curation.digest(app_state(request), urls(request), slug))


@operation(
    "Suggested bundles of the hub",
    tag="curation",
    errors=(404,),
    responses={200: json_response(SUGGESTIONS, "Open suggestions")},
)
async def suggestions_endpoint(request: Request) -> Response:
    return JSONResponse(await curation.suggestions(app_state(request), urls(request), request.path_params["slug"]))


@operation(
    "Accept a suggested bundle (owner token; an empty body takes it as offered)",
    tag="curation",
    auth=True,
    body=body_schema(
        (),
        title={"type": ["string", "null"], "maxLength": 500},
        description={"type": ["string", "null"], "maxLength": 5000},
    ),
    errors=(400, 401, 403, 404, 409, 413),
    responses={201: json_response(ACCEPTED, "The bundle made")},
)
async def accept_endpoint(request: Request) -> Response:
    """Owner only: turn a suggestion into a bundle (title/description may be overridden)."""
    # an empty body accepts the suggestion as offered
    data = await read_json(request, fields=ACCEPT_FIELDS) if (await request.body()).strip() else {}
    title = get_str(data, "title", max_len=500)
    description = get_str(data, "description", max_len=5000)
    body = await curation.accept(
        app_state(request),
        credentials(request),
        urls(request),
        request.path_params["slug"],
        request.path_params["suggestion_id"],
        title=title,
        description=description,
    )
    return JSONResponse(body, status_code=201)


@operation(
    "Dismiss a suggested bundle for good (owner token)",
    tag="curation",
    auth=True,
    errors=(401, 403, 404, 409),
    responses={200: json_response(obj(["id", "status"], id=TEXT, status={"const": "dismissed"}), "Dismissed")},
)
async def dismiss_endpoint(request: Request) -> Response:
    """Owner only: never offer this group again."""
    return JSONResponse(
        await curation.dismiss(
            app_state(request), credentials(request), request.path_params["slug"], request.path_params["suggestion_id"]
        )
    )


@operation(
    "A topic's docs in a reading order, one line each on why",
    tag="curation",
    body=body_schema(
        ["hub", "intent"],
        hub={"type": "string", "examples": ["notes"]},
        intent={"type": "string", "maxLength": MAX_INTENT},
        k={"type": ["integer", "null"], "minimum": 2, "maximum": 20},
    ),
    errors=(400, 404, 413),
    responses={200: json_response(READING_LIST, "The reading list")},
)
async def topic_endpoint(request: Request) -> Response:
    """POST /api/bundles/suggest {"hub", "intent", "k"}: a reading list for a topic."""
    state = app_state(request)
    data = await read_json(request, state.settings.max_query_bytes, fields=TOPIC_FIELDS)
    slug = get_str(data, "hub", required=True, allow_empty=False)
    intent = get_str(data, "intent", required=True, allow_empty=False, max_len=MAX_INTENT).strip()
    k = get_int(data, "k", default=8, low=2, high=20)
    return JSONResponse(await curation.reading_list(state, urls(request), slug, intent, k))


routes = [
    Route("/api/docs/{doc_id}/related", related_endpoint, methods=["GET"]),
    Route("/api/docs/{doc_id}/enrichment", enrichment_endpoint, methods=["GET"]),
    Route("/api/hub/{slug}/digest", digest_endpoint, methods=["GET"]),
    Route("/api/hub/{slug}/suggestions", suggestions_endpoint, methods=["GET"]),
    Route("/api/hub/{slug}/suggestions/{suggestion_id}/accept", accept_endpoint, methods=["POST"]),
    Route("/api/hub/{slug}/suggestions/{suggestion_id}/dismiss", dismiss_endpoint, methods=["POST"]),
    Route("/api/bundles/suggest", topic_endpoint, methods=["POST"]),
]
