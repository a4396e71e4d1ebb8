"""What every operation works with: the config (server, default hub, tokens) and one open client."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass

from ..config import Config
from ..errors import MemoryWikiError
from ..http import Client

# the MCP server runs tools in threads: one config write at a time, each on a fresh read of the
# file, so two captures at once both keep their edit tokens
_CONFIG_LOCK = threading.Lock()


@dataclass
class Wiki:
    config: Config
    client: Client
    source: str = "client"  # the source of what this surface captures, unless told (cli, mcp)
    default_hub: str | None = None  # the surface's own default (`memorywiki mcp --hub`), before the config's

    @classmethod
    def open(
        cls,
        config: Config,
        server_flag: str | None = None,
        *,
        source: str,
        user_agent: str,
        timeout: float = 60.0,
        default_hub: str | None = None,
    ) -> Wiki:
        url, origin = config.server(server_flag)
        client = Client(url, timeout=timeout, user_agent=user_agent, origin=origin)
        return cls(config, client, source, default_hub)

    def __enter__(self) -> Wiki:
        return self

    def __exit__(self, *exc) -> None:
        self.client.close()

    @property
    def base_url(self) -> str:
        return self.client.base_url

    def hub(self, flag: str | None) -> str | None:
        """The hub to act on, if any: the argument, the surface's default, the config's."""
        return self.config.resolve_hub((flag or "").strip() or self.default_hub)

    def require_hub(self, flag: str | None) -> str:
        return self.config.require_hub((flag or "").strip() or self.default_hub)

    def update_config(self, change: Callable[[Config], None]) -> str | None:
        """Apply ``change`` to the config and save it. The work it records is already done, so a
        failure to save is returned (for the caller to warn about), not raised."""
        with _CONFIG_LOCK:
            change(self.config)
            try:
                fresh = Config.load(self.config.path)
                change(fresh)
                fresh.save()
            except MemoryWikiError as exc:
                return exc.message
        return None
