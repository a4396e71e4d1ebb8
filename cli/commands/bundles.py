"""`memorywiki bundle create | suggest`: a topic with a reading order, and the bundles the hub suggests."""

from __future__ import annotations

import sys
from typing import Annotated, Optional

import typer

from memorywiki.client import ApiError, MemoryWikiError, doc_id_from
from memorywiki.client.auth import explain_hub_refusal

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
    doc_ids: Annotated[list[str], typer.Argument(metavar="DOC_ID", help="Doc ids (or URLs), in reading order.", show_default=False)],
    title: Annotated[str, typer.Option("--title", "-t", help="The bundle's title.")],
    description: Annotated[Optional[str], typer.Option("--description", "-d", help="What the bundle is about.")] = None,
    hub: HubOpt = None,
    url: ServerOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Make a bundle (topic + reading order) from docs in a hub; prints its URL."""
    st = state(ctx)
    cfg = st.config
    slug = cfg.require_hub(hub)
    if not title.strip():
        raise MemoryWikiError("the title is empty")
    body = {"hub": slug, "title": title, "description": description, "doc_ids": [doc_id_from(d) for d in doc_ids]}
    cred = cfg.hub_credential(slug)
    with st.client(url) as client:
        try:
            data = client.create_bundle(body, cred.token)
        except ApiError as exc:
            raise explain_hub_refusal(exc, cred, slug) from None
    if as_json:
        output.print_json(data)
    else:
        sys.stdout.write(f"{data.get('url') or data.get('id')}\n")



@bundle_app.command("suggest")
def bundle_suggest(
    ctx: typer.Context,
    intent: Annotated[Optional[str], typer.Option("--intent", "-i", help="A topic: list its pages in a reading order.")] = None,
    accept: Annotated[Optional[str], typer.Option("--accept", metavar="ID", help="Accept suggestion ID: create the bundle.")] = None,
    dismiss: Annotated[Optional[str], typer.Option("--dismiss", metavar="ID", help="Never offer suggestion ID again.")] = None,
    title: Annotated[Optional[str], typer.Option("--title", "-t", help="With --accept: the bundle's title instead of the suggested one.")] = None,
    k: Annotated[int, typer.Option("--k", "-k", min=2, max=20, help="With --intent: how many pages.")] = 8,
    hub: HubOpt = None,
    url: ServerOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Bundles the hub suggests (groups of related pages not bundled yet); --accept ID makes one.

    With --intent TOPIC: the hub's pages on that topic in a reading order, each with why.
    """
    st = state(ctx)
    cfg = st.config
    slug = cfg.require_hub(hub)
    if sum(x is not None for x in (intent, accept, dismiss)) > 1:
        raise MemoryWikiError("use one of --intent, --accept and --dismiss")
    with st.client(url) as client:
        if accept or dismiss:
            cred = cfg.hub_credential(slug)
            try:
                if accept:
                    data = client.accept_suggestion(slug, accept, {"title": title} if title else {}, cred.token)
                else:
                    data = client.dismiss_suggestion(slug, dismiss, cred.token)
            except ApiError as exc:
                raise explain_hub_refusal(exc, cred, slug) from None
        elif intent is not None:
            if not intent.strip():
                raise MemoryWikiError("the topic is empty")
            data = client.suggest_topic(slug, intent, k, token=cfg.hub_token(slug))
        else:
            data = client.suggestions(slug, token=cfg.hub_token(slug))
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
