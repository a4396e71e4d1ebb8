"""Small request helpers shared by the routes."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from starlette.requests import Request

from ..config import Settings
from .csrf import CsrfTokens
from ..embedding.base import Embedder
from .ratelimit import RateLimits
from ..store.db import Database


@dataclass
class AppState:
    settings: Settings
    db: Database
    embedder: Embedder | None
    csrf: CsrfTokens
    limits: RateLimits
    worker: Any = None  # the in-process Worker, when running
    curator: Any = None  # the Curator (server/curation/worker.py), None when curation is off
    curation_runs_in: str | None = None  # "server", "process" (the worker child) or "external"
    worker_process: Any = None  # the child-process worker (WorkerProcess), when running
    questions: Any = None  # the QuestionLane recall embeds through, when there is an embedder
    reranker: Any = None  # the optional rerank stage (server/embedding/rerank.py), when configured

    def wake_worker(self) -> None:
        if self.worker is not None:
            self.worker.wake.set()


def app_state(request: Request) -> AppState:
    return request.app.state.mw


def bearer_token(request: Request) -> str | None:
    header = request.headers.get("authorization", "")
    scheme, _, token = header.partition(" ")
    if scheme.lower() == "bearer" and token.strip():
        return token.strip()
    return None


def base_url(request: Request) -> str:
    configured = app_state(request).settings.public_url
    if configured:
        return configured.rstrip("/")
    return str(request.base_url).rstrip("/")


def doc_url(request: Request, doc_id: str) -> str:
    return f"{base_url(request)}/{doc_id}"


def hub_url(request: Request, slug: str) -> str:
    return f"{base_url(request)}/hub/{slug}"


def bundle_url(request: Request, bundle_id: str) -> str:
    return f"{base_url(request)}/b/{bundle_id}"



def own_hosts(request: Request) -> list[str]:
    """The hosts a link to this server may name ('' is a relative link): the configured public
    URL's and the one this request came in on."""
    hosts = {"", request.url.netloc.lower()}
    configured = app_state(request).settings.public_url
    if configured:
        hosts.add(urlsplit(configured).netloc.lower())
    return sorted(hosts)
