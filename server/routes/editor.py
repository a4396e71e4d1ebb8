"""The editor: /new and /{id}/edit, and the preview it renders through the page renderer.

Saving goes through the docs API from the page's script (static/editor.js), with the edit
token the browser keeps in local storage or a hub's owner token, never a cookie: so no
other site can make a browser save anything here. The page itself shows a public doc's text
without script; a private doc's text is fetched by the script with its token.
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from ..services import docs
from ..web.openapi import TEXT, body_schema, json_response, obj, operation, page_response
from ..web.params import credentials
from ..web.render import page_body, render
from ..web.state import app_state
from ..web.templating import templates
from ..web.validate import get_str, read_json

RENDER_FIELDS = ("markdown",)


RENDERED = obj(
    ["html", "toc"],
    html=TEXT,
    toc={"type": "array", "items": obj(["level", "id", "text"], level={"type": "integer"}, id=TEXT, text=TEXT)},
)


@operation(
    "Render markdown as a page shows it (the editor's preview)",
    errors=(400, 413),
    body=body_schema(["markdown"], markdown={"type": "string"}),
    responses={200: json_response(RENDERED, "The HTML and its table of contents")},
)
async def render_preview(request: Request) -> Response:
    """The HTML a page shows for this markdown (the same renderer, so the preview is exact)."""
    data = await read_json(request, fields=RENDER_FIELDS)
    markdown = get_str(data, "markdown", required=True)
    rendered = await render(markdown)
    return JSONResponse(
        {
            "html": rendered.html,
            "toc": [{"level": lvl, "id": anchor, "text": text} for lvl, anchor, text in rendered.toc],
        }
    )


def _editor(request: Request, headers: dict[str, str] | None = None, **context) -> Response:
    state = app_state(request)
    settings = state.settings
    return templates.TemplateResponse(
        request,
        "editor.html",
        {
            "autosave": settings.autosave_seconds,
            "max_chars": settings.max_body_bytes,
            "mail": state.mail is not None,
            "reader": None,
            **context,
        },
        headers=headers,
    )


@operation(
    "The editor for a new page (?hub=: saved into that hub)",
    tag="pages",
    query={"hub": TEXT},
    responses={200: page_response("The editor")},
)
async def new_page(request: Request) -> Response:
    return _editor(request, doc=None, hub=request.query_params.get("hub", ""), preview="", twin_url=None)


@operation(
    "The editor for a doc (a private one is loaded by the page's script with the browser's token)",
    tag="pages",
    page=True,
    errors=(404,),
    responses={200: page_response("The editor")},
)
async def edit_page(request: Request) -> Response:
    doc = await docs.for_editor(app_state(request), request.path_params["doc_id"], credentials(request))
    if doc.get("reader"):  # signed in as a reader of this page, and nothing here may edit it
        return _editor(
            request,
            doc={"id": doc["id"], "private": True},
            hub="",
            preview="",
            twin_url=None,
            reader=doc["reader"],
            headers={"Cache-Control": "private, no-store"},
        )
    if doc["private"]:
        # the script fetches it with the browser's token; nothing of it is shown here
        return _editor(request, doc={"id": doc["id"], "private": True}, hub="", preview="", twin_url=None)
    body = page_body(doc)
    return _editor(
        request,
        doc={**doc, "body": body},
        hub=doc["hub_slug"] or "",
        preview=(await render(body)).html,
        twin_url=f"/{doc['id']}.md",
    )


routes = [
    Route("/api/render", render_preview, methods=["POST"]),
    Route("/new", new_page, methods=["GET"]),
    Route("/{doc_id}/edit", edit_page, methods=["GET"]),
]
