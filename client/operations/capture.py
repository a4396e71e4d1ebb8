"""Capture: markdown, a file, a web page or a coding-agent session becomes a page at a
permanent URL; its edit token is kept in the config."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from memorywiki.adapters.common import Transcript
from memorywiki.adapters.sessions import capture_session
from memorywiki.adapters.tools import TOOLS_HELP, normalize_tool
from memorywiki.formats.storable import strip_unstorable

from ..auth import explain_hub_refusal
from ..errors import ApiError, InputError, MemoryWikiError
from ..files import read_bytes_file, read_text_file
from ..sections import headings
from .types import SavedDoc
from .wiki import Wiki

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


@dataclass(frozen=True)
class Captured:
    data: SavedDoc  # the server's answer (it holds the edit token of a new page)
    hub: str | None
    config_warning: str | None  # set when the edit token could not be saved in the config

    @property
    def doc_id(self) -> str | None:
        return None if self.data.get("id") is None else str(self.data["id"])

    @property
    def url(self) -> str | None:
        return self.data.get("url")

    @property
    def status(self) -> str:
        return self.data.get("status") or "created"


def first_h1(markdown: str) -> str | None:
    """The text of the doc's first top-level `# ` heading (code fences do not count)."""
    for h in headings(markdown):
        if h.level == 1 and h.text.strip():
            return h.text.strip()
    return None


def _title(title: str | None, default: str | None) -> str:
    if title is not None and not title.strip():
        raise InputError("the title is empty")
    final = (title or default or "").strip()
    if not final:
        raise InputError("--title is required (the text has no `# ` heading to take it from)")
    return final


def _given_title(title: str | None) -> str | None:
    """A title the server may otherwise take from the page or file itself."""
    if title is not None and not title.strip():
        raise InputError("the title is empty")
    return title.strip() if title else None


def _kept(wiki: Wiki, data: SavedDoc, hub: str | None) -> Captured:
    warning = None
    if data.get("id") is not None:
        doc_id, token, url = str(data["id"]), data.get("edit_token"), data.get("url")
        warning = wiki.update_config(lambda cfg: cfg.remember_doc(doc_id, token, url, hub))
    return Captured(data, hub, warning)


def _create(wiki: Wiki, body: dict[str, Any], hub: str | None, draft: bool, new: bool) -> Captured:
    cred = wiki.config.hub_credential(hub)
    body = {**body, "hub": hub, "is_draft": draft, **({"dedupe": False} if new else {})}
    try:
        data = wiki.client.create_doc(body, cred.token)
    except ApiError as exc:
        raise explain_hub_refusal(exc, cred, hub) from None
    return _kept(wiki, cast(SavedDoc, data), hub)


def capture_markdown(
    wiki: Wiki,
    markdown: str,
    *,
    title: str | None = None,
    default_title: str | None = None,
    hub: str | None = None,
    source: str | None = None,
    draft: bool = False,
    new: bool = False,
) -> Captured:
    """Save markdown as a new page. The title defaults to the text's first `# ` heading, then
    ``default_title``. Without ``new``, the same title and text already in the hub answer that
    page (status "exists")."""
    if not markdown.strip():
        raise InputError("empty body: nothing to capture")
    body = {
        "title": _title(title, first_h1(markdown) or default_title),
        "markdown": markdown,
        "source": source or wiki.source,
    }
    return _create(wiki, body, wiki.hub(hub), draft, new)


