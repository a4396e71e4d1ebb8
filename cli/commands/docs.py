"""`memorywiki pull | update | history | restore | embed | delete`: one doc, by id or URL."""

from __future__ import annotations

import sys
from typing import Annotated, Any, Optional

import typer

from memorywiki.client import ApiError, MemoryWikiError, access_from, doc_id_from
from memorywiki.client.auth import explain_doc_refusal
from memorywiki.client.errors import EMBEDDER_UNAVAILABLE, VERSION_CONFLICT
from memorywiki.client.sections import replace_section, strip_pulled_front_matter

from .. import output
from ..context import JsonOpt, ServerOpt, save_config, state
from ..inputs import read_body

DocArg = Annotated[str, typer.Argument(metavar="DOC", help="Doc id or doc URL.")]


def pull(
    ctx: typer.Context,
    doc: DocArg,
    body: Annotated[bool, typer.Option("--body", help="Only the markdown body, exactly as stored (no front matter).")] = False,
    as_json: JsonOpt = False,
    url: ServerOpt = None,
) -> None:
    """Print a doc's markdown with its front matter (GET /raw/<id>); --body for the bare body."""
    st = state(ctx)
    doc_id = doc_id_from(doc)
    cred = st.config.doc_credential(doc_id)
    access = access_from(doc)
    with st.client(url) as client:
        try:
            if body or as_json:
                data = client.get_doc(doc_id, token=cred.token, access=access)
            else:
                text = client.raw(doc_id, token=cred.token, access=access)
        except ApiError as exc:
            raise explain_doc_refusal(exc, cred, doc_id) from None
    if as_json:
        output.print_json(data)
    elif body:
        sys.stdout.write(data.get("markdown") or "")
    else:
        sys.stdout.write(text if text.endswith("\n") or not text else text + "\n")


