"""`memorywiki pull | update | history | restore | embed | delete | undelete`: one doc, by id or URL."""

from __future__ import annotations

import sys
from collections.abc import Mapping
from typing import Annotated, Any

import typer
from memorywiki.client import MemoryWikiError
from memorywiki.client import operations as ops
from memorywiki.client.errors import VersionConflict
from memorywiki.client.operations.types import Versions

from .. import output
from ..context import JsonOpt, ServerOpt, state, warn_unsaved
from ..inputs import read_body

DocArg = Annotated[str, typer.Argument(metavar="DOC", help="Doc id or doc URL.")]


def pull(
    ctx: typer.Context,
    doc: DocArg,
    body: Annotated[
        bool, typer.Option("--body", help="Only the markdown body, exactly as stored (no front matter).")
    ] = False,
    as_json: JsonOpt = False,
    url: ServerOpt = None,
) -> None:
    """Print a doc's markdown with its front matter (GET /raw/<id>); --body for the bare body."""
    with state(ctx).wiki(url) as wiki:
        if as_json or body:
            data = ops.read_doc(wiki, doc)
        else:
            text = ops.doc_markdown(wiki, doc)
    if as_json:
        output.print_json(data)
    elif body:
        sys.stdout.write(data.get("markdown") or "")
    else:
        sys.stdout.write(text if text.endswith("\n") or not text else text + "\n")


