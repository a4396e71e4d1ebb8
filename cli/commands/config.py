"""`memorywiki config`: where the config file is, what it says, and setting its defaults and tokens;
`memorywiki config --server`: the server's settings as this environment sets them."""

from __future__ import annotations

import os
import sys
from typing import Annotated

import typer
from memorywiki.client import MemoryWikiError, doc_id_from

from .. import output
from ..context import state


def config_cmd(
    ctx: typer.Context,
    set_server: Annotated[str | None, typer.Option("--set-server", help="Store the default server URL.")] = None,
    set_hub: Annotated[str | None, typer.Option("--set-hub", help="Store the default hub slug.")] = None,
    set_token: Annotated[
        str | None,
        typer.Option(
            "--set-token",
            metavar="TOKEN",
            help="Store a token you already hold: a hub's owner token (for --hub, else the default hub) "
            "or, with --doc, a doc's edit token.",
        ),
    ] = None,
    hub: Annotated[str | None, typer.Option("--hub", help="With --set-token: the hub the owner token is for.")] = None,
    doc: Annotated[
        str | None, typer.Option("--doc", help="With --set-token: the doc (id or URL) the edit token is for.")
    ] = None,
    server: Annotated[
        bool,
        typer.Option(
            "--server",
            help="List the server's settings instead: each environment variable `memorywiki serve` "
            "reads, its value here (secrets masked) and its default.",
        ),
    ] = False,
) -> None:
    """Show the config file's location and effective settings (tokens hidden), or change them;
    with --server, the settings the server reads from the environment."""
    if server:
        if set_server is not None or set_hub is not None or set_token is not None or hub or doc:
            raise MemoryWikiError("--server lists the server's settings and takes no other option")
        _server_settings()
        return
    st = state(ctx)
    cfg = st.config
    if (hub or doc) and set_token is None:
        raise MemoryWikiError("--hub and --doc go with --set-token TOKEN")
    if hub and doc:
        raise MemoryWikiError("a token is for a hub (--hub) or for a doc (--doc), not both")
    changed = set_server is not None or set_hub is not None or set_token is not None
    if set_server is not None:
        cfg.data["server"] = set_server.strip().rstrip("/")
    if set_hub is not None:
        cfg.set_default_hub(set_hub.strip())
    if set_token is not None:
        token = set_token.strip()
        if not token:
            raise MemoryWikiError("the token is empty")
        if doc:
            doc_id = doc_id_from(doc)
            cfg.remember_doc(doc_id, token, None, None)
            stored = f"edit token stored for doc {doc_id}"
        else:
            slug = (hub or "").strip() or cfg.default_hub()
            if not slug:
                raise MemoryWikiError("which hub is the token for? pass --hub SLUG (or --doc ID for an edit token)")
            cfg.remember_hub(slug, token, None)
            stored = f"owner token stored for hub {slug}"
    if changed:
        cfg.save()
        if set_token is not None:
            output.note(stored)
    out = sys.stdout
    out.write(f"config: {cfg.path}{'' if cfg.path.exists() else ' (not created yet)'}\n")
    url, origin = cfg.server(st.server_flag)
    out.write(f"server: {url} ({origin})\n")
    out.write(f"hub: {cfg.default_hub() or '-'}\n")
    owned = ", ".join(sorted(s for s, e in cfg.hubs.items() if isinstance(e, dict) and e.get("owner_token"))) or "-"
    out.write(f"hubs with owner tokens: {owned}\n")
    edit_tokens = sum(1 for d in cfg.docs.values() if isinstance(d, dict) and d.get("edit_token"))
    out.write(f"docs with edit tokens: {edit_tokens}\n")
    if os.environ.get("MEMORYWIKI_TOKEN"):
        out.write("token: from $MEMORYWIKI_TOKEN\n")


def register(app: typer.Typer) -> None:
    app.command("config")(config_cmd)


def _server_settings() -> None:
    """The server's settings as this environment sets them; exit 1 when the server would refuse one."""
    try:
        from memorywiki.server.config import settings_listing
    except ImportError as exc:
        raise MemoryWikiError(f"the server is not installed here: {exc}") from None
    rows, error = settings_listing(os.environ)
    width = max(len(name) for _, name, _, _, _ in rows)
    value_width = min(40, max(len("value"), *(len(value) for _, _, value, _, _ in rows)))
    default_width = min(30, max(len(default) for _, _, _, default, _ in rows))
    out = sys.stdout
    out.write(f"{'variable':<{width}}  {'value':<{value_width}}  {'default':<{default_width}}  meaning\n")
    current = None
    for section, name, value, default, meaning in rows:
        if section != current:
            current = section
            out.write(f"\n# {section}\n")
        out.write(f"{name:<{width}}  {value or '-':<{value_width}}  {default or '-':<{default_width}}  {meaning}\n")
    if error:
        raise MemoryWikiError(error)
