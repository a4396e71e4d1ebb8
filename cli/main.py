"""The `memorywiki` command: a thin client of the Memory.Wiki HTTP contract (plus `serve`/`worker`).

Errors are one line on stderr (``error: ...``) with exit code 1, never a traceback
(set MEMORYWIKI_DEBUG=1 to see one).
"""

from __future__ import annotations

import contextlib
import errno
import importlib
import mimetypes
import os
import pkgutil
import re
import socket
import sys
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import Annotated, Any, Optional

import typer
import typer.core
from typer.exceptions import Abort, Exit, TyperException

from . import output
from .client import Client, access_from, doc_id_from
from .config import Config
from .errors import APIError, CLIError
from .sections import headings, replace_section, strip_pulled_front_matter

# ---------------------------------------------------------------------------------------
# error handling: one group class catches everything a command raises
# ---------------------------------------------------------------------------------------


def _debug() -> bool:
    return os.environ.get("MEMORYWIKI_DEBUG", "").lower() not in ("", "0", "false", "no")


class _Group(typer.core.TyperGroup):
    """Root group: turns CLIError (and any unexpected exception) into ``error: ...``, exit 1."""

    def invoke(self, ctx):  # type: ignore[override]
        try:
            return super().invoke(ctx)
        except (TyperException, Exit, Abort, SystemExit, KeyboardInterrupt, EOFError):
            raise
        except CLIError as exc:
            output.error(exc.message)
            raise Exit(1) from None
        except Exception as exc:  # never a traceback for the user
            if _debug():
                raise
            output.error(f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__)
            raise Exit(1) from None


class _DefaultShowGroup(typer.core.TyperGroup):
    """`memorywiki hub [SLUG]` means `memorywiki hub show [SLUG]`."""

    default_command = "show"

    def parse_args(self, ctx, args):  # type: ignore[override]
        if not args or (args[0] not in self.commands and args[0] not in ("--help", "-h")):
            args = [self.default_command, *args]
        return super().parse_args(ctx, args)


CONTEXT = {"help_option_names": ["-h", "--help"]}

app = typer.Typer(
    name="memorywiki",
    cls=_Group,
    help="Memory.Wiki: your AI memory as markdown pages at permanent URLs, hubs, bundles and recall.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    context_settings=CONTEXT,
    rich_markup_mode=None,
)
hub_app = typer.Typer(
    cls=_DefaultShowGroup,
    help="Create and show hubs (`memorywiki hub [SLUG]` shows one).",
    context_settings=CONTEXT,
    rich_markup_mode=None,
)
bundle_app = typer.Typer(
    help="Curated bundles of docs (a topic with a reading order).",
    no_args_is_help=True,
    context_settings=CONTEXT,
    rich_markup_mode=None,
)
app.add_typer(hub_app, name="hub")
app.add_typer(bundle_app, name="bundle")


@dataclass
class State:
    server_flag: str | None = None
    _config: Config | None = field(default=None, repr=False)

    @property
    def config(self) -> Config:
        if self._config is None:
            self._config = Config.load()
        return self._config

    def client(self, server: str | None = None) -> Client:
        return Client(self.config.server_url(server or self.server_flag))


def _state(ctx: typer.Context) -> State:
    root = ctx.find_root()
    if not isinstance(root.obj, State):
        root.obj = State()
    return root.obj


def _version(value: bool) -> None:
    if value:
        from importlib.metadata import PackageNotFoundError, version

        try:
            v = version("memorywiki")
        except PackageNotFoundError:
            v = "unknown"
        sys.stdout.write(f"memorywiki {v}\n")
        raise Exit(0)


ServerOpt = Annotated[
    Optional[str],
    typer.Option(
        "--url",
        "--server",
        help="Server URL (default: $MEMORYWIKI_URL, the config file's `server`, or http://127.0.0.1:8000).",
        show_default=False,
    ),
]
HubOpt = Annotated[Optional[str], typer.Option("--hub", help="Hub slug (default: the config's default hub).")]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print the raw JSON response.")]


