"""Capture from anywhere: share links and web pages, uploaded files, chat-history exports.

The conversion lives in server/capture/ and memorywiki.formats; these routes only move
bytes in (within the settings' size limits) and save the result like any other doc. Their
refusals are API errors already (server/errors.py maps the converters' FormatError).
"""

from __future__ import annotations

import asyncio
import itertools
import tempfile
from pathlib import Path
from typing import Any, Iterator

from starlette.datastructures import UploadFile
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from memorywiki.formats import Captured, FormatError, iter_chatgpt_export, iter_claude_export

from ..web.openapi import NULLABLE_TEXT, TEXT, body_schema, json_response, obj, operation
from ..web.auth import require_hub_owner
from ..capture import capture_url, convert_file
from ..errors import ApiError, LengthRequired, TooLarge
from ..store import docs as doc_store
from ..tokens import hash_token, new_token
from ..web.validate import get_bool, get_str, page_content, read_json, reject_unstorable, size_text
from ..web.state import app_state, doc_url
from .docs import already_captured

IMPORT_BATCH = 50
MAX_TITLE = 500
URL_FIELDS = ("url", "title", "hub", "is_draft", "source", "dedupe")
EXPORTERS = {"chatgpt": iter_chatgpt_export, "claude": iter_claude_export}

CAPTURED = obj(["id", "url", "title", "source", "status", "edit_token"], id=TEXT, url=TEXT, title=TEXT,
               source=NULLABLE_TEXT, status={"enum": ["created", "exists", "updated", "unchanged", "deleted"]},
               edit_token=NULLABLE_TEXT, message=TEXT)
_FORM_FLAGS = {"type": "string", "description": "true/false (also 1/0, yes/no, on/off)"}
FILE_FORM = obj(["file"], file={"type": "string", "contentMediaType": "application/octet-stream"},
                hub={"type": "string", "examples": ["notes"]}, title=TEXT, source=TEXT,
                is_draft=_FORM_FLAGS, dedupe=_FORM_FLAGS)
IMPORTED = obj(["hub", "kind", "created", "updated", "unchanged", "deleted", "skipped", "docs"], hub=TEXT, kind=TEXT,
               created={"type": "integer"}, updated={"type": "integer"}, unchanged={"type": "integer"},
               deleted={"type": "integer"}, skipped={"type": "array"},
               docs={"type": "array", "items": obj(["id", "url", "title", "status"], id=TEXT, url=TEXT, title=TEXT,
                                                   status=TEXT)})


async def save_captured(request: Request, captured: Captured, *, hub_slug: str | None,
                        title: str | None = None, is_draft: bool = False,
                        dedupe: bool = False) -> dict[str, Any]:
    """Store one capture (upserting by its external id inside a hub, or with `dedupe`
    returning the hub's page that already holds this content); return the API answer."""
    state = app_state(request)
    edit_token = new_token("mwe")
    captured = captured.storable()  # a converted file's NUL is dropped; what the caller typed was refused
    title, markdown = page_content((title or captured.title or "").strip()[:MAX_TITLE], captured.markdown,
                                   max_title=MAX_TITLE, default_title="Untitled")

    async def save(conn):
        hub = await require_hub_owner(conn, request, hub_slug) if hub_slug else None
        return await doc_store.save_doc(
            conn, hub_id=hub["id"] if hub else None, external_id=captured.external_id, title=title,
            markdown=markdown, source=captured.source, meta=captured.meta,
            is_draft=is_draft, password_hash=None, allowed_emails=[],
            edit_token_hash=hash_token(edit_token), via="owner" if hub else "anonymous", dedupe=dedupe)

    row, status = await state.db.write(save)
    state.wake_worker()
    body = {"id": row["id"], "url": doc_url(request, row["id"]), "title": row["title"],
            "source": row["source"], "status": status,
            "edit_token": edit_token if status == "created" else None}
    if status == "exists":
        body["message"] = already_captured(request, row["id"])
    return body


@operation("Capture a web page or a chat share link as a page", auth=True,
           body=body_schema(["url"], url={"type": "string", "maxLength": 4000}, title={"type": ["string", "null"], "maxLength": 500},
                            hub={"type": ["string", "null"], "examples": ["notes"]}, is_draft={"type": ["boolean", "null"]},
                            source={"type": ["string", "null"], "maxLength": 200}, dedupe={"type": ["boolean", "null"]}),
           errors=(400, 401, 403, 404, 413, 415, 422),
           responses={201: json_response(CAPTURED, "Captured"), 200: json_response(CAPTURED, "Already captured")})
async def capture_from_url(request: Request) -> Response:
    data = await read_json(request, fields=URL_FIELDS)
    url = get_str(data, "url", required=True, allow_empty=False, max_len=4000).strip()
    title = get_str(data, "title", max_len=500)
    hub = get_str(data, "hub")
    is_draft = get_bool(data, "is_draft", default=False)
    source = get_str(data, "source", max_len=200)
    dedupe = get_bool(data, "dedupe", default=True)
    settings = app_state(request).settings
    captured = await capture_url(url, title=title, allow_loopback=settings.fetch_allow_loopback,
                                 max_bytes=settings.fetch_max_bytes, timeout=settings.fetch_timeout)
    if source and source.strip():
        captured.source = source.strip()  # the caller knows better (e.g. `capture --url --source`)
    body = await save_captured(request, captured, hub_slug=hub, title=title, is_draft=is_draft, dedupe=dedupe)
    return JSONResponse(body, status_code=201 if body["status"] == "created" else 200)


