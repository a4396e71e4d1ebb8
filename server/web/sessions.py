"""The session cookie of a browser sign-in: `mw_session`, signed, HttpOnly, SameSite=Lax.

Its value is the list of the browser's session ids (one per hub it is signed in to, at most
MAX_SESSIONS), signed with the server's key (itsdangerous), so a cookie that was altered or
made up is ignored before the database is asked. The ids are random and the database keeps
only their sha256 (server/services/sessions.py). Never a token: the cookie opens nothing once
its sessions are revoked or expired. Lax, not Strict, so following a link to a hub from
another site (or from a mail) arrives signed in; every request that may change something and
carries this cookie needs the page's CSRF token (server/web/csrf.py, AUTHORITY_COOKIES).
"""

from __future__ import annotations

import re

from itsdangerous import BadSignature, URLSafeSerializer
from starlette.requests import Request
from starlette.responses import Response

from .csrf import COOKIE_REFUSED

COOKIE = "mw_session"
MAX_SESSIONS = 8  # hubs a browser stays signed in to at once; the oldest sign-in leaves the cookie first
_ID = re.compile(r"[A-Za-z0-9_-]{32,64}")


class SessionCookies:
    """Signs and reads the cookie with the server's key (Settings.secret_key or the database's)."""

    def __init__(self, secret: str):
        self._serializer = URLSafeSerializer(secret, salt="memorywiki-session")

    def dump(self, session_ids: tuple[str, ...]) -> str:
        return self._serializer.dumps(list(session_ids[-MAX_SESSIONS:]))

    def load(self, value: str | None) -> tuple[str, ...]:
        if not value:
            return ()
        try:
            ids = self._serializer.loads(value)
        except BadSignature:
            return ()
        if not isinstance(ids, list):
            return ()
        return tuple(i for i in ids if isinstance(i, str) and _ID.fullmatch(i))[-MAX_SESSIONS:]


def session_ids(request: Request) -> tuple[str, ...]:
    """The session ids of the request's cookie (none for a missing, altered or foreign one, and
    none when the CSRF check found that the cookie must not authorize this request)."""
    if request.scope.get("state", {}).get(COOKIE_REFUSED):
        return ()
    ids: tuple[str, ...] = request.app.state.mw.sessions.load(request.cookies.get(COOKIE))
    return ids


def set_session_cookie(request: Request, response: Response, session_ids: tuple[str, ...], max_age: int) -> None:
    """Give the browser a cookie holding exactly these sessions (none: the cookie goes)."""
    secure = request.url.scheme == "https"
    if not session_ids:
        response.delete_cookie(COOKIE, path="/", secure=secure, httponly=True, samesite="lax")
        return
    response.set_cookie(
        COOKIE,
        request.app.state.mw.sessions.dump(session_ids),
        max_age=max_age,
        path="/",
        secure=secure,
        httponly=True,
        samesite="lax",
    )
