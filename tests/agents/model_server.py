"""A scripted model on loopback for the real coding tools (Claude Code, Codex CLI, Aider).

The tools are pointed at this server instead of their vendor's API. Every request is parsed
into a `Turn` (tests/agents/wire.py), handed to the scripted model (a callable, see
skill_model.py) and its `Reply` is sent back in the request's own format, streamed when the
tool asked to stream. Every exchange is recorded so a test can assert what the tool really
sent; any request the server does not know is recorded too and answered 404, so a tool that
phones somewhere unexpected shows up in `unknown` instead of hanging.
"""

from __future__ import annotations

import threading
import traceback
from collections.abc import Callable
from dataclasses import dataclass

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, StreamingResponse
from starlette.routing import Route

from tests.agents.wire import WIRES, Reply, Turn
from tests.threaded_server import ThreadedServer

Model = Callable[[Turn], Reply]

_PATHS = {
    "anthropic": ("/v1/messages", "/messages"),
    "responses": ("/v1/responses", "/responses"),
    "chat": ("/v1/chat/completions", "/chat/completions"),
}


@dataclass
class Exchange:
    """One request the tool sent and what the scripted model answered."""

    turn: Turn
    reply: Reply | None
    path: str
    headers: dict[str, str]


class ModelServer(ThreadedServer):
    """Starlette + uvicorn on 127.0.0.1 and a free port, in a background thread."""

    name = "model-server"

    def __init__(self, model: Model) -> None:
        self.model = model
        self.exchanges: list[Exchange] = []
        self.unknown: list[str] = []  # "METHOD /path" of requests nobody handles
        self.errors: list[str] = []  # tracebacks of the scripted model (a test bug, or a finding)
        self._lock = threading.Lock()
        routes = [
            Route(path, self._handler(wire), methods=["POST"]) for wire, paths in _PATHS.items() for path in paths
        ]
        routes.append(Route("/{rest:path}", self._unknown, methods=["GET", "POST", "PUT", "DELETE", "HEAD"]))
        self.app = Starlette(routes=routes)

    def turns(self, wire: str | None = None) -> list[Turn]:
        with self._lock:
            return [e.turn for e in self.exchanges if wire is None or e.turn.wire == wire]

    def _handler(self, wire: str):
        parse, events, as_json = WIRES[wire]

        async def handle(request: Request):
            try:
                body = await request.json()
            except ValueError:
                return JSONResponse(
                    {"error": {"type": "invalid_request_error", "message": "not JSON"}}, status_code=400
                )
            turn = parse(body)
            try:
                reply = self.model(turn)
            except Exception:
                tb = traceback.format_exc()
                with self._lock:
                    self.errors.append(tb)
                    self.exchanges.append(Exchange(turn, None, request.url.path, dict(request.headers)))
                return JSONResponse(
                    {
                        "error": {
                            "type": "invalid_request_error",
                            "message": "scripted model failed: " + tb.splitlines()[-1],
                        }
                    },
                    status_code=400,
                )
            with self._lock:
                self.exchanges.append(Exchange(turn, reply, request.url.path, dict(request.headers)))
            if not turn.stream:
                return JSONResponse(as_json(reply, turn))
            return StreamingResponse(
                events(reply, turn), media_type="text/event-stream", headers={"cache-control": "no-cache"}
            )

        return handle

    async def _unknown(self, request: Request) -> JSONResponse:
        with self._lock:
            self.unknown.append(f"{request.method} {request.url.path}")
        return JSONResponse({"error": {"type": "not_found_error", "message": "unknown path"}}, status_code=404)
