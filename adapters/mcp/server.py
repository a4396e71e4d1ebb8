"""The Memory.Wiki MCP server: a thin client of the HTTP contract, built on the `mcp` SDK 2.x.

Tools: recall, capture, read_doc, update_doc, doc_history, restore_doc, list_docs, hub_url,
create_bundle, related, digest, suggest_bundles.
Resources: ``memorywiki://hub/{slug}`` (the hub's markdown index, GET /raw/hub/<slug>),
``memorywiki://doc/{doc_id}`` (one doc as markdown, GET /raw/<id>) and ``memorywiki://hub``
(the default hub's index).

Server URL, default hub and tokens come from the same config as the CLI
(``~/.config/memorywiki/config.toml`` or ``$MEMORYWIKI_CONFIG``; ``$MEMORYWIKI_URL``,
``$MEMORYWIKI_HUB`` and ``$MEMORYWIKI_TOKEN`` override it). Every HTTP error
(``{"error": {"code", "message"}}``) and every connection failure comes back as an MCP tool
error (``is_error`` with the message) so the model can read it; the server never crashes.

Over streamable HTTP (``memorywiki mcp --http``) anything on the machine, a web page in a
browser too, could reach the port, and the server acts with the user's tokens. So the HTTP
transport answers only requests whose Host (and Origin, when sent) is this loopback address and
port, which defeats DNS rebinding (a hostile name resolved to 127.0.0.1), and the tools that
write (those not annotated read-only) need the server's own token, ``Authorization: Bearer
<token>``, printed at start. Over stdio the client launched the server itself: no token.
"""

from __future__ import annotations

import functools
import hmac
import inspect
import json
import secrets
import threading
from typing import Annotated, Any, Callable, Literal, TypeVar

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ResourceError, ResourceNotFoundError, ToolError
from mcp.server.transport_security import TransportSecuritySettings
from mcp.types import CallToolResult, TextContent, ToolAnnotations
from pydantic import Field

from memorywiki.client import ApiError, Client, Config, MemoryWikiError, access_from, doc_id_from
from memorywiki.client.auth import explain_doc_refusal, explain_hub_refusal
from memorywiki.client.errors import NOT_FOUND, UNKNOWN_HUB, VERSION_CONFLICT
from memorywiki.client.refs import seg
from memorywiki.client.sections import replace_section, strip_pulled_front_matter

SERVER_NAME = "memorywiki"
USER_AGENT = "memorywiki-mcp/0.1"
MAX_DOC_CHARS_IN_RECALL = 4000

INSTRUCTIONS = """\
Memory.Wiki is the user's own long-term memory: markdown pages ("docs") at permanent URLs,
grouped in a hub (one URL any AI can read) and in curated bundles (a topic with a reading order).

- Before answering a question the user may have worked on before ("what did we decide about…",
  "from my notes", "remember…"), call `recall`. Base the answer on the passages it returns and
  cite the `doc_url` of every passage you use; never invent URLs or content.
- Call `capture` only when the user asks to save, remember or record something. Write a clean,
  self-contained markdown page (not the chat log); it returns the page's permanent URL.
- To change a page: `read_doc` first (it shows the version), then `update_doc`, preferably
  replacing one `section`, so the rest of the page stays exactly as it was.
- Every change keeps the previous version: `doc_history` lists a page's versions (or shows one),
  `restore_doc` brings one back as a new version when the user asks to undo an edit.
- `list_docs` shows what is in the hub, `hub_url` gives the link to share with another AI, and
  `create_bundle` groups related pages into a reading list.
- `digest` gives every concept of the hub and its pages in one call (an overview before
  recall); `related` lists the pages close to a page; `suggest_bundles` proposes reading lists.
Errors come back as tool errors with the server's message; report them to the user as they are.
"""

F = TypeVar("F", bound=Callable[..., Any])

HubArg = Annotated[
    str | None,
    Field(description="Hub slug. Omit to use the user's default hub from their Memory.Wiki config."),
]


