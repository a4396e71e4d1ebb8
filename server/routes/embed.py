"""Explicit, idempotent index refresh for one doc or bundle."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from ..services import indexing
from ..web.openapi import json_response, operation
from ..web.params import credentials
from ..web.ratelimit import client_key
from ..web.state import app_state

REPORT = {"type": "object", "description": '{"embedded": {...counts}} or {"skipped": "unchanged"}'}


@operation(
    "Index one doc now (idempotent: an unchanged doc costs no embedding call; a doc you may not read is 404)",
    auth=True,
    errors=(404, 409),
    limited=True,
    responses={200: json_response(REPORT, "What was embedded")},
)
async def embed_doc(request: Request) -> Response:
    return JSONResponse(
        await indexing.reindex_doc(app_state(request), credentials(request), request.path_params["doc_id"])
    )


@operation(
    "Index one bundle now (idempotent)",
    errors=(404, 409),
    limited=True,
    responses={200: json_response(REPORT, "What was embedded")},
)
async def embed_bundle(request: Request) -> Response:
    return JSONResponse(
        await indexing.reindex_bundle(app_state(request), client_key(request), request.path_params["bundle_id"])
    )


routes = [
    Route("/api/embed/bundle/{bundle_id}", embed_bundle, methods=["POST"]),
    Route("/api/embed/{doc_id}", embed_doc, methods=["POST"]),
]
