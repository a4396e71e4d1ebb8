"""The `memorywiki` command: a thin client of the Memory.Wiki HTTP contract (plus `serve`/`worker`).

This module is the root: the app, its global options and the one place errors are turned
into a single line on stderr (``error: ...``) with exit code 1, never a traceback (set
MEMORYWIKI_DEBUG=1 to see one). Each command group lives in its own module under commands/.
"""

from __future__ import annotations

import os
import sys
from typing import Annotated

import typer
import typer.core
from memorywiki.client import MemoryWikiError
from typer.exceptions import Abort, Exit, TyperException

from . import output
from .commands import (
    bundles,
    capture,
    config,
    curation,
    docs,
    export,
    hubs,
    imports,
    install,
    mcp,
    recall,
    server,
    sharing,
)
from .context import CONTEXT, ServerOpt, State, package_version


def _debug() -> bool:
    """MEMORYWIKI_DEBUG, declared with the server's settings (docs/configuration.md); read only
    when a command failed, so no command pays for importing the declarations."""
    from memorywiki.server.config import cli_debug

    return cli_debug(os.environ)


class _Group(typer.core.TyperGroup):
    """Root group: turns MemoryWikiError (and any unexpected exception) into ``error: ...``, exit 1."""

    def invoke(self, ctx):  # type: ignore[override]
        try:
            return super().invoke(ctx)
        except (TyperException, Exit, Abort, SystemExit, KeyboardInterrupt, EOFError):
            raise
        except MemoryWikiError as exc:
            output.error(exc.message)
            raise Exit(1) from None
        except UnicodeEncodeError as exc:
            # Python reads a non-UTF-8 byte of an argument or a file name as a lone surrogate,
            # which no request can carry: say where it is, before anything was sent.
            near = exc.object[max(0, exc.start - 20) : exc.end + 20]
            shown = near.encode("utf-8", "backslashreplace").decode() if isinstance(near, str) else repr(near)
            output.error(
                f"not valid UTF-8 text near '{shown}' (a byte your terminal or a file name did not "
                "encode as UTF-8); nothing was sent"
            )
            raise Exit(1) from None
        except Exception as exc:  # never a traceback for the user
            if _debug():
                raise
            output.error(f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__)
            raise Exit(1) from None


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


def _version(value: bool) -> None:
    if value:
        sys.stdout.write(f"memorywiki {package_version()}\n")
        raise Exit(0)


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


# the order here is the order of `memorywiki --help`
for module in (server, config, hubs, capture, recall, docs, sharing, curation, imports, export, bundles, install, mcp):
    module.register(app)


if __name__ == "__main__":  # pragma: no cover
    app()
