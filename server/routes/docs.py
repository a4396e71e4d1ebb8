"""Docs API: create, read, update, soft delete, and access tokens for restricted docs."""

from __future__ import annotations

import re
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from memorywiki.formats.mdutil import split_title

from ..web.auth import can_edit, can_read_private, refused_credentials, require_edit, require_hub_owner
from ..errors import ApiError, Conflict, not_found
from ..web.openapi import NULLABLE_TEXT, TEXT, body_schema, json_response, obj, operation
from ..store import access as access_store
from ..store import docs as doc_store
from ..store import graph as graph_store
from ..store import hubs as hub_store
from ..tokens import hash_password, hash_token, looks_like_id, new_token
from ..web.validate import get_bool, get_dict, get_str, get_str_list, page_content, read_json
from ..web.state import app_state, doc_url

MAX_TITLE = 500
MAX_SOURCE = 200
PATCH_FIELDS = ("title", "markdown", "hub", "source", "meta", "is_draft", "password", "allowed_emails")
CREATE_FIELDS = (*PATCH_FIELDS, "external_id", "dedupe")
ACCESS_FIELDS = ("email",)
EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")
DIGITS = re.compile(r"[0-9]+")

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
CREATE_BODY = body_schema(["markdown"], **_DOC_FIELDS,
                          external_id={"type": ["string", "null"], "maxLength": 300,
                                       "description": "an importer's id: saving it again updates the same doc"},
                          dedupe={"type": ["boolean", "null"],
                                  "description": "default true: the same title and body in a hub answer the existing doc"})
PATCH_BODY = body_schema((), **_DOC_FIELDS)
SAVED = obj(["id", "url", "version", "status", "edit_token"], id=TEXT, url=TEXT, version={"type": "integer"},
            status={"enum": ["created", "exists", "updated", "unchanged", "deleted"]},
            edit_token={**NULLABLE_TEXT, "description": "only when created: keep it, it is shown once"},
            message=TEXT)
DOC = obj(["id", "url", "title", "markdown", "hub", "source", "meta", "version", "created_at", "updated_at"],
          id=TEXT, url=TEXT, title=TEXT, markdown=TEXT, hub=NULLABLE_TEXT, source=NULLABLE_TEXT,
          meta={"type": "object"}, version={"type": "integer"}, created_at=TEXT, updated_at=TEXT,
          is_draft={"type": "boolean"}, has_password={"type": "boolean"},
          allowed_emails={"type": "array", "items": TEXT}, indexed={"type": "boolean"})
READ_HEADERS = {"X-Doc-Password": TEXT, "X-Doc-Access": TEXT, "X-Edit-Token": TEXT}


def _emails(data: dict) -> list[str] | None:
    emails = get_str_list(data, "allowed_emails", max_items=500)
    if emails is None:
        return None
    cleaned = sorted({e.strip().lower() for e in emails if e.strip()})
    bad = [e for e in cleaned if not EMAIL.match(e)]
    if bad:
        raise ApiError(400, "invalid_field", f"not an email address: {bad[0]}")
    return cleaned


def _password(data: dict) -> tuple[bool, str | None]:
    """(given, hash): an empty string or null clears the password."""
    if "password" not in data:
        return False, None
    value = data["password"]
    if value is None or value == "":
        return True, None
    if not isinstance(value, str) or len(value) > 1000:
        raise ApiError(400, "invalid_field", "'password' must be a string")
    return True, hash_password(value)


def doc_json(request: Request, doc: dict[str, Any], hub_slug: str | None, *, owner_view: bool) -> dict[str, Any]:
    body = {
        "id": doc["id"], "url": doc_url(request, doc["id"]), "title": doc["title"],
        "markdown": doc["markdown"], "hub": hub_slug, "source": doc.get("source"),
        "meta": doc.get("meta") or {}, "version": doc["version"],
        "created_at": doc["created_at"].isoformat(), "updated_at": doc["updated_at"].isoformat(),
    }
    if owner_view:
        body.update({
            "is_draft": doc["is_draft"], "has_password": doc["password_hash"] is not None,
            "allowed_emails": doc["allowed_emails"],
            "indexed": doc["embedded_hash"] == doc["source_hash"],
        })
    return body


@operation("Save a page (a new doc, or the hub's existing one with the same content)",
           body=CREATE_BODY, auth=True, errors=(400, 401, 403, 404, 413),
           responses={201: json_response(SAVED, "Created"), 200: json_response(SAVED, "Already there, or updated")})
