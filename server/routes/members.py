"""Members of a hub: the owner adds a co-author by name (their token is shown once), lists
them, and removes one (their token stops working at once)."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from ..services import members
from ..web.openapi import TEXT, body_schema, json_response, obj, operation
from ..web.params import credentials
from ..web.state import app_state
from ..web.urls import urls
from ..web.validate import get_str, read_json

FIELDS = ("name",)
NO_STORE = {"Cache-Control": "private, no-store"}
MEMBER = obj(
    ["name", "via", "added_at"],
    name=TEXT,
    added_at=TEXT,
    via={**TEXT, "description": "how the versions this member saves name them"},
)
ADDED = obj(
    ["name", "via", "added_at", "hub", "url", "token"],
    name=TEXT,
    via=TEXT,
    added_at=TEXT,
    hub=TEXT,
    url=TEXT,
    token={**TEXT, "description": "the member's token, shown once: it writes pages into the hub"},
)
MEMBERS = obj(["hub", "url", "members"], hub=TEXT, url=TEXT, members={"type": "array", "items": MEMBER})
REMOVED = obj(["hub", "name", "removed"], hub=TEXT, name=TEXT, removed={"type": "boolean"})


@operation(
    "Add a member (a co-author who writes pages into the hub with a token of their own, shown once; owner only)",
    auth=True,
    body=body_schema(["name"], name={"type": "string", "maxLength": 40, "examples": ["bob"]}),
    errors=(400, 401, 403, 404, 409, 413),
    responses={201: json_response(ADDED, "Added: the answer holds the member's token")},
)
async def add_member(request: Request) -> Response:
    data = await read_json(request, fields=FIELDS)
    name = get_str(data, "name", required=True, allow_empty=False, max_len=40)
    return JSONResponse(
        await members.add(app_state(request), credentials(request), urls(request), request.path_params["slug"], name),
        status_code=201,
        headers=NO_STORE,
    )


@operation(
    "A hub's members (owner only)",
    auth=True,
    errors=(401, 403, 404),
    responses={200: json_response(MEMBERS, "The members, oldest first")},
)
async def list_members(request: Request) -> Response:
    return JSONResponse(
        await members.listing(app_state(request), credentials(request), urls(request), request.path_params["slug"]),
        headers=NO_STORE,
    )


@operation(
    "Remove a member: their token stops working at once (owner only)",
    auth=True,
    errors=(400, 401, 403, 404),
    responses={200: json_response(REMOVED, "Removed")},
)
async def remove_member(request: Request) -> Response:
    return JSONResponse(
        await members.remove(
            app_state(request), credentials(request), request.path_params["slug"], request.path_params["name"]
        ),
        headers=NO_STORE,
    )


routes = [
    Route("/api/hub/{slug}/members", add_member, methods=["POST"]),
    Route("/api/hub/{slug}/members", list_members, methods=["GET"]),
    Route("/api/hub/{slug}/members/{name}", remove_member, methods=["DELETE"]),
]
