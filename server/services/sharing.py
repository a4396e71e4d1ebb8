"""Sharing a page with people: each address a page is shared with is mailed its one-time
sign-in link once, when the page can open to it (`invite`); a visitor asks for a sign-in link
by address, and the server mails one only if the page is shared with that address.

The answer never tells a listed address from an unlisted one: the same status and body, the
same work (one statement that inserts the link and its mail, or nothing: store/signin_links.py),
and both are counted against the same rate limits. The mail leaves through the outbox
(server/mail/outbox.py), so the request never waits on SMTP.

Nobody else can lock a listed reader out of her links: the budgets count per client, and per
address from that client, so a stranger's requests spend the stranger's budget, never hers.
What keeps many clients from flooding one address instead is the link itself: within a link's
lifetime after one was asked for and mailed to an address for a page, while it is unused,
asking again mails nothing new (the one in her inbox still works). An invitation mailed when
the page was shared holds nothing back.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from ..errors import BadRequest, not_found
from ..store import signin_links as link_store
from ..store.connection import Conn
from ..tokens import hash_token, looks_like_id, new_token
from .access import Credentials
from .context import Context
from .urls import Urls

MAX_ADDRESS = 254
# one address, no display name: a dot-atom local part and a domain of ASCII labels (an IDN
# in its xn-- form), so no space, CR, LF, comma or angle bracket can reach a mail header
ADDRESS = re.compile(
    r"[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*"
    r"@(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+[A-Za-z][A-Za-z0-9-]{0,62}"
)
SUBJECT = "Your sign-in link for a page shared with you on Memory.Wiki"
INVITE_SUBJECT = "A page was shared with you on Memory.Wiki"
NO_SMTP = "this server sends no mail (MEMORYWIKI_SMTP_URL is not set)"


def mail_address(value: str) -> str:
    """The address as given, trimmed, or 400 naming what is wrong with it."""
    address = value.strip()
    if len(address) > MAX_ADDRESS or not ADDRESS.fullmatch(address) or len(address.split("@")[0]) > 64:
        raise BadRequest(
            "invalid_email",
            "'email' must be one mail address such as ann@example.com "
            f"(at most {MAX_ADDRESS} characters, no name or spaces)",
        )
    return address


def _answer(ctx: Context) -> dict[str, Any]:
    minutes = ctx.settings.signin_link_minutes
    if ctx.mail is None:
        return {
            "requested": False,
            "mail": False,
            "expires_in_minutes": None,
            "message": "this server sends no mail: ask the page's owner for an access link",
        }
    return {
        "requested": True,
        "mail": True,
        "expires_in_minutes": minutes,
        "message": f"if this page is shared with that address, a sign-in link is on its way to it "
        f"(or was, less than {minutes} minutes ago: that one still works); it works once, within {minutes} minutes",
    }


def _mail_body(urls: Urls, doc_id: str, secret: str, minutes: int) -> str:
    return (
        f"Someone (we hope you) asked to read a page shared with this address on Memory.Wiki.\n\n"
        f"Open this link within {minutes} minutes to sign in and read it (it works once):\n\n"
        f"{urls.doc(doc_id)}/signin#{secret}\n\n"
        "If you did not ask for it, ignore this mail: nothing opens without the link.\n"
    )


async def request_link(ctx: Context, credentials: Credentials, urls: Urls, doc_id: str, email: str) -> dict[str, Any]:
    """Mail a one-time sign-in link to `email` if the doc is shared with it; the same answer either way."""
    if not looks_like_id(doc_id):
        raise not_found("doc")
    address = mail_address(email)
    await ctx.limits.spend(credentials.client, "link_client")
    await ctx.limits.spend(f"{credentials.client} {address.lower()}", "link_address")
    if ctx.mail is None:
        return _answer(ctx)
    minutes = ctx.settings.signin_link_minutes
    secret = new_token("mwl")

    async def queue(conn: Conn) -> bool:
        return await link_store.request(
            conn,
            doc_id=doc_id,
            email=address,
            secret_hash=hash_token(secret),
            seconds=minutes * 60,
            subject=SUBJECT,
            body=_mail_body(urls, doc_id, secret, minutes),
        )

    if await ctx.db.write(queue):
        ctx.wake_mail()
    return _answer(ctx)


async def shared_with_people(ctx: Context, doc_id: str) -> dict[str, Any] | None:
    """For the page a visitor who may not read it sees: whether the doc is one that only the
    people it is shared with read, and whether they can sign in by mail; None otherwise."""
    if not looks_like_id(doc_id):
        return None
    async with ctx.db.owner.connection() as conn:
        in_hub = await link_store.people_only(conn, doc_id)
    if in_hub is None:
        return None
    return {"id": doc_id, "mail": ctx.mail is not None and in_hub, "minutes": ctx.settings.signin_link_minutes}


def _invite_body(urls: Urls, doc_id: str, secret: str, hours: int) -> str:
    return (
        "A page on Memory.Wiki was shared with this address.\n\n"
        f"Open this link within {hours} hours to sign in and read it (it works once):\n\n"
        f"{urls.doc(doc_id)}/signin#{secret}\n\n"
        f"Later, open {urls.doc(doc_id)} and ask there for a new link with this address.\n"
    )


@dataclass
class Invited:
    """What a save told the people its page is shared with."""

    mailed: list[str] = field(default_factory=list)  # a sign-in link is on its way to each
    unmailed: list[str] = field(default_factory=list)  # newly shared, no mail: this server sends none
    held_back: list[str] = field(default_factory=list)  # over a mail budget: mailed on a later save


async def invite(
    ctx: Context, credentials: Credentials, conn: Conn, urls: Urls, doc_id: str, *, mail: bool = True
) -> Invited:
    """Tell each address the doc is shared with that was never told (only while the doc can
    open to it: live, in a hub, read by its listed people only): a one-time sign-in link by
    mail, or with no SMTP (or `mail` False, an import) only a note that it was done. Runs in
    the save's transaction, so a save that fails tells nobody; the caller wakes the outbox
    after the commit when `mailed`. Past this client's budget of such mails
    (MEMORYWIKI_RATE_INVITE) an address is left untold, for a later save: anyone may claim a
    hub, and the budget keeps one from mailing strangers by the thousand. A reader's own
    budget for asking links (per address) is not spent."""
    invited = Invited()
    sends = mail and ctx.mail is not None
    hours = ctx.settings.invite_link_hours
    for email in await link_store.uninvited(conn, doc_id):
        if sends and not await ctx.limits.allow(credentials.client, "invite"):
            invited.held_back.append(email)
            continue
        if not await link_store.record_invitation(conn, doc_id, email, mailed=sends):
            continue  # a save at the same moment told it
        if not sends:
            invited.unmailed.append(email)
            continue
        secret = new_token("mwl")
        await link_store.queue_invitation(
            conn,
            doc_id=doc_id,
            email=email,
            secret_hash=hash_token(secret),
            seconds=hours * 3600,
            subject=INVITE_SUBJECT,
            body=_invite_body(urls, doc_id, secret, hours),
        )
        invited.mailed.append(email)
    return invited


def _why_no_links(doc: dict[str, Any]) -> str | None:
    """Why the people a doc lists get no sign-in link now, or None when they do."""
    if doc["hub_id"] is None:
        return (
            "a page in no hub has no sign-in by mail: give each person an access link "
            f"(POST /api/docs/{doc['id']}/access), or move the page into a hub"
        )
    if doc["is_draft"]:
        return "the page is a draft: the people it is shared with are mailed their sign-in link once it is published"
    if doc["password_hash"] is not None:
        return "the page has a password: its readers open it with the password, so no sign-in link is mailed"
    return None


def sharing_note(ctx: Context, doc: dict[str, Any], invited: Invited) -> dict[str, Any]:
    """What a save's answer says about the people the page is shared with: who was mailed a
    sign-in link just now, who was not and why (plainly when this server sends no mail)."""
    listed = list(doc["allowed_emails"] or [])
    note: dict[str, Any] = {
        "allowed_emails": listed,
        "mail": ctx.mail is not None,
        "mailed": invited.mailed,
        "not_mailed": invited.unmailed + invited.held_back,
    }
    parts = []
    if invited.mailed:
        parts.append("mailed a one-time sign-in link to " + ", ".join(invited.mailed))
    if invited.unmailed:
        parts.append(
            f"no mail went to {', '.join(invited.unmailed)}: {NO_SMTP}; give each person their access link "
            f"(the hub page's 'People and their access links', or POST /api/docs/{doc['id']}/access)"
        )
    if invited.held_back:
        parts.append(
            f"not mailed yet to {', '.join(invited.held_back)}: too many sign-in mails this hour; "
            "a later save of the page mails them"
        )
    why = _why_no_links(doc) if listed else None
    if why:
        parts.append(why)
    elif listed and not parts:
        parts.append(
            "everyone listed was told before; a person can ask the page for a new link"
            if ctx.mail is not None
            else f"{NO_SMTP}: give each person their access link from the hub page"
        )
    if not listed:
        parts.append(
            "the page is shared with no address now: anyone may read it"
            if not doc["is_draft"] and doc["password_hash"] is None
            else "the page is shared with no address now"
        )
    note["message"] = "; ".join(parts)
    return note
