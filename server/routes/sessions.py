"""Browser sign-in: the session API (sign in with a token, sign out, ask), the sign-in page
that a "sign-in link to keep" opens, and the page that claims a new hub in the browser.

The sign-in link carries the owner token in its fragment (/hub/<slug>/signin#<token>), which
browsers never send to a server: the page's script (static/signin.js) posts it in a JSON body
to the session endpoint, and the answer sets the session cookie (server/web/sessions.py).
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from ..services import sessions
from ..web.openapi import NULLABLE_TEXT, TEXT, body_schema, json_response, obj, operation, page_response
from ..web.params import credentials
from ..web.sessions import set_session_cookie
from ..web.state import app_state
from ..web.templating import templates
from ..web.urls import urls
from ..web.validate import get_str, read_json

SIGN_IN_FIELDS = ("token",)
SESSION = obj(
    ["hub", "url", "signed_in", "kind", "expires_at"],
    hub=TEXT,
    url=TEXT,
    signed_in={"type": "boolean"},
    kind={"enum": ["owner", "reader", "member", None], "description": "what the session may do"},
    expires_at=NULLABLE_TEXT,
    ended={"enum": ["signed_out", "expired"], "description": "a sign-in of this hub that has ended"},
    signed_out={"type": "boolean", "description": "sign-out only: a live session was ended"},
)
NO_STORE = {"Cache-Control": "no-store"}


def _answer(request: Request, change: sessions.SessionChange) -> Response:
    response = JSONResponse(change.body, headers=NO_STORE)
    set_session_cookie(request, response, change.keep, change.max_age)
    return response


@operation(
    "Sign this browser in to a hub with its owner token (sets the session cookie; the page's "
    "CSRF token is always needed)",
    body=body_schema(["token"], token={"type": "string", "maxLength": 200}),
    errors=(400, 403, 404, 413),
    limited=True,
    responses={200: json_response(SESSION, "Signed in: a new session; this browser's earlier ones of the hub revoked")},
)
async def sign_in(request: Request) -> Response:
    data = await read_json(request, fields=SIGN_IN_FIELDS)
    token = get_str(data, "token", required=True, allow_empty=False, max_len=200).strip()
    return _answer(
        request,
        await sessions.sign_in(
            app_state(request), credentials(request), urls(request), request.path_params["slug"], token
        ),
    )


@operation(
    "Sign this browser out of a hub (its sessions of the hub are revoked; signing out twice is fine)",
    errors=(404,),
    responses={200: json_response(SESSION, "Signed out")},
)
async def sign_out(request: Request) -> Response:
    return _answer(
        request,
        await sessions.sign_out(app_state(request), credentials(request), urls(request), request.path_params["slug"]),
    )


@operation(
    "Whether this browser is signed in to a hub, as what and until when",
    errors=(404,),
    responses={200: json_response(SESSION, "The browser's session of the hub")},
)
async def session_status(request: Request) -> Response:
    return JSONResponse(
        await sessions.status(app_state(request), credentials(request), urls(request), request.path_params["slug"]),
        headers=NO_STORE,
    )


@operation(
    "The sign-in page of a hub (a sign-in link carries the token after #, which never reaches the server)",
    tag="pages",
    page=True,
    errors=(404,),
    responses={200: page_response("The sign-in page")},
)
async def sign_in_page(request: Request) -> Response:
    slug = request.path_params["slug"]
    status = await sessions.status(app_state(request), credentials(request), urls(request), slug)
    return templates.TemplateResponse(request, "signin.html", {"slug": slug, "status": status}, headers=NO_STORE)


@operation(
    "Claim a new hub in the browser: choose its name; its owner token is shown once",
    tag="pages",
    responses={200: page_response("The claim page")},
)
async def claim_page(request: Request) -> Response:
    return templates.TemplateResponse(request, "claim.html", {}, headers=NO_STORE)


routes = [
    Route("/api/hub/{slug}/session", sign_in, methods=["POST"]),
    Route("/api/hub/{slug}/session", sign_out, methods=["DELETE"]),
    Route("/api/hub/{slug}/session", session_status, methods=["GET"]),
    Route("/hub/{slug}/signin", sign_in_page, methods=["GET"]),
    Route("/new-hub", claim_page, methods=["GET"]),
]
