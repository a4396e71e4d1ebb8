"""What every use case runs against: the settings, the store and the app's shared helpers."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..config import Settings
from ..embedding.base import Embedder
from ..store.db import Database
from .access import Limits


@dataclass(kw_only=True)
class Context:
    settings: Settings
    db: Database
    embedder: Embedder | None
    limits: Limits
    worker: Any = None  # the in-process Worker, when running
    curator: Any = None  # the Curator (server/curation/worker.py), None when curation is off
    curation_runs_in: str | None = None  # "server", "process" (the worker child) or "external"
    worker_process: Any = None  # the child-process worker (WorkerProcess), when running
    questions: Any = None  # the QuestionLane recall embeds through, when there is an embedder
    reranker: Any = None  # the optional rerank stage (server/embedding/rerank.py), when configured
    mail: Any = None  # the outbox drainer (server/mail/outbox.py), when SMTP is configured

    def wake_mail(self) -> None:
        if self.mail is not None:
            self.mail.wake.set()

    def wake_worker(self) -> None:
        if self.worker is not None:
            self.worker.wake.set()
