"""Jinja2 templates (autoescaped) for the pages people open in a browser."""

from __future__ import annotations

from pathlib import Path

from starlette.templating import Jinja2Templates

templates = Jinja2Templates(directory=str(Path(__file__).parent / "templates"))