def _tool_errors(fn: F) -> F:
    """Turn every failure into a ToolError with a readable message (never a crash)."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except ToolError:
            raise
        except ApiError as exc:
            code = f" {exc.code}" if exc.code else ""
            raise ToolError(f"HTTP {exc.status}{code}: {exc.message}") from None
        except MemoryWikiError as exc:
            raise ToolError(exc.message) from None
        except Exception as exc:  # noqa: BLE001 - the model gets the message, the server lives on
            raise ToolError(f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__) from None

    wrapper.__doc__ = inspect.cleandoc(fn.__doc__ or "")  # the tool description the model reads
    return wrapper  # type: ignore[return-value]


def _result(text: str, data: dict[str, Any]) -> CallToolResult:
    """Readable text for the model plus the same facts as structured content."""
    return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=data)


def _breadcrumb(value: Any, title: str | None) -> str:
    if isinstance(value, list) and value:
        return " > ".join(str(v) for v in value if str(v).strip())
    if isinstance(value, str) and value.strip():
        return value.strip()
    return title or ""


class MemoryWiki:
    """The HTTP side: config, tokens and calls, shared by the tools and resources."""

    def __init__(self, server_url: str | None = None, hub: str | None = None, timeout: float = 60.0,
                 write_token: str | None = None):
        self._server_flag = server_url
        self._hub_flag = hub
        self._timeout = timeout
        self._config_lock = threading.Lock()
        self._write_token = write_token  # None: stdio, no token needed

    def require_write_token(self, ctx: Context) -> None:
        """A write tool over HTTP: the request must carry the server's token."""
        if self._write_token is None:
            return
        scheme, _, value = ((ctx.headers or {}).get("authorization") or "").partition(" ")
        if scheme.lower() != "bearer" or not hmac.compare_digest(value.strip().encode(), self._write_token.encode()):
            raise ToolError("this tool changes Memory.Wiki, and over HTTP it needs this MCP server's token: "
                            "send `Authorization: Bearer <token>` (printed by `memorywiki mcp --http`, "
                            "or set with --token)")

    # ---- config --------------------------------------------------------------------------

    def config(self) -> Config:
        return Config.load()  # read per call: a `memorywiki hub create` in a shell is seen at once

    def base_url(self, cfg: Config | None = None) -> str:
        return (cfg or self.config()).server_url(self._server_flag)

    def client(self, cfg: Config) -> Client:
        return Client(self.base_url(cfg), timeout=self._timeout, user_agent=USER_AGENT)

    def hub(self, cfg: Config, hub: str | None, required: bool = True) -> str | None:
        slug = (hub or "").strip() or self._hub_flag or cfg.default_hub()
        if not slug and required:
            raise MemoryWikiError(
                "no hub: pass `hub`, or have the user run `memorywiki hub create <slug>` "
                "(or `memorywiki hub use <slug> --token <owner token>` for a hub they already have)"
            )
        return slug or None

    def remember_doc(self, doc_id: str, edit_token: str | None, url: str | None, hub: str | None) -> None:
        with self._config_lock:
            try:
                cfg = self.config()
                cfg.remember_doc(doc_id, edit_token, url, hub)
                cfg.save()
            except MemoryWikiError:
                pass  # the doc is saved; only the local edit token is not remembered

    def get_hub(self, cfg: Config, slug: str) -> tuple[dict[str, Any], str]:
        """The hub's listing and the server's base URL; an unknown hub is a tool error."""
        with self.client(cfg) as client:
            try:
                return client.get_hub(slug, token=cfg.hub_token(slug)), client.base_url
            except ApiError as exc:
                if exc.code == UNKNOWN_HUB:
                    raise ToolError(f"no hub {slug!r} on {client.base_url}") from None
                raise

    # ---- raw markdown (resources) -------------------------------------------------------

    def raw_hub(self, slug: str) -> str:
        cfg = self.config()
        with self.client(cfg) as client:
            return client.raw_hub(slug, token=cfg.hub_token(slug))

    def raw_doc(self, ref: str) -> str:
        cfg = self.config()
        doc_id = doc_id_from(ref)
        with self.client(cfg) as client:
            return client.raw(doc_id, token=cfg.doc_token(doc_id), access=access_from(ref), curation=True)


def _resource_errors(fn: F) -> F:
    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except ApiError as exc:
            if exc.code in (NOT_FOUND, UNKNOWN_HUB):
                raise ResourceNotFoundError(exc.message) from None
            raise ResourceError(f"HTTP {exc.status}: {exc.message}") from None
        except MemoryWikiError as exc:
            raise ResourceError(exc.message) from None

    return wrapper  # type: ignore[return-value]


