"""Version history over HTTP: list a doc's versions, read one, restore one."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from ..errors import BadRequest
from ..services import versions
from ..services.versions import MAX_VERSION
from ..web.openapi import NULLABLE_TEXT, TEXT, body_schema, json_response, obj, operation
from ..web.params import DIGITS, credentials, doc_id_param, expected_version
from ..web.schemas import DOC, READ_HEADERS
from ..web.state import app_state
from ..web.urls import urls
from ..web.validate import get_int, read_json, read_optional_json

RESTORE_FIELDS = ("version",)

# ---- the contract (server/web/openapi.py)
_VERSION_NUMBER = {"type": "integer", "minimum": 1, "maximum": MAX_VERSION}
ENTRY = obj(
    ["version", "saved_at", "size", "title", "via", "action", "restored_from", "deleted", "current"],
    version=_VERSION_NUMBER,
    saved_at=TEXT,
    size={"type": "integer", "description": "bytes of markdown"},
    title=TEXT,
    via={**NULLABLE_TEXT, "description": "the credential that saved it: owner, edit_token, anonymous"},
    action={**NULLABLE_TEXT, "description": "create, edit, import, restore or delete"},
    restored_from={"type": ["integer", "null"]},
    deleted={"type": "boolean"},
    current={"type": "boolean", "description": "the doc as it is now"},
)
VERSIONS = obj(
    ["id", "url", "version", "deleted", "versions"],
    id=TEXT,
    url=TEXT,
    version={"type": "integer"},
    deleted={"type": "boolean"},
    versions={"type": "array", "items": ENTRY},
)
VERSION = {
    **ENTRY,
    "required": [*ENTRY["required"], "id", "markdown", "meta", "source"],
    "properties": {
        **ENTRY["properties"],
        "id": TEXT,
        "markdown": TEXT,
        "meta": {"type": "object"},
        "source": NULLABLE_TEXT,
    },
}
RESTORED = {
    **DOC,
    "required": [*DOC["required"], "restored_from", "changed"],
    "properties": {
        **DOC["properties"],
        "restored_from": {"type": "integer"},
        "changed": {"type": "boolean", "description": "false: that version is the current text"},
    },
}


def _number(raw: str) -> int:
    if not DIGITS.fullmatch(raw):
        raise BadRequest("invalid_version", f"a version is a whole number from 1, not {raw[:40]!r}")
    number = int(raw)
    if not 1 <= number <= MAX_VERSION:
        raise BadRequest("out_of_range", f"a version is between 1 and {MAX_VERSION}")
    return number


@operation(
    "A doc's versions, newest first (as private as the doc; a deleted doc's: its owner only)",
    auth=True,
    headers=READ_HEADERS,
    query={"access": TEXT},
    errors=(404,),
    responses={200: json_response(VERSIONS, "The versions")},
)
async def list_versions(request: Request) -> Response:
    return JSONResponse(
        await versions.list_versions(app_state(request), credentials(request), urls(request), doc_id_param(request))
    )


@operation(
    "One version of a doc, with its markdown",
    auth=True,
    headers=READ_HEADERS,
    query={"access": TEXT},
    errors=(400, 404),
    path={"version": {"type": "string", "pattern": "^[0-9]+$", "description": "the version number"}},
    responses={200: json_response(VERSION, "That version")},
)
async def get_version(request: Request) -> Response:
    doc_id = doc_id_param(request)
    number = _number(request.path_params["version"])
    return JSONResponse(await versions.get_version(app_state(request), credentials(request), doc_id, number))


@operation(
    "Restore a version: a new version with its title, markdown and meta, re-indexed like an edit "
    "(a deleted doc comes back through its hub owner's token)",
    auth=True,
    body=body_schema(["version"], version=_VERSION_NUMBER),
    headers={"If-Match": TEXT, "X-Edit-Token": TEXT},
    errors=(400, 401, 403, 404, 409, 413),
    responses={200: json_response(RESTORED, "The doc as restored")},
)
async def restore(request: Request) -> Response:
    doc_id = doc_id_param(request)
    data = await read_json(request, fields=RESTORE_FIELDS)
    if data.get("version") is None:
        raise BadRequest("missing_field", "'version' is required: the version number to restore")
    number = get_int(data, "version", default=0, low=1, high=MAX_VERSION)
    expected = expected_version(request)
    return JSONResponse(
        await versions.restore(app_state(request), credentials(request), urls(request), doc_id, number, expected)
    )


@operation(
    "Bring a deleted doc back from the trash, as a new version with the text it had (the hub's owner "
    "token or the owner's session; for a doc in no hub, its edit token)",
    auth=True,
    headers={"X-Edit-Token": TEXT},
    body=body_schema(()),
    errors=(400, 401, 403, 404, 409, 413),
    responses={200: json_response(RESTORED, "The doc, live again")},
)
async def undelete(request: Request) -> Response:
    doc_id = doc_id_param(request)
    await read_optional_json(request, fields=())  # an empty body, or {}
    return JSONResponse(await versions.undelete(app_state(request), credentials(request), urls(request), doc_id))


routes = [
    Route("/api/docs/{doc_id}/versions", list_versions, methods=["GET"]),
    Route("/api/docs/{doc_id}/versions/{version}", get_version, methods=["GET"]),
    Route("/api/docs/{doc_id}/restore", restore, methods=["POST"]),
    Route("/api/docs/{doc_id}/undelete", undelete, methods=["POST"]),
]