async def create_doc(request: Request) -> Response:
    state = app_state(request)
    data = await read_json(request, fields=CREATE_FIELDS)
    title = get_str(data, "title", max_len=MAX_TITLE, allow_empty=False)
    title, markdown = page_content(title, get_str(data, "markdown", required=True), max_title=MAX_TITLE)
    hub_slug = get_str(data, "hub")
    source = get_str(data, "source", max_len=MAX_SOURCE)
    meta = get_dict(data, "meta", default={})
    is_draft = get_bool(data, "is_draft", default=False)
    _, password_hash = _password(data)
    emails = _emails(data) or []
    # A blank id is no id: stored as "" it would make the hub's second blank-id save a
    # unique-key violation (a 500) instead of a new page.
    external_id = get_str(data, "external_id", max_len=300)
    if external_id is not None and not external_id.strip():
        external_id = None
    dedupe = get_bool(data, "dedupe", default=True)
    if external_id is not None and not hub_slug:
        raise ApiError(400, "missing_field", "'external_id' needs a 'hub': ids are unique per hub")
    edit_token = new_token("mwe")

    async def save(conn):
        hub = await require_hub_owner(conn, request, hub_slug) if hub_slug else None
        return await doc_store.save_doc(
            conn, hub_id=hub["id"] if hub else None, external_id=external_id, title=title,
            markdown=markdown, source=source, meta=meta, is_draft=is_draft,
            password_hash=password_hash, allowed_emails=emails, edit_token_hash=hash_token(edit_token),
            via="owner" if hub else "anonymous", dedupe=dedupe)

    doc, status = await state.db.write(save)
    state.wake_worker()
    body = {"id": doc["id"], "url": doc_url(request, doc["id"]), "version": doc["version"], "status": status,
            "edit_token": edit_token if status == "created" else None}
    if status == "exists":
        body["message"] = already_captured(request, doc["id"])
    return JSONResponse(body, status_code=201 if status == "created" else 200)


def already_captured(request: Request, doc_id: str) -> str:
    return f"already captured as {doc_url(request, doc_id)}; send \"dedupe\": false for a separate page"


async def _lock_for_edit(conn, request: Request, doc_id: str) -> tuple[dict[str, Any], str]:
    """The doc, row-locked for this transaction, once the request proved it may edit it, and
    the credential that proved it ("owner" or "edit_token")."""
    doc = await doc_store.lock_doc(conn, doc_id)
    if doc is None:
        raise not_found("doc")
    return doc, await require_edit(conn, request, doc)


def expected_version(request: Request) -> int | None:
    """The version an If-Match header names (`3`, `"3"` or `W/"3"`), or None without one."""
    if_match = request.headers.get("if-match")
    if if_match is None:
        return None
    cleaned = if_match.strip().strip('"').removeprefix("W/").strip('"')
    if not DIGITS.fullmatch(cleaned):  # not str.isdigit: "²" is a digit to it, and int("²") fails
        raise ApiError(400, "invalid_header", "If-Match must be the doc's version number")
    return int(cleaned)


def check_version(doc: dict[str, Any], expected: int | None) -> None:
    """409 when the doc moved on since the caller read it. The body carries the current
    version (number, title, markdown, updated_at), so an editor can show both sides; only
    callers that proved they may edit the doc get here."""
    if expected is None or expected == doc["version"]:
        return
    raise Conflict("version_conflict",
                   f"the doc is at version {doc['version']}, not {expected}; reload and retry",
                   expected=expected,
                   current={"version": doc["version"], "title": doc["title"], "markdown": doc["markdown"],
                            "updated_at": doc["updated_at"].isoformat()})


def doc_id_param(request: Request) -> str:
    doc_id = request.path_params["doc_id"]
    if not looks_like_id(doc_id):
        raise not_found("doc")
    return doc_id


def has_credentials(request: Request, password: str | None) -> bool:
    headers = request.headers
    return bool(password or request.query_params.get("access") or any(
        headers.get(name) for name in ("authorization", "x-edit-token", "x-doc-password", "x-doc-access")))


async def load_readable_doc(request: Request, doc_id: str,
                            password: str | None = None) -> tuple[dict[str, Any], bool]:
    """The doc as this request may see it, and whether it sees it as an editor.

    Without credentials the read runs on the public pool, where row-level security
    decides; credentials are checked one by one on the owner pool.
    """
    state = app_state(request)
    if not looks_like_id(doc_id):
        raise not_found("doc")
    credentials = has_credentials(request, password)
    if credentials:
        async with state.db.owner.connection() as conn:
            doc = await doc_store.find_doc(conn, doc_id)
            if doc is not None and await can_read_private(conn, request, doc, password):
                doc["hub_slug"] = await hub_store.hub_slug(conn, doc["hub_id"])
                return doc, await can_edit(conn, request, doc)
    async with state.db.public.connection() as conn:
        doc = await doc_store.public_doc(conn, doc_id)
    if doc is None:
        if credentials:
            refused_credentials(request)
        raise not_found("doc")
    return doc, False


