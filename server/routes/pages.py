"""Doc pages: HTML for people, markdown for AI fetchers (Accept: text/markdown, a `.md`
suffix or /raw/), and the home page."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from ..curation import reads as curation_reads
from ..web.openapi import TEXT, markdown_page, obj, operation, page_response
from ..errors import ApiError
from ..web.negotiate import markdown_response, wants_markdown
from ..web.render import doc_markdown, page_body, render
from ..store import bundles as bundle_store
from ..store import hubs as hub_store
from ..store import links as link_store
from ..store.docs import is_password_protected
from ..web.templating import templates
from ..tokens import looks_like_id
from ..web.state import app_state, base_url, bundle_url, doc_url, own_hosts
from .docs import load_readable_doc


async def curation_view(request: Request, doc: dict) -> dict | None:
    """The doc's enrichment block, bundles and front matter fields (None with curation off)."""
    state = app_state(request)
    if not state.settings.curation:
        return None
    return await curation_reads.doc_curation(state.db, doc, doc_url=lambda i: doc_url(request, i),
                                             base=base_url(request))


async def curated_doc_markdown(request: Request, doc: dict) -> str:
    """/raw/{id} and the .md twin: front matter, body, then the enrichment block.
    `?curation=0` leaves the block out: the doc as saved, for a client that edits it."""
    bare = request.query_params.get("curation", "").lower() in ("0", "off", "false", "no")
    view = None if bare else await curation_view(request, doc)
    return doc_markdown(doc, doc_url(request, doc["id"]), extra=view["fields"] if view else None,
                        appendix=view["markdown"] if view else "")


@operation("A doc as markdown with front matter (for an AI)", tag="pages", page=True, errors=(404,),
           query={"access": TEXT, "curation": {"type": "string", "description": "0: the doc as saved, no enrichment"}},
           headers={"X-Doc-Password": TEXT, "X-Doc-Access": TEXT}, responses={200: markdown_page("The doc")})
async def raw_doc(request: Request) -> Response:
    doc_id = request.path_params["doc_id"]
    doc, _ = await load_readable_doc(request, doc_id)
    return markdown_response(await curated_doc_markdown(request, doc))


async def _password_protected(request: Request, doc_id: str) -> bool:
    if not looks_like_id(doc_id):
        return False
    async with app_state(request).db.owner.connection() as conn:
        return await is_password_protected(conn, doc_id)


async def doc_context(request: Request, doc: dict[str, Any]) -> dict[str, Any]:
    """What the doc page shows around the body: the public docs linking here, the public
    bundles holding it (both read as the public role, so a private doc shows none)."""
    async with app_state(request).db.public.connection() as conn:
        _, inbound = await link_store.doc_cross_refs(conn, doc["id"], own_hosts(request))
        bundles = await bundle_store.bundles_containing(conn, doc["id"])
    return {
        "linked_from": [{"title": d["title"], "url": doc_url(request, d["id"]), "hub": d["hub_slug"]}
                        for d in inbound],
        "bundles": [{"title": b["title"], "url": bundle_url(request, b["id"])} for b in bundles],
    }


async def _html_page(request: Request, doc: dict) -> Response:
    state = app_state(request)
    curation = await curation_view(request, doc)
    related = (await curation_reads.related(state.db, doc["id"], 5, doc_url=lambda i: doc_url(request, i))
               if curation is not None else [])
    rendered = await render(page_body(doc))
    meta = doc.get("meta") or {}
    return templates.TemplateResponse(request, "doc.html", {
        "doc": doc, "body_html": rendered.html, "toc": rendered.toc if len(rendered.toc) > 1 else (),
        "curation": curation, "related": related,
        "source_url": meta.get("url") if str(meta.get("url", "")).startswith(("http://", "https://")) else None,
        "twin_url": f"/{doc['id']}.md", **await doc_context(request, doc),
    }, headers={"Vary": "Accept"})


@operation("A doc's page (a password form for a password-protected doc)", tag="pages", page=True,
           errors=(404,), query={"access": TEXT}, responses={200: page_response("The doc"),
                                                            401: page_response("The password form")})
async def doc_page(request: Request) -> Response:
    doc_id = request.path_params["doc_id"]
    try:
        doc, _ = await load_readable_doc(request, doc_id)
    except ApiError as exc:
        if exc.status == 404 and not wants_markdown(request) and await _password_protected(request, doc_id):
            return templates.TemplateResponse(request, "password.html", {"failed": False}, status_code=401)
        raise
    if wants_markdown(request):
        return markdown_response(await curated_doc_markdown(request, doc))
    return await _html_page(request, doc)


@operation("The password form's answer", tag="pages", page=True, errors=(400, 404),
           form=("application/x-www-form-urlencoded",
                 obj((), password=TEXT, csrf_token={**TEXT, "description": "the token the form's page carries"})),
           responses={200: page_response("The doc"), 401: page_response("Wrong password: the form again")})
async def doc_password_form(request: Request) -> Response:
    """The browser path for password-protected docs."""
    doc_id = request.path_params["doc_id"]
    form = await request.form(max_files=0, max_fields=5)
    password = str(form.get("password") or "")
    try:
        doc, _ = await load_readable_doc(request, doc_id, password=password)
    except ApiError:
        if await _password_protected(request, doc_id):
            return templates.TemplateResponse(request, "password.html", {"failed": True}, status_code=401)
        raise
    return await _html_page(request, doc)


def home_markdown(request: Request, hubs: list[dict[str, Any]]) -> str:
    base = base_url(request)
    lines = ["# Memory.Wiki", "", "> Your AI memory, owned by you: every answer worth keeping becomes a markdown "
             "page at a permanent URL that people read and edit and any AI can fetch.", "",
             f"API base: {base}/api · index for AIs: {base}/llms.txt", "", "## Hubs", ""]
    lines += [f"- [{h['slug']}]({base}/hub/{h['slug']}.md)" + (f": {h['description']}" if h["description"] else "")
              for h in hubs] or ["No hub is listed yet."]
    return "\n".join(lines) + "\n"


@operation("The home page", tag="pages", responses={200: page_response("Home")})
async def home(request: Request) -> Response:
    async with app_state(request).db.public.connection() as conn:
        hubs = await hub_store.listed_hubs(conn)
    if wants_markdown(request):
        return markdown_response(home_markdown(request, hubs))
    return templates.TemplateResponse(request, "home.html", {
        "hubs": hubs, "base": base_url(request), "twin_url": "/llms.txt"}, headers={"Vary": "Accept"})


@operation("No icon (an empty answer, so browsers stop asking)", tag="pages",
           responses={204: {"description": "No content"}})
async def favicon(request: Request) -> Response:
    return Response(status_code=204)


routes = [
    Route("/", home, methods=["GET"]),
    Route("/favicon.ico", favicon, methods=["GET"]),
    Route("/raw/{doc_id}", raw_doc, methods=["GET"]),
    Route("/{doc_id}.md", raw_doc, methods=["GET"]),
    Route("/{doc_id}", doc_page, methods=["GET"]),
    Route("/{doc_id}", doc_password_form, methods=["POST"]),
]
