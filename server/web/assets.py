"""The stylesheet and the small scripts under static/, served with long-lived cache headers.

Every URL carries the file's content hash (`/static/editor.js?v=…`), so a new release is
fetched at once and an unchanged file never is. The stylesheet is static/site.css plus the
code colours of the installed Pygments (light, and dark under prefers-color-scheme), so the
classes the renderer emits and their colours always come from the same version.
"""

from __future__ import annotations

import hashlib
from functools import lru_cache
from pathlib import Path

from pygments.formatters import HtmlFormatter
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import Scope

from .openapi import TEXT, operation

STATIC = Path(__file__).parents[1] / "static"
CACHE = "public, max-age=31536000, immutable"


@lru_cache(maxsize=1)
def stylesheet() -> str:
    light: str = HtmlFormatter(style="default").get_style_defs(".hl")  # type: ignore[no-untyped-call]
    dark: str = HtmlFormatter(style="monokai").get_style_defs(".hl")  # type: ignore[no-untyped-call]
    return (
        (STATIC / "site.css").read_text(encoding="utf-8")
        + "\n/* code: Pygments 'default' */\n"
        + light
        + "\n@media (prefers-color-scheme: dark) {\n"
        + dark
        + "\n}\n"
    )


@lru_cache(maxsize=32)
def _version(name: str) -> str:
    data = stylesheet().encode() if name == "site.css" else (STATIC / name).read_bytes()
    return hashlib.sha256(data).hexdigest()[:12]


def asset_url(name: str) -> str:
    """The URL of a static file, versioned by its content."""
    return f"/static/{name}?v={_version(name)}"


@operation(
    "The stylesheet (its URL carries a content hash: cached for a year)",
    tag="assets",
    responses={200: {"description": "CSS", "content": {"text/css": {"schema": TEXT}}}},
)
async def stylesheet_route(request: Request) -> Response:
    return Response(stylesheet(), media_type="text/css; charset=utf-8", headers={"Cache-Control": CACHE})


class _Static(StaticFiles):
    async def get_response(self, path: str, scope: Scope) -> Response:
        response = await super().get_response(path, scope)
        if response.status_code == 200:
            response.headers["Cache-Control"] = CACHE
        return response


routes = [
    Route("/static/site.css", stylesheet_route, methods=["GET"]),
    Mount("/static", app=_Static(directory=str(STATIC)), name="static"),
]
