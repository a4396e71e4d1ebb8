"""`memorywiki hub create | show | use | set | member`, `memorywiki list` and `memorywiki trash`."""

from __future__ import annotations

import sys
from typing import Annotated

import typer
import typer.core
from memorywiki.client import operations as ops

from .. import output
from ..context import CONTEXT, HubOpt, JsonOpt, ServerOpt, state, warn_unsaved


class _DefaultShowGroup(typer.core.TyperGroup):
    """`memorywiki hub [SLUG]` means `memorywiki hub show [SLUG]`."""

    default_command = "show"

    def parse_args(self, ctx, args):  # type: ignore[override]
        if not args or (args[0] not in self.commands and args[0] not in ("--help", "-h")):
            args = [self.default_command, *args]
        return super().parse_args(ctx, args)


hub_app = typer.Typer(
    cls=_DefaultShowGroup,
    help="Create, show and choose hubs (`memorywiki hub [SLUG]` shows one).",
    context_settings=CONTEXT,
    rich_markup_mode=None,
)

SlugArg = Annotated[str, typer.Argument(metavar="SLUG", help="The hub's slug, as in /hub/<slug>.")]


@hub_app.command("create")
def hub_create(ctx: typer.Context, slug: SlugArg, url: ServerOpt = None, as_json: JsonOpt = False) -> None:
    """Claim a new hub; its owner token is stored in the config file (it becomes the default hub if there is none)."""
    st = state(ctx)
    with st.wiki(url) as wiki:
        created = ops.create_hub(wiki, slug)
    data = created.data
    warn_unsaved(created.config_warning, f"keep this owner token: {data.get('owner_token')}")
    if as_json:
        output.print_json(data)
    else:
        sys.stdout.write(f"{data.get('url') or created.slug}\n")
        output.note(
            f"owner token saved in {st.config.path}"
            + (f"; {created.slug} is now the default hub" if created.became_default else "")
        )


@hub_app.command("use")
def hub_use(
    ctx: typer.Context,
    slug: SlugArg,
    token: Annotated[
        str | None,
        typer.Option(
            "--token", metavar="TOKEN", help="The hub's owner token, if you hold it (e.g. from POST /api/hubs)."
        ),
    ] = None,
    url: ServerOpt = None,
) -> None:
    """Make an existing hub the default (checked on the server), storing its owner token if you give it."""
    st = state(ctx)
    cfg = st.config
    with st.wiki(url) as wiki:
        data = ops.use_hub(wiki, slug, token)
    sys.stdout.write(f"{data.get('url') or slug}\n")
    held = (
        "owner token saved"
        if token
        else (
            "owner token already saved"
            if cfg.hub_token(slug)
            else "no owner token: reading only (add --token TOKEN to write)"
        )
    )
    output.note(f"{slug} is now the default hub; {held} ({cfg.path})")