def _format_recall(data: dict[str, Any], level: str) -> str:
    results = data.get("results") or []
    hub = data.get("hub")
    mode = data.get("mode")
    head = f'Recall from hub "{hub}" ({level} level, {mode}, {len(results)} result(s)).'
    if data.get("vector_note"):
        head += f" Vectors were not used: {data['vector_note']}."
    if not results:
        return head + "\nNothing matched. The hub may not hold this yet (or is still indexing); say so rather than guessing."
    lines = [head, "Cite the doc_url of each passage you use.", ""]
    for i, r in enumerate(results, 1):
        if level == "bundle":
            lines.append(f"[{i}] {r.get('title')}\n    bundle_url: {r.get('bundle_url')}")
            if r.get("description"):
                lines.append(f"    {r['description']}")
            lines.append("")
            continue
        where = _breadcrumb(r.get("heading_path"), r.get("title")) if level == "chunk" else r.get("title")
        lines.append(f"[{i}] {where}")
        lines.append(f"    doc_url: {r.get('doc_url')}  (doc_id: {r.get('doc_id')})")
        body = (r.get("markdown") or "").strip()
        if level == "doc" and len(body) > MAX_DOC_CHARS_IN_RECALL:
            body = body[:MAX_DOC_CHARS_IN_RECALL].rstrip() + "\n… (truncated; call read_doc for the whole page)"
        lines.append(body)
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"


def _doc_text(doc: dict[str, Any]) -> str:
    fields = {
        "id": doc.get("id"), "title": doc.get("title"), "url": doc.get("url"), "hub": doc.get("hub"),
        "version": doc.get("version"), "updated": doc.get("updated_at"), "source": doc.get("source"),
    }
    head = ["---"] + [f"{k}: {json.dumps(v, ensure_ascii=False)}" for k, v in fields.items() if v is not None] + ["---", ""]
    return "\n".join(head) + "\n" + (doc.get("markdown") or "")


