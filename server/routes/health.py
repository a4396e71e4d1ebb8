"""Liveness and a little state for operators."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from ..web import app_state


async def healthz(request: Request) -> Response:
    state = app_state(request)
    async with state.db.owner.connection() as conn:
        row = await (await conn.execute(
            """SELECT (SELECT count(*) FROM docs WHERE deleted_at IS NULL
                         AND source_hash IS DISTINCT FROM embedded_hash) AS docs,
                      (SELECT count(*) FROM bundles WHERE deleted_at IS NULL
                         AND source_hash IS DISTINCT FROM embedded_hash) AS bundles"""
        )).fetchone()
    return JSONResponse({
        "status": "ok",
        "embedder": state.embedder.name if state.embedder else None,
        "owed": row["docs"] + row["bundles"],  # indexing work not done yet
        "owed_docs": row["docs"],
        "owed_bundles": row["bundles"],
        "worker": "in-process" if state.worker is not None else "external",
    })


routes = [Route("/healthz", healthz, methods=["GET"])]
