"""Who may do what: edit tokens, hub owner tokens, passwords and access tokens."""

from __future__ import annotations

from typing import Any

import psycopg
from starlette.requests import Request

from .errors import ApiError
from .tokens import hash_token, verify_password
from .web import bearer_token


async def hub_by_slug(conn: psycopg.AsyncConnection, slug: str) -> dict[str, Any] | None:
    return await (await conn.execute(
        "SELECT id, slug, owner_token_hash FROM hubs WHERE slug = %s", (slug,)
    )).fetchone()


async def require_hub_owner(conn: psycopg.AsyncConnection, request: Request, slug: str) -> dict[str, Any]:
    hub = await hub_by_slug(conn, slug)
    if hub is None:
        raise ApiError(404, "unknown_hub", f"hub '{slug}' does not exist")
    token = bearer_token(request)
    if token is None:
        raise ApiError(401, "unauthorized", f"writing to hub '{slug}' needs its owner token (Authorization: Bearer ...)")
    if hash_token(token) != hub["owner_token_hash"]:
        raise ApiError(403, "forbidden", f"that token does not own hub '{slug}'")
    return hub


def _edit_credentials(request: Request) -> list[str]:
    """The bearer token, plus X-Edit-Token: moving a doc into a hub needs both its edit
    token and the hub's owner token in one request."""
    tokens = [bearer_token(request), request.headers.get("x-edit-token", "").strip()]
    return [t for t in tokens if t]


async def can_edit(conn: psycopg.AsyncConnection, request: Request, doc: dict[str, Any]) -> bool:
    """The doc's edit token, or the owner token of the hub it lives in."""
    for token in _edit_credentials(request):
        hashed = hash_token(token)
        if hashed == doc["edit_token_hash"]:
            return True
        if doc["hub_id"] is not None:
            row = await (await conn.execute(
                "SELECT 1 FROM hubs WHERE id = %s AND owner_token_hash = %s", (doc["hub_id"], hashed)
            )).fetchone()
            if row is not None:
                return True
    return False


async def require_edit(conn: psycopg.AsyncConnection, request: Request, doc: dict[str, Any]) -> None:
    if not _edit_credentials(request):
        raise ApiError(401, "unauthorized", "editing needs the doc's edit token or its hub's owner token")
    if not await can_edit(conn, request, doc):
        raise ApiError(403, "forbidden", "that token cannot edit this doc")


async def can_read_private(conn: psycopg.AsyncConnection, request: Request, doc: dict[str, Any],
                           password: str | None = None) -> bool:
    """A private doc opens to its editors, to its password, or to an issued access token."""
    if doc["deleted_at"] is not None:
        return False
    if await can_edit(conn, request, doc):
        return True
    if doc["is_draft"]:
        return False
    password = password or request.headers.get("x-doc-password")
    if doc["password_hash"] is not None:
        if not password or not verify_password(doc["password_hash"], password):
            return False
    if doc["allowed_emails"]:
        access = request.headers.get("x-doc-access") or request.query_params.get("access")
        if not access:
            return False
        row = await (await conn.execute(
            "SELECT email FROM access_tokens WHERE token_hash = %s AND doc_id = %s",
            (hash_token(access), doc["id"]),
        )).fetchone()
        if row is None or row["email"].lower() not in {e.lower() for e in doc["allowed_emails"]}:
            return False
    return True
