"""`memorywiki capture`: markdown (file or stdin), a file to convert, a web page, or a coding-agent
session becomes a page at a permanent URL. Prints only the URL on stdout, so it pipes."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer
from memorywiki.adapters.tools import TOOLS_HELP
from memorywiki.client import MemoryWikiError
from memorywiki.client import operations as ops

from .. import output
from ..context import HubOpt, JsonOpt, state, warn_unsaved
from ..inputs import read_body


def _report(captured: ops.Captured, as_json: bool) -> None:
    data = captured.data
    token = data.get("edit_token")
    warn_unsaved(captured.config_warning, f"keep this edit token for doc {captured.doc_id}: {token}" if token else "")
    url = captured.url or captured.doc_id
    if as_json:
        output.print_json(data)
        return
    sys.stdout.write(f"{url}\n")  # stdout stays just the URL, so `URL=$(memorywiki capture ...)` works
    output.note_redaction(data.get("redacted"))
    status = data.get("status")
    if status == ops.EXISTS:
        output.note(f"already captured: {url} (the same title and text are in this hub; --new saves a separate page)")
    elif status in ("updated", "unchanged"):
        output.note(f"{status}: this was captured before (doc {captured.doc_id})")


def capture(
    ctx: typer.Context,
    file: Annotated[
        str | None,
        typer.Argument(
            metavar="FILE",
            help="Markdown file, `-` for stdin (the default when stdin is piped), or a pdf/docx/pptx/html/vtt/srt file.",
        ),
    ] = None,
    title: Annotated[
        str | None, typer.Option("--title", "-t", help="The page title (default: the first `# ` heading).")
    ] = None,
    hub: HubOpt = None,
    draft: Annotated[bool, typer.Option("--draft", help="Keep it private: drafts never show in public reads.")] = False,
    source: Annotated[str | None, typer.Option("--source", help="Where it came from (e.g. chatgpt, claude).")] = None,
    page_url: Annotated[str | None, typer.Option("--url", help="Capture a web page by URL instead of a file.")] = None,
    agent: Annotated[str | None, typer.Option("--agent", help=f"Capture a coding-agent session: {TOOLS_HELP}.")] = None,
    session: Annotated[
        str | None, typer.Option("--session", help="With --agent: the session id (default: latest for this dir).")
    ] = None,
    new: Annotated[
        bool, typer.Option("--new", help="Save a new page even if this hub already holds the same title and text.")
    ] = False,
    server: Annotated[
        str | None, typer.Option("--server", help="Server URL (overrides $MEMORYWIKI_URL and the config).")
    ] = None,
    as_json: JsonOpt = False,
) -> None:
    """Save markdown as a page at a permanent URL; prints only the URL (so it pipes)."""
    if sum(1 for x in (file, page_url, agent) if x) > 1:
        raise MemoryWikiError("give only one of FILE, --url or --agent")
    options = {"title": title, "hub": hub, "source": source, "draft": draft, "new": new}
    with state(ctx).wiki(server) as wiki:
        if page_url:
            captured = ops.capture_url(wiki, page_url, **options)
        elif agent:
            captured = ops.capture_agent_session(wiki, agent, session, **options)
        elif file and file != "-":
            captured = ops.capture_file(wiki, Path(file), **options)
        else:
            text = read_body(file)
            if text is None:
                raise MemoryWikiError("nothing to capture: give a FILE, pipe markdown on stdin, --url or --agent")
            captured = ops.capture_markdown(wiki, text, **options)
    _report(captured, as_json)


def register(app: typer.Typer) -> None:
    app.command()(capture)
