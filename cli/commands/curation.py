"""`memorywiki related | digest`: what the hub's curation knows about a doc or the hub."""

from __future__ import annotations

import sys
from typing import Annotated

import typer
from memorywiki.client import operations as ops

from .. import output
from ..context import HubOpt, JsonOpt, ServerOpt, state


def related(
    ctx: typer.Context,
    doc: Annotated[str, typer.Argument(metavar="DOC", help="Doc id or doc URL.")],
    k: Annotated[int, typer.Option("--k", "-k", min=1, max=50, help="How many related pages.")] = 5,
    url: ServerOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Public pages of the doc's hub related to it: nearest by meaning, else sharing its concepts."""
    with state(ctx).wiki(url) as wiki:
        data = ops.related(wiki, doc, k=k)
    if as_json:
        output.print_json(data)
        return
    results = data.get("results") or []
    if not results:
        sys.stdout.write("No related public pages in this hub yet.\n")
        return
    for r in results:
        why = (
            f"shares {', '.join(r['shared_concepts'])}"
            if r.get("shared_concepts")
            else f"similarity {r['similarity']:.2f}"
            if r.get("similarity") is not None
            else ""
        )
        sys.stdout.write(f"{r.get('title')}\n  {r.get('url')}" + (f"\n  {why}" if why else "") + "\n")


def digest(
    ctx: typer.Context,
    hub: HubOpt = None,
    compact: Annotated[bool, typer.Option("--compact", help="The form that fits 2,000 tokens.")] = False,
    url: ServerOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """The hub's concept digest: each concept, its kind, what it is, and the pages about it."""
    with state(ctx).wiki(url) as wiki:
        if as_json:
            output.print_json(ops.digest(wiki, hub))
            return
        text = ops.digest_markdown(wiki, hub, compact=compact)
    sys.stdout.write(text if text.endswith("\n") else text + "\n")


def register(app: typer.Typer) -> None:
    app.command()(related)
    app.command()(digest)
