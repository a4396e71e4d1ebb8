"""The ASGI middlewares: security headers on every response, and the CSRF check.

Security headers: the CSP allows no inline script or style (`script-src 'self'`,
`style-src 'self'`): a doc's markdown is escaped when rendered, and even if something slipped
through, the browser would not run it. The templates keep to that: one stylesheet under
/static, no inline `<script>`, `<style>` or `style=`/`on...=` attributes
(tests/test_security.py checks them). Images may come from https (a doc may show one);
frames of our pages are refused, and no Referer leaves the site, since a page URL may carry an
access token (`?access=`).

The CSRF check applies the rule of server/web/csrf.py to every request a route would take, before it runs.
"""

from __future__ import annotations

from collections import deque

from starlette.datastructures import Headers, MutableHeaders
from starlette.requests import Request
from starlette.routing import Match
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ..errors import ApiError
from .csrf import (
    CHECK,
    COOKIE,
    COOKIE_REFUSED,
    FIELD,
    HEADER,
    IGNORE_COOKIE,
    SAFE_METHODS,
    STATE_KEY,
    cookie_nonce,
    decide,
    is_api,
)
from .errors import error_response

CSP = "; ".join(
    [
        "default-src 'self'",
        "script-src 'self'",
        "style-src 'self'",
        "img-src 'self' data: https:",
        "object-src 'none'",
        "base-uri 'none'",
        "form-action 'self'",
        "frame-ancestors 'none'",
    ]
)

SECURITY_HEADERS = {
    "content-security-policy": CSP,
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
    "x-frame-options": "DENY",  # frame-ancestors for browsers that predate it
    "cross-origin-opener-policy": "same-origin",
}


class SecurityHeadersMiddleware:
    def __init__(self, app: ASGIApp):
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                for name, value in SECURITY_HEADERS.items():
                    if name not in headers:
                        headers[name] = value
            await send(message)

        await self.app(scope, receive, send_with_headers)


def _is_form(content_type: str) -> bool:
    kind = content_type.split(";", 1)[0].strip().lower()
    return kind in ("application/x-www-form-urlencoded", "multipart/form-data")


class CsrfMiddleware:
    """Refuses unsafe requests without a valid token (see the module docstring); sets the
    nonce cookie on responses whose page issued a token to a browser that had none."""

    def __init__(self, app: ASGIApp):
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        route = _route(scope) if scope["method"] not in SAFE_METHODS else None
        decision = decide(scope["method"], route, headers) if route is not None else None
        request_state = scope.setdefault("state", {})  # where csrf_token() leaves a new nonce
        if decision == CHECK and route is not None:
            checked = await self._check(scope, receive, send, headers, is_api(route))
            if checked is None:
                return
            receive = checked
        elif decision == IGNORE_COOKIE:
            if not scope["app"].state.mw.csrf.valid(headers.get(HEADER), cookie_nonce(headers)):
                request_state[COOKIE_REFUSED] = True  # its own token must authorize it
        had = cookie_nonce(headers)
        secure = scope.get("scheme") == "https"

        async def send_with_cookie(message: Message) -> None:
            if message["type"] == "http.response.start":
                nonce = request_state.get(STATE_KEY)
                if nonce and nonce != had:
                    cookie = f"{COOKIE}={nonce}; Path=/; HttpOnly; SameSite=Strict" + ("; Secure" if secure else "")
                    MutableHeaders(scope=message).append("set-cookie", cookie)
            await send(message)

        await self.app(scope, receive, send_with_cookie)

    async def _check(self, scope: Scope, receive: Receive, send: Send, headers: Headers, api: bool) -> Receive | None:
        """The receive to hand on (the body replayed, when it was read for the form field),
        or None when the request was refused."""
        state = scope["app"].state.mw
        token = headers.get(HEADER)
        replay = receive
        if token is None and not api and _is_form(headers.get("content-type", "")):
            messages, too_large = await _read_body(receive, state.settings.max_body_bytes)
            if too_large:
                await _refuse(scope, receive, send, 413, "too_large", "the form is too large")
                return None
            token = await _form_field(scope, messages)
            replay = _replaying(messages, receive)

        if state.csrf.valid(token, cookie_nonce(headers)):
            return replay
        why = (
            "this form has expired or did not come from this site: reload the page and try again"
            if not api
            else "a request carrying this site's session cookie needs the page's CSRF token in the X-CSRF-Token header"
        )
        await _refuse(scope, receive, send, 403, "csrf_failed", why)
        return None


def _route(scope: Scope) -> str | None:
    """The path template of the route that takes this method at this path, if one does.
    Others get the router's own 404 or 405 (they change nothing, so there is nothing to protect)."""
    for route in scope["app"].router.routes:
        if route.matches(scope)[0] == Match.FULL:
            return getattr(route, "path", "")
    return None


def _replaying(messages: list[Message], receive: Receive) -> Receive:
    """A receive that hands on the messages already read, then the rest as it comes."""
    pending = deque(messages)

    async def replay() -> Message:
        return pending.popleft() if pending else await receive()

    return replay


async def _read_body(receive: Receive, limit: int) -> tuple[list[Message], bool]:
    messages: list[Message] = []
    size = 0
    while True:
        message = await receive()
        messages.append(message)
        if message["type"] != "http.request":
            return messages, False
        size += len(message.get("body", b""))
        if size > limit:
            return messages, True
        if not message.get("more_body", False):
            return messages, False


async def _form_field(scope: Scope, messages: list[Message]) -> str | None:
    """The csrf_token field of a buffered form body, parsed by Starlette's own form parser."""
    pending = deque(messages)

    async def receive() -> Message:
        return pending.popleft() if pending else {"type": "http.disconnect"}

    request = Request(scope, receive)
    try:
        form = await request.form(max_files=1000, max_fields=1000)
    except Exception:  # a malformed body: no token
        return None
    try:
        value = form.get(FIELD)
        return value if isinstance(value, str) else None
    finally:
        await form.close()


async def _refuse(scope: Scope, receive: Receive, send: Send, status: int, code: str, message: str) -> None:
    response = error_response(Request(scope, receive), ApiError(status, code, message))
    await response(scope, receive, send)
