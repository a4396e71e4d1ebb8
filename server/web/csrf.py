"""CSRF protection: one mechanism for every form post and every browser (cookie) post.

A signed double-submit token. The browser holds a random nonce in the `mw_csrf` cookie
(HttpOnly, SameSite=Strict); a page puts `csrf_token(request)`, the nonce signed with the
server's key and a timestamp (itsdangerous), into its form as the hidden field `csrf_token`,
or a script sends it as the `X-CSRF-Token` header. A post passes when the token's signature
holds, it is younger than `csrf_max_age`, and its nonce is the cookie's. Another site can
make a browser post, but it can neither read our cookie nor mint a signature for it.

Which unsafe requests (anything but GET, HEAD, OPTIONS) are checked:

1. A request that carries its credential in a header (`Authorization: Bearer`,
   `X-Edit-Token`, `X-Doc-Password`, `X-Doc-Access`) is NOT checked: browsers never attach
   those by themselves, and a cross-site page cannot set them without a CORS preflight,
   which this server never grants. That is every CLI, MCP, skill and curl call.
2. A post to a page (any path outside /api/, e.g. the password form) IS checked, whatever
   it carries: pages are only ever posted by our own forms. The token may be in the form
   field (the body is read once, up to `max_body_bytes`, and handed on unchanged) or the header.
3. A post to /api/ that carries a Cookie header IS checked (a browser sent it, with
   whatever the cookie may grant); the token must be in the `X-CSRF-Token` header.
4. Any other /api/ post (no cookie, no credential header) is not checked: it carries no
   ambient authority, so forging it from another site gains nothing its author could not do.

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
from starlette.requests import Request

COOKIE = "mw_csrf"
FIELD = "csrf_token"
HEADER = "x-csrf-token"
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
CREDENTIAL_HEADERS = ("authorization", "x-edit-token", "x-doc-password", "x-doc-access")
_NONCE = re.compile(r"[A-Za-z0-9_-]{32,64}")
STATE_KEY = "mw_csrf_nonce"  # request.state: the nonce a page issued a token for


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


def cookie_nonce(headers: Headers | Any) -> str | None:
    from http.cookies import SimpleCookie

    raw = headers.get("cookie")
    if not raw:
        return None
    jar = SimpleCookie()
    try:
        jar.load(raw)
    except Exception:  # a malformed Cookie header: no nonce
        return None
    morsel = jar.get(COOKIE)
    return morsel.value if morsel is not None and _NONCE.fullmatch(morsel.value) else None


def csrf_token(request: Request) -> str:
    """The token for this browser, for a form's hidden `csrf_token` field or the
    X-CSRF-Token header. Gives the browser a nonce cookie if it has none yet."""
    nonce = getattr(request.state, STATE_KEY, None) or cookie_nonce(request.headers)
    if nonce is None:
        nonce = secrets.token_urlsafe(32)
    setattr(request.state, STATE_KEY, nonce)
    return request.app.state.mw.csrf.issue(nonce)


def needs_check(method: str, path: str, headers: Headers) -> bool:
    """The rule in the module docstring, for one request."""
    if method in SAFE_METHODS:
        return False
    if any(headers.get(name) for name in CREDENTIAL_HEADERS):
        return False
    is_api = path == "/api" or path.startswith("/api/")
    return not is_api or "cookie" in headers
