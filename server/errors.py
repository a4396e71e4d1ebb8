"""One error model for the whole API: {"error": {"code", "message"}} with a 4xx/5xx status.

Codes are stable (clients branch on them, never on the message). Raise `ApiError(status,
code, message)` or a subclass that fixes the status, e.g. `NotFound("unknown_hub", ...)`.
Converter errors from `memorywiki.formats` carry no HTTP status; `as_api_error` is the one
place they get one. Every error becomes a response through `error_response`: JSON for the
API, an HTML or markdown page for a page URL (negotiate.py).
"""

from __future__ import annotations

import logging
from typing import Any, ClassVar

import psycopg
from memorywiki.formats import FormatError
from memorywiki.formats.storable import strip_unstorable
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from .web import negotiate
from .web.ratelimit import RateLimited

log = logging.getLogger("memorywiki.server")


class ApiError(Exception):
    """An error a client can act on. `extra` keys join the error body (e.g. "accepted");
    `headers` join the response (e.g. Retry-After)."""

    def __init__(self, status: int, code: str, message: str, **extra: Any):
        super().__init__(message)
        self.headers: dict[str, str] = {}
        self.status = status
        self.code = code
        self.message = message
        self.extra = extra


class _FixedStatus(ApiError):
    status_code: ClassVar[int]

    def __init__(self, code: str, message: str, **extra: Any):
        super().__init__(self.status_code, code, message, **extra)


class BadRequest(_FixedStatus):
    status_code = 400


class Unauthorized(_FixedStatus):
    status_code = 401


class Forbidden(_FixedStatus):
    status_code = 403


class NotFound(_FixedStatus):
    status_code = 404


class Conflict(_FixedStatus):
    status_code = 409


class LengthRequired(_FixedStatus):
    status_code = 411


class TooLarge(_FixedStatus):
    status_code = 413


class UnsupportedType(_FixedStatus):
    status_code = 415


class Unprocessable(_FixedStatus):
    """Well-formed request, content that cannot be captured (a corrupt file, an empty page)."""

    status_code = 422


class TooManyRequests(_FixedStatus):
    """Over a rate limit (server/ratelimit.RateLimited): says when to come back, in the body and in Retry-After."""

    status_code = 429

    def __init__(self, code: str, message: str, *, retry_after: int, **extra: Any):
        super().__init__(code, message, retry_after=retry_after, **extra)
        self.headers = {"Retry-After": str(retry_after)}


class Unavailable(_FixedStatus):
    status_code = 503


# How long a client should wait before trying again when the database is unreachable: about
# the time a restarted PostgreSQL takes to accept connections again.
RETRY_AFTER_SECONDS = 5


def database_unavailable() -> ApiError:
    error = Unavailable(
        "database_unavailable", "the database is not reachable right now; nothing was changed, try again shortly"
    )
    error.headers = {"Retry-After": str(RETRY_AFTER_SECONDS)}
    return error


def not_found(what: str) -> ApiError:
    return NotFound("not_found", f"{what} not found")


def unknown_hub(slug: str) -> ApiError:
    return NotFound("unknown_hub", f"hub '{slug}' does not exist")


_HTTP_CODES = {404: "not_found", 405: "method_not_allowed", 413: "too_large", 400: "bad_request"}


def as_api_error(exc: BaseException) -> ApiError:
    """The error as the API reports it; the one mapping of converter and Starlette errors."""
    if isinstance(exc, ApiError):
        return exc
    if isinstance(exc, FormatError):
        return Unprocessable(exc.code, exc.message)
    if isinstance(exc, RateLimited):
        return TooManyRequests("rate_limited", exc.message, retry_after=exc.retry_after)
    if isinstance(exc, HTTPException):
        return ApiError(exc.status_code, _HTTP_CODES.get(exc.status_code, "http_error"), str(exc.detail))
    if isinstance(exc, psycopg.OperationalError):  # psycopg_pool's PoolTimeout is one too
        # PostgreSQL down or restarting, a connection lost mid-request, or no free connection
        # in time (a deadlock that its retry lost too is an OperationalError as well).
        return database_unavailable()
    return ApiError(500, "internal", "internal server error")


def error_response(request: Request, error: ApiError) -> Response:
    """The one place an error becomes a response."""
    # A message may quote what the caller sent (an unknown field's name); a lone surrogate in it
    # cannot be encoded as UTF-8, so it is shown as U+FFFD rather than crash the error itself.
    message, extra = strip_unstorable(error.message, "\ufffd"), strip_unstorable(error.extra, "\ufffd")
    page = negotiate.error_page(request, error.status, error.code, message)
    if page is None:
        body = {"error": {"code": error.code, "message": message, **extra}}
        page = JSONResponse(body, status_code=error.status)
    page.headers.update(error.headers)
    return page


async def handle_error(request: Request, exc: Exception) -> Response:
    """The exception handler for the tree, converter errors and Starlette's HTTP errors."""
    return error_response(request, as_api_error(exc))


async def handle_database_down(request: Request, exc: Exception) -> Response:
    """One line in the log, no traceback: the outage is the operator's news, not a bug."""
    log.warning(
        "database unavailable on %s %s: %s",
        request.method,
        request.url.path,
        str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__,
    )
    return error_response(request, as_api_error(exc))


async def handle_crash(request: Request, exc: Exception) -> Response:
    log.exception("unhandled error on %s %s", request.method, request.url.path)
    return error_response(request, as_api_error(exc))


EXCEPTION_HANDLERS = {
    ApiError: handle_error,
    FormatError: handle_error,
    RateLimited: handle_error,
    HTTPException: handle_error,
    psycopg.OperationalError: handle_database_down,
    Exception: handle_crash,
}
