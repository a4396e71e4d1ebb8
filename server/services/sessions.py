"""Browser sign-in: open a session for a hub with a sign-in token, end it, say what it is.

A session is a random id the browser keeps in a signed HttpOnly cookie (server/web/sessions.py);
the database keeps its sha256, its hub, its kind and when it ends (store/sessions.py). A
cookie may hold sessions of several hubs. Signing in rotates: the browser's earlier sessions
of that hub are revoked and a new id is made, so a cookie copied before the sign-in opens
nothing afterwards; signing out revokes the hub's sessions, so a replayed cookie is refused.

The owner token opens an "owner" session (Access.sign_in); a one-time link mailed to a person
a page is shared with opens a "reader" session of the page's hub, bound to that address
(Access.sign_in_link): it reads the hub's pages shared with the address, nothing else, and
ends like any other (sign-out, expiry, a later sign-in).
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from datetime import datetime
from typing import Any, NotRequired, TypedDict

from ..errors import not_found, unknown_hub
from ..store import hubs as hub_store
from ..store import sessions as session_store
from ..store.connection import Conn
from ..tokens import hash_token, looks_like_id
from .access import Access, Credentials
from .context import Context
from .urls import Urls

DAY = 24 * 3600


class SessionAnswer(TypedDict):
    """What a sign-in (kind, expires_at; a reader's email too) or a sign-out (signed_out) answers."""

    hub: str
    url: str
    signed_in: bool
    kind: NotRequired[str]
    email: NotRequired[str]
    expires_at: NotRequired[str]
    signed_out: NotRequired[bool]


class SessionStatus(TypedDict):
    hub: str
    url: str
    signed_in: bool
    kind: str | None
    expires_at: str | None
    ended: NotRequired[str]  # "signed_out" or "expired": a sign-in of this hub that has ended


@dataclass(frozen=True)
class SessionChange:
    """What a sign-in or sign-out leaves: the answer for the client, and the session ids the
    browser's cookie holds from now on (the web layer signs them into the cookie)."""

    body: SessionAnswer
    keep: tuple[str, ...]
    max_age: int


def _kept(credentials: Credentials, live: set[str]) -> list[str]:
    return [s for s in credentials.sessions if hash_token(s) in live]


def _status(slug: str, urls: Urls, session: dict[str, Any] | None) -> SessionStatus:
    body: SessionStatus = {
        "hub": slug,
        "url": urls.hub(slug),
        "signed_in": bool(session and session["live"]),
        "kind": None,
        "expires_at": None,
    }
    if session is not None and session["live"]:
        body["kind"] = session["kind"]
        body["expires_at"] = session["expires_at"].isoformat()
    elif session is not None:
        body["ended"] = session["ended"]
    return body


async def _rotate(
    conn: Conn,
    credentials: Credentials,
    session_id: str,
    hub_id: int,
    kind: str,
    *,
    seconds: int,
    email: str | None = None,
) -> tuple[datetime, set[str]]:
    """Revoke the browser's sessions of the hub and open the new one: when it expires, and
    which of the browser's other sessions are still live."""
    await session_store.revoke(conn, hub_id, credentials.session_hashes)
    expires = await session_store.open_session(conn, hash_token(session_id), hub_id, kind, seconds=seconds, email=email)
    return expires, await session_store.live(conn, credentials.session_hashes)


async def sign_in(ctx: Context, credentials: Credentials, urls: Urls, slug: str, token: str) -> SessionChange:
    """A new session of the hub for this browser, if `token` opens it (the owner token)."""
    access = Access(ctx.limits, credentials)
    session_id = secrets.token_urlsafe(32)
    seconds = ctx.settings.session_days * DAY

    async def open_it(conn: Conn) -> tuple[str, datetime, set[str]]:
        hub = await hub_store.find_hub(conn, slug)
        if hub is None:
            raise unknown_hub(slug)
        kind = await access.sign_in(conn, hub, token)
        return kind, *await _rotate(conn, credentials, session_id, hub["id"], kind, seconds=seconds)

    kind, expires, live = await ctx.db.write(open_it)
    body: SessionAnswer = {
        "hub": slug,
        "url": urls.hub(slug),
        "signed_in": True,
        "kind": kind,
        "expires_at": expires.isoformat(),
    }
    return SessionChange(body, (*_kept(credentials, live), session_id), seconds)


async def sign_in_reader(ctx: Context, credentials: Credentials, urls: Urls, doc_id: str, secret: str) -> SessionChange:
    """A reader session for the address a sign-in link was mailed to, of the hub of the page
    it was asked from; the link is used up."""
    if not looks_like_id(doc_id):
        raise not_found("doc")
    access = Access(ctx.limits, credentials)
    session_id = secrets.token_urlsafe(32)
    seconds = ctx.settings.reader_session_hours * 3600

    async def open_it(conn: Conn) -> tuple[dict[str, Any], datetime, set[str]]:
        link = await access.sign_in_link(conn, doc_id, secret)
        return link, *await _rotate(
            conn, credentials, session_id, link["hub_id"], "reader", seconds=seconds, email=link["email"]
        )

    link, expires, live = await ctx.db.write(open_it)
    body: SessionAnswer = {
        "hub": link["hub_slug"],
        "url": urls.doc(doc_id),
        "signed_in": True,
        "kind": "reader",
        "email": link["email"],
        "expires_at": expires.isoformat(),
    }
    # the cookie outlives a reader's session: it may hold the owner's sessions of other hubs
    return SessionChange(body, (*_kept(credentials, live), session_id), ctx.settings.session_days * DAY)


async def sign_out(ctx: Context, credentials: Credentials, urls: Urls, slug: str) -> SessionChange:
    """End this browser's sessions of the hub (none is fine: signing out twice is no error)."""

    async def end_it(conn: Conn) -> tuple[int, set[str]]:
        hub = await hub_store.find_hub(conn, slug)
        if hub is None:
            raise unknown_hub(slug)
        ended = await session_store.revoke(conn, hub["id"], credentials.session_hashes)
        return ended, await session_store.live(conn, credentials.session_hashes)

    ended, live = await ctx.db.write(end_it)
    body: SessionAnswer = {"hub": slug, "url": urls.hub(slug), "signed_in": False, "signed_out": ended > 0}
    return SessionChange(body, tuple(_kept(credentials, live)), ctx.settings.session_days * DAY)


async def status(ctx: Context, credentials: Credentials, urls: Urls, slug: str) -> SessionStatus:
    """Whether this browser is signed in to the hub, as what, until when (or how it ended)."""
    async with ctx.db.owner.connection() as conn:
        hub = await hub_store.find_hub(conn, slug)
        if hub is None:
            raise unknown_hub(slug)
        session = await session_store.for_hub(conn, hub["id"], credentials.session_hashes)
    return _status(slug, urls, session)
