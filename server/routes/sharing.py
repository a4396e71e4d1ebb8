"""Pages shared with people: a visitor asks for a sign-in link by address (the API and the
page's form answer the same whether or not the address is listed), and the link mailed to a
listed address signs that browser in as a reader (its landing page posts the link's secret,
which rides after "#" and so never reaches a server log)."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from ..errors import not_found
from ..services import sessions, sharing
from ..tokens import looks_like_id
from ..web.openapi import NULLABLE_TEXT, TEXT, body_schema, json_response, obj, operation, page_response
from ..web.params import credentials
from ..web.sessions import set_session_cookie
from ..web.state import app_state
from ..web.templating import templates
from ..web.urls import urls
from ..web.validate import get_str, read_json

NO_STORE = {"Cache-Control": "no-store"}
REQUESTED = obj(
    ["requested", "mail", "expires_in_minutes", "message"],
    requested={"type": "boolean"},
    mail={"type": "boolean", "description": "false: this server sends no mail (ask the owner)"},
    expires_in_minutes={"type": ["integer", "null"]},
    message=TEXT,
)
READER = obj(
    ["hub", "url", "signed_in", "kind", "email", "expires_at"],
    hub=TEXT,
    url=TEXT,
    signed_in={"type": "boolean"},
    kind={"const": "reader"},
    email=TEXT,
    expires_at=NULLABLE_TEXT,
)


@operation(
    "Ask for a one-time sign-in link to an email-restricted doc: mailed only if the doc is shared with "
    "that address; the answer is the same either way",
    body=body_schema(["email"], email={"type": "string", "maxLength": 254, "examples": ["ann@example.com"]}),
    errors=(400, 404, 413),
    limited=True,
    responses={202: json_response(REQUESTED, "Asked (a link is mailed if the address is listed)")},
)
async def request_link(request: Request) -> Response:
    data = await read_json(request, fields=("email",))
    email = get_str(data, "email", required=True, allow_empty=False, max_len=1000)
    body = await sharing.request_link(
        app_state(request), credentials(request), urls(request), request.path_params["doc_id"], email
    )
    return JSONResponse(body, status_code=202, headers=NO_STORE)


@operation(
    "Sign this browser in as a reader with a mailed sign-in link (used up; sets the session cookie; the "
    "page's CSRF token is always needed)",
    body=body_schema(["link"], link={"type": "string", "maxLength": 200}),
    errors=(400, 403, 404, 413),
    limited=True,
    responses={200: json_response(READER, "Signed in as a reader of the doc's hub")},
)
async def reader_session(request: Request) -> Response:
    data = await read_json(request, fields=("link",))
    secret = get_str(data, "link", required=True, allow_empty=False, max_len=200).strip()
    change = await sessions.sign_in_reader(
        app_state(request), credentials(request), urls(request), request.path_params["doc_id"], secret
    )
    response = JSONResponse(change.body, headers=NO_STORE)
    set_session_cookie(request, response, change.keep, change.max_age)
    return response


@operation(
    "The page a mailed sign-in link opens (its secret rides after #; the page's script signs in)",
    tag="pages",
    page=True,
    errors=(404,),
    responses={200: page_response("Signing in")},
)
async def reader_signin_page(request: Request) -> Response:
    doc_id = request.path_params["doc_id"]
    if not looks_like_id(doc_id):
        raise not_found("doc")
    return templates.TemplateResponse(request, "reader_signin.html", {"doc_id": doc_id}, headers=NO_STORE)


@operation(
    "The sign-in form of a page shared with people: asks for a link as the API does",
    tag="pages",
    page=True,
    errors=(400, 404),
    form=(
        "application/x-www-form-urlencoded",
        obj((), email=TEXT, csrf_token={**TEXT, "description": "the token the form's page carries"}),
    ),
    responses={202: page_response("Asked: the same page whether or not the address is listed")},
)
async def request_link_form(request: Request) -> Response:
    form = await request.form(max_files=0, max_fields=5)
    doc_id = request.path_params["doc_id"]
    sent = await sharing.request_link(
        app_state(request), credentials(request), urls(request), doc_id, str(form.get("email") or "")
    )
    return templates.TemplateResponse(
        request, "shared.html", {"shared": {"id": doc_id}, "sent": sent}, status_code=202, headers=NO_STORE
    )


routes = [
    Route("/api/docs/{doc_id}/access/request", request_link, methods=["POST"]),
    Route("/api/docs/{doc_id}/access/session", reader_session, methods=["POST"]),
    Route("/{doc_id}/signin", reader_signin_page, methods=["GET"]),
    Route("/{doc_id}/access", request_link_form, methods=["POST"]),
]