def update(
    ctx: typer.Context,
    doc: DocArg,
    file: Annotated[
        str | None, typer.Argument(metavar="FILE", help="New markdown file, or `-` for stdin (default when piped).")
    ] = None,
    section: Annotated[
        str | None,
        typer.Option("--section", help="Replace only this section (by heading text); keep the rest verbatim."),
    ] = None,
    title: Annotated[str | None, typer.Option("--title", "-t", help="New title.")] = None,
    expect_version: Annotated[
        int | None,
        typer.Option(
            "--expect-version",
            min=1,
            metavar="N",
            help="Refuse the update if the doc is no longer at version N (the version you read).",
        ),
    ] = None,
    url: ServerOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Replace a doc's body (or one --section of it) and/or its title, with its edit token."""
    text = read_body(file)
    if text is not None and not text.strip() and file is None and title is not None:
        text = None  # empty piped stdin with --title: a rename
    with state(ctx).wiki(url) as wiki:
        try:
            updated = ops.update_doc(
                wiki, doc, markdown=text, section=section, title=title, expected_version=expect_version
            )
        except VersionConflict as exc:
            raise MemoryWikiError(
                f"the doc changed since you read it; pull it again (`memorywiki pull {exc.doc_id}`), "
                "redo your edit and update"
            ) from None
    if as_json:
        output.print_json(updated.data)
    else:
        sys.stdout.write(f"{updated.url or updated.doc_id}\n")
        output.note_redaction(updated.data.get("redacted"))


def _version_line(v: Mapping[str, Any]) -> str:
    when = str(v.get("saved_at") or "")[:16].replace("T", " ")
    how = v.get("action") or "saved"
    if v.get("restored_from"):
        how += f" of v{v['restored_from']}"
    saved_via = str(v.get("via") or "")
    via = {"owner": "hub owner token", "edit_token": "edit token", "anonymous": "no token"}.get(saved_via, "") or (
        f"member {saved_via.removeprefix('member:')}" if saved_via.startswith("member:") else ""
    )
    title = " ".join(str(v.get("title") or "").split())
    mark = " (current)" if v.get("current") else ""
    return f"v{v.get('version')}\t{when}\t{v.get('size')} bytes\t{how}{' · ' + via if via else ''}\t{title}{mark}"


def history(
    ctx: typer.Context,
    doc: DocArg,
    number: Annotated[
        int | None, typer.Argument(metavar="N", min=1, help="Print version N's markdown instead of the list.")
    ] = None,
    as_json: JsonOpt = False,
    url: ServerOpt = None,
) -> None:
    """List a doc's versions (newest first: number, when, size, how and through which token), or print version N."""
    with state(ctx).wiki(url) as wiki:
        one = ops.version(wiki, doc, number) if number is not None else None
        listing = ops.history(wiki, doc) if one is None else None
    if as_json:
        output.print_json(one if one is not None else listing)
    elif one is not None:
        sys.stdout.write(one.get("markdown") or "")
    elif listing is not None:
        _print_versions(listing)


def _print_versions(listing: Versions) -> None:
    if listing.get("deleted"):
        doc_id = listing.get("id")
        sys.stdout.write(f"doc {doc_id} is deleted; `memorywiki restore {doc_id} N` brings version N back\n")
    for v in listing.get("versions") or []:
        sys.stdout.write(_version_line(v) + "\n")


def restore(
    ctx: typer.Context,
    doc: DocArg,
    number: Annotated[
        int, typer.Argument(metavar="N", min=1, help="The version to restore (see `memorywiki history`).")
    ],
    expect_version: Annotated[
        int | None,
        typer.Option(
            "--expect-version",
            min=1,
            metavar="N",
            help="Refuse if the doc is no longer at version N (the version you read).",
        ),
    ] = None,
    url: ServerOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Make version N the doc's text again (a new version; nothing is lost). Brings back a deleted doc too."""
    with state(ctx).wiki(url) as wiki:
        try:
            restored = ops.restore(wiki, doc, number, expected_version=expect_version)
        except VersionConflict as exc:
            raise MemoryWikiError(
                f"the doc changed since you read it; look again (`memorywiki history {exc.doc_id}`) and retry"
            ) from None
    data = restored.data
    if as_json:
        output.print_json(data)
        return
    if data.get("changed"):
        output.note(f"restored version {number} as version {data.get('version')}")
    else:
        output.note(f"version {number} is already the doc's text; nothing changed")
    output.note_redaction(data.get("redacted"))
    sys.stdout.write(f"{data.get('url') or restored.doc_id}\n")


def embed(
    ctx: typer.Context,
    doc: Annotated[str, typer.Argument(metavar="ID", help="Doc id or doc URL (a bundle id or URL with --bundle).")],
    bundle: Annotated[bool, typer.Option("--bundle", help="ID is a bundle: refresh its vector.")] = False,
    url: ServerOpt = None,
) -> None:
    """Index a doc now (skipped when its text has not changed); prints the JSON result."""
    with state(ctx).wiki(url) as wiki:
        output.print_json(ops.index_bundle(wiki, doc) if bundle else ops.index_doc(wiki, doc))


def delete(ctx: typer.Context, doc: DocArg, url: ServerOpt = None) -> None:
    """Delete a doc (with its edit token or the hub's owner token)."""
    with state(ctx).wiki(url) as wiki:
        deleted = ops.delete_doc(wiki, doc)
    warn_unsaved(deleted.config_warning, "the doc is deleted but its entry stays in the config")
    sys.stdout.write(f"deleted {deleted.doc_id}\n")


def undelete(ctx: typer.Context, doc: DocArg, url: ServerOpt = None, as_json: JsonOpt = False) -> None:
    """Bring a deleted doc back from its hub's trash (a new version; needs the hub's owner token)."""
    with state(ctx).wiki(url) as wiki:
        restored = ops.undelete(wiki, doc)
    if as_json:
        output.print_json(restored.data)
        return
    output.note(f"undeleted {restored.doc_id} as version {restored.data.get('version')}")
    output.note_redaction(restored.data.get("redacted"))
    sys.stdout.write(f"{restored.data.get('url') or restored.doc_id}\n")


def publish(ctx: typer.Context, doc: DocArg, url: ServerOpt = None, as_json: JsonOpt = False) -> None:
    """Publish a draft (a captured coding session is one): readers and AIs see it from now on."""
    _set_draft(ctx, doc, url, as_json, draft=False)


def unpublish(ctx: typer.Context, doc: DocArg, url: ServerOpt = None, as_json: JsonOpt = False) -> None:
    """Make a page a draft again: only its editors (the hub's owner, its edit token) read it."""
    _set_draft(ctx, doc, url, as_json, draft=True)


def _set_draft(ctx: typer.Context, doc: str, url: str | None, as_json: bool, *, draft: bool) -> None:
    with state(ctx).wiki(url) as wiki:
        data = ops.set_draft(wiki, doc, draft)
    if as_json:
        output.print_json(data)
        return
    output.note(f"{'a draft again' if draft else 'published'}: version {data.get('version')}")
    sys.stdout.write(f"{data.get('url') or doc}\n")


def register(app: typer.Typer) -> None:
    for command in (pull, update, history, restore, embed, delete, undelete, publish, unpublish):
        app.command()(command)
