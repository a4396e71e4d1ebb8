"""Members: the co-authors of a hub, added by name by its owner, each with a token of their own.

A member's token writes pages into the hub (Access.hub_writer, Access.edit_credential) and is
named in every version it saves ("member:<name>"); it never manages members or settings.
Revoking a member ends their token at once: every check reads the row.
"""

from __future__ import annotations

import re
from typing import Any, TypedDict

from ..errors import BadRequest, Conflict, NotFound
from ..store import members as member_store
from ..store.connection import Conn
from ..tokens import hash_token, new_token
from .access import Access, Credentials
from .context import Context
from .urls import Urls

NAME = re.compile(r"[a-z0-9][a-z0-9._-]{0,39}")
NAME_RULE = (
    "a member's name is 1-40 lowercase letters, digits, dots, dashes or underscores, starting with a letter or digit"
)


def member_name(name: str) -> str:
    """The name as stored (lower case), or 400: the rule leaves no room for spaces, CR/LF or markup."""
    cleaned = name.strip().lower()
    if not NAME.fullmatch(cleaned):
        raise BadRequest("invalid_name", NAME_RULE)
    return cleaned


class Member(TypedDict):
    name: str
    via: str  # how the versions it saves are signed: "member:<name>"
    added_at: str


class NewMember(Member):
    hub: str
    url: str
    token: str  # shown once


class Members(TypedDict):
    hub: str
    url: str
    members: list[Member]


class RemovedMember(TypedDict):
    hub: str
    name: str
    removed: bool


def _member_json(row: dict[str, Any]) -> Member:
    return {"name": row["name"], "via": f"member:{row['name']}", "added_at": row["created_at"].isoformat()}


async def add(ctx: Context, credentials: Credentials, urls: Urls, slug: str, name: str) -> NewMember:
    """A new member of the hub (the owner's call); the answer holds their token, shown once."""
    name = member_name(name)
    access = Access(ctx.limits, credentials)
    token = new_token("mwm")

    async def add_it(conn: Conn) -> dict[str, Any] | None:
        hub = await access.hub_owner(conn, slug)
        return await member_store.add(conn, hub["id"], name, hash_token(token))

    row = await ctx.db.write(add_it)
    if row is None:
        raise Conflict(
            "member_exists",
            f"hub '{slug}' already has a member named '{name}': remove them first to give them a new token",
        )
    return {**_member_json(row), "hub": slug, "url": urls.hub(slug), "token": token}


async def listing(ctx: Context, credentials: Credentials, urls: Urls, slug: str) -> Members:
    """The hub's members, oldest first (the owner's)."""
    access = Access(ctx.limits, credentials)
    async with ctx.db.owner.connection() as conn:
        hub = await access.hub_owner(conn, slug)
        rows = await member_store.live(conn, hub["id"])
    return {"hub": slug, "url": urls.hub(slug), "members": [_member_json(r) for r in rows]}


async def remove(ctx: Context, credentials: Credentials, slug: str, name: str) -> RemovedMember:
    """Revoke a member's token at once (the owner's call)."""
    name = member_name(name)
    access = Access(ctx.limits, credentials)

    async def revoke(conn: Conn) -> bool:
        hub = await access.hub_owner(conn, slug)
        return await member_store.revoke(conn, hub["id"], name)

    if not await ctx.db.write(revoke):
        raise NotFound("unknown_member", f"hub '{slug}' has no member named '{name}'")
    return {"hub": slug, "name": name, "removed": True}
