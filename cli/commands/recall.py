"""`memorywiki recall`: ask a hub a question."""

from __future__ import annotations

from enum import Enum
from typing import Annotated

import typer

from memorywiki.client import operations as ops

from .. import output
from ..context import HubOpt, JsonOpt, ServerOpt, state


class Level(str, Enum):
    chunk = "chunk"
    doc = "doc"
    bundle = "bundle"


def recall(
    ctx: typer.Context,
    question: Annotated[str, typer.Argument(metavar="QUESTION", help="What you want to know.")],
    hub: HubOpt = None,
    k: Annotated[int, typer.Option("--k", "-k", help="How many results.")] = 5,
    level: Annotated[Level, typer.Option("--level", help="chunk (passages), doc (whole pages) or bundle.")] = Level.chunk,
    hybrid: Annotated[bool, typer.Option(
        "--hybrid/--no-hybrid", help="Fuse vector and full-text search (the default); --no-hybrid: vectors only.")] = True,
    url: ServerOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Ask a hub a question; get back the few passages that matter, each with where it came from.

    The last line says which search ran (hybrid, vector or full text) and, when vectors were
    not used, why.
    """
    with state(ctx).wiki(url) as wiki:
        data = ops.recall(wiki, question, hub=hub, k=k, level=level.value, hybrid=hybrid)
    if as_json:
        output.print_json(data)
    else:
        output.render_recall(data, level.value)


def register(app: typer.Typer) -> None:
    app.command()(recall)
