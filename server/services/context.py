"""What every use case runs against: the settings, the store and the app's shared helpers."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..config import Settings
from ..embedding.base import Embedder
from ..store.db import Database
from .access import Limits

if TYPE_CHECKING:  # what the app starts beside its use cases; none of them imports a service
    from ..curation.worker import Curator
    from ..embedding.questions import QuestionLane
    from ..embedding.rerank import Reranker
    from ..indexing.worker import Worker
    from ..mail.outbox import Outbox
    from ..worker import WorkerProcess


@dataclass(kw_only=True)
class Context:
    settings: Settings
    db: Database
    embedder: Embedder | None
    limits: Limits
    worker: Worker | None = None  # the in-process indexing worker, when running
    curator: Curator | None = None  # None when curation is off
    curation_runs_in: str | None = None  # "server", "process" (the worker child) or "external"
    worker_process: WorkerProcess | None = None  # the child-process worker, when running
    questions: QuestionLane | None = None  # what recall embeds through, when there is an embedder
    reranker: Reranker | None = None  # the optional rerank stage, when configured
    mail: Outbox | None = None  # the outbox drainer, when SMTP is configured

    @property
    def model(self) -> str:
        """The embedder's model name, which names its embedding space ("" without an embedder)."""
        return self.embedder.name if self.embedder is not None else ""

    def wake_mail(self) -> None:
        if self.mail is not None:
            self.mail.wake.set()

    def wake_worker(self) -> None:
        if self.worker is not None:
            self.worker.wake.set()
