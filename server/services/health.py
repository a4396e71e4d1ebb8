"""Liveness and a little state for operators: owed work, the worker, the question lane, curation."""

from __future__ import annotations

from typing import Any

from ..curation.worker import curation_mode
from ..indexing.indexer import owed_counts
from ..store import analyses as analysis_store
from ..store import enrichments as enrichment_store
from ..store import outbox as outbox_store
from ..store.space import current_space
from .context import Context


async def health(ctx: Context) -> dict[str, Any]:
    row = await owed_counts(ctx.db)
    async with ctx.db.owner.connection() as conn:
        curation = await enrichment_store.totals(conn)
        curation["owed_analyses"] = await analysis_store.owed_count(conn)
        usage = await enrichment_store.usage_by_job(conn)
        space = await current_space(conn)
        mail = await outbox_store.stats(conn)
    return {
        "status": "ok",
        "embedder": ctx.embedder.name if ctx.embedder else None,
        # the space the stored vectors are in; another than the embedder's while re-indexing
        "space": {"model": space[0], "dim": space[1]} if space is not None else None,
        "owed": row["docs"] + row["bundles"],  # indexing work not done yet
        "owed_docs": row["docs"],
        "owed_bundles": row["bundles"],
        "worker": (
            "in-process" if ctx.worker is not None else "process" if ctx.worker_process is not None else "external"
        ),
        # the in-process worker's backoff while the embedder (or database) is down
        "worker_failed_tries": ctx.worker.failures if ctx.worker is not None else None,
        "worker_next_try_seconds": ctx.worker.backoff() if ctx.worker is not None else None,
        **({"questions": ctx.questions.stats()} if ctx.questions is not None else {}),
        # public reads' replicas (MEMORYWIKI_REPLICA_URLS): each one's state and lag, and how
        # many public reads went to the primary instead
        **(
            {"replicas": ctx.db.public.report(), "public_reads_on_primary": ctx.db.public.primary_reads}
            if ctx.db.public.replicas
            else {}
        ),
        # sign-in mails: counts and the last delivery error (never an address or a link)
        "mail": {"configured": ctx.mail is not None, **mail},
        "curation": {
            "mode": curation_mode(ctx.curator),
            # where the curator runs: "server" (this process), "process" (its worker child) or
            # "external" (`memorywiki worker` processes); null when curation is off
            "runs_in": ctx.curation_runs_in,
            "owed_enrichments": curation["owed"],
            "owed_suggestions": curation["owed_suggestions"],
            "owed_analyses": curation["owed_analyses"],
            "enriched_by_model": curation["by_model"],
            "enriched_extractively": curation["extractive"],
            "model_calls": curation["calls"],
            "prompt_tokens": curation["prompt_tokens"],
            "completion_tokens": curation["completion_tokens"],
            "by_job": usage,
        },
    }
