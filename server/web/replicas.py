"""Read-your-writes with read replicas (store/replicas.py): who a request's client is, and the
record of its writes.

Each request gets the keys of its client: the sha256 of every credential it carries (a bearer
or edit token, the session cookie, an access token) and, for a request without one, its address.
A request that may have changed something (a POST, PUT, PATCH or DELETE other than the reads
sent as POST: recall, lookup, agent context, render, bundle suggestions) and succeeded records
the primary's WAL position under its keys before its answer leaves, so the client's next public
read, on any server of the database, goes to a replica only once that replica has replayed it.
With no replica configured this middleware does nothing.
"""

from __future__ import annotations

import hashlib
import logging

import psycopg
from psycopg_pool import PoolTimeout
from starlette.datastructures import Headers
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ..store.db import Database
from ..store.replicas import READER, ReadState, record_write
from .csrf import SAFE_METHODS

log = logging.getLogger("memorywiki.web")

CREDENTIAL_HEADERS = ("authorization", "x-edit-token", "x-doc-access")
SESSION_COOKIE = "mw_session"
READS_AS_POST = ("/recall", "/lookup", "/agent-context", "/api/render", "/api/bundles/suggest")


def _digest(kind: str, value: str) -> str:
    return hashlib.sha256(f"{kind}\x00{value}".encode()).hexdigest()


def client_keys(scope: Scope) -> tuple[str, ...]:
    """The keys a request's client is known by: its credentials', else its address."""
    headers = Headers(scope=scope)
    keys = [_digest(name, headers[name]) for name in CREDENTIAL_HEADERS if headers.get(name)]
    cookie = headers.get("cookie", "")
    if f"{SESSION_COOKIE}=" in cookie:
        for part in cookie.split(";"):
            name, _, value = part.strip().partition("=")
            if name == SESSION_COOKIE and value:
                keys.append(_digest("session", value))
    if "access=" in scope.get("query_string", b"").decode("latin-1"):
        keys.append(_digest("query", scope["query_string"].decode("latin-1")))
    if not keys:
        client = scope.get("client")
        keys.append(_digest("address", client[0] if client else "unknown"))
    return tuple(keys)


def writes(scope: Scope) -> bool:
    return scope["method"] not in SAFE_METHODS and not scope["path"].endswith(READS_AS_POST)


class ReadYourWritesMiddleware:
    def __init__(self, app: ASGIApp, *, db: Database | None = None) -> None:
        self.app = app
        self.db = db

    def _db(self, scope: Scope) -> Database | None:
        if self.db is not None:
            return self.db
        state = getattr(scope.get("app"), "state", None)
        mw = getattr(state, "mw", None) if state is not None else None
        db: Database | None = getattr(mw, "db", None)
        return db

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        db = self._db(scope) if scope["type"] == "http" else None
        if db is None or not db.public.replicas:
            await self.app(scope, receive, send)
            return
        keys = client_keys(scope)
        token = READER.set(ReadState(keys))
        try:
            if not writes(scope):
                await self.app(scope, receive, send)
                return

            async def send_after_recording(message: Message) -> None:
                if message["type"] == "http.response.start" and message["status"] < 400:
                    await _record(db, keys)
                await send(message)

            await self.app(scope, receive, send_after_recording)
        finally:
            READER.reset(token)


async def _record(db: Database, keys: tuple[str, ...]) -> None:
    try:
        async with db.side.connection() as conn:
            await record_write(conn, list(keys))
    except (psycopg.Error, PoolTimeout) as exc:  # the write stands; its reader may see a replica's older copy
        log.warning("a write's WAL position was not recorded (%s)", type(exc).__name__)
