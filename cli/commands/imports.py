"""`memorywiki import`: a ChatGPT or Claude data export, read here, one page per conversation."""

from __future__ import annotations

import sys
from enum import Enum
from pathlib import Path
from typing import Annotated

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

from memorywiki.client import operations as ops

from .. import output
from ..context import HubOpt, JsonOpt, ServerOpt, state


class ExportKind(str, Enum):
    chatgpt = "chatgpt"
    claude = "claude"


def import_cmd(
    ctx: typer.Context,
    kind: Annotated[ExportKind, typer.Argument(metavar="KIND", help="chatgpt or claude: whose data export it is.")],
    file: Annotated[Path, typer.Argument(metavar="FILE", help="The export: the .zip you downloaded, or its conversations.json.")],
    hub: HubOpt = None,
    url: ServerOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Import a ChatGPT or Claude data export into a hub, one page per conversation (re-importing updates them)."""
    bar = Progress(TextColumn("[bold]importing[/bold]"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(),
                   console=output.err_console(), disable=as_json, transient=True)
    task = bar.add_task("import", total=None)

    def progress(done: int, total: int) -> None:
        if not done:
            bar.start()  # once the export is found and counted
        bar.update(task, completed=done, total=total)

    with state(ctx).wiki(url) as wiki:
        slug = wiki.require_hub(hub)
        try:
            counts = ops.import_export(wiki, kind.value, file, hub=slug, progress=progress)
        finally:
            if bar.live.is_started:
                bar.stop()
    if as_json:
        output.print_json({"hub": slug, "kind": kind.value, **counts})
        return
    summary = ", ".join(f"{counts[k]} {k}" for k in ("created", "updated", "unchanged", "deleted"))
    sys.stdout.write(f"{kind.value} export into hub {slug}: {summary}\n")
    if counts["skipped"]:
        n = len(counts["skipped"])
        output.note(f"skipped {n} conversation{'s' if n != 1 else ''} with nothing to keep (use --json to see which)")


def register(app: typer.Typer) -> None:
    app.command("import")(import_cmd)
