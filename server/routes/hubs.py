"""Hubs: create one, list or unlist it, and its public docs and bundles (JSON, HTML with
search, markdown index)."""

from __future__ import annotations

from typing import Any

from memorywiki.formats.doclinks import markdown_twin
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from ..services import curation, hubs
from ..services.hubs import MAX_DESCRIPTION
from ..web.negotiate import markdown_response, wants_markdown
from ..web.openapi import NULLABLE_TEXT, TEXT, body_schema, json_response, markdown_page, obj, operation, page_response
from ..web.params import credentials, flag
from ..web.render import front_matter, highlighted
from ..web.schemas import REDACTED
from ..web.state import app_state
from ..web.templating import templates
from ..web.urls import urls
from ..web.validate import get_bool, get_str, query_int, query_str, read_json

FIELDS = ("slug",)
PATCH_FIELDS = ("listed", "description", "redact_secrets")
VISIBILITY = {
    "enum": ["public", "draft", "password", "people"],
    "description": "who may read it: anyone, its editors, readers with its password, the listed emails",
}
_PAGING: dict[str, dict[str, Any]] = {
    "total_docs": {"type": "integer"},
    "pages": {"type": "integer"},
    "per_page": {"type": "integer"},
    "next": {**NULLABLE_TEXT, "description": "the URL of the next page of docs, or null"},
}
HUB = obj(
    ["slug", "url", "docs", "bundles", "view"],
    slug=TEXT,
    url=TEXT,
    view={"enum": ["public", "owner"], "description": "owner: the owner token or the owner's session was given"},
    docs={
        "type": "array",
        "items": obj(
            ["id", "title", "url", "updated_at", "summary"],
            id=TEXT,
            title=TEXT,
            url=TEXT,
            updated_at=TEXT,
            summary=NULLABLE_TEXT,
            visibility={**VISIBILITY, "description": "the owner's view only"},
            allowed_emails={"type": "array", "items": TEXT},
        ),
    },
    bundles={
        "type": "array",
        "items": obj(
            ["id", "title", "description", "url"],
            id=TEXT,
            title=TEXT,
            description=NULLABLE_TEXT,
            url=TEXT,
            public={
                "type": "boolean",
                "description": "the owner's view only: false while the bundle holds no public page "
                "(then strangers see none of it)",
            },
        ),
    },
    trash={"type": "integer", "description": "the owner's view only: pages in the trash"},
    **_PAGING,
)
TRASH = obj(
    ["slug", "url", "docs"],
    slug=TEXT,
    url=TEXT,
    docs={
        "type": "array",
        "items": obj(
            ["id", "title", "url", "deleted_at", "version", "visibility"],
            id=TEXT,
            title=TEXT,
            url=TEXT,
            deleted_at=TEXT,
            version={"type": "integer"},
            visibility=VISIBILITY,
        ),
    },
    **_PAGING,
)
_PAGE_QUERY = {
    "page": {"type": "integer", "minimum": 1, "maximum": 1_000_000},
    "per_page": {"type": "integer", "minimum": 1, "maximum": 1000, "description": "default 200"},
}
LISTING = obj(
    ["slug", "url", "listed", "description", "redact_secrets"],
    slug=TEXT,
    url=TEXT,
    listed={"type": "boolean"},
    description=NULLABLE_TEXT,
    redact_secrets={"type": "boolean", "description": "false: pages are stored with the secrets in them"},
    redacted={**REDACTED, "description": "a change of description: what was redacted from it (docs/secrets.md)"},
)
PAGE_SIZE = 50  # docs per hub page in the browser
# What an answer that may be the owner's view says to caches: never kept, never shared.
PRIVATE = {"Cache-Control": "private, no-store", "Vary": "Authorization, Cookie"}
API_PAGE_SIZE = 200  # docs per page of GET /api/hub/{slug}, unless ?per_page= says otherwise
MAX_PAGE_SIZE = 1000


@operation(
    "Create a hub; the answer holds its owner token, shown once",
    body=body_schema(["slug"], slug={"type": "string", "maxLength": 63, "examples": ["notes"]}),
    errors=(400, 409, 413),
    responses={
        201: json_response(obj(["slug", "url", "owner_token"], slug=TEXT, url=TEXT, owner_token=TEXT), "Created")
    },
)
async def create_hub(request: Request) -> Response:
    data = await read_json(request, fields=FIELDS)
    slug = get_str(data, "slug", required=True, max_len=63)
    return JSONResponse(await hubs.create(app_state(request), urls(request), slug), status_code=201)


@operation(
    "List or unlist a hub on / and /llms.txt, describe it, or keep secrets in its pages (owner token)",
    auth=True,
    body=body_schema(
        (),
        listed={"type": ["boolean", "null"]},
        description={"type": ["string", "null"], "maxLength": MAX_DESCRIPTION},
        redact_secrets={
            "type": ["boolean", "null"],
            "description": "default true: secrets in a page are replaced by a marker before it is stored",
        },
    ),
    errors=(400, 401, 403, 404, 413),
    responses={200: json_response(LISTING, "The hub's listing")},
)
async def update_hub(request: Request) -> Response:
    """The owner lists the hub on the home page and /llms.txt (or unlists it), gives it the
    one-line description those show, and says whether secrets are redacted from its pages."""
    data = await read_json(request, fields=PATCH_FIELDS)
    listed = get_bool(data, "listed")
    description = get_str(data, "description", max_len=MAX_DESCRIPTION)
    redact_secrets = get_bool(data, "redact_secrets")
    return JSONResponse(
        await hubs.update(
            app_state(request),
            credentials(request),
            urls(request),
            request.path_params["slug"],
            listed=listed,
            description=description,
            redact_secrets=redact_secrets,
        )
    )


