"""A hub as a folder of files: the owner's export (a zip), and what an import of a folder asks first."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from ..errors import BadRequest
from ..services import export, importing
from ..services.importing import MAX_LOOKUP
from ..web.openapi import NULLABLE_TEXT, TEXT, body_schema, json_response, obj, operation
from ..web.params import credentials, flag
from ..web.state import app_state
from ..web.urls import urls
from ..web.validate import get_str_list, read_json

LOOKUP_FIELDS = ("external_ids",)
FOUND = obj(
    ["docs"],
    docs={
        "type": "array",
        "items": obj(
            [
                "external_id",
                "id",
                "url",
                "deleted",
                "source_hash",
                "source",
                "meta",
                "is_draft",
                "password_hash",
                "allowed_emails",
            ],
            external_id=TEXT,
            id=TEXT,
            url=TEXT,
            deleted={"type": "boolean"},
            source_hash={**TEXT, "description": "sha256 of the title, a newline and the markdown"},
            source=NULLABLE_TEXT,
            meta={"type": "object"},
            is_draft={"type": "boolean"},
            password_hash=NULLABLE_TEXT,
            allowed_emails={"type": "array", "items": TEXT},
        ),
    },
)


@operation(
    "Download the hub as a zip of markdown files (owner only): every page, its bundles, its versions",
    auth=True,
    errors=(401, 403, 404),
    query={"versions": {"type": "string", "description": "1: every earlier version of each page too"}},
    responses={
        200: {
            "description": "The export (docs/export.md describes its folder)",
            "content": {"application/zip": {"schema": {"type": "string", "contentMediaType": "application/zip"}}},
        }
    },
)
async def export_hub(request: Request) -> Response:
    taken = await export.export_hub(
        app_state(request),
        credentials(request),
        urls(request),
        request.path_params["slug"],
        versions=flag(request, "versions"),
    )
    return StreamingResponse(
        taken.chunks,
        media_type="application/zip",
        headers={"Content-Disposition": f'attachment; filename="{taken.filename}"', "Cache-Control": "no-store"},
    )


@operation(
    "Which of these importer ids name a page of the hub (owner only)",
    auth=True,
    body=body_schema(
        ["external_ids"],
        external_ids={"type": "array", "items": {"type": "string", "maxLength": 300}, "maxItems": MAX_LOOKUP},
    ),
    errors=(400, 401, 403, 404, 413),
    responses={200: json_response(FOUND, "The pages found")},
)
async def lookup(request: Request) -> Response:
    data = await read_json(request, fields=LOOKUP_FIELDS)
    keys = get_str_list(data, "external_ids", max_items=MAX_LOOKUP)
    if keys is None:
        raise BadRequest("missing_field", "'external_ids' is required")
    if any(len(k) > 300 for k in keys):
        raise BadRequest("invalid_field", "an importer id is at most 300 characters")
    return JSONResponse(
        await importing.lookup(
            app_state(request), credentials(request), urls(request), request.path_params["slug"], keys
        )
    )


routes = [
    Route("/api/hub/{slug}/export", export_hub, methods=["GET"]),
    Route("/api/hub/{slug}/lookup", lookup, methods=["POST"]),
]
