"""`python -m memorywiki.adapters.mcp [--http] [--port N] [--url URL] [--hub SLUG]`."""

from __future__ import annotations

import argparse
import sys


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m memorywiki.adapters.mcp",
                                     description="Memory.Wiki MCP server (stdio by default).")
    parser.add_argument("--http", action="store_true", help="Serve streamable HTTP on 127.0.0.1 instead of stdio.")
    parser.add_argument("--port", type=int, default=8765, help="Port for --http (default 8765).")
    parser.add_argument("--url", "--server", dest="url", default=None, help="Memory.Wiki server URL.")
    parser.add_argument("--hub", default=None, help="Default hub slug.")
    args = parser.parse_args(argv)
    try:
        from .server import run
    except ImportError as exc:
        sys.stderr.write(f"error: the MCP server needs the mcp SDK 2.x (pip install 'mcp>=2,<3'): {exc}\n")
        return 1
    try:
        run(server_url=args.url, hub=args.hub, http=args.http, port=args.port)
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
