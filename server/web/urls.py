"""This server's URLs: the configured public URL, else the one the request came in on."""

from __future__ import annotations

from urllib.parse import urlsplit

from starlette.requests import Request

from ..services.urls import Urls


def _public_url(request: Request) -> str | None:
    public_url: str | None = request.app.state.mw.settings.public_url
    return public_url


def base_url(request: Request) -> str:
    configured = _public_url(request)
    if configured:
        return configured.rstrip("/")
    return str(request.base_url).rstrip("/")


def urls(request: Request) -> Urls:
    """The URLs of pages; a link naming the configured public URL's host or this request's
    (or none: a relative link) points here."""
    hosts = {"", request.url.netloc.lower()}
    configured = _public_url(request)
    if configured:
        hosts.add(urlsplit(configured).netloc.lower())
    return Urls(base_url(request), tuple(sorted(hosts)))
