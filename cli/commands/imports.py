"""`memorywiki import`: a ChatGPT or Claude data export, read here, one page per conversation."""

from __future__ import annotations

import sys
from enum import Enum
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

from memorywiki.client import ApiError, Client, MemoryWikiError
from memorywiki.client.auth import explain_hub_refusal
from memorywiki.client.config import Credential
from memorywiki.formats import FormatError, count_conversations, iter_chatgpt_export, iter_claude_export

from .. import output
from ..context import HubOpt, JsonOpt, ServerOpt, state


READERS = {"chatgpt": iter_chatgpt_export, "claude": iter_claude_export}  # the export parsers, shared with the server


class ExportKind(str, Enum):
    chatgpt = "chatgpt"
    claude = "claude"


def import_export(client: Client, kind: str, path: Path, slug: str, cred: Credential, *, quiet: bool) -> dict[str, Any]:
    """Read the export here, streaming, and upsert one page per conversation over HTTP.

    Only conversation text crosses the wire (an export's images stay home), each page is
    keyed by the conversation's id so a re-import updates instead of duplicating, and the
    progress bar counts conversations.
    """
    skipped: list = []
    counts: dict[str, Any] = {"created": 0, "updated": 0, "unchanged": 0, "deleted": 0}
    try:
        total = count_conversations(path)
        with Progress(
            TextColumn("[bold]importing[/bold]"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(),
            console=output.err_console(), disable=quiet, transient=True,
        ) as progress:
            task = progress.add_task("import", total=total)
            for captured in READERS[kind](path, skipped=skipped):
                body = {"hub": slug, "title": (captured.title or "Untitled")[:500], "markdown": captured.markdown,
                        "source": captured.source, "meta": captured.meta, "external_id": captured.external_id}
                try:
                    saved = client.create_doc(body, cred.token)
                except ApiError as exc:
                    raise explain_hub_refusal(exc, cred, slug) from None
                status = saved.get("status") or "created"
                counts[status] = counts.get(status, 0) + 1
                progress.advance(task)
    except FormatError as exc:
        done = sum(counts.values())
        raise MemoryWikiError(f"{exc.message} ({done} conversation{'s' if done != 1 else ''} were saved before this)") from None
    counts["skipped"] = skipped
    return counts


def import_cmd(
    ctx: typer.Context,
    kind: Annotated[ExportKind, typer.Argument(metavar="KIND", help="chatgpt or claude: whose data export it is.")],
    file: Annotated[Path, typer.Argument(metavar="FILE", help="The export: the .zip you downloaded, or its conversations.json.")],
    hub: HubOpt = None,
    url: ServerOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Import a ChatGPT or Claude data export into a hub, one page per conversation (re-importing updates them)."""
    st = state(ctx)
    cfg = st.config
    slug = cfg.require_hub(hub)
    path = file.expanduser()
    if not path.is_file():
        raise MemoryWikiError(f"no such file: {path}")
    with st.client(url) as client:
        counts = import_export(client, kind.value, path, slug, cfg.hub_credential(slug), quiet=as_json)
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
