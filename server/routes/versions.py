"""Version history: list a doc's versions, read one, restore one (issue 10, item 3).

Versions are read by exactly the people who can read the doc: without credentials the
reads run on the public pool, where row-level security decides for the doc and its versions
alike; with credentials they are checked on the owner pool, as for the doc itself. A deleted
doc's versions are readable, and restorable, by its owner only (server/auth.require_restore).
A restore is a new version made from an old one's title, markdown and meta (privacy
settings and the hub stay as they are now), re-indexed like any edit.
"""

from __future__ import annotations

import contextlib
from typing import Any, AsyncIterator

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from ..web.auth import can_read_private, edit_credential, refused_credentials, require_restore
from ..errors import BadRequest, NotFound, not_found
from ..web.openapi import NULLABLE_TEXT, TEXT, body_schema, json_response, obj, operation
from ..store import docs as doc_store
from ..store import hubs as hub_store
from ..store import versions as version_store
from ..web.validate import get_int, read_json
from ..web.state import app_state, doc_url
from .docs import DIGITS, DOC, READ_HEADERS, check_version, doc_json, doc_id_param, expected_version, has_credentials

RESTORE_FIELDS = ("version",)
MAX_VERSION = 2**31 - 1  # docs.version is an integer column

# ---- the contract (server/web/openapi.py)
_VERSION_NUMBER = {"type": "integer", "minimum": 1, "maximum": MAX_VERSION}
ENTRY = obj(["version", "saved_at", "size", "title", "via", "action", "restored_from", "deleted", "current"],
            version=_VERSION_NUMBER, saved_at=TEXT, size={"type": "integer", "description": "bytes of markdown"},
            title=TEXT, via={**NULLABLE_TEXT, "description": "the credential that saved it: owner, edit_token, anonymous"},
            action={**NULLABLE_TEXT, "description": "create, edit, import, restore or delete"},
            restored_from={"type": ["integer", "null"]}, deleted={"type": "boolean"},
            current={"type": "boolean", "description": "the doc as it is now"})
VERSIONS = obj(["id", "url", "version", "deleted", "versions"], id=TEXT, url=TEXT, version={"type": "integer"},
               deleted={"type": "boolean"}, versions={"type": "array", "items": ENTRY})
VERSION = {**ENTRY, "required": [*ENTRY["required"], "id", "markdown", "meta", "source"],
           "properties": {**ENTRY["properties"], "id": TEXT, "markdown": TEXT, "meta": {"type": "object"},
                          "source": NULLABLE_TEXT}}
RESTORED = {**DOC, "required": [*DOC["required"], "restored_from", "changed"],
            "properties": {**DOC["properties"], "restored_from": {"type": "integer"},
                           "changed": {"type": "boolean", "description": "false: that version is the current text"}}}


def _number(raw: str) -> int:
    if not DIGITS.fullmatch(raw):
        raise BadRequest("invalid_version", f"a version is a whole number from 1, not {raw[:40]!r}")
    number = int(raw)
    if not 1 <= number <= MAX_VERSION:
        raise BadRequest("out_of_range", f"a version is between 1 and {MAX_VERSION}")
    return number


def unknown_version(doc_id: str, number: int) -> NotFound:
    return NotFound("unknown_version",
                    f"doc {doc_id} has no version {number}; GET /api/docs/{doc_id}/versions lists them")


async def _may_read(conn, request: Request, doc: dict[str, Any]) -> bool:
    if doc["deleted_at"] is None:
        return await can_read_private(conn, request, doc)
    via = await edit_credential(conn, request, doc)  # a deleted doc: its owner only
    return via == "owner" or (via is not None and doc["hub_id"] is None)


@contextlib.asynccontextmanager
async def readable_doc(request: Request, doc_id: str) -> AsyncIterator[tuple[Any, dict[str, Any]]]:
    """(connection, doc) for a doc this request may read; its versions are read on that
    connection, so the public pool's row-level security covers them too."""
    state = app_state(request)
    credentials = has_credentials(request, None)
    if credentials:
        async with state.db.owner.connection() as conn:
            doc = await doc_store.find_any_doc(conn, doc_id)
            if doc is not None and await _may_read(conn, request, doc):
                yield conn, doc
                return
    async with state.db.public.connection() as conn:
        doc = await doc_store.public_doc(conn, doc_id)
        if doc is None:
            if credentials:
                refused_credentials(request)
            raise not_found("doc")
        yield conn, {**doc, "deleted_at": None}


