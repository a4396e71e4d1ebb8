"""POST /api/hub/{slug}/recall: the public recall endpoint (chunks, docs or bundles that answer a question)."""

from __future__ import annotations

import logging
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from ..openapi import TEXT, body_schema, json_response, obj, operation
from .. import recall
from ..embedders import EmbedderError
from ..errors import ApiError, unknown_hub
from ..store.hubs import find_hub
from ..store.space import current_space, vector_backlog
from ..validate import get_bool, get_int, get_str, read_json
from ..web import app_state, bundle_url, doc_url

log = logging.getLogger("memorywiki.recall")

LEVELS = ("chunk", "doc", "bundle")
MAX_QUESTION = 4000
FIELDS = ("question", "k", "level", "hybrid")

RECALL_BODY = body_schema(
    ["question"], question={"type": "string", "maxLength": MAX_QUESTION, "examples": ["how do I restart the database?"]},
    k={"type": ["integer", "null"], "minimum": 1, "maximum": 50, "description": "results wanted (default 5)"},
    level={"type": ["string", "null"], "enum": [*LEVELS, None], "description": "chunk (default), doc or bundle"},
    hybrid={"type": ["boolean", "null"], "description": "default true: vector and full text fused; false: vector only"})
RECALL = obj(["hub", "level", "k", "mode", "vector", "results"], hub=TEXT, level={"enum": list(LEVELS)},
             k={"type": "integer"}, mode={"enum": ["hybrid", "vector", "fulltext"]},
             vector={"enum": ["ok", "unavailable"]},
             vector_note={"type": "string", "description": "why vectors were not used, in plain words"},
             results={"type": "array", "items": {"type": "object", "description": (
                 "chunk: markdown, heading_path, doc_id, doc_url, title, chunk_id and the scores; "
                 "doc: doc_id, doc_url, title, markdown and the scores; bundle: bundle_id, bundle_url, "
                 "title, description, similarity")}})


def _pages(n: int) -> str:
    return f"{n} page{'' if n == 1 else 's'}"


async def _query_vector(request: Request, hub_id: int,
                        question: str) -> tuple[list[float] | None, int | None, str]:
    """The question's vector, or why there is none, in words a user understands (recall
    then answers from full text)."""
    state = app_state(request)
    if state.embedder is None:
        return None, None, "no embedder configured: answering from full text"
    async with state.db.public.connection() as conn:
        space = await current_space(conn)
    if space is None or space[0] != state.embedder.name:
        async with state.db.owner.connection() as conn:
            owed, replaced = await vector_backlog(conn, hub_id)
        if (replaced or space is not None) and owed:
            return None, None, f"re-indexing after an embedder change: {_pages(owed)} left"
        if replaced or space is not None:
            return None, None, "re-indexing after an embedder change: answering from full text"
        if owed:
            return None, None, f"vectors not ready yet: {_pages(owed)} still indexing"
        return None, None, "vectors not ready yet: answering from full text"
    try:
        [vector] = await state.embedder.embed([question])
    except EmbedderError as exc:
        log.warning("query embedding failed, answering from full text: %s", exc)
        return None, None, "the embedder is unreachable: answering from full text"
    return vector, space[1], ""


def _round(value: Any) -> Any:
    return round(value, 6) if isinstance(value, float) else value


def check_question(question: str) -> str:
    if len(question) > MAX_QUESTION:
        raise ApiError(400, "question_too_long", f"'question' is longer than {MAX_QUESTION} characters")
    return question


@operation("Recall: the chunks, docs or bundles of a hub that answer a question", body=RECALL_BODY,
           errors=(400, 404, 413), responses={200: json_response(RECALL, "The results and the mode that ran")})
async def recall_endpoint(request: Request) -> Response:
    state = app_state(request)
    slug = request.path_params["slug"]
    data = await read_json(request, state.settings.max_query_bytes, fields=FIELDS)
    question = check_question(get_str(data, "question", required=True, allow_empty=False))
    k = get_int(data, "k", default=5, low=1, high=50)
    level = get_str(data, "level", default="chunk")
    if level not in LEVELS:
        raise ApiError(400, "unknown_level", f"'level' must be one of {', '.join(LEVELS)}")
    hybrid = get_bool(data, "hybrid", default=True)  # the API, the CLI and MCP agree
    return JSONResponse(await answer(request, slug, question, k=k, level=level, hybrid=hybrid))


async def answer(request: Request, slug: str, question: str, *, k: int, level: str, hybrid: bool) -> dict[str, Any]:
    """What the recall endpoint answers (the hub page's search box shows the same)."""
    state = app_state(request)
    async with state.db.public.connection() as conn:
        hub = await find_hub(conn, slug)
    if hub is None:
        raise unknown_hub(slug)

    qvec, dim, why_not = await _query_vector(request, hub["id"], question)
    settings = state.settings
    async with state.db.public.connection() as conn:
        if level == "chunk":
            rows = await recall.recall_chunks(conn, hub_id=hub["id"], question=question, k=k, qvec=qvec,
                                              dim=dim, hybrid=hybrid, k1=settings.bm25_k1, b=settings.bm25_b)
            results = [{
                "markdown": r["markdown"], "heading_path": r["heading_path"], "doc_id": r["doc_id"],
                "doc_url": doc_url(request, r["doc_id"]), "title": r["title"], "chunk_id": r["chunk_id"],
                "rrf_score": _round(r["rrf_score"]), "vector_rank": r["vector_rank"], "fts_rank": r["fts_rank"],
                "similarity": _round(r["similarity"]), "fts_score": _round(r["fts_score"]),
            } for r in rows]
        elif level == "doc":
            rows = await recall.recall_docs(conn, hub_id=hub["id"], question=question, k=k, qvec=qvec,
                                            dim=dim, hybrid=hybrid, k1=settings.bm25_k1, b=settings.bm25_b)
            results = [{
                "doc_id": r["doc_id"], "doc_url": doc_url(request, r["doc_id"]), "title": r["title"],
                "markdown": r["markdown"], "similarity": _round(r["similarity"]),
                "rrf_score": _round(r["rrf_score"]), "vector_rank": r["vector_rank"], "fts_rank": r["fts_rank"],
                "fts_score": _round(r["fts_score"]),
            } for r in rows]
        else:
            rows = await recall.recall_bundles(conn, hub_id=hub["id"], question=question, k=k, qvec=qvec, dim=dim)
            results = [{
                "bundle_id": r["bundle_id"], "bundle_url": bundle_url(request, r["bundle_id"]),
                "title": r["title"], "description": r["description"], "similarity": _round(r["similarity"]),
            } for r in rows]

    if qvec is None:
        mode = "fulltext"
    elif level == "bundle":
        mode = "vector"
    else:
        mode = "hybrid" if hybrid else "vector"
    body: dict[str, Any] = {"hub": slug, "level": level, "k": k, "mode": mode,
                            "vector": "ok" if qvec is not None else "unavailable", "results": results}
    if why_not:
        body["vector_note"] = why_not
    return body


routes = [Route("/api/hub/{slug}/recall", recall_endpoint, methods=["POST"])]
