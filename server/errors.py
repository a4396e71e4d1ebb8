"""One error model for the whole API: {"error": {"code", "message"}} with a 4xx/5xx status.

Codes are stable (clients branch on them, never on the message) and every one is declared
once, in CODES, with its status and what it means: docs/api.md lists them and
tests/test_error_codes.py fails on a code raised anywhere that is not declared, or raised with
another status. Raise the exception of the failure's kind, which fixes the status, e.g.
`NotFound("unknown_hub", ...)`. Converter errors from `memorywiki.formats` carry no HTTP status:
`as_api_error` gives them one. This module speaks no HTTP: server/web/errors.py turns an error
into a response (JSON for the API, an HTML or markdown page for a page URL).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import psycopg
from memorywiki.formats import FormatError


@dataclass(frozen=True)
class ErrorCode:
    code: str
    status: int
    meaning: str


# Every code the API answers with. A code from memorywiki.formats that reaches the API comes as
# 422 (a file or export that cannot be read); not_found and too_large from there are only ever
# raised where the CLI reads a file, which the API never does.
CODES: dict[str, ErrorCode] = {
    e.code: e
    for e in (
        # 400: the request itself is wrong
        ErrorCode("bad_request", 400, "the request could not be read"),
        ErrorCode("bad_upload", 400, "the multipart upload could not be read"),
        ErrorCode("bad_url", 400, "the URL to capture is not an http(s) URL this server may fetch"),
        ErrorCode("empty_markdown", 400, "a page needs some text"),
        ErrorCode("invalid_email", 400, "not an email address"),
        ErrorCode("invalid_field", 400, "a field has the wrong type, is empty or too long (named in the message)"),
        ErrorCode("invalid_header", 400, "a header has a value it cannot have (If-Match: a version number)"),
        ErrorCode("invalid_json", 400, "the body is not a JSON object"),
        ErrorCode("invalid_name", 400, "a member's name breaks the naming rule"),
        ErrorCode("invalid_query", 400, "a query parameter has a value it cannot have (named in the message)"),
        ErrorCode("invalid_slug", 400, "a hub's slug breaks the naming rule, or is a word the server keeps"),
        ErrorCode("invalid_version", 400, "a version number that is not a whole number"),
        ErrorCode("missing_field", 400, "a required field is missing (named in the message)"),
        ErrorCode("missing_file", 400, "the upload has no file in its 'file' field"),
        ErrorCode("not_allowed", 400, "the address is not one the doc is shared with"),
        ErrorCode("not_multipart", 400, "a file upload must be multipart/form-data"),
        ErrorCode("out_of_range", 400, "a number outside its range (named in the message)"),
        ErrorCode("question_too_long", 400, "the recall question is over the length limit"),
        ErrorCode("unknown_doc", 400, "a bundle names a doc that is not in its hub"),
        ErrorCode("unknown_field", 400, "a field the operation does not know (with `unknown` and `accepted`)"),
        ErrorCode("unknown_fusion", 400, "a recall fusion other than zscore or rrf"),
        ErrorCode("unknown_level", 400, "a recall level other than chunk, doc or bundle"),
        # 401, 403: who is asking
        ErrorCode("unauthorized", 401, "a credential is needed (Authorization: Bearer ...)"),
        ErrorCode("session_ended", 401, "this browser's sign-in ended (signed out or revoked): sign in again"),
        ErrorCode("forbidden", 403, "the credential given does not allow this"),
        ErrorCode("wrong_token", 403, "the token is not one this doc or hub knows"),
        ErrorCode("csrf_failed", 403, "a request a session cookie authorizes came without the page's CSRF token"),
        ErrorCode("blocked_address", 403, "the URL to capture resolves to an address the server may not fetch"),
        ErrorCode("unknown_link", 403, "a sign-in link this server never sent"),
        ErrorCode("link_used", 403, "a sign-in link that was used already"),
        ErrorCode("link_expired", 403, "a sign-in link past its time"),
        ErrorCode("not_shared", 403, "the page is no longer shared with the address the link was sent to"),
        # 404: not there (or not visible to this request)
        ErrorCode("not_found", 404, "no such doc, bundle, page or suggestion (or not visible to this request)"),
        ErrorCode("unknown_hub", 404, "no hub of that slug"),
        ErrorCode("unknown_member", 404, "the hub has no live member of that name"),
        ErrorCode("unknown_version", 404, "the doc has no version of that number"),
        ErrorCode("unknown_exporter", 404, "an import kind other than the exports the server reads"),
        ErrorCode("method_not_allowed", 405, "the URL does not answer this method"),
        # 409: the state of things does not allow it
        ErrorCode("hub_taken", 409, "a hub of that slug exists already"),
        ErrorCode("member_exists", 409, "the hub has a live member of that name already"),
        ErrorCode("version_conflict", 409, "the doc changed since the version named in If-Match (with `current`)"),
        ErrorCode("capture_conflict", 409, "a session's pages kept being deleted while it was captured; try again"),
        ErrorCode("not_deleted", 409, "undelete of a doc that is not deleted"),
        ErrorCode("embedder_unavailable", 409, "no embedder is configured, so nothing can be indexed now"),
        ErrorCode("suggestion_closed", 409, "the suggested bundle was accepted or dismissed already"),
        ErrorCode("suggestion_stale", 409, "the suggested pages are no longer public in the hub"),
        ErrorCode("length_required", 411, "an upload needs a Content-Length"),
        ErrorCode("too_large", 413, "the body, file or fetched page is over its size limit"),
        ErrorCode("unsupported_type", 415, "a kind of file or page that cannot be captured"),
        # 422: well-formed, but the content cannot be captured
        ErrorCode("corrupt_file", 422, "a file its converter cannot read"),
        ErrorCode("encrypted_pdf", 422, "a PDF behind a password"),
        ErrorCode("binary_file", 422, "a file that holds no text"),
        ErrorCode("bad_encoding", 422, "a text file in an encoding that cannot be read"),
        ErrorCode("convert_timeout", 422, "converting the file took too long"),
        ErrorCode("empty", 422, "the file, page or export holds nothing to capture"),
        ErrorCode("unrecognised_page", 422, "a share page whose conversation cannot be found"),
        ErrorCode("fetch_failed", 422, "the URL could not be fetched (refused, unreachable, an HTTP error)"),
        ErrorCode("fetch_timeout", 422, "fetching the URL took too long"),
        ErrorCode("bad_archive", 422, "a zip that cannot be read, or holds no export"),
        ErrorCode("bad_json", 422, "an export that is not valid JSON"),
        ErrorCode("bad_front_matter", 422, "a page's front matter that cannot be read"),
        ErrorCode("bad_date", 422, "a date that cannot be read, or a creation after the last change"),
        ErrorCode("binary", 422, "a file of a folder that holds NUL bytes (the CLI's folder import)"),
        ErrorCode("not_utf8", 422, "a file of a folder that is not UTF-8 (the CLI's folder import)"),
        ErrorCode("unreadable", 422, "a file of a folder that cannot be read (the CLI's folder import)"),
        # 429, 5xx
        ErrorCode("rate_limited", 429, "over this client's budget of refused credentials or re-index requests"),
        ErrorCode("internal", 500, "a bug: the server logged it"),
        ErrorCode("http_error", 500, "an HTTP error the server has no code of its own for"),
        ErrorCode("database_unavailable", 503, "PostgreSQL is not reachable; nothing was changed"),
        ErrorCode("embedder_failed", 503, "the embedder failed; the doc or bundle stays owed"),
    )
}


class ApiError(Exception):
    """An error a client can act on. `extra` keys join the error body (e.g. "accepted");
    `headers` join the response (e.g. Retry-After)."""

    def __init__(self, status: int, code: str, message: str, **extra: Any):
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.extra = extra
        self.headers: dict[str, str] = {}


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
    """Over a rate limit (server/web/ratelimit.py RateLimited): says when to come back, in the body and in Retry-After."""

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


def internal_error() -> ApiError:
    return ApiError(500, "internal", "internal server error")


def as_api_error(exc: BaseException) -> ApiError | None:
    """The error as the API reports it, for the kinds this layer knows; None for the others
    (server/web/errors.py maps the HTTP ones, and anything else is a bug)."""
    if isinstance(exc, ApiError):
        return exc
    if isinstance(exc, FormatError):
        return Unprocessable(exc.code, exc.message)
    if isinstance(exc, psycopg.OperationalError):  # psycopg_pool's PoolTimeout is one too
        # PostgreSQL down or restarting, a connection lost mid-request, or no free connection
        # in time (a deadlock that its retry lost too is an OperationalError as well).
        return database_unavailable()
    return None
