"""Doc pages: HTML for people, markdown for AI fetchers (Accept: text/markdown, a `.md`
suffix or /raw/), and the home page."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from ..services import hubs, pages
from ..services.pages import PasswordRequired, SharedWithPeople
from ..web.negotiate import markdown_response, wants_markdown
from ..web.openapi import TEXT, markdown_page, obj, operation, page_response
from ..web.params import credentials
from ..web.render import doc_markdown, page_body, render
from ..web.state import app_state
from ..web.templating import templates
from ..web.urls import base_url, urls


async def _doc_markdown(request: Request) -> Response:
    """/raw/{id} and the .md twin: front matter, body, then the enrichment block.
    `?curation=0` leaves the block out: the doc as saved, for a client that edits it."""
    bare = request.query_params.get("curation", "").lower() in ("0", "off", "false", "no")
    page_urls = urls(request)
    doc, view = await pages.doc_markdown_view(
        app_state(request), credentials(request), page_urls, request.path_params["doc_id"], curated=not bare
    )
    return markdown_response(
        doc_markdown(
            doc,
            page_urls.doc(doc["id"]),
            extra=view["fields"] if view else None,
            appendix=view["markdown"] if view else "",
        )
    )


@operation(
    "A doc as markdown with front matter (for an AI)",
    tag="pages",
    page=True,
    errors=(404,),
    query={"access": TEXT, "curation": {"type": "string", "description": "0: the doc as saved, no enrichment"}},
    headers={"X-Doc-Password": TEXT, "X-Doc-Access": TEXT},
    responses={200: markdown_page("The doc")},
)
async def raw_doc(request: Request) -> Response:
    return await _doc_markdown(request)


async def _html_page(request: Request, view: dict[str, Any]) -> Response:
    doc = view["doc"]
    rendered = await render(page_body(doc))
    meta = doc.get("meta") or {}
    return templates.TemplateResponse(
        request,
        "doc.html",
        {
            "doc": doc,
            "body_html": rendered.html,
            "toc": rendered.toc if len(rendered.toc) > 1 else (),
            "curation": view["curation"],
            "related": view["related"],
            "source_url": meta.get("url") if str(meta.get("url", "")).startswith(("http://", "https://")) else None,
            "twin_url": f"/{doc['id']}.md",
            "linked_from": view["linked_from"],
            "bundles": view["bundles"],
            "reader": view["reader"],
        },
        headers={"Vary": "Accept, Cookie", "Cache-Control": "private, no-store"}
        if view["reader"]
        else {"Vary": "Accept"},
    )


def _password_form(request: Request, *, failed: bool) -> Response:
    return templates.TemplateResponse(request, "password.html", {"failed": failed}, status_code=401)


@operation(
    "A doc's page (a password form for a password-protected doc)",
    tag="pages",
    page=True,
    errors=(404,),
    query={"access": TEXT},
    responses={200: page_response("The doc"), 401: page_response("The password form")},
)
async def doc_page(request: Request) -> Response:
    if wants_markdown(request):
        return await _doc_markdown(request)
    try:
        view = await pages.doc_page_view(
            app_state(request), credentials(request), urls(request), request.path_params["doc_id"]
        )
    except PasswordRequired:
        return _password_form(request, failed=False)
    except SharedWithPeople as shared:
        return templates.TemplateResponse(
            request,
            "shared.html",
            {"shared": shared.shared, "sent": None},
            status_code=401,
            headers={"Cache-Control": "no-store"},
        )
    return await _html_page(request, view)


@operation(
    "The password form's answer",
    tag="pages",
    page=True,
    errors=(400, 404),
    form=(
        "application/x-www-form-urlencoded",
        obj((), password=TEXT, csrf_token={**TEXT, "description": "the token the form's page carries"}),
    ),
    responses={200: page_response("The doc"), 401: page_response("Wrong password: the form again")},
)
async def doc_password_form(request: Request) -> Response:
    """The browser path for password-protected docs."""
    form = await request.form(max_files=0, max_fields=5)
    password = str(form.get("password") or "")
    try:
        view = await pages.doc_page_view(
            app_state(request), credentials(request, password), urls(request), request.path_params["doc_id"]
        )
    except PasswordRequired:
        return _password_form(request, failed=True)
    return await _html_page(request, view)


def home_markdown(request: Request, listed: list[dict[str, Any]]) -> str:
    base = base_url(request)
    lines = [
        "# Memory.Wiki",
        "",
        "> Your AI memory, owned by you: every answer worth keeping becomes a markdown "
        "page at a permanent URL that people read and edit and any AI can fetch.",
        "",
        f"API base: {base}/api · index for AIs: {base}/llms.txt",
        "",
        "## Hubs",
        "",
    ]
    lines += [
        f"- [{h['slug']}]({base}/hub/{h['slug']}.md)" + (f": {h['description']}" if h["description"] else "")
        for h in listed
    ] or ["No hub is listed yet."]
    return "\n".join(lines) + "\n"


@operation("The home page", tag="pages", responses={200: page_response("Home")})
async def home(request: Request) -> Response:
    listed = await hubs.listed(app_state(request))
    if wants_markdown(request):
        return markdown_response(home_markdown(request, listed))
    return templates.TemplateResponse(
        request,
        "home.html",
        {"hubs": listed, "base": base_url(request), "twin_url": "/llms.txt"},
        headers={"Vary": "Accept"},
    )


@operation(
    "No icon (an empty answer, so browsers stop asking)", tag="pages", responses={204: {"description": "No content"}}
)
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
