"""Liveness and a little state for operators."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from ..services.health import health
from ..web.openapi import NULLABLE_TEXT, SPACE, json_response, obj, operation
from ..web.state import app_state

HEALTH = obj(
    ["status", "embedder", "space", "owed", "owed_docs", "owed_bundles", "worker"],
    status={"const": "ok"},
    embedder=NULLABLE_TEXT,
    space=SPACE
    | {
        "description": (
            "the embedding space of the stored vectors: model name and dimension (null before the first vectors)"
        )
    },
    owed={"type": "integer"},
    owed_docs={"type": "integer"},
    owed_bundles={"type": "integer"},
    worker={"enum": ["in-process", "process", "external"]},
    worker_failed_tries={"type": ["integer", "null"]},
    worker_next_try_seconds={"type": ["number", "null"]},
    questions={
        "type": "object",
        "description": "the question lane: questions, cache_hits, forward_passes, embedded, waiting",
    },
    replicas={
        "type": "array",
        "description": (
            "with MEMORYWIKI_REPLICA_URLS: each replica's name, state (ok, lagging, down, read-write, "
            "starting), lag_seconds, the public reads it served, and why it is not ok (error)"
        ),
        "items": {"type": "object"},
    },
    public_reads_on_primary={
        "type": "integer",
        "description": "with replicas: public reads that went to the primary (a client's own writes, no fit replica)",
    },
)


@operation(
    "Liveness, and how much indexing work is owed",
    tag="operations",
    responses={200: json_response(HEALTH, "The server and its database are up")},
)
async def healthz(request: Request) -> Response:
    return JSONResponse(await health(app_state(request)))


routes = [Route("/healthz", healthz, methods=["GET"])]
