"""`memorywiki export DIR`: the hub as a folder of markdown files, to keep, move or leave with."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer
from memorywiki.client import operations as ops
from rich.progress import DownloadColumn, Progress, SpinnerColumn, TextColumn, TransferSpeedColumn

from .. import output
from ..context import HubOpt, JsonOpt, ServerOpt, state


def export_cmd(
    ctx: typer.Context,
    folder: Annotated[
        Path,
        typer.Argument(
            metavar="DIR",
            help="Where to write it: a new or empty folder, or one that holds an earlier export (replaced).",
        ),
    ],
    hub: HubOpt = None,
    versions: Annotated[bool, typer.Option("--versions", help="Every earlier version of each page too.")] = False,
    url: ServerOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Write the hub as markdown files (needs its owner token): every page with its front matter,
    drafts and private pages included, its bundles and an index; `import folder` brings it back."""
    console = output.err_console()
    bar = Progress(
        SpinnerColumn(),
        TextColumn("[bold]downloading[/bold]"),
        DownloadColumn(),
        TransferSpeedColumn(),
        console=console,
        disable=as_json or not console.is_terminal,
        transient=True,
    )
    task = bar.add_task("export", total=None)
    with state(ctx).wiki(url) as wiki, bar:
        done = ops.export_hub(
            wiki, folder, hub=hub, versions=versions, progress=lambda n: bar.update(task, completed=n)
        )
    if as_json:
        output.print_json(
            {
                "hub": done.hub,
                "folder": str(done.folder),
                "pages": done.pages,
                "bundles": done.bundles,
                "files": done.files,
                "replaced": done.replaced,
            }
        )
        return
    sys.stdout.write(f"{done.folder}\n")
    output.note(
        f"hub {done.hub}: {done.pages} page{'s' if done.pages != 1 else ''}, {done.bundles} "
        f"bundle{'s' if done.bundles != 1 else ''}, {done.files} files"
        + (" (the earlier export there was replaced)" if done.replaced else "")
    )


def register(app: typer.Typer) -> None:
    app.command("export")(export_cmd)