def hub_markdown(hub: hubs.HubContents) -> str:
    """The hub as one markdown index an AI reads end to end: every public page, newest first,
    each linked to its markdown twin."""
    head = front_matter(
        {
            "title": hub["slug"],
            "url": hub["url"],
            "description": hub["description"] or None,
            "pages": hub["total_docs"],
            "bundles": len(hub["bundles"]),
            "llms_txt": f"{hub['url']}/llms.txt",
        }
    )
    lines = [f"# {hub['slug']}", ""]
    if hub["description"]:
        lines += [f"> {hub['description']}", ""]
    lines += [f"Hub: {hub['url']}", ""]
    if hub["bundles"]:
        lines += ["## Bundles", ""]
        lines += [
            f"- [{b['title']}]({markdown_twin(b['url'])})" + (f" — {b['description']}" if b["description"] else "")
            for b in hub["bundles"]
        ]
        lines.append("")
    lines += ["## Pages", ""]
    lines += [
        f"- [{d['title']}]({markdown_twin(d['url'])})" + (f" — {d['summary']}" if d["summary"] else "")
        for d in hub["docs"]
    ]
    return head + "\n".join(lines).rstrip() + "\n"


def _paging(request: Request) -> tuple[int, int]:
    return (
        query_int(request, "page", default=1, low=1, high=1_000_000),
        query_int(request, "per_page", default=API_PAGE_SIZE, low=1, high=MAX_PAGE_SIZE),
    )


@operation(
    "A hub's docs (one page of them, newest first) and bundles: the public ones, or with the owner "
    "token or the owner's session every live one with its visibility",
    auth=True,
    errors=(400, 404),
    query=_PAGE_QUERY,
    responses={200: json_response(HUB, "The hub")},
)
async def hub_api(request: Request) -> Response:
    page, per_page = _paging(request)
    hub = await hubs.listing(
        app_state(request),
        credentials(request),
        urls(request),
        request.path_params["slug"],
        page=page,
        per_page=per_page,
    )
    return JSONResponse(hub, headers=PRIVATE if hub["view"] == "owner" else {"Vary": PRIVATE["Vary"]})


@operation(
    "A hub's deleted docs, newest deletion first (owner token or the owner's session)",
    auth=True,
    errors=(400, 401, 403, 404),
    query=_PAGE_QUERY,
    responses={200: json_response(TRASH, "The trash")},
)
async def hub_trash(request: Request) -> Response:
    page, per_page = _paging(request)
    return JSONResponse(
        await hubs.trash(
            app_state(request),
            credentials(request),
            urls(request),
            request.path_params["slug"],
            page=page,
            per_page=per_page,
        ),
        headers=PRIVATE,
    )


async def _digest_response(request: Request) -> Response:
    """?digest=1: the hub's concept digest; &compact=1: the one that fits the digest budget."""
    return markdown_response(
        await curation.digest_text(
            app_state(request), urls(request), request.path_params["slug"], compact=flag(request, "compact")
        )
    )


_DIGEST_QUERY = {
    "digest": {"type": "string", "description": "1: the hub's concept digest (markdown)"},
    "compact": {"type": "string", "description": "1, with digest: the one that fits 2,000 tokens"},
}


@operation(
    "A hub's index page (?q=: search it)",
    tag="pages",
    page=True,
    errors=(400, 404),
    query={
        **_DIGEST_QUERY,
        "page": {"type": "integer", "minimum": 1, "maximum": 1_000_000},
        "q": {"type": "string", "description": "a search of the hub's public pages"},
    },
    responses={200: page_response("The hub")},
)
async def hub_page(request: Request) -> Response:
    if wants_markdown(request):
        return await hub_twin(request)
    page = query_int(request, "page", default=1, low=1, high=1_000_000)
    question = " ".join(query_str(request, "q").split())
    hub = await hubs.page(
        app_state(request),
        credentials(request),
        urls(request),
        request.path_params["slug"],
        page=page,
        per_page=PAGE_SIZE,
        question=question,
    )
    if hub["found"] is not None:
        for result in [*hub["found"]["results"], *hub["found"]["more"]]:
            result["snippet"] = highlighted(result["snippet"])
    headers = {**PRIVATE, "Vary": "Accept, Cookie"} if hub["view"] == "owner" or hub["session"] else {"Vary": "Accept"}
    return templates.TemplateResponse(
        request,
        "hub.html",
        {
            **hub,
            "q": question,
            "twin_url": f"/hub/{hub['slug']}.md",
            "owner": hub["view"] == "owner",
            "mail": app_state(request).mail is not None,
        },
        headers=headers,
    )


@operation(
    "A hub's index as markdown (or its concept digest)",
    tag="pages",
    page=True,
    errors=(404,),
    query=_DIGEST_QUERY,
    responses={200: markdown_page("The hub")},
)
async def hub_twin(request: Request) -> Response:
    """/hub/{slug}.md, /raw/hub/{slug} and Accept: text/markdown; ?digest=1 gives the concept
    digest instead of the index."""
    if flag(request, "digest"):
        return await _digest_response(request)
    return markdown_response(
        hub_markdown(await hubs.contents(app_state(request), urls(request), request.path_params["slug"]))
    )


routes = [
    Route("/api/hubs", create_hub, methods=["POST"]),
    Route("/api/hub/{slug}", hub_api, methods=["GET"]),
    Route("/api/hub/{slug}", update_hub, methods=["PATCH"]),
    Route("/api/hub/{slug}/trash", hub_trash, methods=["GET"]),
    Route("/hub/{slug}.md", hub_twin, methods=["GET"]),
    Route("/hub/{slug}", hub_page, methods=["GET"]),
    Route("/raw/hub/{slug}", hub_twin, methods=["GET"]),
]
