"""`memorywiki import chatgpt | claude | folder`: a chat data export, one page per conversation;
or a folder of markdown files (an export of a hub, an Obsidian vault), one page per file."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer
from memorywiki.client import operations as ops
from rich.progress import BarColumn, MofNCompleteColumn, Progress, ProgressColumn, Task, TextColumn, TimeRemainingColumn
from rich.text import Text

from .. import output
from ..context import CONTEXT, HubOpt, JsonOpt, ServerOpt, state

SHOWN = 20  # skipped files and notes listed one a line; --json lists them all

import_app = typer.Typer(
    help="Import into a hub: a ChatGPT or Claude data export, or a folder of markdown files.",
    no_args_is_help=True,
    context_settings=CONTEXT,
    rich_markup_mode=None,
)


def _bar(as_json: bool, what: str) -> Progress:
    """The progress bar on stderr: counts, and an estimate of the time left (none in a pipe or a log)."""
    console = output.err_console()
    return Progress(
        TextColumn(f"[bold]{what}[/bold]"),
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[counts]}"),
        TimeRemainingColumn(),
        console=console,
        disable=as_json or not console.is_terminal,
        transient=True,
    )


def _chat_export(
    ctx: typer.Context, kind: str, file: Path, hub: str | None, url: str | None, as_json: bool, no_wait: bool
) -> None:
    bar = _bar(as_json, "importing")
    task = bar.add_task("", total=None, counts="")

    def progress(done: int, total: int) -> None:
        if not done:
            bar.start()  # once the export is found and counted
        bar.update(task, completed=done, total=total)

    with state(ctx).wiki(url) as wiki:
        slug = wiki.require_hub(hub)
        try:
            counts = ops.import_export(wiki, kind, file, hub=slug, progress=progress)
        finally:
            if bar.live.is_started:
                bar.stop()
        owed = None
        if not no_wait and (counts["created"] or counts["updated"]):
            owed = _wait_indexed(wiki, quiet=as_json)
    if as_json:
        output.print_json({"hub": slug, "kind": kind, **counts, **({} if owed is None else {"owed": owed})})
        return
    summary = ", ".join(f"{counts[k]} {k}" for k in ("created", "updated", "unchanged", "deleted"))
    sys.stdout.write(f"{kind} export into hub {slug}: {summary}\n")
    output.note_redaction(counts.get("redacted"))
    if counts["skipped"]:
        n = len(counts["skipped"])
        output.note(f"skipped {n} conversation{'s' if n != 1 else ''} with nothing to keep (use --json to see which)")
    if owed:
        output.note(
            f"still indexing: {owed} page{'s' if owed != 1 else ''} owed; they are found by full text meanwhile"
        )
    elif owed == 0:
        sys.stdout.write("indexed: every page is searchable\n")


class _PagesPerSecond(ProgressColumn):
    def render(self, task: Task) -> Text:
        return Text(f"{task.speed:.1f} pages/s" if task.speed else "")


def _wait_indexed(wiki, *, quiet: bool) -> int | None:
    """The server's indexing of what was saved, as a bar: pages indexed, pages/s, time left."""
    bar = Progress(
        TextColumn("[bold]indexing[/bold]"),
        BarColumn(),
        MofNCompleteColumn(),
        _PagesPerSecond(),
        TimeRemainingColumn(),
        console=output.err_console(),
        disable=quiet,
        transient=True,
    )
    task = bar.add_task("indexing", total=None)

    def progress(done: int, total: int) -> None:
        if not bar.live.is_started:
            bar.start()
        bar.update(task, completed=done, total=total)

    try:
        return ops.wait_indexed(wiki, progress)
    finally:
        if bar.live.is_started:
            bar.stop()


ExportFile = Annotated[
    Path, typer.Argument(metavar="FILE", help="The export: the .zip you downloaded, or its conversations.json.")
]
NoWait = Annotated[
    bool, typer.Option("--no-wait", help="Return once saved, without waiting for the pages to be indexed.")
]