@operation("Read a doc (private fields only with a credential that may edit it)", auth=True,
           headers=READ_HEADERS, query={"access": TEXT}, errors=(404,), responses={200: json_response(DOC, "The doc")})
async def get_doc(request: Request) -> Response:
    doc, owner_view = await load_readable_doc(request, request.path_params["doc_id"])
    return JSONResponse(doc_json(request, doc, doc.get("hub_slug"), owner_view=owner_view))


@operation("Edit a doc (edit token or hub owner token); If-Match: the version you read", body=PATCH_BODY,
           auth=True, headers={"If-Match": TEXT, "X-Edit-Token": TEXT}, errors=(400, 401, 403, 404, 409, 413),
           responses={200: json_response(DOC, "The doc as saved")})
async def patch_doc(request: Request) -> Response:
    state = app_state(request)
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
    given, password_hash = _password(data)
    if given:
        changes["password_hash"] = password_hash
    if "allowed_emails" in data:
        changes["allowed_emails"] = _emails(data) or []
    expected = expected_version(request)

    async def edit(conn):
        doc, via = await _lock_for_edit(conn, request, doc_id)
        wanted = dict(changes)  # a retried run starts again from the request's own changes
        if "hub" in data:
            slug = get_str(data, "hub")
            wanted["hub_id"] = (await require_hub_owner(conn, request, slug))["id"] if slug else None
        check_version(doc, expected)
        _apply_title_rule(doc, wanted)
        updated = await doc_store.update_doc(conn, doc, wanted, via=via)
        if updated["hub_id"] != doc["hub_id"]:  # its neighbours are in the new hub now
            await graph_store.refresh_doc_edges(conn, doc_id, state.settings.edge_rule)
        return updated, await hub_store.hub_slug(conn, updated["hub_id"])

    updated, slug = await state.db.write(edit)
    state.wake_worker()
    return JSONResponse(doc_json(request, updated, slug, owner_view=True))


def _apply_title_rule(doc: dict[str, Any], changes: dict[str, Any]) -> None:
    """The title rule for an edit: a new body is checked like a new page; a rename alone
    only drops a body heading that now repeats the title (never empties a page)."""
    if "markdown" in changes:
        changes["title"], changes["markdown"] = page_content(
            changes.get("title", doc["title"]), changes["markdown"], max_title=MAX_TITLE)
    elif "title" in changes:
        _, body = split_title(changes["title"], doc["markdown"])
        if body.strip() and body != doc["markdown"]:
            changes["markdown"] = body


@operation("Delete a doc (soft: it leaves every public read at once)", auth=True,
           headers={"X-Edit-Token": TEXT}, errors=(401, 403, 404),
           responses={200: json_response(obj(["id", "deleted"], id=TEXT, deleted={"const": True}), "Deleted")})
async def delete_doc(request: Request) -> Response:
    state = app_state(request)
    doc_id = doc_id_param(request)

    async def delete(conn):
        _, via = await _lock_for_edit(conn, request, doc_id)
        await doc_store.soft_delete(conn, doc_id, via=via)

    await state.db.write(delete)
    return JSONResponse({"id": doc_id, "deleted": True})


@operation("Give an allowed reader of an email-restricted doc an access token", auth=True,
           body=body_schema(["email"], email={"type": "string", "maxLength": 320}),
           headers={"X-Edit-Token": TEXT}, errors=(400, 401, 403, 404, 413),
           responses={201: json_response(obj(["access_token", "email", "url"], access_token=TEXT, email=TEXT,
                                             url=TEXT), "The token and a URL that carries it")})
async def issue_access(request: Request) -> Response:
    """The owner of an email-restricted doc issues a reader an access token."""
    state = app_state(request)
    doc_id = doc_id_param(request)
    data = await read_json(request, fields=ACCESS_FIELDS)
    email = get_str(data, "email", required=True, max_len=320).strip().lower()
    token = new_token("mwa")

    async def issue(conn):
        doc, _ = await _lock_for_edit(conn, request, doc_id)
        if email not in doc["allowed_emails"]:
            raise ApiError(400, "not_allowed", f"{email} is not in this doc's allowed_emails")
        await access_store.issue(conn, hash_token(token), doc_id, email)

    await state.db.write(issue)
    return JSONResponse({"access_token": token, "email": email,
                         "url": f"{doc_url(request, doc_id)}?access={token}"}, status_code=201)


routes = [
    Route("/api/docs", create_doc, methods=["POST"]),
    Route("/api/docs/{doc_id}", get_doc, methods=["GET"]),
    Route("/api/docs/{doc_id}", patch_doc, methods=["PATCH"]),
    Route("/api/docs/{doc_id}", delete_doc, methods=["DELETE"]),
    Route("/api/docs/{doc_id}/access", issue_access, methods=["POST"]),
]
