"""`memorywiki bundle create | delete | suggest`: a topic with a reading order, and the bundles the hub suggests."""

from __future__ import annotations

import sys
from typing import Annotated

import typer
from memorywiki.client import MemoryWikiError
from memorywiki.client import operations as ops

from .. import output
from ..context import CONTEXT, HubOpt, JsonOpt, ServerOpt, state

bundle_app = typer.Typer(
    help="Curated bundles of docs (a topic with a reading order).",
    no_args_is_help=True,
    context_settings=CONTEXT,
    rich_markup_mode=None,
)


@bundle_app.command("create")
def bundle_create(
    ctx: typer.Context,
    doc_ids: Annotated[
        list[str], typer.Argument(metavar="DOC_ID", help="Doc ids (or URLs), in reading order.", show_default=False)
    ],
    title: Annotated[str, typer.Option("--title", "-t", help="The bundle's title.")],
    description: Annotated[str | None, typer.Option("--description", "-d", help="What the bundle is about.")] = None,
    hub: HubOpt = None,
    url: ServerOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Make a bundle (topic + reading order) from docs in a hub; prints its URL."""
    with state(ctx).wiki(url) as wiki:
        data = ops.create_bundle(wiki, title, doc_ids, description=description, hub=hub).data
    if as_json:
        output.print_json(data)
    else:
        sys.stdout.write(f"{data.get('url') or data.get('id')}\n")


@bundle_app.command("delete")
def bundle_delete(
    ctx: typer.Context,
    bundle: Annotated[str, typer.Argument(metavar="BUNDLE", help="The bundle's id or URL.", show_default=False)],
    hub: HubOpt = None,
    url: ServerOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Delete a bundle (needs its hub's owner token); the pages it listed stay as they are."""
    with state(ctx).wiki(url) as wiki:
        deleted = ops.delete_bundle(wiki, bundle, hub=hub)
    if as_json:
        output.print_json({"id": deleted.bundle_id, "hub": deleted.hub, "deleted": True})
    else:
        sys.stdout.write(f"deleted bundle {deleted.bundle_id}\n")


@bundle_app.command("suggest")
def bundle_suggest(
    ctx: typer.Context,
    intent: Annotated[
        str | None, typer.Option("--intent", "-i", help="A topic: list its pages in a reading order.")
    ] = None,
    accept: Annotated[
        str | None, typer.Option("--accept", metavar="ID", help="Accept suggestion ID: create the bundle.")
    ] = None,
    dismiss: Annotated[
        str | None, typer.Option("--dismiss", metavar="ID", help="Never offer suggestion ID again.")
    ] = None,
    title: Annotated[
        str | None,
        typer.Option("--title", "-t", help="With --accept: the bundle's title instead of the suggested one."),
    ] = None,
    k: Annotated[int, typer.Option("--k", "-k", min=2, max=20, help="With --intent: how many pages.")] = 8,
    hub: HubOpt = None,
    url: ServerOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Bundles the hub suggests (groups of related pages not bundled yet); --accept ID makes one.

    With --intent TOPIC: the hub's pages on that topic in a reading order, each with why.
    """
    if sum(x is not None for x in (intent, accept, dismiss)) > 1:
        raise MemoryWikiError("use one of --intent, --accept and --dismiss")
    with state(ctx).wiki(url) as wiki:
        if accept:
            data = ops.accept_suggestion(wiki, accept, title=title, hub=hub)
        elif dismiss:
            data = ops.dismiss_suggestion(wiki, dismiss, hub=hub)
        elif intent is not None:
            data = ops.pages_on_topic(wiki, intent, k=k, hub=hub)
        else:
            data = ops.suggestions(wiki, hub)
    if as_json:
        output.print_json(data)
    elif accept:
        sys.stdout.write(f"{data.get('url')}\n")
    elif dismiss:
        sys.stdout.write(f"dismissed {data.get('id')}\n")
    elif intent is not None:
        docs = data.get("docs") or []
        if not docs:
            sys.stdout.write("No pages on that topic yet.\n")
        for i, d in enumerate(docs, 1):
            sys.stdout.write(f"{i}. {d.get('title')}\n   {d.get('url')}\n   {d.get('why')}\n")
    else:
        suggestions = data.get("suggestions") or []
        if not suggestions:
            sys.stdout.write("No suggested bundles yet: they appear as related pages accumulate.\n")
        for s in suggestions:
            sys.stdout.write(f"{s.get('title')}  (id: {s.get('id')})\n  {s.get('description')}\n")
            for d in s.get("docs") or []:
                sys.stdout.write(f"  - {d.get('title')}  {d.get('url')}\n")
        if suggestions:
            sys.stdout.write("Accept one with: memorywiki bundle suggest --accept ID\n")


def register(app: typer.Typer) -> None:
    app.add_typer(bundle_app, name="bundle")
