"""Sharing a page with people: a visitor asks for a sign-in link by address, and the server
mails one only if the page is shared with that address.

The answer never tells a listed address from an unlisted one: the same status and body, the
same work (one statement that inserts the link and its mail, or nothing: store/signin_links.py),
and both are counted against the same rate limits, per client and per address. The mail
leaves through the outbox (server/mail/outbox.py), so the request never waits on SMTP.
"""

from __future__ import annotations

import re
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
        "message": f"if this page is shared with that address, a sign-in link is on its way to it; "
        f"it works once, within {minutes} minutes",
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
    ctx.limits.spend(credentials.client, "link_client")
    ctx.limits.spend(address.lower(), "link_address")
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