async def _form(request: Request, limit: int) -> Any:
    length = request.headers.get("content-length")
    if length is None or not length.isdigit():
        raise LengthRequired("length_required", "uploads need a Content-Length header")
    if int(length) > limit:
        raise TooLarge("too_large", f"upload is over {size_text(limit)}")
    if not request.headers.get("content-type", "").startswith("multipart/form-data"):
        raise ApiError(400, "not_multipart", "send the file as multipart/form-data in a field named 'file'")
    try:
        return await request.form(max_files=1, max_fields=20)
    except Exception as exc:  # malformed multipart bodies
        raise ApiError(400, "bad_upload", f"could not read the upload: {exc}") from None


def _upload(form: Any) -> UploadFile:
    upload = form.get("file")
    if not isinstance(upload, UploadFile):
        raise ApiError(400, "missing_file", "no file in the 'file' field")
    return upload


def _form_bool(form: Any, key: str, default: bool = False) -> bool:
    value = str(form.get(key) or "").strip().lower()
    if not value:
        return default
    if value in {"1", "true", "yes", "on"}:
        return True
    if value in {"0", "false", "no", "off"}:
        return False
    raise ApiError(400, "invalid_field", f"'{key}' must be true or false")


def _form_str(form: Any, key: str) -> str | None:
    value = form.get(key)
    if not isinstance(value, str):
        return None
    reject_unstorable(value, key)
    return value.strip() or None


@operation("Capture a file (PDF, DOCX, PPTX, HTML, text, a transcript) as a page", auth=True,
           form=("multipart/form-data", FILE_FORM), errors=(400, 401, 403, 404, 411, 413, 415, 422),
           responses={201: json_response(CAPTURED, "Captured"), 200: json_response(CAPTURED, "Already captured")})
async def capture_file(request: Request) -> Response:
    limit = app_state(request).settings.max_upload_bytes
    form = await _form(request, limit)
    upload = _upload(form)
    data = await upload.read()
    title = _form_str(form, "title")
    captured = await asyncio.to_thread(convert_file, data, upload.filename or "upload",
                                       upload.content_type, title, max_bytes=limit)
    source = _form_str(form, "source")
    if source:
        captured.source = source[:200]  # the caller knows better (e.g. `capture FILE --source`)
    body = await save_captured(request, captured, hub_slug=_form_str(form, "hub"), title=title,
                               is_draft=_form_bool(form, "is_draft"), dedupe=_form_bool(form, "dedupe", True))
    return JSONResponse(body, status_code=201 if body["status"] == "created" else 200)


def _next_batch(conversations: Iterator[Captured]) -> list[Captured]:
    return list(itertools.islice(conversations, IMPORT_BATCH))


@operation("Import a ChatGPT or Claude export into a hub (again: updates the same docs)", auth=True,
           path={"kind": {"type": "string", "enum": list(EXPORTERS)}},
           form=("multipart/form-data", obj(["file", "hub"], file={"type": "string", "contentMediaType": "application/zip"},
                                             hub={"type": "string", "examples": ["notes"]})),
           errors=(400, 401, 403, 404, 411, 413, 422), responses={200: json_response(IMPORTED, "Counts and the docs")})
async def import_export(request: Request) -> Response:
    """Import a ChatGPT or Claude export; re-importing updates the same docs."""
    kind = request.path_params["kind"]
    if kind not in EXPORTERS:
        raise ApiError(404, "unknown_exporter", f"import kind must be one of {', '.join(EXPORTERS)}")
    form = await _form(request, app_state(request).settings.max_export_bytes)
    upload = _upload(form)
    hub = _form_str(form, "hub")
    if not hub:
        raise ApiError(400, "missing_field", "'hub' is required: an import goes into a hub")
    async with app_state(request).db.owner.connection() as conn:
        await require_hub_owner(conn, request, hub)
    suffix = Path(upload.filename or "export.json").suffix.lower()
    with tempfile.TemporaryDirectory(prefix="mw-import-") as tmp:
        path = Path(tmp) / f"export{suffix if suffix in ('.zip', '.json') else '.json'}"
        with path.open("wb") as out:
            while chunk := await upload.read(1 << 20):
                out.write(chunk)
        skipped: list = []
        conversations = EXPORTERS[kind](path, skipped=skipped)
        counts = {"created": 0, "updated": 0, "unchanged": 0, "deleted": 0}
        docs: list[dict[str, Any]] = []
        try:
            while batch := await asyncio.to_thread(_next_batch, conversations):
                for captured in batch:
                    saved = await save_captured(request, captured, hub_slug=hub)
                    counts[saved["status"]] += 1
                    docs.append({k: saved[k] for k in ("id", "url", "title", "status")})
        except FormatError as exc:
            raise FormatError(exc.code, f"{exc.message} ({sum(counts.values())} conversations were saved "
                                        "before this)") from None
    return JSONResponse({"hub": hub, "kind": kind, **counts, "skipped": skipped,
                         "docs": docs})


routes = [
    Route("/api/capture", capture_from_url, methods=["POST"]),
    Route("/api/capture/file", capture_file, methods=["POST"]),
    Route("/api/import/{kind}", import_export, methods=["POST"]),
]
