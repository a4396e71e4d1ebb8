"""Doc pages: HTML for people, markdown for AI fetchers (Accept: text/markdown or /raw/)."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from ..curation import reads as curation_reads
from ..errors import ApiError
from ..negotiate import markdown_response, wants_markdown
from ..render import doc_markdown, markdown_to_html, page_body
from ..store.docs import is_password_protected
from ..templating import templates
from ..tokens import looks_like_id
from ..web import app_state, base_url, doc_url
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


async def raw_doc(request: Request) -> Response:
    doc_id = request.path_params["doc_id"]
    doc, _ = await load_readable_doc(request, doc_id)
    return markdown_response(await curated_doc_markdown(request, doc))


async def _password_protected(request: Request, doc_id: str) -> bool:
    if not looks_like_id(doc_id):
        return False
    async with app_state(request).db.owner.connection() as conn:
        return await is_password_protected(conn, doc_id)


async def _html_page(request: Request, doc: dict) -> Response:
    state = app_state(request)
    curation = await curation_view(request, doc)
    related = (await curation_reads.related(state.db, doc["id"], 5, doc_url=lambda i: doc_url(request, i))
               if curation is not None else [])
    return templates.TemplateResponse(request, "doc.html", {
        "doc": doc, "body_html": markdown_to_html(page_body(doc)),
        "raw_url": f"/raw/{doc['id']}", "curation": curation, "related": related,
    }, headers={"Vary": "Accept"})


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


async def home(request: Request) -> Response:
    if wants_markdown(request):
        return markdown_response(f"# Memory.Wiki\n\nAPI base: {base_url(request)}/api\n")
    return templates.TemplateResponse(request, "home.html", {})


async def favicon(request: Request) -> Response:
    return Response(status_code=204)


routes = [
    Route("/", home, methods=["GET"]),
    Route("/favicon.ico", favicon, methods=["GET"]),
    Route("/raw/{doc_id}", raw_doc, methods=["GET"]),
    Route("/{doc_id}", doc_page, methods=["GET"]),
    Route("/{doc_id}", doc_password_form, methods=["POST"]),
]
