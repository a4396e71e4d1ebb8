"""Answer in the form the asker reads: HTML for a browser, markdown for an AI fetcher, JSON
for the API. Pages and their errors both go through here, so a browser that opens an unknown
hub gets a page, not raw JSON."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response

from .templating import templates
from .urls import base_url

MARKDOWN = "text/markdown; charset=utf-8"

# What a person is told above the server's own message, by status.
_HEADLINES = {
    400: "That request did not make sense",
    401: "This page needs a token",
    403: "This page is not yours to change",
    404: "Page not found",
    405: "Not something this page can do",
    413: "That is too large",
    429: "Too many attempts",
}


def wants_markdown(request: Request) -> bool:
    """An AI fetcher asks for markdown; a browser asks for HTML first."""
    accept = request.headers.get("accept", "").lower()
    if "text/markdown" in accept or "text/x-markdown" in accept:
        return True
    if "text/html" in accept:
        return False
    return "text/plain" in accept


def _error_format(request: Request) -> str:
    """JSON for the API and for scripts (no Accept, */*, application/json), markdown for /raw/
    and AI fetchers, HTML for a browser (it always names text/html)."""
    path = request.url.path
    if path == "/api" or path.startswith("/api/") or path == "/healthz":
        return "json"  # the API always answers JSON, whatever the client accepts
    if path.startswith("/raw/") or wants_markdown(request):
        return "markdown"  # /raw/ URLs are markdown, whatever the client accepts
    return "html" if "text/html" in request.headers.get("accept", "").lower() else "json"


def markdown_response(text: str, status: int = 200) -> Response:
    return PlainTextResponse(text, status_code=status, media_type=MARKDOWN, headers={"Vary": "Accept"})


def error_page(request: Request, status: int, code: str, message: str) -> Response | None:
    """The error as a page when the asker reads pages: markdown for /raw/ and AI fetchers,
    HTML that links home for a browser; None when the answer is the API's JSON."""
    form = _error_format(request)
    if form == "json":
        return None
    headline = _HEADLINES.get(status, "Something went wrong" if status >= 500 else "That did not work")
    if status == 404 and message.strip().lower() == "not found":  # Starlette's, for an unknown route
        message = f"Nothing lives at {request.url.path}."
    if form == "markdown":
        return markdown_response(f"# {headline}\n\n{message}\n\nMemory.Wiki home: {base_url(request)}/\n", status)
    return templates.TemplateResponse(
        request,
        "error.html",
        {
            "status": status,
            "code": code,
            "headline": headline,
            "message": message,
        },
        status_code=status,
        headers={"Vary": "Accept"},
    )
