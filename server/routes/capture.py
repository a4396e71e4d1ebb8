"""Capture from anywhere: share links and web pages, uploaded files, chat-history exports.

These routes only move bytes in (within the settings' size limits) and hand them to the
capture use cases (server/services/capture.py).
"""

from __future__ import annotations

from typing import Any

from starlette.datastructures import UploadFile
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from ..errors import ApiError, LengthRequired, TooLarge
from ..services import capture
from ..services.capture import EXPORTERS, Options
from ..web.openapi import NULLABLE_TEXT, TEXT, body_schema, json_response, obj, operation
from ..web.params import credentials
from ..web.progress import NDJSON, progress_response, wants_progress
from ..web.schemas import REDACTED
from ..web.state import app_state
from ..web.urls import urls
from ..web.validate import get_bool, get_str, read_json, reject_unstorable, size_text

URL_FIELDS = ("url", "title", "hub", "is_draft", "source", "dedupe")

CAPTURED = obj(
    ["id", "url", "title", "source", "status", "edit_token"],
    id=TEXT,
    url=TEXT,
    title=TEXT,
    source=NULLABLE_TEXT,
    status={"enum": ["created", "exists", "updated", "unchanged", "deleted"]},
    edit_token=NULLABLE_TEXT,
    message=TEXT,
    redacted=REDACTED,
)
_FORM_FLAGS = {"type": "string", "description": "true/false (also 1/0, yes/no, on/off)"}
FILE_FORM = obj(
    ["file"],
    file={"type": "string", "contentMediaType": "application/octet-stream"},
    hub={"type": "string", "examples": ["notes"]},
    title=TEXT,
    source=TEXT,
    is_draft=_FORM_FLAGS,
    dedupe=_FORM_FLAGS,
)
IMPORTED = obj(
    ["hub", "kind", "created", "updated", "unchanged", "deleted", "skipped", "docs"],
    hub=TEXT,
    kind=TEXT,
    created={"type": "integer"},
    updated={"type": "integer"},
    unchanged={"type": "integer"},
    deleted={"type": "integer"},
    skipped={"type": "array"},
    docs={
        "type": "array",
        "items": obj(["id", "url", "title", "status"], id=TEXT, url=TEXT, title=TEXT, status=TEXT, redacted=REDACTED),
    },
    redacted={**REDACTED, "description": "the sum over the pages saved"},
)


def _saved(body: dict[str, Any]) -> Response:
    return JSONResponse(body, status_code=201 if body["status"] == "created" else 200)


@operation(
    "Capture a web page or a chat share link as a page",
    auth=True,
    body=body_schema(
        ["url"],
        url={"type": "string", "maxLength": 4000},
        title={"type": ["string", "null"], "maxLength": 500},
        hub={"type": ["string", "null"], "examples": ["notes"]},
        is_draft={"type": ["boolean", "null"]},
        source={"type": ["string", "null"], "maxLength": 200},
        dedupe={"type": ["boolean", "null"]},
    ),
    errors=(400, 401, 403, 404, 413, 415, 422),
    responses={201: json_response(CAPTURED, "Captured"), 200: json_response(CAPTURED, "Already captured")},
)
async def capture_from_url(request: Request) -> Response:
    data = await read_json(request, fields=URL_FIELDS)
    url = get_str(data, "url", required=True, allow_empty=False, max_len=4000).strip()
    title = get_str(data, "title", max_len=500)
    hub = get_str(data, "hub")
    is_draft = get_bool(data, "is_draft", default=False)
    source = get_str(data, "source", max_len=200)
    dedupe = get_bool(data, "dedupe", default=True)
    options = Options(hub=hub, title=title, source=source, is_draft=is_draft, dedupe=dedupe)
    return _saved(await capture.from_url(app_state(request), credentials(request), urls(request), url, options))


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


@operation(
    "Capture a file (PDF, DOCX, PPTX, HTML, text, a transcript) as a page",
    auth=True,
    form=("multipart/form-data", FILE_FORM),
    errors=(400, 401, 403, 404, 411, 413, 415, 422),
    responses={201: json_response(CAPTURED, "Captured"), 200: json_response(CAPTURED, "Already captured")},
)
async def capture_file(request: Request) -> Response:
    form = await _form(request, app_state(request).settings.max_upload_bytes)
    upload = _upload(form)
    data = await upload.read()
    options = Options(
        hub=_form_str(form, "hub"),
        title=_form_str(form, "title"),
        source=_form_str(form, "source"),
        is_draft=_form_bool(form, "is_draft"),
        dedupe=_form_bool(form, "dedupe", True),
    )
    return _saved(
        await capture.from_file(
            app_state(request),
            credentials(request),
            urls(request),
            data,
            upload.filename or "upload",
            upload.content_type,
            options,
        )
    )


_IMPORTED_RESPONSE = json_response(
    IMPORTED, 'Counts and the docs (Accept: application/x-ndjson: progress lines, then {"result": ...})'
)
_IMPORTED_RESPONSE["content"][NDJSON] = {"schema": TEXT}


@operation(
    "Import a ChatGPT or Claude export into a hub (again: updates the same docs)",
    auth=True,
    path={"kind": {"type": "string", "enum": list(EXPORTERS)}},
    form=(
        "multipart/form-data",
        obj(
            ["file", "hub"],
            file={"type": "string", "contentMediaType": "application/zip"},
            hub={"type": "string", "examples": ["notes"]},
        ),
    ),
    errors=(400, 401, 403, 404, 411, 413, 422),
    responses={200: _IMPORTED_RESPONSE},
)
async def import_export(request: Request) -> Response:
    """Import a ChatGPT or Claude export; re-importing updates the same docs. With
    `Accept: application/x-ndjson` the answer streams the progress (server/web/progress.py)."""
    kind = request.path_params["kind"]
    if kind not in EXPORTERS:
        raise ApiError(404, "unknown_exporter", f"import kind must be one of {', '.join(EXPORTERS)}")
    form = await _form(request, app_state(request).settings.max_export_bytes)
    upload = _upload(form)
    hub = _form_str(form, "hub")
    if not hub:
        raise ApiError(400, "missing_field", "'hub' is required: an import goes into a hub")
    state, creds, page_urls = app_state(request), credentials(request), urls(request)
    if wants_progress(request):
        return await progress_response(
            lambda report: capture.import_export(
                state, creds, page_urls, kind, hub, upload.filename or "", upload.read, progress=report
            )
        )
    return JSONResponse(
        await capture.import_export(state, creds, page_urls, kind, hub, upload.filename or "", upload.read)
    )


routes = [
    Route("/api/capture", capture_from_url, methods=["POST"]),
    Route("/api/capture/file", capture_file, methods=["POST"]),
    Route("/api/import/{kind}", import_export, methods=["POST"]),
]
