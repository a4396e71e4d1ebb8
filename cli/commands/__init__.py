"""One module per command group; each has `register(app)` (called by cli/main.py)."""
