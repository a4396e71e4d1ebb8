"""CSRF protection: one mechanism for every form post and every browser (cookie) post.

A signed double-submit token. The browser holds a random nonce in the `mw_csrf` cookie
(HttpOnly, SameSite=Strict); a page puts `csrf_token(request)`, the nonce signed with the
server's key and a timestamp (itsdangerous), into its form as the hidden field `csrf_token`,
or a script sends it as the `X-CSRF-Token` header. A post passes when the token's signature
holds, it is younger than `csrf_max_age`, and its nonce is the cookie's. Another site can
make a browser post, but it can neither read our cookie nor mint a signature for it.

Which unsafe requests (anything but GET, HEAD, OPTIONS) are checked: those where a cookie is
what authorizes them, when they may change something. The rule is about the cookie, not about
what else comes with it.

1. A post to a page (any route outside /api/, e.g. the password form) IS checked, whatever
   it carries: pages are only ever posted by our own forms. The token may be in the form
   field (the body is read once, up to `max_body_bytes`, and handed on unchanged) or the header.
   The password form only reads, yet stays checked: a forged post from another site would
   spend this visitor's wrong-password budget (rate limits count per client) and could lock
   them out of the page, while our own form always carries its token.
2. Signing in and out (`SESSION_ROUTES`) IS checked, whatever the request carries: only our
   own pages call it, and a forged post could otherwise sign a visitor in to a hub of the
   forger's choosing, where the visitor's next pages would land (login CSRF).
3. A request to /api/ that carries one of this server's authority cookies
   (`AUTHORITY_COOKIES`, the signed session cookie a browser signs in with), to a route that
   may change something (every unsafe route but `READ_ONLY_ROUTES`), needs the token in the
   `X-CSRF-Token` header, whatever other headers it carries: a browser attaches the cookie by
   itself, and also an `Authorization: Basic` of a site behind HTTP basic auth. One exception,
   where the cookie is not what authorizes: a request that carries a token of its own
   (`Authorization: Bearer` or `X-Edit-Token`, which no browser sends by itself and no other
   site can set without a CORS preflight this server never grants) goes on without the
   token, but its cookie then counts for nothing (`COOKIE_REFUSED`: server/web/sessions.py
   reads no session from it), so only its own token can authorize it. A junk token beside
   the cookie is refused like any wrong token.
4. Any other /api/ request is not checked: without an authority cookie there is nothing a
   forger could borrow (every CLI, MCP, skill and curl call). Other cookies grant nothing
   here: the `mw_csrf` nonce is no credential, and a browser sends a host's cookies to every
   port of it (another app on localhost), so a curl cookie jar or an `httpx.Client` that
   loaded a page carries them too. And a route that only reads (recall) answers even a
   session cookie: another site could make the browser ask, but it can never read the answer.

A refused request gets 403 `csrf_failed` (JSON for the API, an HTML page for a browser) and
reaches no route, so nothing changes (the check: server/web/middleware.py). Templates get
`csrf_token` as a global (server/web/templating.py); a page that calls it sets the cookie when the
browser has none.
"""

from __future__ import annotations

import hmac
import re
import secrets
from typing import Any

from itsdangerous import BadSignature, URLSafeTimedSerializer
from starlette.datastructures import Headers
from starlette.requests import Request, cookie_parser

