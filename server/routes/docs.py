"""Docs API: create, read, update, soft delete, and access tokens for restricted docs."""

from __future__ import annotations

import re
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from ..errors import ApiError
from ..services import docs
from ..services.docs import MAX_SOURCE, MAX_TITLE, NewDoc, page_content
from ..web.openapi import NULLABLE_TEXT, TEXT, body_schema, json_response, obj, operation
from ..web.params import credentials, doc_id_param, expected_version
from ..web.schemas import DOC, IMPORT_DATES, READ_HEADERS, REDACTED, SHARING
from ..web.state import app_state
from ..web.urls import urls
from ..web.validate import DATE_FIELDS, get_bool, get_dates, get_dict, get_str, get_str_list, read_json

PATCH_FIELDS = ("title", "markdown", "hub", "source", "meta", "is_draft", "password", "allowed_emails")
CREATE_FIELDS = (*PATCH_FIELDS, "external_id", "dedupe", "password_hash", *DATE_FIELDS)
PRIVACY_FIELDS = ("is_draft", "password", "password_hash", "allowed_emails")
ACCESS_FIELDS = ("email",)
EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")

# ---- the contract (server/web/openapi.py): request and response schemas of these routes
_DOC_FIELDS = dict(
    title={"type": "string", "maxLength": MAX_TITLE, "description": "optional when markdown opens with `# Title`"},
    markdown={"type": "string", "description": "the page; a leading `# Title` line becomes the title"},
    hub={"type": ["string", "null"], "description": "the hub's slug (needs its owner token)", "examples": ["notes"]},
    source={"type": ["string", "null"], "maxLength": MAX_SOURCE},
    meta={"type": ["object", "null"]},
    is_draft={"type": ["boolean", "null"]},
    password={"type": ["string", "null"], "description": "only readers who give it see the doc; empty clears it"},
    allowed_emails={"type": ["array", "null"], "items": {"type": "string"}, "maxItems": 500},
)
CREATE_BODY = body_schema(
    ["markdown"],
    **_DOC_FIELDS,
    external_id={
        "type": ["string", "null"],
        "maxLength": 300,
        "description": "an importer's id: saving it again updates the same doc",
    },
    dedupe={
        "type": ["boolean", "null"],
        "description": "default true: the same title and body in a hub answer the existing doc",
    },
    password_hash={
        "type": ["string", "null"],
        "maxLength": 300,
        "description": "instead of 'password': the argon2id hash an export carries (into a hub only)",
    },
    **IMPORT_DATES,
)
PATCH_BODY = body_schema((), **_DOC_FIELDS)
SAVED = obj(
    ["id", "url", "version", "status", "edit_token"],
    id=TEXT,
    url=TEXT,
    version={"type": "integer"},
    status={"enum": ["created", "exists", "updated", "unchanged", "deleted"]},
    edit_token={**NULLABLE_TEXT, "description": "only when created: keep it, it is shown once"},
    message=TEXT,
    sharing={**SHARING, "description": "when the page is shared with addresses (not for an import's save)"},
    redacted=REDACTED,
)


def _emails(data: dict) -> list[str] | None:
    emails = get_str_list(data, "allowed_emails", max_items=500)
    if emails is None:
        return None
    cleaned = sorted({e.strip().lower() for e in emails if e.strip()})
    bad = [e for e in cleaned if not EMAIL.match(e)]
    if bad:
        raise ApiError(400, "invalid_field", f"not an email address: {bad[0]}")
    return cleaned


def _password(data: dict) -> str | None:
    """The password given (an empty string or null clears it)."""
    value = data.get("password")
    if value is None or value == "":
        return None
    if not isinstance(value, str) or len(value) > 1000:
        raise ApiError(400, "invalid_field", "'password' must be a string")
    return value


