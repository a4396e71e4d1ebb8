"""`memorywiki share`: who a page is shared with, by address."""

from __future__ import annotations

import sys
from typing import Annotated

import typer
from memorywiki.client import operations as ops

from .. import output
from ..context import JsonOpt, ServerOpt, state
from .docs import DocArg


def share(
    ctx: typer.Context,
    doc: DocArg,
    emails: Annotated[
        list[str] | None,
        typer.Argument(metavar="EMAIL", help="Addresses to share the page with.", show_default=False),
    ] = None,
    remove: Annotated[
        list[str] | None,
        typer.Option("--remove", "-r", metavar="EMAIL", help="Stop sharing with this address (repeat for more)."),
    ] = None,
    as_json: JsonOpt = False,
    url: ServerOpt = None,
) -> None:
    """Share a page with people by address (only they read it then), or stop; no address: list them.

    Each address newly added is mailed a one-time sign-in link to the page, when the server sends
    mail (MEMORYWIKI_SMTP_URL) and the page is in a hub, not a draft, with no password; what was
    mailed, and why not, is printed. Needs the page's edit token or its hub's owner token.
    """
    with state(ctx).wiki(url) as wiki:
        shared = ops.share(wiki, doc, emails or [], remove or [])
    if as_json:
        output.print_json(
            {"id": shared.doc_id, "url": shared.url, "allowed_emails": shared.allowed_emails, "sharing": shared.sharing}
        )
        return
    if shared.allowed_emails:
        sys.stdout.write("".join(f"{e}\n" for e in shared.allowed_emails))
    else:
        output.note(f"{shared.doc_id} is shared with nobody by address")
    if shared.sharing.get("message"):
        output.note(shared.sharing["message"])


def register(app: typer.Typer) -> None:
    app.command()(share)
