"""Bundles: a curated reading order of docs in a hub, embedded as one vector."""

from __future__ import annotations

from typing import Any

from memorywiki.formats.doclinks import markdown_twin
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from ..services import bundles
from ..services.bundles import MAX_DESCRIPTION, MAX_TITLE
from ..services.urls import Urls
from ..web.negotiate import markdown_response, wants_markdown
from ..web.openapi import TEXT, body_schema, json_response, markdown_page, obj, operation, page_response
from ..web.params import credentials
from ..web.render import front_matter, markdown_to_html, member_body
from ..web.schemas import IMPORT_DATES, REDACTED
from ..web.state import app_state
from ..web.templating import templates
from ..web.urls import urls
from ..web.validate import DATE_FIELDS, get_dates, get_str, get_str_list, read_json

CREATE_FIELDS = ("hub", "title", "description", "doc_ids", "external_id", *DATE_FIELDS)
PATCH_FIELDS = ("title", "description", "doc_ids")

_BUNDLE_FIELDS: dict[str, dict[str, Any]] = {
    "title": {"type": "string", "maxLength": 500},
    "description": {"type": ["string", "null"], "maxLength": 5000},
    "doc_ids": {"type": ["array", "null"], "items": TEXT, "description": "docs of the hub, in reading order"},
}
_REDACTED = {**REDACTED, "description": "what was redacted from the title and description (docs/secrets.md)"}
BUNDLE_REF = obj(["id", "url", "redacted"], id=TEXT, url=TEXT, redacted=_REDACTED)
SAVED_BUNDLE = obj(
    ["id", "url", "status", "redacted"],
    id=TEXT,
    url=TEXT,
    status={"enum": ["created", "updated", "unchanged"]},
    redacted=_REDACTED,
)


@operation(
    "Create a bundle: a reading order of a hub's docs (with external_id: create or update)",
    auth=True,
    body=body_schema(
        ["hub", "title"],
        hub={"type": "string", "examples": ["notes"]},
        **_BUNDLE_FIELDS,
        external_id={
            "type": ["string", "null"],
            "maxLength": 300,
            "description": "an importer's id: saving it again updates the same bundle",
        },
        **IMPORT_DATES,
    ),
    errors=(400, 401, 403, 404, 413),
    responses={201: json_response(SAVED_BUNDLE, "Created"), 200: json_response(SAVED_BUNDLE, "Updated")},
)
async def create_bundle(request: Request) -> Response:
    data = await read_json(request, fields=CREATE_FIELDS)
    hub = get_str(data, "hub", required=True)
    title = get_str(data, "title", required=True, max_len=MAX_TITLE, allow_empty=False).strip()
    description = get_str(data, "description", max_len=MAX_DESCRIPTION, default="")
    doc_ids = get_str_list(data, "doc_ids", default=[])
    external_id = (get_str(data, "external_id", max_len=300) or "").strip() or None
    body = await bundles.create(
        app_state(request),
        credentials(request),
        urls(request),
        hub=hub,
        title=title,
        description=description,
        doc_ids=doc_ids,
        external_id=external_id,
        dates=get_dates(data),
    )
    return JSONResponse(body, status_code=201 if body["status"] == "created" else 200)


@operation(
    "Change a bundle's title, description or members",
    auth=True,
    body=body_schema((), **_BUNDLE_FIELDS),
    errors=(400, 401, 403, 404, 413),
    responses={200: json_response(BUNDLE_REF, "Changed")},
)
async def patch_bundle(request: Request) -> Response:
    """Change title, description or members; the bundle alone is re-embedded."""
    data = await read_json(request, fields=PATCH_FIELDS)
    changes = {}
    if "title" in data:
        changes["title"] = get_str(data, "title", required=True, max_len=MAX_TITLE, allow_empty=False).strip()
    if "description" in data:
        changes["description"] = get_str(data, "description", max_len=MAX_DESCRIPTION, default="")
    doc_ids = get_str_list(data, "doc_ids", default=[]) if "doc_ids" in data else None
    return JSONResponse(
        await bundles.edit(
            app_state(request), credentials(request), urls(request), request.path_params["bundle_id"], changes, doc_ids
        )
    )