def _entry(row: dict[str, Any], *, current: bool) -> dict[str, Any]:
    return {"version": row["version"], "saved_at": row["saved_at"].isoformat(), "size": row["size"],
            "title": row["title"], "via": row["saved_via"], "action": row["saved_action"],
            "restored_from": row["restored_from"], "deleted": row["deleted"], "current": current}


def _current_entry(doc: dict[str, Any]) -> dict[str, Any]:
    return {**doc, "saved_at": doc["updated_at"], "size": len(doc["markdown"].encode("utf-8")),
            "deleted": doc["deleted_at"] is not None}


@operation("A doc's versions, newest first (as private as the doc; a deleted doc's: its owner only)",
           auth=True, headers=READ_HEADERS, query={"access": TEXT}, errors=(404,),
           responses={200: json_response(VERSIONS, "The versions")})
async def list_versions(request: Request) -> Response:
    doc_id = doc_id_param(request)
    async with readable_doc(request, doc_id) as (conn, doc):
        rows = await version_store.list_versions(conn, doc_id)
    versions = [_entry(_current_entry(doc), current=True)]
    versions += [_entry(row, current=False) for row in rows if row["version"] != doc["version"]]
    return JSONResponse({"id": doc_id, "url": doc_url(request, doc_id), "version": doc["version"],
                         "deleted": doc["deleted_at"] is not None, "versions": versions})


@operation("One version of a doc, with its markdown", auth=True, headers=READ_HEADERS, query={"access": TEXT},
           errors=(400, 404),
           path={"version": {"type": "string", "pattern": "^[0-9]+$", "description": "the version number"}},
           responses={200: json_response(VERSION, "That version")})
async def get_version(request: Request) -> Response:
    doc_id = doc_id_param(request)
    number = _number(request.path_params["version"])
    async with readable_doc(request, doc_id) as (conn, doc):
        current = number == doc["version"]
        row = _current_entry(doc) if current else await version_store.get_version(conn, doc_id, number)
    if row is None:
        raise unknown_version(doc_id, number)
    return JSONResponse({"id": doc_id, **_entry(row, current=current), "markdown": row["markdown"],
                         "meta": row["meta"] or {}, "source": row["source"]})


@operation("Restore a version: a new version with its title, markdown and meta, re-indexed like an edit "
           "(a deleted doc comes back through its hub owner's token)", auth=True,
           body=body_schema(["version"], version=_VERSION_NUMBER), headers={"If-Match": TEXT, "X-Edit-Token": TEXT},
           errors=(400, 401, 403, 404, 409, 413), responses={200: json_response(RESTORED, "The doc as restored")})
async def restore(request: Request) -> Response:
    state = app_state(request)
    doc_id = doc_id_param(request)
    data = await read_json(request, fields=RESTORE_FIELDS)
    if data.get("version") is None:
        raise BadRequest("missing_field", "'version' is required: the version number to restore")
    number = get_int(data, "version", default=0, low=1, high=MAX_VERSION)
    expected = expected_version(request)

    async def restore_in(conn):
        doc = await doc_store.lock_any_doc(conn, doc_id)
        if doc is None:
            raise not_found("doc")
        via = await require_restore(conn, request, doc)
        check_version(doc, expected)
        old = doc if number == doc["version"] else await version_store.get_version(conn, doc_id, number)
        if old is None:
            raise unknown_version(doc_id, number)
        changes = {"title": old["title"], "markdown": old["markdown"], "meta": old["meta"] or {},
                   "deleted_at": None}
        updated = await doc_store.update_doc(conn, doc, changes, via=via, action="restore",
                                             restored_from=number)
        return doc, updated, await hub_store.hub_slug(conn, updated["hub_id"])

    doc, updated, slug = await state.db.write(restore_in)
    state.wake_worker()
    body = doc_json(request, updated, slug, owner_view=True)
    body.update({"restored_from": number, "changed": updated["version"] != doc["version"]})
    return JSONResponse(body)


routes = [
    Route("/api/docs/{doc_id}/versions", list_versions, methods=["GET"]),
    Route("/api/docs/{doc_id}/versions/{version}", get_version, methods=["GET"]),
    Route("/api/docs/{doc_id}/restore", restore, methods=["POST"]),
]
