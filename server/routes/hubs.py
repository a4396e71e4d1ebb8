"""Hubs: create one, list its public docs and bundles (JSON, HTML, markdown index)."""

from __future__ import annotations

import re

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from ..errors import ApiError, Conflict, unknown_hub
from ..negotiate import markdown_response, wants_markdown
from ..render import summary
from ..store import hubs as hub_store
from ..tokens import hash_token, new_token
from ..templating import templates
from ..validate import get_str, read_json
from ..web import app_state, bundle_url, doc_url, hub_url

SLUG = re.compile(r"^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$")
FIELDS = ("slug",)
RESERVED = {"api", "raw", "hub", "b", "healthz", "static", "admin", "new", "login"}


async def create_hub(request: Request) -> Response:
    state = app_state(request)
    data = await read_json(request, fields=FIELDS)
    slug = get_str(data, "slug", required=True, max_len=63).strip().lower()
    if not SLUG.match(slug) or slug in RESERVED:
        raise ApiError(400, "invalid_slug",
                       "a hub slug is 1-63 lowercase letters, digits or dashes, not starting or ending with a dash")
    token = new_token("mwo")
    async with state.db.owner.connection() as conn:
        hub_id = await hub_store.create_hub(conn, slug, hash_token(token))
    if hub_id is None:
        raise Conflict("hub_taken", f"hub '{slug}' already exists")
    return JSONResponse({"slug": slug, "url": hub_url(request, slug), "owner_token": token}, status_code=201)


async def load_hub(request: Request) -> dict:
    """The hub's public contents, read as the public role."""
    slug = request.path_params["slug"]
    async with app_state(request).db.public.connection() as conn:
        hub = await hub_store.find_hub(conn, slug)
        if hub is None:
            raise unknown_hub(slug)
        docs, bundles = await hub_store.hub_contents(conn, hub["id"])
    return {
        "slug": slug, "url": hub_url(request, slug),
        "docs": [{"id": d["id"], "title": d["title"], "url": doc_url(request, d["id"]),
                  "updated_at": d["updated_at"].isoformat(), "summary": summary(d["head"])} for d in docs],
        "bundles": [{"id": b["id"], "title": b["title"], "description": b["description"],
                     "url": bundle_url(request, b["id"])} for b in bundles],
    }


def hub_markdown(hub: dict) -> str:
    lines = [f"# {hub['slug']}", "", f"Hub: {hub['url']}", ""]
    if hub["bundles"]:
        lines += ["## Bundles", ""]
        lines += [f"- [{b['title']}]({b['url']})" + (f" — {b['description']}" if b["description"] else "")
                  for b in hub["bundles"]]
        lines.append("")
    lines += ["## Pages", ""]
    lines += [f"- [{d['title']}]({d['url']})" + (f" — {d['summary']}" if d["summary"] else "")
              for d in hub["docs"]]
    return "\n".join(lines).rstrip() + "\n"


async def hub_api(request: Request) -> Response:
    return JSONResponse(await load_hub(request))


def _wants_digest(request: Request) -> bool:
    return request.query_params.get("digest") in ("1", "true", "yes")


async def _digest_response(request: Request) -> Response:
    """?digest=1: the hub's concept digest; &compact=1: the one that fits 2,000 tokens."""
    from .curation import digest_text, hub_digest

    hub, concepts, count = await hub_digest(request, request.path_params["slug"])
    compact = request.query_params.get("compact") in ("1", "true", "yes")
    return markdown_response(digest_text(request, hub, concepts, count, compact))


async def hub_page(request: Request) -> Response:
    if wants_markdown(request) and _wants_digest(request):
        return await _digest_response(request)
    hub = await load_hub(request)
    if wants_markdown(request):
        return markdown_response(hub_markdown(hub))
    if app_state(request).settings.curation:
        from ..curation import reads
        from .curation import hub_digest

        _, concepts, _ = await hub_digest(request, hub["slug"])
        hub_id = await _hub_id(request, hub["slug"])
        hub["concepts"] = [reads.concept_json(c) for c in concepts[:60]]
        hub["suggestions"] = await reads.open_suggestions(app_state(request).db, hub_id,
                                                          doc_url=lambda i: doc_url(request, i))
    return templates.TemplateResponse(request, "hub.html", hub, headers={"Vary": "Accept"})


async def _hub_id(request: Request, slug: str) -> int:
    async with app_state(request).db.public.connection() as conn:
        return (await hub_store.find_hub(conn, slug))["id"]


async def hub_raw(request: Request) -> Response:
    if _wants_digest(request):
        return await _digest_response(request)
    return markdown_response(hub_markdown(await load_hub(request)))


routes = [
    Route("/api/hubs", create_hub, methods=["POST"]),
    Route("/api/hub/{slug}", hub_api, methods=["GET"]),
    Route("/hub/{slug}", hub_page, methods=["GET"]),
    Route("/raw/hub/{slug}", hub_raw, methods=["GET"]),
]
