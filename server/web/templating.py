"""Jinja2 templates (autoescaped) for the pages people open in a browser.

Globals: `csrf_token(request)`, the token every form posts as its hidden `csrf_token` field
(server/web/csrf.py), and `asset(name)`, a static file's versioned URL (server/web/assets.py). Pages carry
no inline script or style: the CSP forbids them (server/web/middleware.py).
"""

from __future__ import annotations

from pathlib import Path

from starlette.templating import Jinja2Templates

from .assets import asset_url
from .csrf import csrf_token

SAVED_BY = {"owner": "the hub's owner", "edit_token": "its edit token", "anonymous": "no token"}


def saved_by(via: str | None) -> str:
    """Who saved a version, in words: "member bob" for "member:bob"; "" when it was not recorded."""
    if not via:
        return ""
    kind, _, name = via.partition(":")
    return f"member {name}" if kind == "member" and name else SAVED_BY.get(via, via)


templates = Jinja2Templates(directory=str(Path(__file__).parents[1] / "templates"))
templates.env.globals["csrf_token"] = csrf_token
templates.env.globals["asset"] = asset_url
templates.env.filters["saved_by"] = saved_by
