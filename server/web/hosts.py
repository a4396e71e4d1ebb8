"""Which hosts this server answers to, and whose forwarded headers it believes.

Every link that leaves the server (a mailed sign-in link, a `url` field, a page's canonical
link) is built from `MEMORYWIKI_PUBLIC_URL` when it is set, else from the request's Host
(server/web/urls.py). So a Host header is believed only when it names a trusted host:
`MEMORYWIKI_TRUSTED_HOSTS` (the loopback names by default) and the public URL's host. Any other
Host, or none, is refused with 400 `untrusted_host` before a route runs, so a forged Host can
never point a mail at another site. The rule is Starlette's TrustedHostMiddleware (an exact
name, `*.example.com` for its subdomains, `*` for any), answered in this server's error model
and reading IPv6 literals right.

Behind a proxy, X-Forwarded-For (whom the rate limits count) and X-Forwarded-Proto (http or
https in links built from the Host) are taken from `MEMORYWIKI_FORWARDED_ALLOW_IPS` only, by
uvicorn's ProxyHeadersMiddleware, which the app applies itself so that the settings decide
whatever runs it. X-Forwarded-Host is never read: a proxy keeps the Host, or the public URL
names it.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from starlette.datastructures import Headers
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from ..config import Settings

LOOPBACK = ("localhost", "127.0.0.1", "::1")
HOW_TO_ADD = "set MEMORYWIKI_PUBLIC_URL to the address people use, or add the name to MEMORYWIKI_TRUSTED_HOSTS"


def trusted_hosts(settings: Settings) -> tuple[str, ...]:
    """The trusted host names: the setting's, and the public URL's host."""
    hosts = list(settings.trusted_hosts)
    if settings.public_url:
        public = urlsplit(settings.public_url).hostname
        if public and public not in hosts:
            hosts.append(public)
    return tuple(hosts)


def host_name(value: str) -> str | None:
    """The name a Host header gives, lower case, without its port or IPv6 brackets; None when
    it is not one host[:port]."""
    value = value.strip()
    if not value or any(c in value for c in "/?#@\\ "):
        return None
    try:
        parts = urlsplit("//" + value)
        parts.port  # noqa: B018  (a port that is no number raises ValueError)
    except ValueError:
        return None
    return parts.hostname or None


def is_trusted(name: str, hosts: tuple[str, ...]) -> bool:
    for pattern in hosts:
        if pattern == "*" or name == pattern:
            return True
        if pattern.startswith("*.") and name.endswith(pattern[1:]):
            return True
    return False


class TrustedHostMiddleware:
    """Refuses a request whose Host is not a trusted one (400 `untrusted_host`), before any route."""

    def __init__(self, app: ASGIApp, settings: Settings):
        self.app = app
        self.hosts = trusted_hosts(settings)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        given = Headers(scope=scope).get("host", "")
        name = host_name(given)
        if name is not None and is_trusted(name, self.hosts):
            await self.app(scope, receive, send)
            return
        # JSON whatever the client accepts: an error page would link home through this very Host
        shown = repr(given[:100]) if name is not None else "(missing or malformed)"
        message = f"this server does not answer to the host {shown}: {HOW_TO_ADD}"
        response = JSONResponse({"error": {"code": "untrusted_host", "message": message}}, status_code=400)
        await response(scope, receive, send)


def serve_note(settings: Settings, bind: str) -> str | None:
    """What `memorywiki serve --host <bind>` tells its user when other machines may connect but
    only the trusted hosts get answers; None on loopback."""
    if bind in LOOPBACK or bind.startswith("127."):
        return None
    hosts = ", ".join(trusted_hosts(settings))
    return (
        f"listening on {bind}: requests are answered only for the hosts {hosts} (any other Host "
        f"gets 400 untrusted_host). To reach it by another name or address, {HOW_TO_ADD} "
        "(comma-separated, e.g. MEMORYWIKI_TRUSTED_HOSTS=wiki.example.com,192.168.1.20)."
    )
