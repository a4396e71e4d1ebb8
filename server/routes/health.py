"""Liveness and a little state for operators."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from ..curation.worker import curation_mode
from ..web.openapi import NULLABLE_TEXT, json_response, obj, operation
from ..indexing.indexer import owed_counts
from ..store import analyses as analysis_store
from ..store import enrichments as enrichment_store
from ..web.state import app_state


HEALTH = obj(["status", "embedder", "owed", "owed_docs", "owed_bundles", "worker"], status={"const": "ok"},
             embedder=NULLABLE_TEXT, owed={"type": "integer"}, owed_docs={"type": "integer"},
             owed_bundles={"type": "integer"}, worker={"enum": ["in-process", "process", "external"]},
             worker_failed_tries={"type": ["integer", "null"]}, worker_next_try_seconds={"type": ["number", "null"]},
             questions={"type": "object", "description": "the question lane: questions, cache_hits, "
                        "forward_passes, embedded, waiting"})


@operation("Liveness, and how much indexing work is owed", tag="operations",
           responses={200: json_response(HEALTH, "The server and its database are up")})
async def healthz(request: Request) -> Response:
    state = app_state(request)
    row = await owed_counts(state.db)
    async with state.db.owner.connection() as conn:
        curation = await enrichment_store.totals(conn)
        curation["owed_analyses"] = await analysis_store.owed_count(conn)
        usage = await enrichment_store.usage_by_job(conn)
    return JSONResponse({
        "status": "ok",
        "embedder": state.embedder.name if state.embedder else None,
        "owed": row["docs"] + row["bundles"],  # indexing work not done yet
        "owed_docs": row["docs"],
        "owed_bundles": row["bundles"],
        "worker": ("in-process" if state.worker is not None
                   else "process" if state.worker_process is not None else "external"),
        # the in-process worker's backoff while the embedder (or database) is down
        "worker_failed_tries": state.worker.failures if state.worker is not None else None,
        "worker_next_try_seconds": state.worker.backoff() if state.worker is not None else None,
        **({"questions": state.questions.stats()} if state.questions is not None else {}),
        # AI curation (server/curation/): owed work, how docs were enriched, model use.
        "curation": {
            "mode": curation_mode(state.curator),
            # where the curator runs: "server" (this process), "process" (its worker child) or
            # "external" (`memorywiki worker` processes); null when curation is off
            "runs_in": state.curation_runs_in,
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
    })


routes = [Route("/healthz", healthz, methods=["GET"])]
