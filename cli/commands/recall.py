"""`memorywiki recall`: ask a hub a question."""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated

import typer
from memorywiki.client import operations as ops

from .. import output
from ..context import HubOpt, JsonOpt, ServerOpt, state


class Level(StrEnum):
    chunk = "chunk"
    doc = "doc"
    bundle = "bundle"


class Fusion(StrEnum):
    zscore = "zscore"
    rrf = "rrf"


def recall(
    ctx: typer.Context,
    question: Annotated[str, typer.Argument(metavar="QUESTION", help="What you want to know.")],
    hub: HubOpt = None,
    k: Annotated[int, typer.Option("--k", "-k", help="How many results.")] = 5,
    level: Annotated[
        Level, typer.Option("--level", help="chunk (passages), doc (whole pages) or bundle.")
    ] = Level.chunk,
    hybrid: Annotated[
        bool,
        typer.Option(
            "--hybrid/--no-hybrid", help="Fuse vector and full-text search (the default); --no-hybrid: vectors only."
        ),
    ] = True,
    fusion: Annotated[
        Fusion | None,
        typer.Option(
            "--fusion",
            help="How hybrid fuses the two searches: zscore (the default) or rrf "
            "(Reciprocal Rank Fusion, scores as rrf_score).",
        ),
    ] = None,
    max_tokens: Annotated[
        int | None,
        typer.Option("--max-tokens", min=1, help="A token budget: whole results in rank order while they fit."),
    ] = None,
    url: ServerOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Ask a hub a question; get back the few passages that matter, each with where it came from.

    The last line says which search ran (hybrid, vector or full text), with which fusion, how
    many tokens the results hold and, when vectors were not used, why.
    """
    with state(ctx).wiki(url) as wiki:
        data = ops.recall(
            wiki,
            question,
            hub=hub,
            k=k,
            level=level.value,
            hybrid=hybrid,
            fusion=fusion.value if fusion else None,
            max_tokens=max_tokens,
        )
    if as_json:
        output.print_json(data)
    else:
        output.render_recall(data, level.value)


def register(app: typer.Typer) -> None:
    app.command()(recall)
