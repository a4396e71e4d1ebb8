"""Long requests that report their progress as they go: newline-delimited JSON.

A client that asks for `Accept: application/x-ndjson` gets one JSON object per line while
the work runs ({"total": N}, then {"done": n, ...}) and, last, {"result": ...} with what the
plain JSON answer would have held, or {"error": {"code", "message"}} when the work failed
after it started. A failure before the first line is the usual error answer, with its status
(a wrong token is a 403, a file that is no export a 422). The work runs to its end even when
the client goes away: a closed tab never leaves an import half done.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

from starlette.requests import Request
from starlette.responses import Response, StreamingResponse

from .errors import as_api_error

log = logging.getLogger("memorywiki.server")

NDJSON = "application/x-ndjson"
Report = Callable[[dict[str, Any]], Awaitable[None]]
_running: set[asyncio.Task[None]] = set()  # the tasks the event loop would otherwise only hold weakly


def wants_progress(request: Request) -> bool:
    return NDJSON in request.headers.get("accept", "").lower()


def _line(item: dict[str, Any]) -> bytes:
    return (json.dumps(item, ensure_ascii=False) + "\n").encode("utf-8")


async def progress_response(work: Callable[[Report], Awaitable[dict[str, Any]]]) -> Response:
    """`work(report)` as a task whose reports stream to the client (see the module docstring)."""
    queue: asyncio.Queue[dict[str, Any] | BaseException] = asyncio.Queue()

    async def run() -> None:
        try:
            await queue.put({"result": await work(queue.put)})
        except Exception as exc:
            await queue.put(exc)

    task = asyncio.create_task(run())
    _running.add(task)
    task.add_done_callback(_running.discard)
    first = await queue.get()
    if isinstance(first, BaseException):
        raise first

    async def lines() -> AsyncIterator[bytes]:
        item: dict[str, Any] | BaseException = first
        while True:
            if isinstance(item, BaseException):
                error = as_api_error(item)
                if error.status >= 500:
                    log.error("a streamed request failed", exc_info=item)
                yield _line({"error": {"code": error.code, "message": error.message}})
                return
            yield _line(item)
            if "result" in item:
                return
            item = await queue.get()

    return StreamingResponse(lines(), media_type=NDJSON, headers={"Cache-Control": "no-store"})
