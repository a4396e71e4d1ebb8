"""`memorywiki capture`: markdown (file or stdin), a file to convert, a web page, or a coding-agent
session becomes a page at a permanent URL. Prints only the URL on stdout, so it pipes."""

from __future__ import annotations

import mimetypes
import sys
from pathlib import Path
from typing import Annotated, Any, Optional

import typer

from memorywiki.adapters.common import Transcript
from memorywiki.adapters.sessions import capture_session
from memorywiki.adapters.tools import TOOLS_HELP, normalize_tool
from memorywiki.client import ApiError, Config, MemoryWikiError
from memorywiki.client.auth import explain_hub_refusal
from memorywiki.client.sections import headings
from memorywiki.formats.storable import strip_unstorable

from .. import output
from ..context import HubOpt, JsonOpt, save_config, state
from ..inputs import read_body, read_bytes_file

# files the server converts (POST /api/capture/file); anything else is read as markdown text
BINARY_KINDS = {
    ".pdf": "application/pdf",
    ".docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
    ".pptx": "application/vnd.openxmlformats-officedocument.presentationml.presentation",
    ".html": "text/html",
    ".htm": "text/html",
    ".vtt": "text/vtt",
    ".srt": "application/x-subrip",
}

EXISTS = "exists"  # the server's status for content this hub already holds


def first_h1(markdown: str) -> str | None:
    """The text of the doc's first top-level `# ` heading (code fences do not count)."""
    for h in headings(markdown):
        if h.level == 1 and h.text.strip():
            return h.text.strip()
    return None


def read_agent_session(agent: str, session_id: str | None) -> Transcript:
    """The coding-agent session to capture, found by the tool's reader (any alias of the tool)."""
    try:
        tool = normalize_tool(agent)
    except ValueError:
        raise MemoryWikiError(f"unknown agent {agent!r}; expected {TOOLS_HELP}") from None
    try:
        session = capture_session(tool, session_id, cwd=Path.cwd(), home=Path.home())
    except (LookupError, FileNotFoundError, ValueError) as exc:
        raise MemoryWikiError(str(exc) or f"no {tool} session found") from None
    except OSError as exc:
        raise MemoryWikiError(f"cannot read the {tool} session: {exc}") from None
    if session is None:
        where = f"with id {session_id}" if session_id else f"for {Path.cwd()}"
        raise MemoryWikiError(f"no {tool} session found {where}")
    if session.is_empty or not session.markdown.strip():
        raise MemoryWikiError(f"the {tool} session has nothing to capture yet")
    return session


def _session_body(session: Transcript, session_id: str | None, title: str | None, source: str | None) -> dict[str, Any]:
    sid = session.session_id or session_id
    meta = {"tool": session.tool, "session_id": sid, "cwd": str(session.cwd) if session.cwd is not None else None,
            "git_branch": session.git_branch}
    default_title = ((session.title or "").strip() or first_h1(session.markdown)
                     or f"{session.tool} session {str(sid or '')[:8]}".strip())
    # the tool's own title and paths too may carry a NUL the server refuses; drop it, keep the session
    return strip_unstorable({"title": (title or default_title).strip(), "markdown": session.markdown, "meta": meta,
                             "source": source or session.tool})


def _text_body(file: str | None, title: str | None, source: str | None) -> dict[str, Any]:
    text = read_body(file)
    if text is None:
        raise MemoryWikiError("nothing to capture: give a FILE, pipe markdown on stdin, --url or --agent")
    if not text.strip():
        raise MemoryWikiError("empty body: nothing to capture")
    default_title = first_h1(text) or (Path(file).stem if file and file != "-" else None)
    final_title = (title or default_title or "").strip()
    if not final_title:
        raise MemoryWikiError("--title is required (the text has no `# ` heading to take it from)")
    return {"title": final_title, "markdown": text, "source": source or "cli"}


