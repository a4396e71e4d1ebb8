"""Who may do what: edit tokens, hub owner tokens, passwords and access tokens.

Every check of a token or password goes through the client's rate limit (server/web/ratelimit.py):
refused tokens and wrong passwords are counted, and a client that spent its budget gets 429
before anything is checked.
"""

from __future__ import annotations

from typing import Any

import psycopg
from starlette.requests import Request

from ..errors import Forbidden, Unauthorized, unknown_hub
from ..store import access, hubs
from ..tokens import hash_token, verify_password
from .state import app_state, bearer_token


async def require_hub_owner(conn: psycopg.AsyncConnection, request: Request, slug: str) -> dict[str, Any]:
    """The hub {"id", "slug"}, once the request's bearer token proved it owns it."""
    hub = await hubs.find_hub(conn, slug)
    if hub is None:
        raise unknown_hub(slug)
    token = bearer_token(request)
    if token is None:
        raise Unauthorized("unauthorized", f"writing to hub '{slug}' needs its owner token (Authorization: Bearer ...)")
    limits = app_state(request).limits
    limits.check(request, "token")
    if not await hubs.is_owner(conn, hub["id"], hash_token(token)):
        limits.failed(request, "token")
        raise Forbidden("forbidden", f"that token does not own hub '{slug}'")
    return hub


def _edit_credentials(request: Request) -> list[str]:
    """The bearer token, plus X-Edit-Token: moving a doc into a hub needs both its edit
    token and the hub's owner token in one request."""
    tokens = [bearer_token(request), request.headers.get("x-edit-token", "").strip()]
    return [t for t in tokens if t]


async def edit_credential(conn: psycopg.AsyncConnection, request: Request, doc: dict[str, Any]) -> str | None:
    """Which credential of the request may edit the doc: "owner" (the owner token of the hub
    it lives in), "edit_token" (its own edit token), or None. The owner wins when both are sent."""
    found = None
    tokens = _edit_credentials(request)
    if tokens:
        app_state(request).limits.check(request, "token")
    for token in tokens:
        hashed = hash_token(token)
        if doc["hub_id"] is not None and await hubs.is_owner(conn, doc["hub_id"], hashed):
            return "owner"
        if hashed == doc["edit_token_hash"]:
            found = "edit_token"
    return found


async def can_edit(conn: psycopg.AsyncConnection, request: Request, doc: dict[str, Any]) -> bool:
    """The doc's edit token, or the owner token of the hub it lives in."""
    return await edit_credential(conn, request, doc) is not None


async def require_edit(conn: psycopg.AsyncConnection, request: Request, doc: dict[str, Any]) -> str:
    """The credential that may edit the doc ("owner" or "edit_token"), or 401/403."""
    if not _edit_credentials(request):
        raise Unauthorized("unauthorized", "editing needs the doc's edit token or its hub's owner token")
    via = await edit_credential(conn, request, doc)  # checks the client's budget first
    if via is None:
        app_state(request).limits.failed(request, "token")
        raise Forbidden("forbidden", "that token cannot edit this doc")
    return via


async def require_restore(conn: psycopg.AsyncConnection, request: Request, doc: dict[str, Any]) -> str:
    """Who may restore a version. A live doc: whoever may edit it. A deleted doc: its owner
    only, i.e. the hub's owner token, or for a doc in no hub its edit token (the only
    credential such a doc has). An edit token of a hub doc cannot bring back what was
    deleted: the hub owner decides (a token may have been deleted with the doc because it leaked)."""
    via = await require_edit(conn, request, doc)
    if doc["deleted_at"] is not None and doc["hub_id"] is not None and via != "owner":
        raise Forbidden("forbidden", "only the hub's owner token can restore a deleted doc")
    return via


async def can_read_private(conn: psycopg.AsyncConnection, request: Request, doc: dict[str, Any],
                           password: str | None = None) -> bool:
    """A private doc opens to its editors, to its password, or to an issued access token."""
    if doc["deleted_at"] is not None:
        return False
    if await can_edit(conn, request, doc):
        return True
    if doc["is_draft"]:
        return False
    limits = app_state(request).limits
    password = password or request.headers.get("x-doc-password")
    if doc["password_hash"] is not None:
        if not password:
            return False
        limits.check(request, "password")
        if not verify_password(doc["password_hash"], password):
            limits.failed(request, "password")
            return False
    if doc["allowed_emails"]:
        token = request.headers.get("x-doc-access") or request.query_params.get("access")
        if not token:
            return False
        limits.check(request, "token")
        email = await access.email_for(conn, hash_token(token), doc["id"])
        if email is None or email.lower() not in {e.lower() for e in doc["allowed_emails"]}:
            limits.failed(request, "token")
            return False
    return True


def refused_credentials(request: Request) -> None:
    """A read that sent credentials and still found nothing it may see: one refused token
    (a guess at a private doc's token looks exactly like this)."""
    if _edit_credentials(request):
        app_state(request).limits.failed(request, "token")
