"""What the coding tools' hooks call: a session's transcript saved as its page, the memory a
session starts with (or the passages for one prompt), and what those injections cost."""

from __future__ import annotations

from starlette.background import BackgroundTask
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from ..services import agent_memory
from ..services.agent_memory import MAX_TOKENS, ContextAsk, SessionCapture, check_session_id, check_tool
from ..services.docs import MAX_TITLE
from ..services.recall import MAX_QUESTION
from ..timing import Phases
from ..web.openapi import NULLABLE_TEXT, TEXT, body_schema, json_response, obj, operation
from ..web.params import credentials
from ..web.state import app_state
from ..web.urls import urls
from ..web.validate import get_dict, get_int, get_str, query_int, read_json

# Every answer here depends on the credential sent (a private page, what the owner may see).
PRIVATE = {"Cache-Control": "private, no-store", "Vary": "Authorization, Cookie"}
CAPTURE_FIELDS = ("title", "transcript", "project", "cwd", "git_branch", "started_at", "note")
CONTEXT_FIELDS = ("kind", "project", "prompt", "max_tokens", "tool", "session_id")
SHORT = {"type": ["string", "null"], "maxLength": 1000}
PROJECT = {
    "type": ["object", "null"],
    "description": "the project the session works in; its pages are found by any of these",
    "properties": {
        "name": {"type": ["string", "null"], "description": "the project's folder name"},
        "remote": {"type": ["string", "null"], "description": "its git remote (origin), as cloned"},
        "path": {"type": ["string", "null"], "description": "its root folder on this machine"},
    },
}
SOURCE = obj(
    ["kind", "url", "title", "breadcrumb"],
    kind={"enum": ["page", "passage"]},
    url=TEXT,
    title=TEXT,
    breadcrumb={**TEXT, "description": "the page's title, or title > section of a passage"},
)
CONTEXT = obj(
    ["hub", "kind", "text", "tokens", "max_tokens", "sources", "private"],
    hub=TEXT,
    kind={"enum": list(agent_memory.KINDS)},
    text={**TEXT, "description": "what to inject, as it is; empty when nothing is worth it"},
    tokens={"type": "integer", "description": "the text's tokens (estimated), as counted for the hub"},
    max_tokens={"type": "integer", "description": "the budget it was made within"},
    sources={"type": "array", "items": SOURCE},
    private={"type": "boolean", "description": "whether the caller's drafts and private pages were read"},
    mode={"enum": ["hybrid", "vector", "fulltext", None], "description": "the search that ran, if one did"},
    project={"type": ["object", "null"]},
)
CAPTURED = obj(
    ["id", "url", "version", "status", "draft", "turns", "redacted"],
    id=TEXT,
    url=TEXT,
    version={"type": "integer"},
    status={"enum": ["created", "updated", "unchanged"]},
    draft={"type": "boolean", "description": "private to the hub's owner (a new page always is)"},
    summary={**NULLABLE_TEXT, "description": "extractive, or the chat model that wrote the summary"},
    appended={"type": "boolean", "description": "the page was edited by hand: new turns were added below"},
    turns={"type": "integer"},
    redacted={
        "type": "object",
        "description": "what was taken out before the session was stored: secrets by kind (never their "
        "values), <private> spans, and whether it was scanned for secrets (the hub's setting)",
    },
    earlier_pages_deleted={"type": "integer", "description": "pages of this session its owner deleted"},
)
USAGE = obj(
    ["hub", "days", "calls", "tokens", "by_kind", "by_day"],
    hub=TEXT,
    days={"type": "integer"},
    calls={"type": "integer"},
    tokens={"type": "integer"},
    by_kind={"type": "object"},
    by_day={"type": "array", "items": obj(["day", "kind", "calls", "tokens"])},
)


