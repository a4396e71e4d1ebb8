"""One JSON error shape for the whole API: {"error": {"code", "message"}} with a 4xx status."""

from __future__ import annotations

import logging

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

log = logging.getLogger("memorywiki.server")


class ApiError(Exception):
    def __init__(self, status: int, code: str, message: str):
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message


def error_response(status: int, code: str, message: str) -> JSONResponse:
    return JSONResponse({"error": {"code": code, "message": message}}, status_code=status)


async def api_error_handler(request: Request, exc: ApiError) -> Response:
    return error_response(exc.status, exc.code, exc.message)


_HTTP_CODES = {404: "not_found", 405: "method_not_allowed", 413: "too_large", 400: "bad_request"}


async def http_error_handler(request: Request, exc: HTTPException) -> Response:
    code = _HTTP_CODES.get(exc.status_code, "http_error")
    return error_response(exc.status_code, code, str(exc.detail))


async def server_error_handler(request: Request, exc: Exception) -> Response:
    log.exception("unhandled error on %s %s", request.method, request.url.path)
    return error_response(500, "internal", "internal server error")


def not_found(what: str) -> ApiError:
    return ApiError(404, "not_found", f"{what} not found")
