"""Bundles: a curated reading order of docs in a hub, embedded as one vector."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from ..web.openapi import TEXT, body_schema, json_response, markdown_page, obj, operation, page_response
from ..web.auth import require_hub_owner
from ..curation import reads as curation_reads
from ..curation.markdown import analysis_markdown
from ..errors import ApiError, not_found
from ..web.negotiate import markdown_response, wants_markdown
from ..web.render import front_matter, markdown_to_html, member_body
from ..store import bundles as bundle_store
from ..web.templating import templates
from ..tokens import looks_like_id, new_id
from ..web.validate import get_str, get_str_list, read_json
from ..web.state import app_state, bundle_url, doc_url

CREATE_FIELDS = ("hub", "title", "description", "doc_ids")
PATCH_FIELDS = ("title", "description", "doc_ids")

_BUNDLE_FIELDS = dict(title={"type": "string", "maxLength": 500}, description={"type": ["string", "null"], "maxLength": 5000},
                      doc_ids={"type": ["array", "null"], "items": TEXT, "description": "docs of the hub, in reading order"})
BUNDLE_REF = obj(["id", "url"], id=TEXT, url=TEXT)


async def _check_members(conn, hub_id: int, doc_ids: list[str]) -> list[str]:
    if len(set(doc_ids)) != len(doc_ids):
        raise ApiError(400, "invalid_field", "'doc_ids' lists a doc twice")
    missing = await bundle_store.not_in_hub(conn, hub_id, doc_ids)
    if missing:
        raise ApiError(400, "unknown_doc", f"not a doc of this hub: {', '.join(sorted(missing))}")
    return doc_ids


@operation("Create a bundle: a reading order of a hub's docs", auth=True,
           body=body_schema(["hub", "title"], hub={"type": "string", "examples": ["notes"]}, **_BUNDLE_FIELDS),
           errors=(400, 401, 403, 404, 413), responses={201: json_response(BUNDLE_REF, "Created")})
async def create_bundle(request: Request) -> Response:
    state = app_state(request)
    data = await read_json(request, fields=CREATE_FIELDS)
    slug = get_str(data, "hub", required=True)
    title = get_str(data, "title", required=True, max_len=500, allow_empty=False).strip()
    description = get_str(data, "description", max_len=5000, default="")
    doc_ids = get_str_list(data, "doc_ids", default=[])
    bundle_id = new_id()

    async def create(conn):
        hub = await require_hub_owner(conn, request, slug)
        await bundle_store.insert_bundle(conn, bundle_id, hub["id"], title, description,
                                         await _check_members(conn, hub["id"], doc_ids))

    await state.db.write(create)
    state.wake_worker()
    return JSONResponse({"id": bundle_id, "url": bundle_url(request, bundle_id)}, status_code=201)


async def _owned_bundle(conn, request: Request, bundle_id: str) -> dict[str, Any]:
    if not looks_like_id(bundle_id):
        raise not_found("bundle")
    bundle = await bundle_store.lock_bundle(conn, bundle_id)
    if bundle is None:
        raise not_found("bundle")
    await require_hub_owner(conn, request, bundle["slug"])
    return bundle


@operation("Change a bundle's title, description or members", auth=True, body=body_schema((), **_BUNDLE_FIELDS),
           errors=(400, 401, 403, 404, 413), responses={200: json_response(BUNDLE_REF, "Changed")})
async def patch_bundle(request: Request) -> Response:
    """Change title, description or members; the bundle alone is re-embedded."""
    state = app_state(request)
    data = await read_json(request, fields=PATCH_FIELDS)
    bundle_id = request.path_params["bundle_id"]

    async def edit(conn):
        bundle = await _owned_bundle(conn, request, bundle_id)
        changes = {}
        if "title" in data:
            changes["title"] = get_str(data, "title", required=True, max_len=500, allow_empty=False).strip()
        if "description" in data:
            changes["description"] = get_str(data, "description", max_len=5000, default="")
        doc_ids = None
        if "doc_ids" in data:
            doc_ids = await _check_members(conn, bundle["hub_id"], get_str_list(data, "doc_ids", default=[]))
        await bundle_store.update_bundle(conn, bundle_id, changes, doc_ids)

    await state.db.write(edit)
    state.wake_worker()
    return JSONResponse({"id": bundle_id, "url": bundle_url(request, bundle_id)})


async def load_bundle(request: Request) -> tuple[dict, list[dict]]:
    """The bundle and its public members in reading order, read as the public role."""
    bundle_id = request.path_params["bundle_id"]
    if not looks_like_id(bundle_id):
        raise not_found("bundle")
    async with app_state(request).db.public.connection() as conn:
        bundle, members = await bundle_store.public_bundle(conn, bundle_id)
    if bundle is None:
        raise not_found("bundle")
    return bundle, members


def bundle_markdown(request: Request, bundle: dict, members: list[dict], analysis: dict | None = None) -> str:
    head = front_matter({"title": bundle["title"], "url": bundle_url(request, bundle["id"]),
                         "hub": bundle["hub_slug"], "updated": bundle["updated_at"].isoformat(),
                         "docs": len(members)})
    parts = [head + f"# {bundle['title']}\n"]
    if bundle["description"]:
        parts.append(bundle["description"].strip() + "\n")
    parts.append("Reading order:\n\n" + "\n".join(
        f"{i}. [{m['title']}]({doc_url(request, m['doc_id'])})" for i, m in enumerate(members, 1)) + "\n")
    if analysis:
        parts.append(analysis_markdown(analysis))
    for m in members:
        body = member_body(m).strip()
        parts.append(f"\n---\n\n## {' '.join(m['title'].split())}\n\n<{doc_url(request, m['doc_id'])}>\n\n{body}\n")
    return "\n".join(parts)


@operation("A bundle's page: its public members in reading order", tag="pages", page=True, errors=(404,),
           responses={200: page_response("The bundle")})
async def bundle_page(request: Request) -> Response:
    bundle, members = await load_bundle(request)
    if wants_markdown(request):
        analysis = await curation_reads.bundle_analysis(app_state(request).db, bundle["id"])
        return markdown_response(bundle_markdown(request, bundle, members, analysis))
    for m in members:
        m["url"] = doc_url(request, m["doc_id"])
        m["html"] = markdown_to_html(member_body(m))
    return templates.TemplateResponse(request, "bundle.html", {
        "bundle": bundle, "members": members, "hub_slug": bundle["hub_slug"],
        "twin_url": f"/b/{bundle['id']}.md"}, headers={"Vary": "Accept"})


@operation("A bundle as one markdown file (for an AI)", tag="pages", page=True, errors=(404,),
           responses={200: markdown_page("The bundle")})
async def bundle_raw(request: Request) -> Response:
    bundle, members = await load_bundle(request)
    analysis = await curation_reads.bundle_analysis(app_state(request).db, bundle["id"])
    return markdown_response(bundle_markdown(request, bundle, members, analysis))


routes = [
    Route("/api/bundles", create_bundle, methods=["POST"]),
    Route("/api/bundles/{bundle_id}", patch_bundle, methods=["PATCH"]),
    Route("/b/{bundle_id}.md", bundle_raw, methods=["GET"]),
    Route("/b/{bundle_id}", bundle_page, methods=["GET"]),
    Route("/raw/b/{bundle_id}", bundle_raw, methods=["GET"]),
]