@import_app.command("chatgpt")
def import_chatgpt(
    ctx: typer.Context,
    file: ExportFile,
    hub: HubOpt = None,
    url: ServerOpt = None,
    as_json: JsonOpt = False,
    no_wait: NoWait = False,
) -> None:
    """Import a ChatGPT data export into a hub, one page per conversation (re-importing updates them),
    then wait until the server has indexed them, showing pages/s and the time left."""
    _chat_export(ctx, "chatgpt", file, hub, url, as_json, no_wait)


@import_app.command("claude")
def import_claude(
    ctx: typer.Context,
    file: ExportFile,
    hub: HubOpt = None,
    url: ServerOpt = None,
    as_json: JsonOpt = False,
    no_wait: NoWait = False,
) -> None:
    """Import a Claude data export into a hub, one page per conversation (re-importing updates them),
    then wait until the server has indexed them, showing pages/s and the time left."""
    _chat_export(ctx, "claude", file, hub, url, as_json, no_wait)


def _counts(counts: dict[str, int]) -> str:
    return ", ".join(f"{n} {status}" for status, n in counts.items() if n) or "nothing"


@import_app.command("folder")
def import_folder(
    ctx: typer.Context,
    folder: Annotated[
        Path,
        typer.Argument(
            metavar="DIR",
            help="The folder (an export of a hub, an Obsidian vault, any markdown files), or an export's .zip.",
        ),
    ],
    hub: HubOpt = None,
    strict: Annotated[
        bool,
        typer.Option(
            "--strict",
            help="Import nothing if any file cannot be a page (not UTF-8, "
            "broken front matter, empty); by default such files are "
            "named and skipped.",
        ),
    ] = False,
    drafts: Annotated[
        bool, typer.Option("--draft", help="Import every page as a draft, whatever its file says.")
    ] = False,
    url: ServerOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Import a folder of markdown files into a hub, one page per file (needs the hub's owner token).

    Front matter is kept as the page's meta; [[wiki links]], [[note|alias]], ![[embeds]] and
    relative links [x](other.md) become links between the new pages. A page stays as private
    as its file says (visibility, allowed_emails, draft). Importing the same folder again
    changes nothing; a file changed since updates its page. An export of a hub (`memorywiki
    export`, or the zip from the hub page) comes back with its bundles and visibility.
    """
    bar = _bar(as_json, "folder")
    task = bar.add_task("reading", total=None, counts="")
    step_names = {
        "reading": "reading files",
        "saving": "saving pages",
        "linking": "linking pages",
        "bundles": "saving bundles",
    }

    def progress(step: str, done: int, total: int, counts: dict[str, int]) -> None:
        if not bar.live.is_started:
            bar.start()
        shown = ", ".join(f"{n} {status}" for status, n in counts.items() if n)
        bar.update(task, description=step_names.get(step, step), completed=done, total=total, counts=shown)

    with state(ctx).wiki(url) as wiki:
        slug = wiki.require_hub(hub)

        try:
            result = ops.import_folder(wiki, folder, hub=slug, strict=strict, drafts=drafts, progress=progress)
        finally:
            if bar.live.is_started:
                bar.stop()
    if as_json:
        output.print_json(result.as_json())
        return
    line = f"folder {folder} into hub {slug}: pages {_counts(result.pages)}"
    if result.exported:
        line += f"; bundles {_counts(result.bundles)}"
    sys.stdout.write(line + "\n")
    output.note_redaction(result.redacted)
    for problem in result.skipped[:SHOWN]:
        output.note(f"skipped {problem.path}: {problem.reason}")
    for problem in result.notes[:SHOWN]:
        output.note(f"note {problem.path}: {problem.reason}")
    hidden = max(0, len(result.skipped) - SHOWN) + max(0, len(result.notes) - SHOWN)
    if hidden:
        output.note(f"and {hidden} more (use --json to see them all)")
    if result.unresolved:
        output.note(
            f"{result.unresolved} wiki link{'s' if result.unresolved != 1 else ''} name no file of the folder: "
            "left as written"
        )


def register(app: typer.Typer) -> None:
    app.add_typer(import_app, name="import")
