"""Request parsing the routes share: credentials, ids in the path, If-Match, flags."""

from __future__ import annotations

import re

from starlette.requests import Request

from ..errors import BadRequest, not_found
from ..services.access import Credentials
from ..tokens import looks_like_id
from .csrf import bearer_of
from .ratelimit import client_key
from .sessions import session_ids

DIGITS = re.compile(r"[0-9]+")


def bearer_token(request: Request) -> str | None:
    return bearer_of(request.headers)


def credentials(request: Request, password: str | None = None) -> Credentials:
    """What the request offers to prove its rights; `password`: a form's, before the header's."""
    return Credentials(
        bearer=bearer_token(request),
        edit_token=request.headers.get("x-edit-token", "").strip() or None,
        password=password or request.headers.get("x-doc-password") or None,
        access_token=request.headers.get("x-doc-access") or request.query_params.get("access") or None,
        sessions=session_ids(request),
        client=client_key(request),
    )


def doc_id_param(request: Request) -> str:
    doc_id = str(request.path_params["doc_id"])
    if not looks_like_id(doc_id):
        raise not_found("doc")
    return doc_id


def expected_version(request: Request) -> int | None:
    """The version an If-Match header names (`3`, `"3"` or `W/"3"`), or None without one."""
    if_match = request.headers.get("if-match")
    if if_match is None:
        return None
    cleaned = if_match.strip().strip('"').removeprefix("W/").strip('"')
    if not DIGITS.fullmatch(cleaned):  # not str.isdigit: "²" is a digit to it, and int("²") fails
        raise BadRequest("invalid_header", "If-Match must be the doc's version number")
    return int(cleaned)


def flag(request: Request, name: str) -> bool:
    """A yes/no query parameter such as ?digest=1."""
    return request.query_params.get(name) in ("1", "true", "yes")
