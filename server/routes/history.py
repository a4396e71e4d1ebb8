"""The history page: a doc's versions with dates and sizes, a readable diff between any two,
and restore (static/history.js, through POST /api/docs/{id}/restore with the browser's edit
or owner token).

Read as the public role, like the doc page: row-level security shows the versions of a public
doc only. A private doc's history is for its editors, through the API or `memorywiki history`.
"""

from __future__ import annotations

import difflib
from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from ..errors import BadRequest, not_found
from ..web.openapi import markdown_page, operation, page_response
from ..web.negotiate import markdown_response, wants_markdown
from ..store import docs as doc_store
from ..store import versions as version_store
from ..web.templating import templates
from ..tokens import looks_like_id
from ..web.validate import query_int
from ..web.state import app_state, doc_url

MAX_VERSION = 2**31 - 1
DIFF_CONTEXT = 3
MAX_DIFF_LINES = 5000  # a diff longer than this is cut, with a note (the twin has the texts)


def _versions(doc: dict[str, Any], rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    current = {"version": doc["version"], "saved_at": doc["updated_at"], "size": len(doc["markdown"].encode()),
               "title": doc["title"], "saved_action": "current", "saved_via": None, "restored_from": None,
               "current": True}
    return [current] + [{**r, "current": False} for r in rows if r["version"] != doc["version"]]


def diff_lines(old: str, new: str) -> tuple[list[tuple[str, str]], bool]:
    """(kind, line) of a unified diff, kind in hunk/add/del/same; and whether it was cut."""
    out: list[tuple[str, str]] = []
    lines = difflib.unified_diff(old.splitlines(), new.splitlines(), lineterm="", n=DIFF_CONTEXT)
    for i, line in enumerate(lines):
        if i < 2:  # the ---/+++ header
            continue
        if len(out) >= MAX_DIFF_LINES:
            return out, True
        kind = "hunk" if line.startswith("@@") else "add" if line.startswith("+") else \
            "del" if line.startswith("-") else "same"
        out.append((kind, line))
    return out, False


async def _text(conn, doc: dict[str, Any], number: int) -> dict[str, Any] | None:
    if number == doc["version"]:
        return {"title": doc["title"], "markdown": doc["markdown"]}
    return await version_store.get_version(conn, doc["id"], number)


async def load_history(request: Request) -> dict[str, Any]:
    """The public doc, its versions (newest first) and the diff between versions ?a= and ?b=
    (default: the previous version and the current one)."""
    doc_id = request.path_params["doc_id"]
    if not looks_like_id(doc_id):
        raise not_found("doc")
    async with app_state(request).db.public.connection() as conn:
        doc = await doc_store.public_doc(conn, doc_id)
        if doc is None:
            raise not_found("doc")
        versions = _versions(doc, await version_store.list_versions(conn, doc_id))
        numbers = [v["version"] for v in versions]
        a = query_int(request, "a", default=numbers[1] if len(numbers) > 1 else doc["version"], low=1, high=MAX_VERSION)
        b = query_int(request, "b", default=doc["version"], low=1, high=MAX_VERSION)
        old, new = await _text(conn, doc, a), await _text(conn, doc, b)
    missing = [n for n, text in ((a, old), (b, new)) if text is None]
    if missing:
        raise BadRequest("unknown_version", f"this page has no version {missing[0]}; its versions: "
                         + ", ".join(map(str, numbers)))
    lines, cut = diff_lines(f"# {old['title']}\n\n{old['markdown']}", f"# {new['title']}\n\n{new['markdown']}")
    return {"doc": doc, "versions": versions, "a": a, "b": b, "diff": lines, "cut": cut}


_DIFF_QUERY = {"a": {"type": "integer", "minimum": 1, "description": "the older version (default: the previous)"},
               "b": {"type": "integer", "minimum": 1, "description": "the newer version (default: the current)"}}


@operation("A public doc's history: its versions and the diff between two", tag="pages", page=True,
           errors=(400, 404), query=_DIFF_QUERY, responses={200: page_response("The history")})
async def history_page(request: Request) -> Response:
    if wants_markdown(request):
        return await history_twin(request)
    history = await load_history(request)
    return templates.TemplateResponse(request, "history.html", {
        **history, "twin_url": f"/{history['doc']['id']}/history.md"}, headers={"Vary": "Accept"})


@operation("A public doc's history as markdown", tag="pages", page=True, errors=(400, 404), query=_DIFF_QUERY,
           responses={200: markdown_page("The history")})
async def history_twin(request: Request) -> Response:
    h = await load_history(request)
    doc = h["doc"]
    out = [f"# History of {doc['title']}", "", f"<{doc_url(request, doc['id'])}>", "",
           "| version | saved | bytes | title | action |", "|---|---|---|---|---|"]
    out += [f"| {v['version']} | {v['saved_at'].isoformat()} | {v['size']} | {v['title']} | {v['saved_action']} |"
            for v in h["versions"]]
    out += ["", f"## Changes from version {h['a']} to {h['b']}", "", "```diff", *[line for _, line in h["diff"]], "```"]
    return markdown_response("\n".join(out) + "\n")


routes = [
    Route("/{doc_id}/history.md", history_twin, methods=["GET"]),
    Route("/{doc_id}/history", history_page, methods=["GET"]),
]
