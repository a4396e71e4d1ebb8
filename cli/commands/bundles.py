"""`memorywiki bundle create`: a topic with a reading order, from docs in a hub."""

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


def register(app: typer.Typer) -> None:
    app.add_typer(bundle_app, name="bundle")
