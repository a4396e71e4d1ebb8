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

templates = Jinja2Templates(directory=str(Path(__file__).parents[1] / "templates"))
templates.env.globals["csrf_token"] = csrf_token
templates.env.globals["asset"] = asset_url