@operation(
    "Delete a bundle (its hub's owner: owner token, or the owner signed in with the page's CSRF "
    "token); its pages stay as they are",
    auth=True,
    errors=(401, 403, 404),
    responses={200: json_response(obj(["id", "deleted"], id=TEXT, deleted={"const": True}), "Deleted")},
)
async def delete_bundle(request: Request) -> Response:
    body = await bundles.delete(app_state(request), credentials(request), request.path_params["bundle_id"])
    return JSONResponse(body, headers={"Cache-Control": "private, no-store"})


def bundle_markdown(
    page_urls: Urls, bundle: dict[str, Any], members: list[dict[str, Any]], analysis: str | None = None
) -> str:
    head = front_matter(
        {
            "title": bundle["title"],
            "url": page_urls.bundle(bundle["id"]),
            "hub": bundle["hub_slug"],
            "updated": bundle["updated_at"].isoformat(),
            "docs": len(members),
        }
    )
    parts = [head + f"# {bundle['title']}\n"]
    if bundle["description"]:
        parts.append(bundle["description"].strip() + "\n")
    parts.append(
        "Reading order:\n\n"
        + "\n".join(
            f"{i}. [{m['title']}]({markdown_twin(page_urls.doc(m['doc_id']))})" for i, m in enumerate(members, 1)
        )
        + "\n"
    )
    if analysis is not None:
        parts.append(analysis)
    for m in members:
        body = member_body(m).strip()
        url = markdown_twin(page_urls.doc(m["doc_id"]))
        parts.append(f"\n---\n\n## {' '.join(m['title'].split())}\n\n<{url}>\n\n{body}\n")
    return "\n".join(parts)


@operation(
    "A bundle's page: its public members in reading order",
    tag="pages",
    page=True,
    errors=(404,),
    responses={200: page_response("The bundle")},
)
async def bundle_page(request: Request) -> Response:
    if wants_markdown(request):
        return await bundle_raw(request)
    bundle, members, _ = await bundles.read(app_state(request), request.path_params["bundle_id"])
    page_urls = urls(request)
    for m in members:
        m["url"] = page_urls.doc(m["doc_id"])
        m["html"] = markdown_to_html(member_body(m))
    return templates.TemplateResponse(
        request,
        "bundle.html",
        {"bundle": bundle, "members": members, "hub_slug": bundle["hub_slug"], "twin_url": f"/b/{bundle['id']}.md"},
        headers={"Vary": "Accept"},
    )


@operation(
    "A bundle as one markdown file (for an AI)",
    tag="pages",
    page=True,
    errors=(404,),
    responses={200: markdown_page("The bundle")},
)
async def bundle_raw(request: Request) -> Response:
    bundle, members, analysis = await bundles.read(app_state(request), request.path_params["bundle_id"], analysis=True)
    return markdown_response(bundle_markdown(urls(request), bundle, members, analysis))


async def _editor(request: Request, **where: str) -> Response:
    view = await bundles.for_editor(app_state(request), credentials(request), urls(request), **where)
    return templates.TemplateResponse(
        request, "bundle_editor.html", {**view}, headers={"Cache-Control": "private, no-store"}
    )


@operation(
    "The bundle editor: title, description and the reading order (the hub's owner, signed in)",
    tag="pages",
    page=True,
    errors=(401, 403, 404),
    responses={200: page_response("The bundle editor")},
)
async def bundle_editor(request: Request) -> Response:
    return await _editor(request, bundle_id=request.path_params["bundle_id"])


@operation(
    "The bundle editor for a new bundle of the hub (its owner, signed in)",
    tag="pages",
    page=True,
    errors=(401, 403, 404),
    responses={200: page_response("The bundle editor")},
)
async def new_bundle_editor(request: Request) -> Response:
    return await _editor(request, slug=request.path_params["slug"])


routes = [
    Route("/api/bundles", create_bundle, methods=["POST"]),
    Route("/api/bundles/{bundle_id}", patch_bundle, methods=["PATCH"]),
    Route("/api/bundles/{bundle_id}", delete_bundle, methods=["DELETE"]),
    Route("/b/{bundle_id}/edit", bundle_editor, methods=["GET"]),
    Route("/hub/{slug}/bundles/new", new_bundle_editor, methods=["GET"]),
    Route("/b/{bundle_id}.md", bundle_raw, methods=["GET"]),
    Route("/b/{bundle_id}", bundle_page, methods=["GET"]),
    Route("/raw/b/{bundle_id}", bundle_raw, methods=["GET"]),
]
