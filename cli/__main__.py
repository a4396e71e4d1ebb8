"""`python -m memorywiki.cli ...`: the same as the `memorywiki` command (what an MCP client
runs when no console script is installed)."""

from .main import app

app(prog_name="memorywiki")
