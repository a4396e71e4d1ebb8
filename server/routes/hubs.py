"""Hubs: create one, list or unlist it, and its public docs and bundles (JSON, HTML with
search, markdown index)."""

from __future__ import annotations

import math
import re
from html import escape
from typing import Any

from markupsafe import Markup
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from ..store import recall as recall_sql
from ..web.auth import require_hub_owner
from ..web.openapi import NULLABLE_TEXT, TEXT, body_schema, json_response, markdown_page, obj, operation, page_response
from ..errors import ApiError, Conflict, unknown_hub
from ..web.negotiate import markdown_response, wants_markdown
from ..web.render import front_matter, plain_text, summary
from ..store import hubs as hub_store
from ..web.templating import templates
from ..tokens import hash_token, new_token
from ..web.validate import get_bool, get_str, query_int, query_str, read_json
from ..web.state import app_state, base_url, bundle_url, doc_url, hub_url
from .recall import answer, check_question

SLUG = re.compile(r"^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$")
FIELDS = ("slug",)
PATCH_FIELDS = ("listed", "description")
HUB = obj(["slug", "url", "docs", "bundles"], slug=TEXT, url=TEXT,
          docs={"type": "array", "items": obj(["id", "title", "url", "updated_at", "summary"], id=TEXT, title=TEXT,
                                               url=TEXT, updated_at=TEXT, summary=NULLABLE_TEXT)},
          bundles={"type": "array", "items": obj(["id", "title", "description", "url"], id=TEXT, title=TEXT,
                                                  description=NULLABLE_TEXT, url=TEXT)},
          total_docs={"type": "integer"}, pages={"type": "integer"}, per_page={"type": "integer"},
          next={**NULLABLE_TEXT, "description": "the URL of the next page of docs, or null"})
LISTING = obj(["slug", "url", "listed", "description"], slug=TEXT, url=TEXT, listed={"type": "boolean"},
              description=NULLABLE_TEXT)
RESERVED = {"api", "raw", "hub", "b", "healthz", "static", "admin", "new", "login"}
PAGE_SIZE = 50  # docs per hub page in the browser
API_PAGE_SIZE = 200  # docs per page of GET /api/hub/{slug}, unless ?per_page= says otherwise
MAX_PAGE_SIZE = 1000
SEARCH_RESULTS = 10
MAX_DESCRIPTION = 500


@operation("Create a hub; the answer holds its owner token, shown once",
           body=body_schema(["slug"], slug={"type": "string", "maxLength": 63, "examples": ["notes"]}),
           errors=(400, 409, 413),
           responses={201: json_response(obj(["slug", "url", "owner_token"], slug=TEXT, url=TEXT, owner_token=TEXT),
                                         "Created")})
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


@operation("List or unlist a hub on / and /llms.txt, and describe it (owner token)", auth=True,
           body=body_schema((), listed={"type": ["boolean", "null"]},
                            description={"type": ["string", "null"], "maxLength": MAX_DESCRIPTION}),
           errors=(400, 401, 403, 404, 413), responses={200: json_response(LISTING, "The hub's listing")})
async def update_hub(request: Request) -> Response:
    """The owner lists the hub on the home page and /llms.txt (or unlists it), and gives it
    the one-line description those show."""
    state = app_state(request)
    data = await read_json(request, fields=PATCH_FIELDS)
    listed = get_bool(data, "listed")
    description = get_str(data, "description", max_len=MAX_DESCRIPTION)
    if description is not None:
        description = " ".join(description.split())

    async def update(conn):
        hub = await require_hub_owner(conn, request, request.path_params["slug"])
        return await hub_store.update_hub(conn, hub["id"], listed=listed, description=description)

    hub = await state.db.write(update)
    return JSONResponse({"slug": hub["slug"], "url": hub_url(request, hub["slug"]),
                         "listed": hub["listed"], "description": hub["description"]})


def _doc_entry(request: Request, d: dict[str, Any]) -> dict[str, Any]:
    return {"id": d["id"], "title": d["title"], "url": doc_url(request, d["id"]),
            "updated_at": d["updated_at"].isoformat(), "summary": summary(d["head"])}


async def load_hub(request: Request, *, page: int = 1, per_page: int | None = None) -> dict[str, Any]:
    """The hub's public contents, read as the public role: one page of docs (newest first)
    or, with no `per_page`, all of them."""
    slug = request.path_params["slug"]
    async with app_state(request).db.public.connection() as conn:
        hub = await hub_store.find_hub(conn, slug)
        if hub is None:
            raise unknown_hub(slug)
        offset = (page - 1) * per_page if per_page else 0
        docs, total, bundles = await hub_store.hub_contents(conn, hub["id"], limit=per_page, offset=offset)
    pages = max(1, math.ceil(total / per_page)) if per_page else 1
    return {
        "slug": slug, "url": hub_url(request, slug), "description": hub["description"],
        "listed": hub["listed"], "hub_id": hub["id"],
        "docs": [_doc_entry(request, d) for d in docs],
        "bundles": [{"id": b["id"], "title": b["title"], "description": b["description"],
                     "url": bundle_url(request, b["id"])} for b in bundles],
        "total_docs": total, "page": page, "pages": pages,
    }


