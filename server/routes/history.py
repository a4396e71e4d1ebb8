"""The history page: a doc's versions with dates and sizes, a readable diff between any two,
and restore (static/history.js, through POST /api/docs/{id}/restore with the browser's edit
or owner token).

Read like the doc page: without credentials as the public role, where row-level security shows
the versions of a public doc only; with the browser's session (its owner, or a reader a page is
shared with) on the owner pool, where the session is checked for the doc as for its page.
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from ..services import versions
from ..services.versions import MAX_VERSION
from ..web.negotiate import markdown_response, wants_markdown
from ..web.openapi import markdown_page, operation, page_response
from ..web.params import credentials
from ..web.state import app_state
from ..web.templating import saved_by, templates
from ..web.urls import urls
from ..web.validate import query_int


async def _history(request: Request) -> versions.History:
    a = query_int(request, "a", default=None, low=1, high=MAX_VERSION)
    b = query_int(request, "b", default=None, low=1, high=MAX_VERSION)
    return await versions.history(app_state(request), credentials(request), request.path_params["doc_id"], a, b)


_DIFF_QUERY = {
    "a": {"type": "integer", "minimum": 1, "description": "the older version (default: the previous)"},
    "b": {"type": "integer", "minimum": 1, "description": "the newer version (default: the current)"},
}


@operation(
    "A public doc's history: its versions and the diff between two",
    tag="pages",
    page=True,
    errors=(400, 404),
    query=_DIFF_QUERY,
    responses={200: page_response("The history")},
)
async def history_page(request: Request) -> Response:
    if wants_markdown(request):
        return await history_twin(request)
    history = await _history(request)
    return templates.TemplateResponse(
        request,
        "history.html",
        {**history, "twin_url": f"/{history['doc']['id']}/history.md"},
        headers={"Vary": "Accept"},
    )


@operation(
    "A public doc's history as markdown",
    tag="pages",
    page=True,
    errors=(400, 404),
    query=_DIFF_QUERY,
    responses={200: markdown_page("The history")},
)
async def history_twin(request: Request) -> Response:
    h = await _history(request)
    doc = h["doc"]
    out = [
        f"# History of {doc['title']}",
        "",
        f"<{urls(request).doc(doc['id'])}>",
        "",
        "| version | saved | by | bytes | title | action |",
        "|---|---|---|---|---|---|",
    ]
    out += [
        f"| {v['version']} | {v['saved_at'].isoformat()} | {saved_by(v['saved_via'])} | {v['size']} | {v['title']} "
        f"| {v['saved_action']} |"
        for v in h["versions"]
    ]
    out += ["", f"## Changes from version {h['a']} to {h['b']}", "", "```diff", *[line for _, line in h["diff"]], "```"]
    return markdown_response("\n".join(out) + "\n")


routes = [
    Route("/{doc_id}/history.md", history_twin, methods=["GET"]),
    Route("/{doc_id}/history", history_page, methods=["GET"]),
]