@operation(
    "Save a page (a new doc, or the hub's existing one with the same content)",
    body=CREATE_BODY,
    auth=True,
    errors=(400, 401, 403, 404, 413),
    responses={201: json_response(SAVED, "Created"), 200: json_response(SAVED, "Already there, or updated")},
)
async def create_doc(request: Request) -> Response:
    data = await read_json(request, fields=CREATE_FIELDS)
    title = get_str(data, "title", max_len=MAX_TITLE, allow_empty=False)
    title, markdown = page_content(title, get_str(data, "markdown", required=True), max_title=MAX_TITLE)
    hub = get_str(data, "hub")
    source = get_str(data, "source", max_len=MAX_SOURCE)
    meta = get_dict(data, "meta", default={})
    is_draft = get_bool(data, "is_draft", default=False)
    password = _password(data)
    emails = _emails(data) or []
    # A blank id is no id: stored as "" it would make the hub's second blank-id save a
    # unique-key violation (a 500) instead of a new page.
    external_id = get_str(data, "external_id", max_len=300)
    if external_id is not None and not external_id.strip():
        external_id = None
    dedupe = get_bool(data, "dedupe", default=True)
    password_hash = get_str(data, "password_hash", max_len=300) or None
    new = NewDoc(
        title=title,
        markdown=markdown,
        hub=hub,
        source=source,
        meta=meta,
        is_draft=is_draft,
        password=password,
        allowed_emails=emails,
        external_id=external_id,
        dedupe=dedupe,
        password_hash=password_hash,
        named=frozenset(f for f in PRIVACY_FIELDS if f in data),
        dates=get_dates(data),
    )
    body = await docs.create(app_state(request), credentials(request), urls(request), new)
    return JSONResponse(body, status_code=201 if body["status"] == "created" else 200)


@operation(
    "Read a doc (private fields only with a credential that may edit it)",
    auth=True,
    headers=READ_HEADERS,
    query={"access": TEXT},
    errors=(404,),
    responses={200: json_response(DOC, "The doc")},
)
async def get_doc(request: Request) -> Response:
    return JSONResponse(
        await docs.read(app_state(request), credentials(request), urls(request), request.path_params["doc_id"])
    )


@operation(
    "Edit a doc (edit token or hub owner token); If-Match: the version you read",
    body=PATCH_BODY,
    auth=True,
    headers={"If-Match": TEXT, "X-Edit-Token": TEXT},
    errors=(400, 401, 403, 404, 409, 413),
    responses={200: json_response(DOC, "The doc as saved")},
)
async def patch_doc(request: Request) -> Response:
    doc_id = doc_id_param(request)
    data = await read_json(request, fields=PATCH_FIELDS)
    changes: dict[str, Any] = {}
    if "title" in data:
        changes["title"] = get_str(data, "title", required=True, max_len=MAX_TITLE, allow_empty=False).strip()
    if "markdown" in data:
        changes["markdown"] = get_str(data, "markdown", required=True)
    if "source" in data:
        changes["source"] = get_str(data, "source", max_len=MAX_SOURCE)
    if "meta" in data:
        changes["meta"] = get_dict(data, "meta", default={})
    if "is_draft" in data:
        changes["is_draft"] = get_bool(data, "is_draft", default=False)
    if "password" in data:
        changes["password"] = _password(data)
    if "allowed_emails" in data:
        changes["allowed_emails"] = _emails(data) or []
    if "hub" in data:
        changes["hub"] = get_str(data, "hub")
    expected = expected_version(request)
    return JSONResponse(
        await docs.edit(app_state(request), credentials(request), urls(request), doc_id, changes, expected)
    )


@operation(
    "Delete a doc (soft: it leaves every public read at once)",
    auth=True,
    headers={"X-Edit-Token": TEXT},
    errors=(401, 403, 404),
    responses={200: json_response(obj(["id", "deleted"], id=TEXT, deleted={"const": True}), "Deleted")},
)
async def delete_doc(request: Request) -> Response:
    return JSONResponse(await docs.delete(app_state(request), credentials(request), doc_id_param(request)))


@operation(
    "Give an allowed reader of an email-restricted doc an access token",
    auth=True,
    body=body_schema(["email"], email={"type": "string", "maxLength": 320}),
    headers={"X-Edit-Token": TEXT},
    errors=(400, 401, 403, 404, 413),
    responses={
        201: json_response(
            obj(["access_token", "email", "url"], access_token=TEXT, email=TEXT, url=TEXT),
            "The token and a URL that carries it",
        )
    },
)
async def issue_access(request: Request) -> Response:
    """The owner of an email-restricted doc issues a reader an access token."""
    doc_id = doc_id_param(request)
    data = await read_json(request, fields=ACCESS_FIELDS)
    email = get_str(data, "email", required=True, max_len=320).strip().lower()
    body = await docs.issue_access(app_state(request), credentials(request), urls(request), doc_id, email)
    return JSONResponse(body, status_code=201)


routes = [
    Route("/api/docs", create_doc, methods=["POST"]),
    Route("/api/docs/{doc_id}", get_doc, methods=["GET"]),
    Route("/api/docs/{doc_id}", patch_doc, methods=["PATCH"]),
    Route("/api/docs/{doc_id}", delete_doc, methods=["DELETE"]),
    Route("/api/docs/{doc_id}/access", issue_access, methods=["POST"]),
]