def _report(cfg: Config, data: dict, hub: str | None, as_json: bool) -> None:
    doc_id = data.get("id")
    if doc_id is not None:
        token = data.get("edit_token")
        cfg.remember_doc(str(doc_id), token, data.get("url"), hub)
        save_config(cfg, f"keep this edit token for doc {doc_id}: {token}" if token else "")
    url = data.get("url") or data.get("id")
    if as_json:
        output.print_json(data)
        return
    sys.stdout.write(f"{url}\n")  # stdout stays just the URL, so `URL=$(memorywiki capture ...)` works
    status = data.get("status")
    if status == EXISTS:
        output.note(f"already captured: {url} (the same title and text are in this hub; --new saves a separate page)")
    elif status in ("updated", "unchanged"):
        output.note(f"{status}: this was captured before (doc {doc_id})")


def capture(
    ctx: typer.Context,
    file: Annotated[
        Optional[str],
        typer.Argument(metavar="FILE", help="Markdown file, `-` for stdin (the default when stdin is piped), or a pdf/docx/pptx/html/vtt/srt file."),
    ] = None,
    title: Annotated[Optional[str], typer.Option("--title", "-t", help="The page title (default: the first `# ` heading).")] = None,
    hub: HubOpt = None,
    draft: Annotated[bool, typer.Option("--draft", help="Keep it private: drafts never show in public reads.")] = False,
    source: Annotated[Optional[str], typer.Option("--source", help="Where it came from (e.g. chatgpt, claude).")] = None,
    page_url: Annotated[Optional[str], typer.Option("--url", help="Capture a web page by URL instead of a file.")] = None,
    agent: Annotated[
        Optional[str], typer.Option("--agent", help=f"Capture a coding-agent session: {TOOLS_HELP}.")
    ] = None,
    session: Annotated[Optional[str], typer.Option("--session", help="With --agent: the session id (default: latest for this dir).")] = None,
    new: Annotated[bool, typer.Option(
        "--new", help="Save a new page even if this hub already holds the same title and text.")] = False,
    server: Annotated[Optional[str], typer.Option("--server", help="Server URL (overrides $MEMORYWIKI_URL and the config).")] = None,
    as_json: JsonOpt = False,
) -> None:
    """Save markdown as a page at a permanent URL; prints only the URL (so it pipes)."""
    st = state(ctx)
    cfg = st.config
    hub_slug = cfg.resolve_hub(hub)
    cred = cfg.hub_credential(hub_slug)
    if sum(1 for x in (file, page_url, agent) if x) > 1:
        raise MemoryWikiError("give only one of FILE, --url or --agent")
    dedupe = {"dedupe": False} if new else {}

    with st.client(server) as client:
        try:
            if page_url:
                req: dict[str, Any] = {"url": page_url, "title": title, "hub": hub_slug, "source": source, **dedupe}
                if draft:
                    req["is_draft"] = True  # never silently publish what was meant to be private
                data = client.capture_url({k: v for k, v in req.items() if v is not None}, cred.token)
            elif file and file != "-" and Path(file).suffix.lower() in BINARY_KINDS:
                path = Path(file).expanduser()
                content = read_bytes_file(path)
                mime = BINARY_KINDS.get(path.suffix.lower()) or mimetypes.guess_type(path.name)[0] or "application/octet-stream"
                fields = {"title": title, "hub": hub_slug, "source": source}  # no title: the server takes it from the file
                if draft:
                    fields["is_draft"] = "true"
                if new:
                    fields["dedupe"] = "false"
                data = client.capture_file(path.name, content, mime, fields, cred.token)
            else:
                body = (_session_body(read_agent_session(agent, session), session, title, source) if agent
                        else _text_body(file, title, source))
                body.update({"hub": hub_slug, "is_draft": draft, **dedupe})
                data = client.create_doc(body, cred.token)
        except ApiError as exc:
            raise explain_hub_refusal(exc, cred, hub_slug) from None
    _report(cfg, data, hub_slug, as_json)


def register(app: typer.Typer) -> None:
    app.command()(capture)
