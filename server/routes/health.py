"""Liveness and a little state for operators."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from ..indexer import owed_counts
from ..web import app_state


async def healthz(request: Request) -> Response:
    state = app_state(request)
    row = await owed_counts(state.db)
    return JSONResponse({
        "status": "ok",
        "embedder": state.embedder.name if state.embedder else None,
        "owed": row["docs"] + row["bundles"],  # indexing work not done yet
        "owed_docs": row["docs"],
        "owed_bundles": row["bundles"],
        "worker": "in-process" if state.worker is not None else "external",
    })


routes = [Route("/healthz", healthz, methods=["GET"])]
