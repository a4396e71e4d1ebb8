"""What every command shares: the per-invocation state (config, server URL) and common options."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Annotated

import typer
from memorywiki.client import Config
from memorywiki.client.operations import Wiki
from memorywiki.client.version import package_version

from . import output

CONTEXT = {"help_option_names": ["-h", "--help"]}


@dataclass
class State:
    server_flag: str | None = None
    _config: Config | None = field(default=None, repr=False)

    @property
    def config(self) -> Config:
        if self._config is None:
            self._config = Config.load()
        return self._config

    def wiki(self, server: str | None = None) -> Wiki:
        """The operations' context for one command: the config and a client of the server."""
        return Wiki.open(
            self.config, server or self.server_flag, source="cli", user_agent=f"memorywiki-cli/{package_version()}"
        )


def state(ctx: typer.Context) -> State:
    root = ctx.find_root()
    if not isinstance(root.obj, State):
        root.obj = State()
    return root.obj


ServerOpt = Annotated[
    str | None,
    typer.Option(
        "--url",
        "--server",
        help="Server URL (default: $MEMORYWIKI_URL, the config file's `server`, or http://127.0.0.1:8000).",
        show_default=False,
    ),
]
HubOpt = Annotated[str | None, typer.Option("--hub", help="Hub slug (default: the config's default hub).")]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print the raw JSON response.")]


def warn_unsaved(config_warning: str | None, what: str) -> None:
    """The command's work is done but the config could not be saved: warn, saying what to keep
    by hand, instead of failing."""
    if config_warning:
        output.note(f"warning: {config_warning}" + (f"; {what}" if what else ""))