COOKIE = "mw_csrf"
FIELD = "csrf_token"
HEADER = "x-csrf-token"
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
CREDENTIAL_HEADERS = ("authorization", "x-edit-token", "x-doc-password", "x-doc-access")
# The headers that carry a token able to authorize a change by itself (rule 3's exception).
TOKEN_HEADERS = ("x-edit-token",)
# The cookies that can carry this server's authority: the signed HttpOnly SameSite session
# cookie of a browser sign-in (server/web/sessions.py). An /api/ request carrying one is
# checked (rule 3).
AUTHORITY_COOKIES = ("mw_session",)
# Unsafe routes that change nothing (they read public pages or render text), so no cookie
# makes them worth forging: route path templates, as the app declares them.
READ_ONLY_ROUTES = frozenset({"/api/hub/{slug}/recall", "/api/bundles/suggest", "/api/render"})
# Routes that set or end the session cookie, so are checked on every unsafe request (rule 4).
SESSION_ROUTES = frozenset({"/api/hub/{slug}/session", "/api/docs/{doc_id}/access/session"})
_NONCE = re.compile(r"[A-Za-z0-9_-]{32,64}")
STATE_KEY = "mw_csrf_nonce"  # request.state: the nonce a page issued a token for
COOKIE_REFUSED = "mw_cookie_refused"  # request.state: the session cookie authorizes nothing here (rule 3)


class CsrfTokens:
    """Issues and checks tokens with the server's key (Settings.secret_key or the database's)."""

    def __init__(self, secret: str, max_age: int):
        self._serializer = URLSafeTimedSerializer(secret, salt="memorywiki-csrf")
        self.max_age = max_age

    def issue(self, nonce: str) -> str:
        return self._serializer.dumps(nonce)

    def valid(self, token: str | None, nonce: str | None) -> bool:
        if not token or not nonce:
            return False
        try:
            signed = self._serializer.loads(token, max_age=self.max_age)
        except BadSignature:  # also a token that is too old (SignatureExpired)
            return False
        return isinstance(signed, str) and hmac.compare_digest(signed.encode(), nonce.encode())


def cookies_of(headers: Headers | Any) -> dict[str, str]:
    """The request's cookies, read as Starlette reads them for a route (leniently: another
    app's malformed cookie on the same host hides none of ours)."""
    raw = headers.get("cookie")
    return cookie_parser(raw) if raw else {}


def cookie_nonce(headers: Headers | Any) -> str | None:
    value = cookies_of(headers).get(COOKIE)
    return value if value is not None and _NONCE.fullmatch(value) else None


def csrf_token(request: Request) -> str:
    """The token for this browser, for a form's hidden `csrf_token` field or the
    X-CSRF-Token header. Gives the browser a nonce cookie if it has none yet."""
    nonce = getattr(request.state, STATE_KEY, None) or cookie_nonce(request.headers)
    if nonce is None:
        nonce = secrets.token_urlsafe(32)
    setattr(request.state, STATE_KEY, nonce)
    token: str = request.app.state.mw.csrf.issue(nonce)
    return token


def is_api(route: str) -> bool:
    return route == "/api" or route.startswith("/api/")


def may_change(method: str, route: str) -> bool:
    """Whether this method on this route (a path template) may change something."""
    return method not in SAFE_METHODS and route not in READ_ONLY_ROUTES


def bearer_of(headers: Headers | Any) -> str | None:
    """The token of an `Authorization: Bearer` header, or None (another scheme, or none)."""
    scheme, _, token = headers.get("authorization", "").partition(" ")
    return token.strip() if scheme.lower() == "bearer" and token.strip() else None


def carries_token(headers: Headers | Any) -> bool:
    """Whether the request brings a token that could authorize it without any cookie."""
    return bearer_of(headers) is not None or any(headers.get(name, "").strip() for name in TOKEN_HEADERS)


CHECK, PASS, IGNORE_COOKIE = "check", "pass", "ignore_cookie"


def decide(method: str, route: str, headers: Headers) -> str:
    """The rule in the module docstring, for one request to the route whose path template is
    `route`: CHECK (the token is required), PASS, or IGNORE_COOKIE (no token given: the
    request goes on, but its session cookie authorizes nothing)."""
    if not may_change(method, route):
        return PASS
    if route in SESSION_ROUTES or not is_api(route):
        return CHECK
    if not any(name in cookies_of(headers) for name in AUTHORITY_COOKIES):
        return PASS
    return IGNORE_COOKIE if carries_token(headers) else CHECK
