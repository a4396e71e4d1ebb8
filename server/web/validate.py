"""Read and check request bodies, so routes only ever see well-typed values."""

from __future__ import annotations

import json
import re
from collections.abc import Collection
from typing import Any, overload

from memorywiki.formats import FormatError
from memorywiki.formats.hubfolder import parse_dates
from memorywiki.formats.storable import first_unstorable
from starlette.requests import Request

from ..errors import BadRequest, TooLarge
from .state import app_state

_MISSING = object()


def size_text(limit: int) -> str:
    """A byte limit in words: "5 MB", "64 KB"."""
    for unit, size in (("MB", 1024 * 1024), ("KB", 1024)):
        if limit >= size and limit % size == 0:
            return f"{limit // size} {unit}"
    return f"{limit:,} bytes"


async def read_body(request: Request, limit: int | None = None) -> bytes:
    """The raw body, refusing anything over `limit` (default: the settings' max_body_bytes)
    before reading it all."""
    limit = app_state(request).settings.max_body_bytes if limit is None else limit
    too_large = TooLarge("too_large", f"request body is over {size_text(limit)}")
    declared = request.headers.get("content-length")
    if declared and declared.isdigit() and int(declared) > limit:
        raise too_large
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise too_large
        chunks.append(chunk)
    return b"".join(chunks)


def reject_unknown(data: dict[str, Any], accepted: Collection[str]) -> None:
    """Refuse fields the endpoint does not know: a typo (`top_k` for `k`) must not pass
    silently with the default in its place."""
    unknown = sorted(key for key in data if key not in accepted)
    if not unknown:
        return
    names = ", ".join(f"'{key}'" for key in unknown)
    plural = "s" if len(unknown) > 1 else ""
    raise BadRequest(
        "unknown_field",
        f"unknown field{plural} {names}; accepted fields: {', '.join(accepted)}",
        unknown=unknown,
        accepted=list(accepted),
    )


async def read_json(request: Request, limit: int | None = None, *, fields: Collection[str]) -> dict[str, Any]:
    """The body as a JSON object holding only `fields` (each route declares its own once)."""
    return _json_object(await read_body(request, limit), fields)


async def read_optional_json(request: Request, *, fields: Collection[str]) -> dict[str, Any]:
    """As read_json, but an empty body is an empty object (a POST that needs no fields)."""
    body = await read_body(request)
    return _json_object(body, fields) if body.strip() else {}


def _json_object(body: bytes, fields: Collection[str]) -> dict[str, Any]:
    if not body.strip():
        raise BadRequest("invalid_json", "request body must be a JSON object")
    try:
        data = json.loads(body)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise BadRequest("invalid_json", f"malformed JSON: {exc}") from None
    if not isinstance(data, dict):
        raise BadRequest("invalid_json", "request body must be a JSON object")
    reject_unknown(data, fields)
    # one check for every field, list item and nested key, not one per getter a route may forget
    reject_unstorable(data)
    return data


def reject_unstorable(value: Any, where: str = "") -> None:
    """A 400 naming the field (`'doc_ids[1]'`) when a value holds text PostgreSQL cannot store."""
    if bad := first_unstorable(value, where):
        raise BadRequest("invalid_field", f"'{bad.where}' must not contain {bad.what}")


def get_str(
    data: dict[str, Any],
    key: str,
    *,
    required: bool = False,
    max_len: int | None = None,
    allow_empty: bool = True,
    default: Any = None,
) -> Any:
    """A text field of a body `read_json` returned (which has refused NUL and lone surrogates)."""
    value = data.get(key, _MISSING)
    if value is _MISSING or value is None:
        if required:
            raise BadRequest("missing_field", f"'{key}' is required")
        return default
    if not isinstance(value, str):
        raise BadRequest("invalid_field", f"'{key}' must be a string")
    if not allow_empty and not value.strip():
        raise BadRequest("invalid_field", f"'{key}' must not be empty")
    if max_len is not None and len(value) > max_len:
        raise BadRequest("invalid_field", f"'{key}' is longer than {max_len} characters")
    return value


def get_bool(data: dict[str, Any], key: str, default: Any = None) -> Any:
    value = data.get(key, _MISSING)
    if value is _MISSING or value is None:
        return default
    if not isinstance(value, bool):
        raise BadRequest("invalid_field", f"'{key}' must be true or false")
    return value


@overload
def get_int(data: dict[str, Any], key: str, *, default: int, low: int, high: int) -> int: ...
@overload
def get_int(data: dict[str, Any], key: str, *, default: None, low: int, high: int) -> int | None: ...
def get_int(data: dict[str, Any], key: str, *, default: int | None, low: int, high: int) -> int | None:
    value = data.get(key, _MISSING)
    if value is _MISSING or value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int):
        raise BadRequest("invalid_field", f"'{key}' must be an integer")
    if not low <= value <= high:
        raise BadRequest("out_of_range", f"'{key}' must be between {low} and {high}")
    return value


def get_str_list(data: dict[str, Any], key: str, *, max_items: int = 1000, default: Any = None) -> Any:
    value = data.get(key, _MISSING)
    if value is _MISSING or value is None:
        return default
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise BadRequest("invalid_field", f"'{key}' must be a list of strings")
    if len(value) > max_items:
        raise BadRequest("invalid_field", f"'{key}' has more than {max_items} items")
    return value


def get_dict(data: dict[str, Any], key: str, default: Any = None) -> Any:
    value = data.get(key, _MISSING)
    if value is _MISSING or value is None:
        return default
    if not isinstance(value, dict):
        raise BadRequest("invalid_field", f"'{key}' must be an object")
    return value


DATE_FIELDS: tuple[str, str] = ("created_at", "updated_at")


def get_dates(data: dict[str, Any]) -> dict[str, Any]:
    """The dates an import names ({"created_at": datetime, ...}, only those given): ISO 8601,
    `created_at` not after `updated_at`; a 400 naming the field otherwise."""
    raw = {key: get_str(data, key, max_len=100) for key in DATE_FIELDS}
    try:
        parsed = parse_dates(raw["created_at"], raw["updated_at"], names=DATE_FIELDS)
    except FormatError as exc:
        raise BadRequest("invalid_field", exc.message) from None
    return {key: when for key, when in zip(DATE_FIELDS, parsed, strict=True) if when is not None}


_DIGITS = re.compile(r"[0-9]+")


@overload
def query_int(request: Any, key: str, *, default: int, low: int, high: int) -> int: ...
@overload
def query_int(request: Any, key: str, *, default: None, low: int, high: int) -> int | None: ...
def query_int(request: Any, key: str, *, default: int | None, low: int, high: int) -> int | None:
    """An integer query parameter (`?page=2`), or a 400 that names it."""
    raw = request.query_params.get(key)
    if raw is None or raw == "":
        return default
    raw = raw.strip()
    # not str.isdigit: "²" is a digit to it, and int("²") fails
    if not _DIGITS.fullmatch(raw) or not low <= int(raw) <= high:
        raise BadRequest("invalid_query", f"'{key}' must be a whole number from {low} to {high}")
    return int(raw)


def query_str(request: Any, key: str, *, default: str = "") -> str:
    """A text query parameter (`?q=`), or a 400 that names it: PostgreSQL text holds no NUL."""
    value = str(request.query_params.get(key, default))
    if "\x00" in value:
        raise BadRequest("invalid_query", f"'{key}' must not contain NUL characters")
    return value