@app.callback()
def _main(
    ctx: typer.Context,
    url: ServerOpt = None,
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Show the version and exit.")
    ] = False,
) -> None:
    """Memory.Wiki: your AI memory as markdown pages at permanent URLs, hubs, bundles and recall.

    Configuration: ~/.config/memorywiki/config.toml (or $MEMORYWIKI_CONFIG); env MEMORYWIKI_URL,
    MEMORYWIKI_HUB and MEMORYWIKI_TOKEN override it; flags override both.
    """
    ctx.obj = State(server_flag=url)


# ---------------------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------------------


def _stdin_is_tty() -> bool:
    try:
        return sys.stdin is None or sys.stdin.isatty()
    except (ValueError, AttributeError):
        return True


def _read_stdin() -> str:
    if sys.stdin is None:
        return ""
    try:
        return sys.stdin.read()
    except UnicodeDecodeError:
        raise CLIError("stdin is not UTF-8 text") from None


def _read_text_file(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise CLIError(f"no such file: {path}") from None
    except IsADirectoryError:
        raise CLIError(f"{path} is a directory") from None
    except UnicodeDecodeError:
        raise CLIError(f"{path} is not UTF-8 text") from None
    except OSError as exc:
        raise CLIError(f"cannot read {path}: {exc.strerror or exc}") from None


def _read_body(file: str | None) -> str | None:
    """The text of FILE, of stdin for `-` (or no FILE with piped stdin); None if there is none."""
    if file == "-":
        return _read_stdin()
    if file is None:
        return None if _stdin_is_tty() else _read_stdin()
    return _read_text_file(Path(file).expanduser())


BINARY_KINDS = {
    ".pdf": "application/pdf",
    ".docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
    ".pptx": "application/vnd.openxmlformats-officedocument.presentationml.presentation",
    ".html": "text/html",
    ".htm": "text/html",
    ".vtt": "text/vtt",
    ".srt": "application/x-subrip",
}


def _first_h1(markdown: str) -> str | None:
    """The text of the doc's first top-level `# ` heading (code fences do not count)."""
    for h in headings(markdown):
        if h.level == 1 and h.text.strip():
            return h.text.strip()
    return None


def _save_config(cfg: Config, what: str) -> None:
    try:
        cfg.save()
    except CLIError as exc:
        output.note(f"warning: {exc.message}" + (f"; {what}" if what else ""))


def _auth_hint(exc: APIError, cfg: Config, has_token: bool) -> CLIError:
    if exc.status in (401, 403) and not has_token:
        return CLIError(f"{exc.message} (no token for this in {cfg.path}; set MEMORYWIKI_TOKEN)")
    return exc


# ---------------------------------------------------------------------------------------
# serve / worker
# ---------------------------------------------------------------------------------------


def _check_port_free(host: str, port: int) -> None:
    """Fail fast (before starting PostgreSQL) when the port is taken."""
    if port == 0:
        return
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except socket.gaierror as exc:
        raise CLIError(f"cannot resolve host {host!r}: {exc.strerror or exc}") from None
    family, _, _, _, addr = infos[0]
    with socket.socket(family, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind(addr)
        except OSError as exc:
            if exc.errno == errno.EADDRINUSE:
                raise CLIError(
                    f"port {port} on {host} is already in use (is Memory.Wiki already running? "
                    f"try `memorywiki serve --port {port + 1}`)"
                ) from None
            raise CLIError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None


@app.command()
def serve(
    host: Annotated[str, typer.Option(help="Interface to bind.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(min=0, max=65535, help="Port to listen on.")] = 8000,
    data_dir: Annotated[
        Optional[Path], typer.Option("--data-dir", help="Where the embedded database lives (default: user data dir).")
    ] = None,
) -> None:
    """Run the Memory.Wiki server (embedded PostgreSQL unless DATABASE_URL is set) until Ctrl-C."""
    _check_port_free(host, port)
    try:
        from memorywiki.server.app import run_server
    except ImportError as exc:
        raise CLIError(f"the server cannot start: {exc}") from None
    try:
        run_server(host=host, port=port, data_dir=data_dir)
    except KeyboardInterrupt:
        pass


@app.command()
def worker(
    data_dir: Annotated[
        Optional[Path], typer.Option("--data-dir", help="Where the embedded database lives (default: user data dir).")
    ] = None,
) -> None:
    """Run an indexing worker in this process (for MEMORYWIKI_WORKER=external deployments)."""
    try:
        from memorywiki.server.worker import run_worker
    except ImportError as exc:
        raise CLIError(f"the worker cannot start: {exc}") from None
    try:
        run_worker(data_dir=data_dir)
    except KeyboardInterrupt:
        pass


# ---------------------------------------------------------------------------------------
# config
# ---------------------------------------------------------------------------------------


@app.command("config")
def config_cmd(
    ctx: typer.Context,
    set_server: Annotated[Optional[str], typer.Option("--set-server", help="Store the default server URL.")] = None,
    set_hub: Annotated[Optional[str], typer.Option("--set-hub", help="Store the default hub slug.")] = None,
) -> None:
    """Show the config file's location and effective settings (tokens hidden), or change defaults."""
    state = _state(ctx)
    cfg = state.config
    if set_server is not None or set_hub is not None:
        if set_server is not None:
            cfg.data["server"] = set_server.strip().rstrip("/")
        if set_hub is not None:
            cfg.data["hub"] = set_hub.strip()
        cfg.save()
    out = sys.stdout
    out.write(f"config: {cfg.path}{'' if cfg.path.exists() else ' (not created yet)'}\n")
    out.write(f"server: {cfg.server_url(state.server_flag)}\n")
    out.write(f"hub: {cfg.default_hub() or '-'}\n")
    hubs = ", ".join(sorted(cfg.hubs)) or "-"
    out.write(f"hubs with owner tokens: {hubs}\n")
    out.write(f"docs with edit tokens: {sum(1 for d in cfg.docs.values() if isinstance(d, dict) and d.get('edit_token'))}\n")
    if os.environ.get("MEMORYWIKI_TOKEN"):
        out.write("token: from $MEMORYWIKI_TOKEN\n")


# ---------------------------------------------------------------------------------------
# hubs
# ---------------------------------------------------------------------------------------


@hub_app.command("create")
def hub_create(
    ctx: typer.Context,
    slug: Annotated[str, typer.Argument(metavar="SLUG", help="The hub's slug, as in /hub/<slug>.")],
    url: ServerOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Claim a hub; its owner token is stored in the config file (it becomes the default hub if there is none)."""
    state = _state(ctx)
    cfg = state.config
    with state.client(url) as client:
        try:
            data = client.create_hub(slug)
        except APIError as exc:
            if exc.status == 409:
                raise CLIError(f"hub taken: {slug!r} already belongs to someone") from None
            raise
    token = data.get("owner_token")
    hub_slug = data.get("slug") or slug
    became_default = False
    if token:
        became_default = cfg.remember_hub(hub_slug, token, data.get("url"))
        _save_config(cfg, f"keep this owner token: {token}")
    if as_json:
        output.print_json(data)
    else:
        sys.stdout.write(f"{data.get('url') or hub_slug}\n")
        output.note(f"owner token saved in {cfg.path}" + (f"; {hub_slug} is now the default hub" if became_default else ""))


def _get_hub(state: State, slug: str | None, server: str | None) -> dict:
    cfg = state.config
    hub = cfg.require_hub(slug)
    with state.client(server) as client:
        try:
            return client.get_hub(hub, token=cfg.hub_token(hub))
        except APIError as exc:
            if exc.status == 404:
                raise CLIError(f"no hub {hub!r} on {client.base_url}" + (f": {exc.message}" if exc.message else "")) from None
            raise


@hub_app.command("show")
def hub_show(
    ctx: typer.Context,
    slug: Annotated[Optional[str], typer.Argument(metavar="SLUG", help="Hub slug (default: the config's default hub).")] = None,
    url: ServerOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Show a hub: its URL, docs and bundles."""
    data = _get_hub(_state(ctx), slug, url)
    if as_json:
        output.print_json(data)
    else:
        output.render_hub(data)


@app.command("list")
def list_cmd(
    ctx: typer.Context,
    hub: HubOpt = None,
    url: ServerOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """List a hub's docs, one per line: id, title, url (tab-separated)."""
    data = _get_hub(_state(ctx), hub, url)
    if as_json:
        output.print_json(data.get("docs") or [])
    else:
        output.render_doc_lines(data)


# ---------------------------------------------------------------------------------------
# capture
# ---------------------------------------------------------------------------------------


def _known_agents() -> list[str]:
    try:
        from memorywiki.adapters.common import TOOLS

        return list(TOOLS)
    except ImportError:
        pass
    try:
        import memorywiki.adapters as adapters
    except ImportError:
        return []
    return sorted(m.name.replace("_", "-") for m in pkgutil.iter_modules(adapters.__path__) if m.ispkg and m.name != "mcp")


def _agent_reader(tool: str) -> tuple[str, Any]:
    """(canonical tool name, reader module) for ``--agent``: the adapters' registry (with its
    aliases: claude, cc, codex-cli, ...) first, else ``memorywiki.adapters.<tool>.reader``."""
    try:
        from memorywiki.adapters.common import normalize_tool
    except ImportError:
        normalize_tool = None
    name = tool.strip().lower()
    if normalize_tool is not None:
        try:
            name = normalize_tool(name)
        except ValueError:
            pass
    package = name.replace("-", "_")
    if not re.fullmatch(r"[a-z][a-z0-9_]*", package):
        raise CLIError(f"unknown agent {tool!r}")
    module = f"memorywiki.adapters.{package}.reader"
    try:
        return name, importlib.import_module(module)
    except ModuleNotFoundError as exc:
        if exc.name and (module.startswith(exc.name) or exc.name.startswith(module)):
            known = ", ".join(_known_agents()) or "none installed"
            raise CLIError(f"no session reader for agent {tool!r} (known: {known})") from None
        raise CLIError(f"the {tool} reader needs a missing module: {exc.name}") from None


def _read_agent_session(tool: str, session_id: str | None) -> Any:
    """Find and read an agent session: ``reader.find_session(session_id, cwd=, home=)`` then
    ``reader.read_session(path)`` (aider also takes the session id: a block timestamp)."""
    name, reader = _agent_reader(tool)
    try:
        path = reader.find_session(session_id, cwd=Path.cwd(), home=Path.home())
    except (LookupError, FileNotFoundError, ValueError) as exc:
        raise CLIError(str(exc) or f"no {tool} session found") from None
    if not path:
        where = f"with id {session_id}" if session_id else f"for {Path.cwd()}"
        raise CLIError(f"no {name} session found {where}")
    try:
        if name == "aider" and session_id:
            return reader.read_session(path, session_id)
        return reader.read_session(path)
    except (OSError, ValueError, LookupError) as exc:
        raise CLIError(f"cannot read {name} session {path}: {exc}") from None


@contextlib.contextmanager
def _capture_errors(client: Client, cfg: Config, token: str | None):
    try:
        yield
    except APIError as exc:
        if exc.status in (404, 405) and exc.code in (None, "not_found") and exc.message in ("Not Found", "Method Not Allowed"):
            raise CLIError(f"the server at {client.base_url} cannot capture this kind of input yet (HTTP {exc.status})") from None
        raise _auth_hint(exc, cfg, bool(token)) from None


def _remember_capture(cfg: Config, data: dict, hub: str | None) -> None:
    doc_id = data.get("id")
    if doc_id is None:
        return
    token = data.get("edit_token")
    cfg.remember_doc(str(doc_id), token, data.get("url"), hub)
    _save_config(cfg, f"keep this edit token for doc {doc_id}: {token}" if token else "")
    if data.get("status") in ("updated", "unchanged"):
        output.note(f"{data['status']}: this was captured before (doc {doc_id})")


@app.command()
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
        Optional[str], typer.Option("--agent", help="Capture a coding-agent session: claude-code, cursor, codex, aider.")
    ] = None,
    session: Annotated[Optional[str], typer.Option("--session", help="With --agent: the session id (default: latest for this dir).")] = None,
    server: Annotated[Optional[str], typer.Option("--server", help="Server URL (overrides $MEMORYWIKI_URL and the config).")] = None,
    as_json: JsonOpt = False,
) -> None:
    """Save markdown as a page at a permanent URL; prints only the URL (so it pipes)."""
    state = _state(ctx)
    cfg = state.config
    hub_slug = cfg.resolve_hub(hub)
    token = cfg.hub_token(hub_slug) if hub_slug else None
    sources = sum(1 for x in (page_url, agent) if x) + (1 if file else 0)
    if sources > 1:
        raise CLIError("give only one of FILE, --url or --agent")

    with state.client(server) as client, _capture_errors(client, cfg, token):
        if page_url:
            req: dict[str, Any] = {"url": page_url, "title": title, "hub": hub_slug}
            if source:
                req["source"] = source
            if draft:
                req["is_draft"] = True  # never silently publish what was meant to be private
            data = client.capture_url({k: v for k, v in req.items() if v is not None}, token)
        elif file and file != "-" and Path(file).suffix.lower() in BINARY_KINDS:
            path = Path(file).expanduser()
            try:
                content = path.read_bytes()
            except FileNotFoundError:
                raise CLIError(f"no such file: {path}") from None
            except OSError as exc:
                raise CLIError(f"cannot read {path}: {exc.strerror or exc}") from None
            if not content:
                raise CLIError(f"{path} is empty")
            mime = BINARY_KINDS.get(path.suffix.lower()) or mimetypes.guess_type(path.name)[0] or "application/octet-stream"
            fields = {"title": title, "hub": hub_slug}  # no title: the server takes it from the file
            if source:
                fields["source"] = source
            if draft:
                fields["is_draft"] = "true"
            data = client.capture_file(path.name, content, mime, fields, token)
        else:
            body: dict[str, Any]
            if agent:
                s = _read_agent_session(agent, session)
                markdown = getattr(s, "markdown", "") or ""
                tool_name = getattr(s, "tool", None) or agent
                sid = getattr(s, "session_id", None) or session
                cwd = getattr(s, "cwd", None)
                meta = {
                    "tool": tool_name,
                    "session_id": sid,
                    "cwd": str(cwd) if cwd is not None else None,
                    "git_branch": getattr(s, "git_branch", None),
                }
                if getattr(s, "is_empty", False) or not markdown.strip():
                    raise CLIError(f"the {tool_name} session has nothing to capture yet")
                default_title = (
                    (getattr(s, "title", None) or "").strip()
                    or _first_h1(markdown)
                    or f"{tool_name} session {str(sid or '')[:8]}".strip()
                )
                body = {"meta": meta}
                src = source or tool_name
            else:
                text = _read_body(file)
                if text is None:
                    raise CLIError("nothing to capture: give a FILE, pipe markdown on stdin, --url or --agent")
                markdown = text
                default_title = _first_h1(markdown) or (Path(file).stem if file and file != "-" else None)
                body = {}
                src = source or "cli"
            if not markdown.strip():
                raise CLIError("empty body: nothing to capture")
            final_title = (title or default_title or "").strip()
            if not final_title:
                raise CLIError("--title is required (the text has no `# ` heading to take it from)")
            body.update(
                {"title": final_title, "markdown": markdown, "hub": hub_slug, "source": src, "is_draft": draft}
            )
            data = client.create_doc(body, token)

    _remember_capture(cfg, data, hub_slug)
    if as_json:
        output.print_json(data)
    else:
        sys.stdout.write(f"{data.get('url') or data.get('id')}\n")


# ---------------------------------------------------------------------------------------
# recall
# ---------------------------------------------------------------------------------------


class Level(str, Enum):
    chunk = "chunk"
    doc = "doc"
    bundle = "bundle"


@app.command()
def recall(
    ctx: typer.Context,
    question: Annotated[str, typer.Argument(metavar="QUESTION", help="What you want to know.")],
    hub: HubOpt = None,
    k: Annotated[int, typer.Option("--k", "-k", help="How many results.")] = 5,
    level: Annotated[Level, typer.Option("--level", help="chunk (passages), doc (whole pages) or bundle.")] = Level.chunk,
    hybrid: Annotated[bool, typer.Option("--hybrid/--no-hybrid", help="Fuse vector and full-text search (chunk level).")] = True,
    url: ServerOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Ask a hub a question; get back the few passages that matter, each with where it came from."""
    if not question.strip():
        raise CLIError("the question is empty")
    state = _state(ctx)
    cfg = state.config
    slug = cfg.require_hub(hub)
    body = {"question": question, "k": k, "level": level.value, "hybrid": hybrid}
    with state.client(url) as client:
        data = client.recall(slug, body, token=cfg.hub_token(slug))
    if as_json:
        output.print_json(data)
    else:
        output.render_recall(data, level.value)


# ---------------------------------------------------------------------------------------
# pull / update / embed / delete
# ---------------------------------------------------------------------------------------


@app.command()
def pull(
    ctx: typer.Context,
    doc: Annotated[str, typer.Argument(metavar="DOC", help="Doc id or doc URL.")],
    body: Annotated[bool, typer.Option("--body", help="Only the markdown body, exactly as stored (no front matter).")] = False,
    as_json: JsonOpt = False,
    url: ServerOpt = None,
) -> None:
    """Print a doc's markdown with its front matter (GET /raw/<id>); --body for the bare body."""
    state = _state(ctx)
    cfg = state.config
    doc_id = doc_id_from(doc)
    token = cfg.doc_token(doc_id)
    access = access_from(doc)
    with state.client(url) as client:
        try:
            if body or as_json:
                data = client.get_doc(doc_id, token=token, access=access)
            else:
                text = client.raw(doc_id, token=token, access=access)
        except APIError as exc:
            raise _auth_hint(exc, cfg, bool(token)) from None
    if as_json:
        output.print_json(data)
        return
    if body:
        text = data.get("markdown") or ""
        sys.stdout.write(text)
        return
    sys.stdout.write(text if text.endswith("\n") or not text else text + "\n")


@app.command()
def update(
    ctx: typer.Context,
    doc: Annotated[str, typer.Argument(metavar="DOC", help="Doc id or doc URL.")],
    file: Annotated[Optional[str], typer.Argument(metavar="FILE", help="New markdown file, or `-` for stdin (default when piped).")] = None,
    section: Annotated[
        Optional[str], typer.Option("--section", help="Replace only this section (by heading text); keep the rest verbatim.")
    ] = None,
    title: Annotated[Optional[str], typer.Option("--title", "-t", help="New title.")] = None,
    url: ServerOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Replace a doc's body (or one --section of it) and/or its title, with its edit token."""
    state = _state(ctx)
    cfg = state.config
    doc_id = doc_id_from(doc)
    token = cfg.doc_token(doc_id)
    text = _read_body(file)
    if text is not None and not text.strip():
        if file is None and title is not None:
            text = None  # empty piped stdin with --title: a rename
        else:
            raise CLIError("empty body: nothing to update (pass --title alone to rename)")
    if text is not None and section is None:
        # `memorywiki pull ID > f.md; edit f.md; memorywiki update ID f.md` round-trips
        text, pulled_title = strip_pulled_front_matter(text, doc_id)
        if title is None:
            title = pulled_title
    if text is None and title is None:
        raise CLIError("nothing to update: give a FILE, pipe markdown on stdin, or --title")
    if section is not None and text is None:
        raise CLIError("--section needs the new section text (FILE or stdin)")

    with state.client(url) as client:
        try:
            body: dict[str, Any] = {}
            if_match = None
            known_url = cfg.doc_entry(doc_id).get("url")
            if section is not None:
                current = client.get_doc(doc_id, token=token)
                body["markdown"] = replace_section(current.get("markdown") or "", section, text or "")
                version = current.get("version")
                if_match = str(version) if version is not None else None
                known_url = current.get("url") or known_url
            elif text is not None:
                body["markdown"] = text
            if title is not None:
                if not title.strip():
                    raise CLIError("the title is empty")
                body["title"] = title
            data = client.patch_doc(doc_id, body, token=token, if_match=if_match)
        except APIError as exc:
            if exc.status in (409, 412):
                raise CLIError("the doc changed since you read it; pull and retry") from None
            raise _auth_hint(exc, cfg, bool(token)) from None
    if as_json:
        output.print_json(data)
    else:
        sys.stdout.write(f"{data.get('url') or known_url or doc_id}\n")


@app.command()
def embed(
    ctx: typer.Context,
    doc: Annotated[str, typer.Argument(metavar="ID", help="Doc id or doc URL (a bundle id or URL with --bundle).")],
    bundle: Annotated[bool, typer.Option("--bundle", help="ID is a bundle: refresh its vector.")] = False,
    url: ServerOpt = None,
) -> None:
    """Index a doc now (skipped when its text has not changed); prints the JSON result."""
    state = _state(ctx)
    cfg = state.config
    doc_id = doc_id_from(doc)
    token = None if bundle else cfg.doc_token(doc_id)
    with state.client(url) as client:
        try:
            data = client.embed_bundle(doc_id) if bundle else client.embed(doc_id, token=token)
        except APIError as exc:
            if exc.code == "embedder_unavailable" or (exc.status == 409 and "embedder" in exc.message):
                raise CLIError(exc.message) from None
            raise _auth_hint(exc, cfg, bool(token)) from None
    output.print_json(data)


@app.command()
def delete(
    ctx: typer.Context,
    doc: Annotated[str, typer.Argument(metavar="DOC", help="Doc id or doc URL.")],
    url: ServerOpt = None,
) -> None:
    """Delete a doc (with its edit token or the hub's owner token)."""
    state = _state(ctx)
    cfg = state.config
    doc_id = doc_id_from(doc)
    token = cfg.doc_token(doc_id)
    with state.client(url) as client:
        try:
            client.delete_doc(doc_id, token=token)
        except APIError as exc:
            raise _auth_hint(exc, cfg, bool(token)) from None
    if cfg.forget_doc(doc_id):
        _save_config(cfg, "the doc is deleted but its entry stays in the config")
    sys.stdout.write(f"deleted {doc_id}\n")


class ExportKind(str, Enum):
    chatgpt = "chatgpt"
    claude = "claude"


@app.command("import")
def import_cmd(
    ctx: typer.Context,
    kind: Annotated[ExportKind, typer.Argument(metavar="KIND", help="chatgpt or claude: whose data export it is.")],
    file: Annotated[Path, typer.Argument(metavar="FILE", help="The export: the .zip you downloaded, or its conversations.json.")],
    hub: HubOpt = None,
    url: ServerOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Import a ChatGPT or Claude data export into a hub, one page per conversation (re-importing updates them)."""
    state = _state(ctx)
    cfg = state.config
    slug = cfg.require_hub(hub)
    path = file.expanduser()
    if not path.is_file():
        raise CLIError(f"no such file: {path}")
    token = cfg.hub_token(slug)
    counts = _import_locally(state, url, kind.value, path, slug, token, quiet=as_json)
    if as_json:
        output.print_json({"hub": slug, "kind": kind.value, **counts})
        return
    summary = ", ".join(f"{counts[k]} {k}" for k in ("created", "updated", "unchanged", "deleted"))
    sys.stdout.write(f"{kind.value} export into hub {slug}: {summary}\n")
    if counts["skipped"]:
        output.note(f"skipped {len(counts['skipped'])} conversation{'s' if len(counts['skipped']) != 1 else ''}"
                    " with nothing to keep (use --json to see which)")


def _import_locally(state: Any, url: str | None, kind: str, path: Path, slug: str, token: str | None,
                    *, quiet: bool) -> dict[str, Any]:
    """Read the export here, streaming, and upsert one page per conversation over HTTP.

    Only conversation text crosses the wire (an export's images stay home), each page is
    keyed by the conversation's id so a re-import updates instead of duplicating, and the
    progress bar counts conversations.
    """
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    from memorywiki.formats import FormatError as CaptureError, count_conversations, iter_chatgpt_export, iter_claude_export

    reader = iter_chatgpt_export if kind == "chatgpt" else iter_claude_export
    skipped: list = []
    counts: dict[str, Any] = {"created": 0, "updated": 0, "unchanged": 0, "deleted": 0}
    try:
        total = count_conversations(path)
        with state.client(url) as client, Progress(
            TextColumn("[bold]importing[/bold]"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(),
            console=output.err_console(), disable=quiet, transient=True,
        ) as progress:
            task = progress.add_task("import", total=total)
            for captured in reader(path, skipped=skipped):
                body = {"hub": slug, "title": (captured.title or "Untitled")[:500], "markdown": captured.markdown,
                        "source": captured.source, "meta": captured.meta, "external_id": captured.external_id}
                try:
                    saved = client.create_doc(body, token)
                except APIError as exc:
                    raise _auth_hint(exc, state.config, bool(token)) from None
                counts[saved.get("status") or "created"] += 1
                progress.advance(task)
    except CaptureError as exc:
        done = sum(counts.values())
        raise CLIError(f"{exc.message} ({done} conversation{'s' if done != 1 else ''} were saved before this)") from None
    counts["skipped"] = skipped
    return counts


# ---------------------------------------------------------------------------------------
# bundles
# ---------------------------------------------------------------------------------------


@bundle_app.command("create")
def bundle_create(
    ctx: typer.Context,
    doc_ids: Annotated[list[str], typer.Argument(metavar="DOC_ID", help="Doc ids (or URLs), in reading order.", show_default=False)],
    title: Annotated[str, typer.Option("--title", "-t", help="The bundle's title.")],
    description: Annotated[Optional[str], typer.Option("--description", "-d", help="What the bundle is about.")] = None,
    hub: HubOpt = None,
    url: ServerOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Make a bundle (topic + reading order) from docs in a hub; prints its URL."""
    state = _state(ctx)
    cfg = state.config
    slug = cfg.require_hub(hub)
    if not title.strip():
        raise CLIError("the title is empty")
    ids = [doc_id_from(d) for d in doc_ids]
    body = {"hub": slug, "title": title, "description": description, "doc_ids": ids}
    token = cfg.hub_token(slug)
    with state.client(url) as client:
        try:
            data = client.create_bundle(body, token)
        except APIError as exc:
            raise _auth_hint(exc, cfg, bool(token)) from None
    if as_json:
        output.print_json(data)
    else:
        sys.stdout.write(f"{data.get('url') or data.get('id')}\n")


# `install`, `uninstall`, `mcp` (cli/integrations.py)
from . import integrations  # noqa: E402

integrations.register(app)


if __name__ == "__main__":  # pragma: no cover
    app()