@operation(
    "Save a coding session's transcript as its page (one per session; a draft when made; hub owner or member)",
    auth=True,
    path={"tool": {"type": "string", "examples": ["claude-code"]}, "session_id": TEXT},
    body=body_schema(
        ["title", "transcript"],
        title={"type": "string", "maxLength": MAX_TITLE},
        transcript={"type": "string", "description": "the session as `## User` / `## Assistant` turns"},
        project=PROJECT,
        cwd=SHORT,
        git_branch=SHORT,
        started_at=SHORT,
        note={**SHORT, "description": "what the capture left out, said on the page"},
    ),
    errors=(400, 401, 403, 404, 409, 413),
    responses={
        201: json_response(CAPTURED, "Created"),
        200: json_response(CAPTURED, "Updated, or unchanged"),
    },
)
async def capture_session(request: Request) -> Response:
    data = await read_json(request, fields=CAPTURE_FIELDS)
    cap = SessionCapture(
        slug=request.path_params["slug"],
        tool=check_tool(request.path_params["tool"]),
        session_id=check_session_id(request.path_params["session_id"]),
        title=get_str(data, "title", required=True, max_len=MAX_TITLE, allow_empty=False).strip(),
        transcript=get_str(data, "transcript", required=True),
        project=get_dict(data, "project"),
        cwd=get_str(data, "cwd", max_len=1000),
        git_branch=get_str(data, "git_branch", max_len=1000),
        started_at=get_str(data, "started_at", max_len=1000),
        note=get_str(data, "note", max_len=1000),
    )
    body = await agent_memory.capture_session(app_state(request), credentials(request), urls(request), cap)
    return JSONResponse(body, status_code=201 if body["status"] == "created" else 200, headers=PRIVATE)


@operation(
    "The memory to inject into a coding session: at its start, the project's latest pages and what "
    "to know before working on it; with a prompt, the passages above the relevance floor",
    auth=True,
    body=body_schema(
        ["kind"],
        kind={"enum": list(agent_memory.KINDS), "description": "start: a session's opening; prompt: one prompt"},
        project=PROJECT,
        prompt={"type": ["string", "null"], "maxLength": MAX_QUESTION},
        max_tokens={"type": ["integer", "null"], "minimum": 1, "maximum": MAX_TOKENS},
        tool={"type": ["string", "null"], "maxLength": 40},
        session_id={"type": ["string", "null"], "maxLength": agent_memory.MAX_SESSION_ID},
    ),
    errors=(400, 401, 403, 404, 413),
    responses={
        200: {
            **json_response(CONTEXT, "The text to inject, its sources and its tokens"),
            "headers": {
                "Server-Timing": {
                    "description": "where the time went, in ms: auth, lately, recall, app (the whole request)",
                    "schema": TEXT,
                }
            },
        }
    },
)
async def session_context(request: Request) -> Response:
    state = app_state(request)
    data = await read_json(request, state.settings.max_query_bytes, fields=CONTEXT_FIELDS)
    tool = get_str(data, "tool", max_len=40)
    session_id = get_str(data, "session_id", max_len=agent_memory.MAX_SESSION_ID)
    ask = ContextAsk(
        slug=request.path_params["slug"],
        kind=get_str(data, "kind", required=True),
        project=get_dict(data, "project"),
        prompt=get_str(data, "prompt", max_len=MAX_QUESTION),
        max_tokens=get_int(data, "max_tokens", default=None, low=1, high=MAX_TOKENS),
        tool=check_tool(tool) if tool else None,
        session_id=check_session_id(session_id) if session_id else None,
    )
    phases = Phases()
    body, injection = await agent_memory.context(state, credentials(request), urls(request), ask, phases)
    return JSONResponse(
        body,
        headers={**PRIVATE, "Server-Timing": phases.header()},
        background=BackgroundTask(agent_memory.count_injection, state, injection),
    )


@operation(
    "What the coding tools' hooks injected with this hub: calls and tokens per day and kind (hub owner or member)",
    auth=True,
    query={"days": {"type": "integer", "minimum": 1, "maximum": 366, "description": "default 30"}},
    errors=(400, 401, 403, 404),
    responses={200: json_response(USAGE, "The counts, newest day first")},
)
async def context_usage(request: Request) -> Response:
    days = query_int(request, "days", default=30, low=1, high=366)
    body = await agent_memory.usage(app_state(request), credentials(request), request.path_params["slug"], days)
    return JSONResponse(body, headers=PRIVATE)


routes = [
    Route("/api/hub/{slug}/agent-sessions/{tool}/{session_id}", capture_session, methods=["PUT"]),
    Route("/api/hub/{slug}/agent-context", session_context, methods=["POST"]),
    Route("/api/hub/{slug}/agent-context/usage", context_usage, methods=["GET"]),
]
