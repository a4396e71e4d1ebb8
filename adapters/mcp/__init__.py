"""Optional MCP server for Memory.Wiki (needs the `mcp` SDK 2.x): `memorywiki mcp`."""

from __future__ import annotations


def build_server(*args, **kwargs):
    from .server import build_server as _build

    return _build(*args, **kwargs)


def run(*args, **kwargs) -> None:
    from .server import run as _run

    _run(*args, **kwargs)


__all__ = ["build_server", "run"]
