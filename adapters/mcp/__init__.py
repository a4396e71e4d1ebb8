"""The Memory.Wiki MCP server (server.py), a client of the HTTP contract through
memorywiki.client; started by `memorywiki mcp` (or `python -m memorywiki.cli mcp`)."""
