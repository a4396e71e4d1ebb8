"""Who may do what: edit tokens, hub owner and member tokens, browser sessions (the owner's and
a reader's), passwords and access tokens.

What a credential proved is named the way versions record it (`via`): "owner", "edit_token",
or "member:<name>" for a co-author's token. A member writes pages into the hub but never
manages it (members, settings, sign-in as owner): those stay `hub_owner`'s. Nor does a member
or an edit token decide where a page lives: moving a page out of its hub, or into another,
needs the owner of the hub it is in (`require_move`); what was deleted (its versions, bringing
it back) is the owner's alone (`owns_deleted`, `require_restore`). A page's edit token handed
out through a member ends with the membership (store/docs.py, `edit_token_live`).

The whole grant of every credential is one table: docs/credentials.md.

Every check of a token or password goes through the client's rate limit (server/web/ratelimit.py):
refused tokens and wrong passwords are counted, and a client that spent its budget gets 429
before anything is checked.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, NamedTuple, Protocol

from ..errors import Forbidden, Unauthorized, unknown_hub
from ..store import access, hubs
from ..store import members as member_store
from ..store import sessions as session_store
from ..store import signin_links as link_store
from ..store.connection import Conn
from ..tokens import hash_token, verify_password

MEMBER = "member:"


def is_member(via: str | None) -> bool:
    return bool(via and via.startswith(MEMBER))


@dataclass(frozen=True)
class Credentials:
    """What a request offered to prove its rights, parsed once by the web layer."""

    bearer: str | None = None  # Authorization: Bearer (an owner or edit token)
    edit_token: str | None = None  # X-Edit-Token (beside a hub owner's bearer when moving a doc)
    password: str | None = None  # X-Doc-Password, or the password form's field
    access_token: str | None = None  # X-Doc-Access or ?access=
    sessions: tuple[str, ...] = ()  # the session ids of the browser's signed session cookie
    client: str = "unknown"  # whom the rate limits count

    @property
    def tokens(self) -> list[str]:
        return [t for t in (self.bearer, self.edit_token) if t]

    @property
    def session_hashes(self) -> list[str]:
        """The sessions as the database knows them (it never holds a session id itself)."""
        return [hash_token(s) for s in self.sessions]

    @property
    def bearer_hash(self) -> str | None:
        return hash_token(self.bearer) if self.bearer else None

    @property
    def given(self) -> bool:
        return bool(self.tokens or self.password or self.access_token or self.sessions)


NO_CREDENTIALS = Credentials()


class Writer(NamedTuple):
    """Who may write pages into a hub: the hub, the `via` its saves record, and the membership
    (hub_members.id) when a member writes, so the edit tokens it hands out end with it."""

    hub: dict[str, Any] | None
    via: str
    member_id: int | None


ANONYMOUS = Writer(None, "anonymous", None)  # a page saved into no hub, with no credential


def session_ended(slug: str, why: str | None) -> Unauthorized:
    how = "expired" if why == "expired" else "was signed out"
    return Unauthorized(
        "session_ended", f"this browser's sign-in to hub '{slug}' {how}: sign in again at /hub/{slug}/signin"
    )


class Limits(Protocol):
    """The rate limits (server/web/ratelimit.py), keyed by client."""

    async def check(self, client: str, kind: str) -> None: ...

    async def failed(self, client: str, kind: str) -> None: ...

    async def spend(self, client: str, kind: str) -> None: ...

    async def allow(self, client: str, kind: str) -> bool: ...


class Access:
    """The checks for one request's credentials."""

    def __init__(self, limits: Limits, credentials: Credentials):
        self.limits = limits
        self.credentials = credentials

    async def _check(self, kind: str) -> None:
        await self.limits.check(self.credentials.client, kind)

    async def _failed(self, kind: str) -> None:
        await self.limits.failed(self.credentials.client, kind)

    async def hub_owner(self, conn: Conn, slug: str) -> dict[str, Any]:
        """The hub {"id", "slug"}, once the bearer token or the browser's session proved it owns it."""
        hub = await hubs.find_hub(conn, slug)
        if hub is None:
            raise unknown_hub(slug)
        token = self.credentials.bearer
        if token is None:
            if await self.signed_in_owner(conn, hub):
                return hub
            raise Unauthorized(
                "unauthorized",
                f"writing to hub '{slug}' needs its owner token (Authorization: Bearer ...) or its owner signed in",
            )
        await self._check("token")
        if not await hubs.is_owner(conn, hub["id"], hash_token(token)):
            await self._failed("token")
            raise Forbidden("forbidden", f"that token does not own hub '{slug}'")
        return hub

    async def hub_writer(self, conn: Conn, slug: str) -> Writer:
        """The hub and who may write pages into it: the owner ("owner", by token or session) or
        one of its members ("member:<name>", by the member's token); 401/403 otherwise."""
        token = self.credentials.bearer
        if token is not None:
            hub = await hubs.find_hub(conn, slug)
            if hub is not None:
                await self._check("token")
                member = await member_store.member(conn, hub["id"], hash_token(token))
                if member is not None:
                    return Writer(hub, MEMBER + member["name"], member["id"])
        return Writer(await self.hub_owner(conn, slug), "owner", None)

    async def writable_hub(self, conn: Conn, slug: str) -> dict[str, Any]:
        """The hub, when these credentials may write pages into it (its owner or a member)."""
        hub = (await self.hub_writer(conn, slug)).hub
        assert hub is not None  # hub_writer names a hub or refuses
        return hub

    async def owns(self, conn: Conn, hub: dict[str, Any]) -> bool:
        """Whether the bearer token or the browser's session owns the hub, refusing nothing: a
        read that is not the owner's shows what strangers see. A token that does not own the
        hub still counts against the client (or the answer would test guesses for free)."""
        token = self.credentials.bearer
        if token:
            await self._check("token")
            if await hubs.is_owner(conn, hub["id"], hash_token(token)):
                return True
            if await member_store.member_name(conn, hub["id"], hash_token(token)) is None:
                await self._failed("token")  # a member's token is no guess: it reads what strangers read
        return bool(self.credentials.sessions) and await session_store.owns(
            conn, hub["id"], None, self.credentials.session_hashes
        )

    async def signed_in_owner(self, conn: Conn, hub: dict[str, Any]) -> bool:
        """Whether the browser is signed in as the hub's owner. A session of this hub that has
        ended (signed out, expired) is refused by name, so a replayed cookie learns why."""
        if not self.credentials.sessions:
            return False
        session = await session_store.for_hub(conn, hub["id"], self.credentials.session_hashes)
        if session is None:
            return False
        if session["live"]:
            return bool(session["kind"] == "owner")
        raise session_ended(hub["slug"], session["ended"])

    async def edit_credential(self, conn: Conn, doc: dict[str, Any]) -> str | None:
        """Which credential may edit the doc: "owner" (the owner token of the hub it lives in,
        or its owner signed in), "member:<name>" (a member's token of that hub), "edit_token"
        (its own edit token), or None. The owner wins when several are sent."""
        found = None
        tokens = self.credentials.tokens
        if tokens:
            await self._check("token")
        for token in tokens:
            hashed = hash_token(token)
            if doc["hub_id"] is not None and await hubs.is_owner(conn, doc["hub_id"], hashed):
                return "owner"
            if doc["hub_id"] is not None and found is None:
                name = await member_store.member_name(conn, doc["hub_id"], hashed)
                if name is not None:
                    found = MEMBER + name
                    continue
            if hashed == doc["edit_token_hash"] and doc.get("edit_token_live", True):
                found = "edit_token"
        if doc["hub_id"] is not None and self.credentials.sessions:
            if await session_store.owns(conn, doc["hub_id"], None, self.credentials.session_hashes):
                return "owner"
        return found

    async def can_edit(self, conn: Conn, doc: dict[str, Any]) -> bool:
        return await self.edit_credential(conn, doc) is not None

    async def require_edit(self, conn: Conn, doc: dict[str, Any]) -> str:
        """The credential that may edit the doc ("owner" or "edit_token"), or 401/403."""
        if not self.credentials.tokens and not self.credentials.sessions:
            raise Unauthorized("unauthorized", "editing needs the doc's edit token or its hub's owner token")
        via = await self.edit_credential(conn, doc)  # checks the client's budget first
        if via is not None:
            return via
        if self.credentials.tokens:
            await self._failed("token")
            raise Forbidden("forbidden", "that token cannot edit this doc")
        if doc["hub_id"] is not None:  # a sign-in of the doc's hub that has ended says so
            await self.signed_in_owner(conn, {"id": doc["hub_id"], "slug": await hubs.hub_slug(conn, doc["hub_id"])})
        raise Unauthorized(
            "unauthorized", "editing needs the doc's edit token, its hub's owner token or its owner signed in"
        )

    async def require_restore(self, conn: Conn, doc: dict[str, Any]) -> str:
        """Who may restore a version. A live doc: whoever may edit it. A deleted doc: its hub's
        owner, or for a doc in no hub its edit token (the only credential such a doc has). A
        member or an edit token of a hub doc cannot bring back what was deleted: the owner
        decides (a token may have been deleted with the doc because it leaked)."""
        via = await self.require_edit(conn, doc)
        if doc["deleted_at"] is not None and doc["hub_id"] is not None and via != "owner":
            raise Forbidden("forbidden", "only the hub's owner can restore a deleted doc")
        return via

    async def owns_deleted(self, conn: Conn, doc: dict[str, Any]) -> bool:
        """A deleted doc is its hub owner's only (the owner's token or session), or for a doc
        in no hub its edit token's."""
        via = await self.edit_credential(conn, doc)
        return via == "owner" or (via is not None and doc["hub_id"] is None)

    async def require_move(self, conn: Conn, doc: dict[str, Any], via: str, slug: str | None) -> int | None:
        """The hub id a doc may move to (`slug`; None: out of any hub), for the credential `via`
        that may edit it. Out of a hub, or into another, needs the owner of the hub it is in: a
        member or an edit token writes pages, it does not take them away. A doc in no hub goes
        into a hub with its edit token and the right to write into that hub."""
        target = await hubs.find_hub(conn, slug) if slug else None
        if (doc["hub_id"] is None and not slug) or (target is not None and target["id"] == doc["hub_id"]):
            stays: int | None = doc["hub_id"]
            return stays  # it stays where it is: no move
        if doc["hub_id"] is not None and via != "owner":
            where = f"into hub '{slug}'" if slug else "out of its hub"
            raise Forbidden("forbidden", f"only the owner of the hub this doc is in can move it {where}")
        if not slug:
            return None
        hub = (await self.hub_writer(conn, slug)).hub
        return hub["id"] if hub else None

    async def sign_in(self, conn: Conn, hub: dict[str, Any], token: str) -> str:
        """The kind of session a sign-in token opens for the hub: "owner" for its owner token;
        anything else is refused (and counted, like any refused token)."""
        await self._check("token")
        if await hubs.is_owner(conn, hub["id"], hash_token(token)):
            return "owner"
        await self._failed("token")
        raise Forbidden(
            "wrong_token",
            f"this sign-in link or token does not open hub '{hub['slug']}': check that it "
            "was copied whole, or use the owner token shown when the hub was claimed",
        )

    async def sign_in_link(self, conn: Conn, doc_id: str, secret: str) -> dict[str, Any]:
        """Use up a mailed sign-in link of this doc: {"hub_id", "hub_slug", "email"} for the
        reader session it opens, or 403 saying why it opens nothing (a link this server never
        mailed counts as a refused token). The caller's transaction keeps the link used."""
        await self._check("token")
        link = await link_store.use(conn, hash_token(secret), doc_id)
        if link is None:
            await self._failed("token")
            raise Forbidden(
                "unknown_link",
                "this sign-in link does not open this page: check that it was copied "
                "whole, or ask for a new one on the page",
            )
        if link["used_before"]:
            raise Forbidden(
                "link_used",
                "this sign-in link was used already (each one opens one browser, once): ask for a new one on the page",
            )
        if link["expired"]:
            raise Forbidden("link_expired", "this sign-in link has expired: ask for a new one on the page")
        if not link["still_listed"]:
            raise Forbidden("not_shared", "this page is no longer shared with the address this link was mailed to")
        return link

    async def reader_email(self, conn: Conn, doc: dict[str, Any]) -> str | None:
        """The address of this browser's live reader session that the doc is shared with now
        (checked in the database, on the owner pool), or None."""
        if not self.credentials.sessions or not doc["allowed_emails"]:
            return None
        return await link_store.reader_email(conn, doc["id"], self.credentials.session_hashes)

    async def can_read_private(self, conn: Conn, doc: dict[str, Any]) -> bool:
        """A private doc opens to its editors, to its password, to an issued access token, or
        to a reader signed in with a mailed link for an address it is shared with."""
        if doc["deleted_at"] is not None:
            return False
        if await self.can_edit(conn, doc):
            return True
        if doc["is_draft"]:
            return False
        password = self.credentials.password
        if doc["password_hash"] is not None:
            if not password:
                return False
            await self._check("password")
            if not verify_password(doc["password_hash"], password):
                await self._failed("password")
                return False
        if doc["allowed_emails"]:
            token = self.credentials.access_token
            if not token:
                return await self.reader_email(conn, doc) is not None
            await self._check("token")
            email = await access.email_for(conn, hash_token(token), doc["id"])
            if email is None or email.lower() not in {e.lower() for e in doc["allowed_emails"]}:
                await self._failed("token")
                return False
        return True

    async def refused(self) -> None:
        """A read that sent credentials and still found nothing it may see: one refused token
        (a guess at a private doc's token looks exactly like this)."""
        if self.credentials.tokens:
            await self._failed("token")
