"""`memorywiki related | digest`: what the hub's curation knows about a doc or the hub."""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from memorywiki.client import ApiError, doc_id_from
from memorywiki.client.auth import explain_doc_refusal

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
    st = state(ctx)
    doc_id = doc_id_from(doc)
    cred = st.config.doc_credential(doc_id)
    with st.client(url) as client:
        try:
            data = client.related(doc_id, k, token=cred.token)
        except ApiError as exc:
            raise explain_doc_refusal(exc, cred, doc_id) from None
    if as_json:
        output.print_json(data)
        return
    results = data.get("results") or []
    if not results:
        sys.stdout.write("No related public pages in this hub yet.\n")
        return
    for r in results:
        why = (f"shares {', '.join(r['shared_concepts'])}" if r.get("shared_concepts")
               else f"similarity {r['similarity']:.2f}" if r.get("similarity") is not None else "")
        sys.stdout.write(f"{r.get('title')}\n  {r.get('url')}" + (f"\n  {why}" if why else "") + "\n")


def digest(
    ctx: typer.Context,
    hub: HubOpt = None,
    compact: Annotated[bool, typer.Option("--compact", help="The form that fits 2,000 tokens.")] = False,
    url: ServerOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """The hub's concept digest: each concept, its kind, what it is, and the pages about it."""
    st = state(ctx)
    slug = st.config.require_hub(hub)
    with st.client(url) as client:
        if as_json:
            output.print_json(client.digest(slug, token=st.config.hub_token(slug)))
            return
        text = client.digest_markdown(slug, compact=compact, token=st.config.hub_token(slug))
    sys.stdout.write(text if text.endswith("\n") else text + "\n")


def register(app: typer.Typer) -> None:
    app.command()(related)
    app.command()(digest)
