"""Explicit, idempotent index refresh for one doc or bundle."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from ..web.openapi import json_response, operation
from ..embedding.base import EmbedderError
from ..errors import Conflict, Unavailable, not_found
from ..indexing.indexer import index_bundle, index_docs
from ..tokens import looks_like_id
from ..web.state import app_state


def _embedder(request: Request):
    embedder = app_state(request).embedder
    if embedder is None:
        raise Conflict("embedder_unavailable",
                       "no embedder is configured (MEMORYWIKI_EMBEDDER); full-text recall still works")
    return embedder


REPORT = {"type": "object", "description": '{"embedded": {...counts}} or {"skipped": "unchanged"}'}


@operation("Index one doc now (idempotent: an unchanged doc costs no embedding call)", errors=(404, 409), limited=True,
           responses={200: json_response(REPORT, "What was embedded")})
async def embed_doc(request: Request) -> Response:
    state = app_state(request)
    state.limits.spend(request, "embed")
    doc_id = request.path_params["doc_id"]
    if not looks_like_id(doc_id):
        raise not_found("doc")
    try:
        reports = await index_docs(state.db, _embedder(request), [doc_id], state.settings.edge_rule)
    except EmbedderError as exc:
        raise Unavailable("embedder_failed", f"the embedder failed; the doc stays owed: {exc}") from None
    if reports.get(doc_id) is None:
        raise not_found("doc")
    return JSONResponse(reports[doc_id])


@operation("Index one bundle now (idempotent)", errors=(404, 409), limited=True,
           responses={200: json_response(REPORT, "What was embedded")})
async def embed_bundle(request: Request) -> Response:
    state = app_state(request)
    state.limits.spend(request, "embed")
    bundle_id = request.path_params["bundle_id"]
    if not looks_like_id(bundle_id):
        raise not_found("bundle")
    try:
        report = await index_bundle(state.db, _embedder(request), bundle_id)
    except EmbedderError as exc:
        raise Unavailable("embedder_failed", f"the embedder failed; the bundle stays owed: {exc}") from None
    if report is None:
        raise not_found("bundle")
    return JSONResponse(report)


routes = [
    Route("/api/embed/bundle/{bundle_id}", embed_bundle, methods=["POST"]),
    Route("/api/embed/{doc_id}", embed_doc, methods=["POST"]),
]
