"""Errors as HTTP answers: the one place an error (server/errors.py) becomes a response, and the
exception handlers the app installs. Starlette's own HTTP errors and the rate limiter's refusal
get their codes here, beside the kinds server/errors.py maps itself."""

from __future__ import annotations

import logging

import psycopg
from memorywiki.formats import FormatError
from memorywiki.formats.storable import strip_unstorable
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from .. import errors
from ..errors import ApiError, TooManyRequests
from . import negotiate
from .ratelimit import RateLimited

log = logging.getLogger("memorywiki.server")

_HTTP_CODES = {404: "not_found", 405: "method_not_allowed", 413: "too_large", 400: "bad_request"}


def as_api_error(exc: BaseException) -> ApiError:
    """The error as the API reports it; the one mapping of converter and Starlette errors."""
    known = errors.as_api_error(exc)
    if known is not None:
        return known
    if isinstance(exc, RateLimited):
        return TooManyRequests("rate_limited", exc.message, retry_after=exc.retry_after)
    if isinstance(exc, HTTPException):
        return ApiError(exc.status_code, _HTTP_CODES.get(exc.status_code, "http_error"), str(exc.detail))
    return errors.internal_error()


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