def build_server(server_url: str | None = None, hub: str | None = None, timeout: float = 60.0,
                 log_level: str = "WARNING", write_token: str | None = None) -> MCPServer:
    """The MCP server object (run it with ``.run()`` or ``.run(transport="streamable-http", ...)``).

    ``server_url`` / ``hub`` override the config file and env, like the CLI's ``--url`` / ``--hub``.
    ``write_token``: the token write tools need (the HTTP transport); None over stdio.
    """
    mw = MemoryWiki(server_url, hub, timeout, write_token)
    try:
        from importlib.metadata import version as _version

        version = _version("memorywiki")
    except Exception:  # noqa: BLE001
        version = "0.1.0"
    server = MCPServer(
        SERVER_NAME,
        title="Memory.Wiki",
        instructions=INSTRUCTIONS,
        version=version,
        log_level=log_level.upper(),  # type: ignore[arg-type]
    )

    # ---- recall --------------------------------------------------------------------------

    @server.tool(
        title="Recall from Memory.Wiki",
        annotations=ToolAnnotations(title="Recall from Memory.Wiki", read_only_hint=True, open_world_hint=False),
    )
    @_tool_errors
    def recall(
        question: Annotated[str, Field(min_length=1, max_length=4000,
                                       description="The question, in natural language (not keywords joined by AND).")],
        k: Annotated[int, Field(ge=1, le=50, description="How many results to return (1-50).")] = 5,
        level: Annotated[Literal["chunk", "doc", "bundle"], Field(
            description="'chunk' (default): the few paragraphs that answer, each with a breadcrumb; "
                        "'doc': whole pages; 'bundle': curated reading lists.")] = "chunk",
        hybrid: Annotated[bool, Field(
            description="Fuse vector and full-text (BM25) search, each weighed by how clearly it singles out "
                        "its best candidates; best for names, error messages and code identifiers. "
                        "Chunk and doc levels.")] = True,
        hub: HubArg = None,
    ) -> CallToolResult:
        """Search the user's own saved knowledge (their Memory.Wiki hub) and return the passages that answer a question.

        Use this first whenever the user asks about something they may have worked on, decided or
        saved before, or says "from my notes / memory / wiki". Returns numbered results; each has
        a breadcrumb (Doc title > Section), the passage markdown, its `doc_id` and `doc_url`
        (structured content also carries the scores: vector_rank, fts_rank, score; at doc level the
        section that ranked the doc). Cite the
        doc_url of every passage you rely on. An empty result means the hub does not hold it.
        """
        if not question.strip():
            raise ToolError("the question is empty")
        cfg = mw.config()
        slug = mw.hub(cfg, hub)
        body = {"question": question, "k": k, "level": level, "hybrid": hybrid}
        with mw.client(cfg) as client:
            data = client.recall(slug, body, token=cfg.hub_token(slug))
        return _result(_format_recall(data, level), data)

    # ---- capture -------------------------------------------------------------------------

    @server.tool(
        title="Save a page to Memory.Wiki",
        annotations=ToolAnnotations(title="Save a page to Memory.Wiki", read_only_hint=False,
                                    destructive_hint=False, idempotent_hint=False, open_world_hint=False),
    )
    @_tool_errors
    def capture(
        title: Annotated[str, Field(min_length=1, max_length=500,
                                    description="Short, specific page title (at most ~80 characters).")],
        markdown: Annotated[str, Field(min_length=1, description=(
            "The page body in markdown. Make it self-contained and reusable without this chat, e.g. "
            "## Question, ## Answer, ## Decisions, ## Code sections. Do not repeat the title as a "
            "'# ' heading. Replace secrets with <redacted>."))],
        hub: HubArg = None,
        is_draft: Annotated[bool, Field(
            description="true keeps the page private: drafts never appear in recall or the public hub.")] = False,
        source: Annotated[str | None, Field(
            description="Where the content came from, e.g. 'claude-code', 'cursor', 'chatgpt'.")] = None,
        new: Annotated[bool, Field(description=(
            "true saves a new page even when the hub already holds a page with the same title and "
            "markdown; by default that page is returned instead (status 'exists')."))] = False,
        ctx: Context = None,  # type: ignore[assignment]  # given by the SDK
    ) -> CallToolResult:
        """Save markdown as a new page at a permanent URL in the user's Memory.Wiki hub.

        Use only when the user asks to save, remember, capture or record something. Returns the
        page's `url` (show it to the user), its `id`, `version` and `status`: "created", or
        "exists" when the hub already held the same title and markdown (that page is returned;
        pass new=true only if the user wants a second copy). The page is indexed for `recall` in
        the background within seconds. To change an existing page use update_doc.
        """
        mw.require_write_token(ctx)
        if not markdown.strip():
            raise ToolError("the markdown is empty: nothing to capture")
        if not title.strip():
            raise ToolError("the title is empty")
        cfg = mw.config()
        slug = mw.hub(cfg, hub, required=False)
        cred = cfg.hub_credential(slug)
        body = {"title": title.strip(), "markdown": markdown, "hub": slug, "source": source or "mcp",
                "is_draft": is_draft}
        if new:
            body["dedupe"] = False
        with mw.client(cfg) as client:
            try:
                data = client.create_doc(body, cred.token)
            except ApiError as exc:
                raise explain_hub_refusal(exc, cred, slug) from None
        doc_id = str(data.get("id"))
        mw.remember_doc(doc_id, data.get("edit_token"), data.get("url"), slug)
        status = data.get("status") or "created"
        out = {"id": doc_id, "url": data.get("url"), "version": data.get("version"), "hub": slug,
               "is_draft": is_draft, "status": status}
        if status == "exists":
            text = (f"Already captured: {out['url']}\nid: {doc_id}  version: {out['version']}\n"
                    "The hub already holds a page with this title and markdown, so no new page was made "
                    "(call capture with new=true only if the user wants a second copy).")
            return _result(text, out)
        text = f"Saved: {out['url']}\nid: {doc_id}  version: {out['version']}"
        if slug:
            text += f"  hub: {slug}"
            text += "\n(draft: private, not in recall)" if is_draft else "\nIt will show up in recall once indexed (seconds)."
        else:
            text += "\nNot in any hub (no hub configured), so recall will not find it."
        return _result(text, out)

    # ---- read_doc ------------------------------------------------------------------------

    @server.tool(
        title="Read a Memory.Wiki page",
        annotations=ToolAnnotations(title="Read a Memory.Wiki page", read_only_hint=True, open_world_hint=False),
    )
    @_tool_errors
    def read_doc(
        doc: Annotated[str, Field(min_length=1, description=(
            "The doc id (e.g. from recall's doc_id) or its full URL (doc_url; a ?access= token in "
            "a shared URL is used)."))],
    ) -> CallToolResult:
        """Fetch one Memory.Wiki page as markdown.

        Returns a front-matter header (id, title, url, hub, version, updated) followed by the page
        body exactly as stored. Use it to read a page in full after recall, and before update_doc
        (pass the version you read as expected_version to avoid overwriting someone else's edit).
        """
        cfg = mw.config()
        doc_id = doc_id_from(doc)
        cred = cfg.doc_credential(doc_id)
        with mw.client(cfg) as client:
            try:
                data = client.get_doc(doc_id, token=cred.token, access=access_from(doc))
            except ApiError as exc:
                raise explain_doc_refusal(exc, cred, doc_id) from None
        out = {k: data.get(k) for k in ("id", "title", "url", "hub", "version", "updated_at", "source", "markdown")}
        return _result(_doc_text(data), out)

    # ---- update_doc ----------------------------------------------------------------------

    @server.tool(
        title="Update a Memory.Wiki page",
        annotations=ToolAnnotations(title="Update a Memory.Wiki page", read_only_hint=False,
                                    destructive_hint=True, idempotent_hint=True, open_world_hint=False),
    )
    @_tool_errors
    def update_doc(
        doc: Annotated[str, Field(min_length=1, description="The doc id or its URL.")],
        markdown: Annotated[str | None, Field(description=(
            "New markdown. With `section`: the new text of that one section (its body; start it "
            "with a heading of the same level to rename the section too). Without `section`: the "
            "whole new page body, replacing everything."))] = None,
        section: Annotated[str | None, Field(description=(
            "Heading text of the one section to replace (e.g. 'Decisions'); everything else in the "
            "page stays byte-for-byte. Prefer this over rewriting the whole page."))] = None,
        title: Annotated[str | None, Field(description="A new page title (optional).")] = None,
        expected_version: Annotated[int | None, Field(ge=1, description=(
            "The version you read with read_doc. If the page changed since, the update is refused "
            "instead of overwriting; read it again and retry."))] = None,
        ctx: Context = None,  # type: ignore[assignment]  # given by the SDK
    ) -> CallToolResult:
        """Change an existing Memory.Wiki page: replace one section, the whole body, and/or the title.

        Needs the page's edit token or the hub owner token (from the user's config). Returns the
        page's url and new version. A version conflict means the page changed since it was read:
        call read_doc again, redo the edit on the fresh text, and retry.
        """
        mw.require_write_token(ctx)
        cfg = mw.config()
        doc_id = doc_id_from(doc)
        cred = cfg.doc_credential(doc_id)
        if markdown is not None and not markdown.strip() and section is None:
            raise ToolError("the markdown is empty; an update cannot blank a page (omit markdown to only rename)")
        if section is not None and markdown is None:
            raise ToolError("`section` needs `markdown`: the new text of that section")
        if markdown is None and title is None:
            raise ToolError("nothing to update: give markdown (optionally with section) and/or title")
        if title is not None and not title.strip():
            raise ToolError("the title is empty")
        body: dict[str, Any] = {}
        if_match = str(expected_version) if expected_version is not None else None
        with mw.client(cfg) as client:
            try:
                if section is not None:
                    current = client.get_doc(doc_id, token=cred.token)
                    if expected_version is not None and current.get("version") != expected_version:
                        raise ToolError(
                            f"version conflict: the page is at version {current.get('version')}, not "
                            f"{expected_version}; call read_doc again and retry")
                    body["markdown"] = replace_section(current.get("markdown") or "", section, markdown or "")
                    if current.get("version") is not None:
                        if_match = str(current["version"])
                elif markdown is not None:
                    text, pulled_title = strip_pulled_front_matter(markdown, doc_id)
                    if not text.strip():
                        raise ToolError("the markdown is empty after its front matter")
                    body["markdown"] = text
                    if title is None and pulled_title:
                        title = pulled_title
                if title is not None:
                    body["title"] = title.strip()
                data = client.patch_doc(doc_id, body, token=cred.token, if_match=if_match)
            except ApiError as exc:
                if exc.code == VERSION_CONFLICT:
                    raise ToolError(f"version conflict: {exc.message}") from None
                raise explain_doc_refusal(exc, cred, doc_id) from None
        out = {"id": data.get("id") or doc_id, "url": data.get("url"), "version": data.get("version"),
               "title": data.get("title"), "section": section}
        what = f"section {section!r}" if section is not None else ("page" if markdown is not None else "title")
        return _result(f"Updated {what}: {out['url']}\nversion: {out['version']}", out)

    # ---- doc_history / restore_doc ---------------------------------------------------------

    @server.tool(
        title="Versions of a Memory.Wiki page",
        annotations=ToolAnnotations(title="Versions of a Memory.Wiki page", read_only_hint=True,
                                    open_world_hint=False),
    )
    @_tool_errors
    def doc_history(
        doc: Annotated[str, Field(min_length=1, description="The doc id or its URL.")],
        version: Annotated[int | None, Field(ge=1, description=(
            "A version number from the list: returns that version's full markdown. Omit for the list."))] = None,
    ) -> CallToolResult:
        """List the versions of a Memory.Wiki page, newest first, or read one old version.

        Every change to a page keeps the previous version. Each entry has its number, when it was
        saved, its size, what made it (create, edit, import, restore, delete) and through which
        token. Use it before restore_doc, or to see what a page said before an edit.
        """
        cfg = mw.config()
        doc_id = doc_id_from(doc)
        cred = cfg.restore_credential(doc_id)
        with mw.client(cfg) as client:
            try:
                if version is not None:
                    data = client.version(doc_id, version, token=cred.token, access=access_from(doc))
                    head = (f"Version {data.get('version')} of {doc_id} ({data.get('action') or 'saved'}, "
                            f"{data.get('saved_at')}): {data.get('title')}")
                    return _result(head + "\n\n" + (data.get("markdown") or ""), data)
                data = client.versions(doc_id, token=cred.token, access=access_from(doc))
            except ApiError as exc:
                raise explain_doc_refusal(exc, cred, doc_id) from None
        lines = [f"Versions of {data.get('url')} (current: {data.get('version')}"
                 + (", deleted" if data.get("deleted") else "") + ")"]
        for v in data.get("versions") or []:
            how = (v.get("action") or "saved") + (f" of v{v['restored_from']}" if v.get("restored_from") else "")
            lines.append(f"- v{v.get('version')} {v.get('saved_at')} {how} via {v.get('via') or 'unknown'}, "
                         f"{v.get('size')} bytes: {v.get('title')}")
        return _result("\n".join(lines) + "\n", data)

    @server.tool(
        title="Restore a version of a Memory.Wiki page",
        annotations=ToolAnnotations(title="Restore a version of a Memory.Wiki page", read_only_hint=False,
                                    destructive_hint=False, idempotent_hint=True, open_world_hint=False),
    )
    @_tool_errors
    def restore_doc(
        doc: Annotated[str, Field(min_length=1, description="The doc id or its URL.")],
        version: Annotated[int, Field(ge=1, description="The version number to bring back (from doc_history).")],
        ctx: Context = None,  # type: ignore[assignment]  # given by the SDK
    ) -> CallToolResult:
        """Make an earlier version of a Memory.Wiki page its current text again.

        Use only when the user asks to undo an edit or bring back a deleted page. The restore is
        itself a new version, so nothing is lost and it can be undone the same way. Needs the
        page's edit token or its hub's owner token (a deleted page: the hub owner token).
        """
        mw.require_write_token(ctx)
        cfg = mw.config()
        doc_id = doc_id_from(doc)
        cred = cfg.restore_credential(doc_id)
        with mw.client(cfg) as client:
            try:
                data = client.restore(doc_id, version, token=cred.token)
            except ApiError as exc:
                raise explain_doc_refusal(exc, cred, doc_id) from None
        out = {"id": data.get("id") or doc_id, "url": data.get("url"), "version": data.get("version"),
               "restored_from": version, "changed": data.get("changed")}
        if not data.get("changed"):
            return _result(f"Version {version} already is the page's text: {out['url']} (nothing changed)", out)
        return _result(f"Restored version {version} as version {out['version']}: {out['url']}", out)

    # ---- list_docs -----------------------------------------------------------------------

    @server.tool(
        title="List Memory.Wiki pages",
        annotations=ToolAnnotations(title="List Memory.Wiki pages", read_only_hint=True, open_world_hint=False),
    )
    @_tool_errors
    def list_docs(hub: HubArg = None) -> CallToolResult:
        """List the public pages (newest first) and bundles of a Memory.Wiki hub.

        Returns one line per page: title, url, id and a one-line summary; then the bundles. Use it
        to browse what the user has saved or to find doc ids for read_doc / create_bundle. To find
        pages about a topic, recall is better.
        """
        cfg = mw.config()
        slug = mw.hub(cfg, hub)
        data, _ = mw.get_hub(cfg, slug)
        docs = data.get("docs") or []
        bundles = data.get("bundles") or []
        lines = [f'Hub "{slug}": {data.get("url")} ({len(docs)} page(s), {len(bundles)} bundle(s))', ""]
        for d in docs:
            line = f"- {d.get('title')} — {d.get('url')} (id: {d.get('id')}, updated {d.get('updated_at')})"
            if d.get("summary"):
                line += f"\n  {d['summary']}"
            lines.append(line)
        if not docs:
            lines.append("(no public pages yet)")
        if bundles:
            lines += ["", "Bundles:"]
            lines += [f"- {b.get('title')} — {b.get('url')} (id: {b.get('id')})" for b in bundles]
        return _result("\n".join(lines) + "\n", {"hub": slug, "url": data.get("url"), "docs": docs, "bundles": bundles})

    # ---- hub_url -------------------------------------------------------------------------

    @server.tool(
        title="Memory.Wiki hub URL",
        annotations=ToolAnnotations(title="Memory.Wiki hub URL", read_only_hint=True, open_world_hint=False),
    )
    @_tool_errors
    def hub_url(hub: HubArg = None) -> CallToolResult:
        """Get the URL of the user's Memory.Wiki hub: one link any AI can fetch as context.

        Returns the hub page URL (HTML for people, markdown for AI fetchers) and the raw markdown
        index URL. Use it when the user wants to share their memory with another AI or person.
        """
        cfg = mw.config()
        slug = mw.hub(cfg, hub)
        data, base = mw.get_hub(cfg, slug)
        url = data.get("url") or f"{base}/hub/{seg(slug)}"
        raw = f"{url.split('/hub/', 1)[0]}/raw/hub/{seg(slug)}" if "/hub/" in url else f"{base}/raw/hub/{seg(slug)}"
        out = {"hub": slug, "url": url, "raw_url": raw, "docs": len(data.get("docs") or []),
               "bundles": len(data.get("bundles") or [])}
        return _result(f"Hub URL: {url}\nMarkdown index: {raw}\n({out['docs']} page(s), {out['bundles']} bundle(s))", out)

    # ---- create_bundle -------------------------------------------------------------------

    @server.tool(
        title="Create a Memory.Wiki bundle",
        annotations=ToolAnnotations(title="Create a Memory.Wiki bundle", read_only_hint=False,
                                    destructive_hint=False, idempotent_hint=False, open_world_hint=False),
    )
    @_tool_errors
    def create_bundle(
        title: Annotated[str, Field(min_length=1, max_length=500, description="The bundle's topic, as a title.")],
        doc_ids: Annotated[list[str], Field(min_length=1, description=(
            "Doc ids (or doc URLs) in reading order; every doc must belong to the hub."))],
        description: Annotated[str | None, Field(
            max_length=5000, description="What the bundle covers and who it is for (helps recall find it).")] = None,
        hub: HubArg = None,
        ctx: Context = None,  # type: ignore[assignment]  # given by the SDK
    ) -> CallToolResult:
        """Group existing pages into a bundle: a topic with a reading order, at one URL.

        Use when the user asks to collect related pages (find them with recall or list_docs
        first). Needs the hub owner token from the user's config. Returns the bundle's url and id.
        """
        mw.require_write_token(ctx)
        if not title.strip():
            raise ToolError("the title is empty")
        cfg = mw.config()
        slug = mw.hub(cfg, hub)
        ids = [doc_id_from(d) for d in doc_ids]
        cred = cfg.hub_credential(slug)
        body = {"hub": slug, "title": title.strip(), "description": description or "", "doc_ids": ids}
        with mw.client(cfg) as client:
            try:
                data = client.create_bundle(body, cred.token)
            except ApiError as exc:
                raise explain_hub_refusal(exc, cred, slug) from None
        out = {"id": data.get("id"), "url": data.get("url"), "hub": slug, "doc_ids": ids}
        return _result(f"Bundle created: {out['url']}\nid: {out['id']}  ({len(ids)} page(s))", out)

    # ---- curation: related, digest, suggest_bundles --------------------------------------

    @server.tool(
        title="Related Memory.Wiki pages",
        annotations=ToolAnnotations(title="Related Memory.Wiki pages", read_only_hint=True, open_world_hint=False),
    )
    @_tool_errors
    def related(
        doc: Annotated[str, Field(min_length=1, description="The page's id or URL.")],
        k: Annotated[int, Field(ge=1, le=50, description="How many related pages (1-50).")] = 5,
    ) -> CallToolResult:
        """List the public pages of a page's hub that are related to it.

        Nearest in meaning first (by vector), else the pages that share most of its concepts.
        Each result has a title, url, and why it is related (`similarity` or `shared_concepts`).
        Use it to widen context around a page found with recall or read_doc.
        """
        cfg = mw.config()
        doc_id = doc_id_from(doc)
        with mw.client(cfg) as client:
            data = client.related(doc_id, k, token=cfg.doc_token(doc_id))
        results = data.get("results") or []
        lines = [f"{len(results)} page(s) related to {doc_id}:"]
        for r in results:
            why = (f"shares {', '.join(r['shared_concepts'])}" if r.get("shared_concepts")
                   else f"similarity {r.get('similarity')}")
            lines.append(f"- {r.get('title')} — {r.get('url')} ({why})")
        if not results:
            lines.append("(none: no other public page of the hub is close)")
        return _result("\n".join(lines) + "\n", data)

    @server.tool(
        title="Memory.Wiki concept digest",
        annotations=ToolAnnotations(title="Memory.Wiki concept digest", read_only_hint=True, open_world_hint=False),
    )
    @_tool_errors
    def digest(
        hub: HubArg = None,
        compact: Annotated[bool, Field(description="true: the form that fits 2,000 tokens (page ids, short glosses).")] = True,
    ) -> CallToolResult:
        """Get the hub's concept digest: every concept the user's pages discuss, its kind, what it
        is, and which pages discuss it (with URLs).

        One call gives an overview of everything in the hub; then read_doc or recall for details.
        """
        cfg = mw.config()
        slug = mw.hub(cfg, hub)
        with mw.client(cfg) as client:
            text = client.digest_markdown(slug, compact=compact, token=cfg.hub_token(slug))
        return _result(text, {"hub": slug, "compact": compact, "markdown": text})

    @server.tool(
        title="Suggest Memory.Wiki bundles",
        annotations=ToolAnnotations(title="Suggest Memory.Wiki bundles", read_only_hint=True, open_world_hint=False),
    )
    @_tool_errors
    def suggest_bundles(
        intent: Annotated[str | None, Field(max_length=500, description=(
            "A topic: returns the hub's pages on it in a reading order, each with why it belongs. "
            "Omit to get the groups of related pages the hub itself suggests."))] = None,
        k: Annotated[int, Field(ge=2, le=20, description="With intent: how many pages.")] = 8,
        hub: HubArg = None,
    ) -> CallToolResult:
        """Suggest bundles (reading lists) from the user's pages.

        Without `intent`: the groups of related pages the hub suggests (title, description, pages).
        With `intent`: the pages on that topic in a reading order, each with a line on why.
        To make one a bundle, call create_bundle with its doc ids (ask the user first).
        """
        cfg = mw.config()
        slug = mw.hub(cfg, hub)
        with mw.client(cfg) as client:
            if intent and intent.strip():
                data = client.suggest_topic(slug, intent.strip(), k, token=cfg.hub_token(slug))
                lines = [f'Pages on "{intent.strip()}" in reading order:']
                lines += [f"{i}. {d.get('title')} — {d.get('url')} (id: {d.get('id')})\n   {d.get('why')}"
                          for i, d in enumerate(data.get("docs") or [], 1)]
            else:
                data = client.suggestions(slug, token=cfg.hub_token(slug))
                lines = [f'Suggested bundles in hub "{slug}":']
                for s in data.get("suggestions") or []:
                    lines.append(f"- {s.get('title')} (suggestion id: {s.get('id')}): {s.get('description')}")
                    lines += [f"    {d.get('title')} — {d.get('url')} (id: {d.get('id')})" for d in s.get("docs") or []]
        if len(lines) == 1:
            lines.append("(none yet)")
        return _result("\n".join(lines) + "\n", data)

    # ---- resources -----------------------------------------------------------------------

    @server.resource(
        "memorywiki://hub",
        name="default-hub",
        title="Memory.Wiki: default hub index",
        description="The markdown index of the user's default hub: its bundles and pages with URLs.",
        mime_type="text/markdown",
    )
    @_resource_errors
    def default_hub_resource() -> str:
        cfg = mw.config()
        return mw.raw_hub(mw.hub(cfg, None))  # type: ignore[arg-type]

    @server.resource(
        "memorywiki://hub/{slug}",
        name="hub",
        title="Memory.Wiki hub index",
        description="A hub's markdown index (GET /raw/hub/<slug>): bundles and pages with their URLs.",
        mime_type="text/markdown",
    )
    @_resource_errors
    def hub_resource(slug: str) -> str:
        return mw.raw_hub(slug)

    @server.resource(
        "memorywiki://doc/{doc_id}",
        name="doc",
        title="Memory.Wiki page",
        description="One page as markdown with front matter (GET /raw/<id>).",
        mime_type="text/markdown",
    )
    @_resource_errors
    def doc_resource(doc_id: str) -> str:
        return mw.raw_doc(doc_id)

    return server


def http_security(port: int) -> TransportSecuritySettings:
    """Against DNS rebinding: only requests to this loopback port by one of its own names, and
    only from pages of those origins when a browser sends an Origin."""
    hosts = [f"127.0.0.1:{port}", f"localhost:{port}", f"[::1]:{port}"]
    return TransportSecuritySettings(enable_dns_rebinding_protection=True, allowed_hosts=hosts,
                                     allowed_origins=[f"http://{host}" for host in hosts])


def new_write_token() -> str:
    return secrets.token_urlsafe(32)


def run(server_url: str | None = None, hub: str | None = None, http: bool = False, port: int = 8765,
        path: str = "/mcp", log_level: str = "WARNING", write_token: str | None = None) -> None:
    """Serve over stdio (default) or streamable HTTP on 127.0.0.1:<port><path>, where the write
    tools need `write_token` (made up when not given)."""
    if not http:
        build_server(server_url=server_url, hub=hub, log_level=log_level).run()
        return
    server = build_server(server_url=server_url, hub=hub, log_level=log_level,
                          write_token=write_token or new_write_token())
    server.run(transport="streamable-http", host="127.0.0.1", port=port, streamable_http_path=path,
               transport_security=http_security(port))