def capture_file(
    wiki: Wiki,
    path: Path,
    *,
    title: str | None = None,
    hub: str | None = None,
    source: str | None = None,
    draft: bool = False,
    new: bool = False,
) -> Captured:
    """A pdf/docx/pptx/html/vtt/srt file is converted by the server (its title, unless given,
    taken from the file); any other file is markdown text, titled by its first `# ` heading,
    else the file name."""
    path = path.expanduser()
    mime = BINARY_KINDS.get(path.suffix.lower())
    if mime is None:
        return capture_markdown(
            wiki,
            read_text_file(path),
            title=title,
            default_title=path.stem,
            hub=hub,
            source=source,
            draft=draft,
            new=new,
        )
    content = read_bytes_file(path)
    slug = wiki.hub(hub)
    cred = wiki.config.hub_credential(slug)
    fields = {
        "title": _given_title(title),
        "hub": slug,
        "source": source,
        "is_draft": "true" if draft else None,
        "dedupe": "false" if new else None,
    }
    try:
        data = wiki.client.capture_file(path.name, content, mime, fields, cred.token)
    except ApiError as exc:
        raise explain_hub_refusal(exc, cred, slug) from None
    return _kept(wiki, cast(SavedDoc, data), slug)


def capture_url(
    wiki: Wiki,
    url: str,
    *,
    title: str | None = None,
    hub: str | None = None,
    source: str | None = None,
    draft: bool = False,
    new: bool = False,
) -> Captured:
    """The server fetches the page (a shared ChatGPT or Claude chat, an article) and saves it."""
    slug = wiki.hub(hub)
    cred = wiki.config.hub_credential(slug)
    req = {
        "url": url,
        "title": _given_title(title),
        "hub": slug,
        "source": source,
        # never silently publish what was meant to be private
        "is_draft": True if draft else None,
        "dedupe": False if new else None,
    }
    try:
        data = wiki.client.capture_url({k: v for k, v in req.items() if v is not None}, cred.token)
    except ApiError as exc:
        raise explain_hub_refusal(exc, cred, slug) from None
    return _kept(wiki, cast(SavedDoc, data), slug)


def read_agent_session(
    agent: str, session_id: str | None = None, *, cwd: Path | None = None, home: Path | None = None
) -> Transcript:
    """The coding-agent session to capture, found by the tool's reader (any alias of the tool):
    the one with ``session_id``, else the latest one for ``cwd``."""
    try:
        tool = normalize_tool(agent)
    except ValueError:
        raise InputError(f"unknown agent {agent!r}; expected {TOOLS_HELP}") from None
    cwd = cwd or Path.cwd()
    try:
        session = capture_session(tool, session_id, cwd=cwd, home=home or Path.home())
    except (LookupError, FileNotFoundError, ValueError) as exc:
        raise MemoryWikiError(str(exc) or f"no {tool} session found") from None
    except OSError as exc:
        raise MemoryWikiError(f"cannot read the {tool} session: {exc}") from None
    if session is None:
        where = f"with id {session_id}" if session_id else f"for {cwd}"
        raise MemoryWikiError(f"no {tool} session found {where}")
    if session.is_empty or not session.markdown.strip():
        raise MemoryWikiError(f"the {tool} session has nothing to capture yet")
    return session


def capture_agent_session(
    wiki: Wiki,
    agent: str,
    session_id: str | None = None,
    *,
    title: str | None = None,
    hub: str | None = None,
    source: str | None = None,
    draft: bool = False,
    new: bool = False,
) -> Captured:
    """Save a coding-agent session (Claude Code, Cursor, Codex, Aider) as a page."""
    session = read_agent_session(agent, session_id)
    sid = session.session_id or session_id
    meta = {
        "tool": session.tool,
        "session_id": sid,
        "cwd": str(session.cwd) if session.cwd is not None else None,
        "git_branch": session.git_branch,
    }
    default_title = (
        (session.title or "").strip()
        or first_h1(session.markdown)
        or f"{session.tool} session {str(sid or '')[:8]}".strip()
    )
    # the tool's own title and paths too may carry a NUL the server refuses; drop it, keep the session
    body = strip_unstorable(
        {
            "title": _title(title, default_title),
            "markdown": session.markdown,
            "meta": meta,
            "source": source or session.tool,
        }
    )
    return _create(wiki, body, wiki.hub(hub), draft, new)