@hub_app.command("show")
def hub_show(
    ctx: typer.Context,
    slug: Annotated[
        str | None, typer.Argument(metavar="SLUG", help="Hub slug (default: the config's default hub).")
    ] = None,
    url: ServerOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Show a hub: its URL, docs and bundles."""
    with state(ctx).wiki(url) as wiki:
        data = ops.hub_info(wiki, slug)
    if as_json:
        output.print_json(data)
    else:
        output.render_hub(data)


@hub_app.command("set")
def hub_set(
    ctx: typer.Context,
    slug: Annotated[
        str | None, typer.Argument(metavar="SLUG", help="Hub slug (default: the config's default hub).")
    ] = None,
    listed: Annotated[
        bool | None,
        typer.Option("--listed/--unlisted", help="Show the hub on the server's home page and /llms.txt, or not."),
    ] = None,
    description: Annotated[
        str | None,
        typer.Option("--description", metavar="TEXT", help="One line saying what the hub holds (home page, llms.txt)."),
    ] = None,
    redact_secrets: Annotated[
        bool | None,
        typer.Option(
            "--redact-secrets/--keep-secrets",
            help="Replace secrets (keys, tokens, passwords) in pages with a marker before they are saved "
            "(the default), or store pages exactly as written.",
        ),
    ] = None,
    url: ServerOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """List or unlist a hub (a hub is unlisted until its owner lists it), describe it, or say
    whether secrets are redacted from its pages."""
    with state(ctx).wiki(url) as wiki:
        data = ops.set_hub(wiki, slug, listed=listed, description=description, redact_secrets=redact_secrets)
    hub = data.get("slug") or wiki.require_hub(slug)
    if as_json:
        output.print_json(data)
    else:
        sys.stdout.write(f"{data.get('url') or hub}\n")
        output.note(f"{hub} is {'listed on the home page and /llms.txt' if data.get('listed') else 'unlisted'}")
        if redact_secrets is not None or data.get("redact_secrets") is False:
            kept = "redacted from its pages" if data.get("redact_secrets", True) else "kept in its pages as written"
            output.note(f"secrets are {kept}")


member_app = typer.Typer(
    help="Add, list and remove a hub's members: co-authors with tokens of their own.",
    context_settings=CONTEXT,
    rich_markup_mode=None,
    no_args_is_help=True,
)
hub_app.add_typer(member_app, name="member")
NameArg = Annotated[
    str, typer.Argument(metavar="NAME", help="The member's name, e.g. bob (lowercase letters, digits, . _ -).")
]


@member_app.command("add")
def member_add(
    ctx: typer.Context, name: NameArg, hub: HubOpt = None, url: ServerOpt = None, as_json: JsonOpt = False
) -> None:
    """Add a member; prints their token once (hand it to them: it writes pages into the hub, nothing more)."""
    with state(ctx).wiki(url) as wiki:
        data = ops.add_member(wiki, name, hub)
    if as_json:
        output.print_json(data)
        return
    sys.stdout.write(f"{data.get('token')}\n")
    output.note(
        f"{data.get('name')} is a member of {data.get('hub')}; this token is shown once. They run "
        f"`memorywiki hub use {data.get('hub')} --token TOKEN`; their pages are saved as {data.get('via')}"
    )


@member_app.command("list")
def member_list(ctx: typer.Context, hub: HubOpt = None, url: ServerOpt = None, as_json: JsonOpt = False) -> None:
    """List the hub's members, one per line: name, added at (tab-separated)."""
    with state(ctx).wiki(url) as wiki:
        data = ops.members(wiki, hub)
    people = data.get("members") or []
    if as_json:
        output.print_json(people)
        return
    for m in people:
        sys.stdout.write(f"{m.get('name')}\t{str(m.get('added_at') or '')[:16].replace('T', ' ')}\n")
    if not people:
        output.note(f"hub {data.get('hub')} has no members; `memorywiki hub member add NAME` adds one")


@member_app.command("remove")
def member_remove(
    ctx: typer.Context, name: NameArg, hub: HubOpt = None, url: ServerOpt = None, as_json: JsonOpt = False
) -> None:
    """Remove a member: their token stops working at once."""
    with state(ctx).wiki(url) as wiki:
        data = ops.remove_member(wiki, name, hub)
    if as_json:
        output.print_json(data)
    else:
        output.note(f"{data.get('name')} is no longer a member of {data.get('hub')}")


def list_cmd(
    ctx: typer.Context,
    every: Annotated[
        bool,
        typer.Option(
            "--all",
            help="Every live page, drafts and private ones included, with its visibility (needs the owner token).",
        ),
    ] = False,
    hub: HubOpt = None,
    url: ServerOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """List a hub's public docs, one per line: id, title, url (tab-separated); --all adds a visibility column."""
    with state(ctx).wiki(url) as wiki:
        data = ops.all_pages(wiki, hub) if every else ops.hub_info(wiki, hub)
    if as_json:
        output.print_json(data.get("docs") or [])
    else:
        output.render_doc_lines(data, visibility=every)


def trash_cmd(ctx: typer.Context, hub: HubOpt = None, url: ServerOpt = None, as_json: JsonOpt = False) -> None:
    """List a hub's deleted pages, newest deletion first: id, title, deleted at (needs the owner token)."""
    with state(ctx).wiki(url) as wiki:
        data = ops.trash(wiki, hub)
    docs = data.get("docs") or []
    if as_json:
        output.print_json(docs)
        return
    for d in docs:
        title = " ".join(str(d.get("title") or "").split())
        when = str(d.get("deleted_at") or "")[:16].replace("T", " ")
        sys.stdout.write(f"{d.get('id', '')}\t{title}\t{when}\n")
    if not docs:
        output.note(f"the trash of hub {data.get('slug')} is empty")
    else:
        output.note("`memorywiki undelete ID` brings one back")


def register(app: typer.Typer) -> None:
    app.add_typer(hub_app, name="hub")
    app.command("list")(list_cmd)
    app.command("trash")(trash_cmd)