def hub_markdown(hub: dict[str, Any]) -> str:
    """The hub as one markdown index an AI reads end to end: every public page, newest first."""
    head = front_matter({"title": hub["slug"], "url": hub["url"], "description": hub["description"] or None,
                         "pages": hub["total_docs"], "bundles": len(hub["bundles"]),
                         "llms_txt": f"{hub['url']}/llms.txt"})
    lines = [f"# {hub['slug']}", ""]
    if hub["description"]:
        lines += [f"> {hub['description']}", ""]
    lines += [f"Hub: {hub['url']}", ""]
    if hub["bundles"]:
        lines += ["## Bundles", ""]
        lines += [f"- [{b['title']}]({b['url']})" + (f" — {b['description']}" if b["description"] else "")
                  for b in hub["bundles"]]
        lines.append("")
    lines += ["## Pages", ""]
    lines += [f"- [{d['title']}]({d['url']})" + (f" — {d['summary']}" if d["summary"] else "")
              for d in hub["docs"]]
    return head + "\n".join(lines).rstrip() + "\n"


@operation("A hub's public docs (one page of them, newest first) and bundles", errors=(400, 404),
           query={"page": {"type": "integer", "minimum": 1, "maximum": 1_000_000},
                  "per_page": {"type": "integer", "minimum": 1, "maximum": MAX_PAGE_SIZE,
                               "description": f"default {API_PAGE_SIZE}"}},
           responses={200: json_response(HUB, "The hub")})
async def hub_api(request: Request) -> Response:
    page = query_int(request, "page", default=1, low=1, high=1_000_000)
    per_page = query_int(request, "per_page", default=API_PAGE_SIZE, low=1, high=MAX_PAGE_SIZE)
    hub = await load_hub(request, page=page, per_page=per_page)
    hub.pop("hub_id")
    hub["per_page"] = per_page
    hub["next"] = (f"{base_url(request)}/api/hub/{hub['slug']}?page={page + 1}&per_page={per_page}"
                   if page < hub["pages"] else None)
    return JSONResponse(hub)


def _marked(snippet: str) -> Markup:
    """A headline as HTML: the text escaped, then its match marks turned into <mark>."""
    return Markup(escape(snippet).replace(recall_sql.MARK_START, "<mark>").replace(recall_sql.MARK_END, "</mark>"))


async def search(request: Request, hub: dict[str, Any], question: str) -> dict[str, Any]:
    """The recall endpoint's answer for the search box, with highlighted snippets and
    breadcrumbs."""
    found = await answer(request, hub["slug"], check_question(question), k=SEARCH_RESULTS, level="chunk", hybrid=True)
    async with app_state(request).db.public.connection() as conn:
        snippets = await recall_sql.headlines(conn, question, [plain_text(r["markdown"]) for r in found["results"]])
    results = []
    for r, snippet in zip(found["results"], snippets):
        crumbs = [part.strip() for part in r["heading_path"].split(" > ")]
        results.append({"title": r["title"], "url": r["doc_url"], "sections": crumbs[1:],
                        "snippet": _marked(snippet)})
    return {"results": results, "mode": found["mode"], "vector_note": found.get("vector_note")}


def _wants_digest(request: Request) -> bool:
    return request.query_params.get("digest") in ("1", "true", "yes")


async def _digest_response(request: Request) -> Response:
    """?digest=1: the hub's concept digest; &compact=1: the one that fits 2,000 tokens."""
    from .curation import digest_text, hub_digest

    hub, concepts, count = await hub_digest(request, request.path_params["slug"])
    compact = request.query_params.get("compact") in ("1", "true", "yes")
    return markdown_response(digest_text(request, hub, concepts, count, compact))


_DIGEST_QUERY = {"digest": {"type": "string", "description": "1: the hub's concept digest (markdown)"},
                 "compact": {"type": "string", "description": "1, with digest: the one that fits 2,000 tokens"}}


@operation("A hub's index page (?q=: search it)", tag="pages", page=True, errors=(400, 404),
           query={**_DIGEST_QUERY, "page": {"type": "integer", "minimum": 1, "maximum": 1_000_000},
                  "q": {"type": "string", "description": "a search of the hub's public pages"}},
           responses={200: page_response("The hub")})
async def hub_page(request: Request) -> Response:
    if wants_markdown(request):
        return await hub_twin(request)
    page = query_int(request, "page", default=1, low=1, high=1_000_000)
    hub = await load_hub(request, page=page, per_page=PAGE_SIZE)
    question = " ".join(query_str(request, "q").split())
    found = await search(request, hub, question) if question else None
    if app_state(request).settings.curation:
        from ..curation import reads
        from .curation import hub_digest

        _, concepts, _ = await hub_digest(request, hub["slug"])
        hub["concepts"] = [reads.concept_json(c) for c in concepts[:60]]
        hub["suggestions"] = await reads.open_suggestions(app_state(request).db, hub["hub_id"],
                                                          doc_url=lambda i: doc_url(request, i))
    return templates.TemplateResponse(request, "hub.html", {
        **hub, "q": question, "found": found, "twin_url": f"/hub/{hub['slug']}.md",
    }, headers={"Vary": "Accept"})


@operation("A hub's index as markdown (or its concept digest)", tag="pages", page=True, errors=(404,),
           query=_DIGEST_QUERY, responses={200: markdown_page("The hub")})
async def hub_twin(request: Request) -> Response:
    """/hub/{slug}.md, /raw/hub/{slug} and Accept: text/markdown; ?digest=1 gives the concept
    digest instead of the index."""
    if _wants_digest(request):
        return await _digest_response(request)
    return markdown_response(hub_markdown(await load_hub(request)))


routes = [
    Route("/api/hubs", create_hub, methods=["POST"]),
    Route("/api/hub/{slug}", hub_api, methods=["GET"]),
    Route("/api/hub/{slug}", update_hub, methods=["PATCH"]),
    Route("/hub/{slug}.md", hub_twin, methods=["GET"]),
    Route("/hub/{slug}", hub_page, methods=["GET"]),
    Route("/raw/hub/{slug}", hub_twin, methods=["GET"]),
]