def update(
    ctx: typer.Context,
    doc: DocArg,
    file: Annotated[Optional[str], typer.Argument(metavar="FILE", help="New markdown file, or `-` for stdin (default when piped).")] = None,
    section: Annotated[
        Optional[str], typer.Option("--section", help="Replace only this section (by heading text); keep the rest verbatim.")
    ] = None,
    title: Annotated[Optional[str], typer.Option("--title", "-t", help="New title.")] = None,
    expect_version: Annotated[Optional[int], typer.Option(
        "--expect-version", min=1, metavar="N",
        help="Refuse the update if the doc is no longer at version N (the version you read).")] = None,
    url: ServerOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Replace a doc's body (or one --section of it) and/or its title, with its edit token."""
    st = state(ctx)
    cfg = st.config
    doc_id = doc_id_from(doc)
    cred = cfg.doc_credential(doc_id)
    text = read_body(file)
    if text is not None and not text.strip():
        if file is None and title is not None:
            text = None  # empty piped stdin with --title: a rename
        else:
            raise MemoryWikiError("empty body: nothing to update (pass --title alone to rename)")
    if text is not None and section is None:
        # `memorywiki pull ID > f.md; edit f.md; memorywiki update ID f.md` round-trips
        text, pulled_title = strip_pulled_front_matter(text, doc_id)
        if title is None:
            title = pulled_title
    if text is None and title is None:
        raise MemoryWikiError("nothing to update: give a FILE, pipe markdown on stdin, or --title")
    if section is not None and text is None:
        raise MemoryWikiError("--section needs the new section text (FILE or stdin)")
    if title is not None and not title.strip():
        raise MemoryWikiError("the title is empty")

    body: dict[str, Any] = {}
    if_match = str(expect_version) if expect_version is not None else None
    known_url = cfg.doc_entry(doc_id).get("url")
    with st.client(url) as client:
        try:
            if section is not None:
                current = client.get_doc(doc_id, token=cred.token)
                body["markdown"] = replace_section(current.get("markdown") or "", section, text or "")
                version = current.get("version")
                if if_match is None and version is not None:
                    if_match = str(version)
                known_url = current.get("url") or known_url
            elif text is not None:
                body["markdown"] = text
            if title is not None:
                body["title"] = title
            data = client.patch_doc(doc_id, body, token=cred.token, if_match=if_match)
        except ApiError as exc:
            if exc.code == VERSION_CONFLICT:
                raise MemoryWikiError(
                    f"the doc changed since you read it; pull it again (`memorywiki pull {doc_id}`), "
                    "redo your edit and update") from None
            raise explain_doc_refusal(exc, cred, doc_id) from None
    if as_json:
        output.print_json(data)
    else:
        sys.stdout.write(f"{data.get('url') or known_url or doc_id}\n")


def _version_line(v: dict) -> str:
    when = str(v.get("saved_at") or "")[:16].replace("T", " ")
    how = v.get("action") or "saved"
    if v.get("restored_from"):
        how += f" of v{v['restored_from']}"
    via = {"owner": "hub owner token", "edit_token": "edit token", "anonymous": "no token"}.get(v.get("via"), "")
    title = " ".join(str(v.get("title") or "").split())
    mark = " (current)" if v.get("current") else ""
    return f"v{v.get('version')}\t{when}\t{v.get('size')} bytes\t{how}{' · ' + via if via else ''}\t{title}{mark}"


def history(
    ctx: typer.Context,
    doc: DocArg,
    number: Annotated[Optional[int], typer.Argument(
        metavar="N", min=1, help="Print version N's markdown instead of the list.")] = None,
    as_json: JsonOpt = False,
    url: ServerOpt = None,
) -> None:
    """List a doc's versions (newest first: number, when, size, how and through which token), or print version N."""
    st = state(ctx)
    doc_id = doc_id_from(doc)
    cred = st.config.restore_credential(doc_id)
    access = access_from(doc)
    with st.client(url) as client:
        try:
            data = (client.version(doc_id, number, token=cred.token, access=access) if number is not None
                    else client.versions(doc_id, token=cred.token, access=access))
        except ApiError as exc:
            raise explain_doc_refusal(exc, cred, doc_id) from None
    if as_json:
        output.print_json(data)
    elif number is not None:
        sys.stdout.write(data.get("markdown") or "")
    else:
        if data.get("deleted"):
            sys.stdout.write(f"doc {doc_id} is deleted; `memorywiki restore {doc_id} N` brings version N back\n")
        for v in data.get("versions") or []:
            sys.stdout.write(_version_line(v) + "\n")


def restore(
    ctx: typer.Context,
    doc: DocArg,
    number: Annotated[int, typer.Argument(metavar="N", min=1, help="The version to restore (see `memorywiki history`).")],
    expect_version: Annotated[Optional[int], typer.Option(
        "--expect-version", min=1, metavar="N",
        help="Refuse if the doc is no longer at version N (the version you read).")] = None,
    url: ServerOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Make version N the doc's text again (a new version; nothing is lost). Brings back a deleted doc too."""
    st = state(ctx)
    doc_id = doc_id_from(doc)
    cred = st.config.restore_credential(doc_id)
    with st.client(url) as client:
        try:
            data = client.restore(doc_id, number, token=cred.token,
                                  if_match=str(expect_version) if expect_version is not None else None)
        except ApiError as exc:
            if exc.code == VERSION_CONFLICT:
                raise MemoryWikiError(
                    f"the doc changed since you read it; look again (`memorywiki history {doc_id}`) and retry") from None
            raise explain_doc_refusal(exc, cred, doc_id) from None
    if as_json:
        output.print_json(data)
        return
    if data.get("changed"):
        output.note(f"restored version {number} as version {data.get('version')}")
    else:
        output.note(f"version {number} is already the doc's text; nothing changed")
    sys.stdout.write(f"{data.get('url') or doc_id}\n")


def embed(
    ctx: typer.Context,
    doc: Annotated[str, typer.Argument(metavar="ID", help="Doc id or doc URL (a bundle id or URL with --bundle).")],
    bundle: Annotated[bool, typer.Option("--bundle", help="ID is a bundle: refresh its vector.")] = False,
    url: ServerOpt = None,
) -> None:
    """Index a doc now (skipped when its text has not changed); prints the JSON result."""
    st = state(ctx)
    doc_id = doc_id_from(doc)
    cred = st.config.doc_credential(doc_id)
    with st.client(url) as client:
        try:
            data = client.embed_bundle(doc_id) if bundle else client.embed(doc_id, token=cred.token)
        except ApiError as exc:
            if exc.code == EMBEDDER_UNAVAILABLE or bundle:
                raise
            raise explain_doc_refusal(exc, cred, doc_id) from None
    output.print_json(data)


def delete(ctx: typer.Context, doc: DocArg, url: ServerOpt = None) -> None:
    """Delete a doc (with its edit token or the hub's owner token)."""
    st = state(ctx)
    cfg = st.config
    doc_id = doc_id_from(doc)
    cred = cfg.doc_credential(doc_id)
    with st.client(url) as client:
        try:
            client.delete_doc(doc_id, token=cred.token)
        except ApiError as exc:
            raise explain_doc_refusal(exc, cred, doc_id) from None
    if cfg.forget_doc(doc_id):
        save_config(cfg, "the doc is deleted but its entry stays in the config")
    sys.stdout.write(f"deleted {doc_id}\n")


def register(app: typer.Typer) -> None:
    for command in (pull, update, history, restore, embed, delete):
        app.command()(command)
