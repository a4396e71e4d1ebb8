"""What caches may keep: nothing that depends on a credential.

One rule for every route, applied to the response on its way out:

- An answer to a request that carried a credential (the session cookie, any Authorization
  header, X-Edit-Token, X-Doc-Password, X-Doc-Access, or `?access=` in the URL) is
  `Cache-Control: private, no-store`: a proxy or CDN keyed on the URL never serves it to
  someone else, and a browser keeps no copy that Back shows after signing out. So is the
  answer to any request that may change something, and any page that carries a CSRF token
  (the token is bound to this browser's nonce cookie).
- Every answer that may depend on a credential says so in `Vary` (the cookie and the
  credential headers, beside whatever the route varies on), so a shared cache keeps the
  anonymous answer apart from any other.
- Routes that never read a credential (`CREDENTIAL_BLIND`: the stylesheet, the health check,
  the API's description) keep their caching whatever the request carries; so do public
  answers to requests that carry none.

Whether a route's answer really changes with the credential does not matter here: the answer
of any route that reads credentials is treated as if it did (tests/test_cache_headers.py
walks every GET route with every kind of credential).
"""

from __future__ import annotations

from urllib.parse import parse_qsl

from starlette.datastructures import Headers, MutableHeaders
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from .csrf import AUTHORITY_COOKIES, CREDENTIAL_HEADERS, SAFE_METHODS, STATE_KEY, cookies_of

PRIVATE = "private, no-store"
# what an answer may vary on besides the route's own (Accept): every way a credential arrives
VARY = ("Cookie", "Authorization", "X-Edit-Token", "X-Doc-Password", "X-Doc-Access")
ACCESS_PARAM = "access"
# path prefixes and paths whose answers never read a credential
CREDENTIAL_BLIND = ("/static/", "/healthz", "/openapi.json", "/api/reference", "/favicon.ico")


def carries_credential(scope: Scope, headers: Headers) -> bool:
    """Whether the request offers anything that could prove a right: an answer to it is private."""
    if any(headers.get(name) for name in CREDENTIAL_HEADERS):
        return True
    if any(name in cookies_of(headers) for name in AUTHORITY_COOKIES):
        return True
    query = scope.get("query_string", b"").decode("latin-1")
    return any(key == ACCESS_PARAM for key, _ in parse_qsl(query, keep_blank_values=True))


def credential_blind(path: str) -> bool:
    return any(path == p or (p.endswith("/") and path.startswith(p)) for p in CREDENTIAL_BLIND)


def _merge_vary(headers: MutableHeaders) -> None:
    have = [v.strip() for v in headers.get("vary", "").split(",") if v.strip()]
    lowered = {v.lower() for v in have}
    if "*" in lowered:
        return
    headers["vary"] = ", ".join([*have, *(v for v in VARY if v.lower() not in lowered)])


class PrivateAnswersMiddleware:
    def __init__(self, app: ASGIApp):
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or credential_blind(scope["path"]):
            await self.app(scope, receive, send)
            return
        private = scope["method"] not in SAFE_METHODS or carries_credential(scope, Headers(scope=scope))
        request_state = scope.setdefault("state", {})

        async def send_private(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                _merge_vary(headers)
                if private or request_state.get(STATE_KEY) or "set-cookie" in headers:
                    headers["cache-control"] = PRIVATE
            await send(message)

        await self.app(scope, receive, send_private)
