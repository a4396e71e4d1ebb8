"""The curator: a worker loop of its own beside the indexer, so a slow chat model never
holds up embeddings (and curation runs, extractively, even with no embedder at all).

Each round it claims owed work with SKIP LOCKED leases and does it:
1. enrich owed docs (model or extractive) and store them with their concepts;
2. re-analyse bundles whose public members or enrichments changed;
3. recompute the suggested bundles of hubs marked as changed (debounced, so a bulk import
   is grouped once, not after every doc).
A model outage releases the claims until the next try (server/indexing/loop.py): nothing is lost.
"""

from __future__ import annotations

import asyncio
import logging
from collections import Counter
from collections.abc import Sequence
from typing import Any

import psycopg

from ..config import Settings
from ..indexing.loop import OwedWork
from ..store import analyses as analysis_store
from ..store import concepts as concept_store
from ..store import enrichments as enrichment_store
from ..store import suggestions as suggestion_store
from ..store.db import Database
from ..tokens import new_id
from . import suggest
from .analysis import analyse_extractively, analyse_with_model
from .concepts import concept_key
from .contract import BUNDLE_NAME_SCHEMA
from .enrich import Budget, ChunkText, enrich
from .llm import ChatModel, ModelRefused, ModelUnavailable, ask_validated
from .suggest import as_list

log = logging.getLogger("memorywiki.curation")

NAME_SYSTEM = """You name a group of related pages from someone's knowledge wiki so they can \
accept it as a reading list. Give a short topic title and one line on what the pages cover \
together. Use only what the page descriptions say. Answer with the JSON object only."""

BAD_DOC_RETRY = 300.0  # seconds before a doc whose enrichment failed (not an outage) is tried again
BATCH = 4  # items of each job claimed per round


class Curator(OwedWork):
    """Enrichment, bundle analyses and suggestions, a round of each at a time (the loop:
    server/indexing/loop.py); its settings are the server's."""

    job = "curation"
    log = logging.getLogger("memorywiki.curation")
    outage_errors = (psycopg.OperationalError, ModelUnavailable)

    def __init__(
        self, db: Database, model: ChatModel | None, settings: Settings, *, wait_for_vectors: bool = True
    ) -> None:
        super().__init__(
            db,
            idle_seconds=min(1.0, settings.curation_retry_seconds),
            retry_seconds=settings.curation_retry_seconds,
            max_backoff=settings.worker_max_backoff,
        )
        self.model = model
        self.settings = settings
        self.budget = Budget.from_settings(settings)
        self.wait_for_vectors = wait_for_vectors

    def what_failed(self, exc: Exception) -> str:
        return "chat model unavailable" if isinstance(exc, ModelUnavailable) else "database unavailable"

    async def close(self) -> None:
        await super().close()
        if self.model is not None:
            await self.model.aclose()

    # ---- 1. enrichment --------------------------------------------------------------------

    async def enrich_doc(self, doc_id: str) -> bool:
        async with self.db.owner.connection() as conn:
            doc = await enrichment_store.doc_input(conn, doc_id)
            if doc is None:
                await enrichment_store.let_go(conn, doc_id)
                return False
        chunks = [ChunkText(c["heading_path"], c["markdown"], as_list(c["embedding"])) for c in doc["chunks"]]
        result = await enrich(self.model, doc["title"], chunks, self.budget)
        rows = [
            (concept_key(c["name"]), c["name"], c["kind"], c.get("gloss", ""), c.get("aliases", []))
            for c in result.data.get("concepts", [])
        ]
        async with self.db.owner.connection() as conn:
            await enrichment_store.add_usage(
                conn, "enrich", result.calls, result.prompt_tokens, result.completion_tokens
            )
            terms = [(t.key, t.in_title) for t in result.terms]
            return await enrichment_store.write(conn, doc_id, doc["source_hash"], result, rows, terms)

    async def enrich_owed(self) -> int:
        async with self.db.owner.connection() as conn:
            ids = await enrichment_store.claim_owed(
                conn,
                worker=await self.session_pid(),
                limit=BATCH,
                wait_for_vectors=self.wait_for_vectors,
                vector_grace=self.settings.curation_vector_grace,
            )
        for i, doc_id in enumerate(ids):
            try:
                await self.enrich_doc(doc_id)
            except ModelUnavailable as exc:
                async with self.db.owner.connection() as conn:
                    await enrichment_store.release(conn, ids[i:], str(exc), self.lease())
                raise
            except Exception as exc:  # a bad doc must not stop the others; it is retried later
                log.exception("enriching %s failed", doc_id)
                async with self.db.owner.connection() as conn:
                    await enrichment_store.release(conn, [doc_id], repr(exc), BAD_DOC_RETRY)
        return len(ids)

    # ---- 2. bundle analysis ---------------------------------------------------------------

    async def analyse_owed(self) -> int:
        async with self.db.owner.connection() as conn:
            ids = await analysis_store.claim_owed(conn, worker=await self.session_pid(), limit=BATCH)
        for i, bundle_id in enumerate(ids):
            try:
                async with self.db.owner.connection() as conn:
                    bundle = await analysis_store.analysis_input(conn, bundle_id)
                    if bundle is None:
                        await analysis_store.let_go(conn, bundle_id)
                        continue
                members = [m for m in bundle["members"] if m["data"] is not None]
                analysis = None
                if self.model is not None and len(members) >= 2:
                    try:
                        analysis = await analyse_with_model(self.model, bundle, members, self.budget.output_tokens)
                    except ModelRefused as exc:
                        log.warning("chat model refused a bundle analysis, using the extractive one: %s", exc)
                if analysis is None:
                    analysis = analyse_extractively(members)
                async with self.db.owner.connection() as conn:
                    await enrichment_store.add_usage(
                        conn, "analysis", analysis["calls"], analysis["prompt_tokens"], analysis["completion_tokens"]
                    )
                    await analysis_store.write(
                        conn, bundle_id, bundle["input_hash"], [m["id"] for m in bundle["members"]], analysis
                    )
            except ModelUnavailable:
                async with self.db.owner.connection() as conn:
                    await analysis_store.release(conn, ids[i:], self.lease())
                raise
        return len(ids)

    # ---- 3. suggested bundles -------------------------------------------------------------

    async def _name(
        self, members: list[dict[str, Any]], hub_counts: Any = None, hub_size: int = 0
    ) -> tuple[str, str, str]:
        """(title, description, mode) of a new group: by the model when there is one."""
        if self.model is not None:
            brief = "\n".join(f"- {m['title']}: {m.get('summary') or ''}" for m in members)
            try:
                got = await ask_validated(
                    self.model,
                    NAME_SYSTEM,
                    f"Pages in the group:\n{brief}",
                    schema_name="bundle_name",
                    schema=BUNDLE_NAME_SCHEMA,
                    max_tokens=300,
                )
            except ModelRefused as exc:
                log.warning("chat model refused to name a group, using keyphrases: %s", exc)
                title, description = suggest.name_extractively(members, hub_counts, hub_size)
                return title, description, "extractive"
            async with self.db.owner.connection() as conn:
                await enrichment_store.add_usage(conn, "suggest", got.calls, got.prompt_tokens, got.completion_tokens)
            if not got.missing:
                return " ".join(got.valid["title"].split()), " ".join(got.valid["description"].split()), "model"
        title, description = suggest.name_extractively(members, hub_counts, hub_size)
        return title, description, "extractive"

    async def suggest_for_hub(self, hub: dict[str, Any]) -> None:
        async with self.db.public.primary.connection() as conn:  # public docs only, by construction
            docs = await concept_store.hub_vectors(conn, hub["id"], self.settings.suggest_max_docs)
            mentions = await concept_store.hub_mentions(conn, hub["id"])
            bundled = await concept_store.hub_bundle_members(conn, hub["id"])
            enriched = await concept_store.enrichments_of(conn, [d["id"] for d in docs])
        vectors: dict[str, Sequence[float]] = {
            d["id"]: vector for d in docs if (vector := as_list(d["embedding"])) is not None
        }
        concepts: dict[str, list[str]] = {}
        for m in mentions:
            concepts.setdefault(m["doc_id"], []).append(m["name"])
        newest = {d["id"] for d in docs}
        concepts = {d: names for d, names in concepts.items() if d in newest}
        hub_counts = Counter(key for names in concepts.values() for key in {concept_key(n) for n in names})

        def grouped() -> list[list[str]]:  # CPU work: off the event loop
            if len(vectors) >= suggest.MIN_SIZE:
                graph = suggest.vector_graph(
                    vectors, self.settings.suggest_neighbors, self.settings.suggest_min_similarity
                )
            else:
                graph = suggest.concept_graph({d: {concept_key(n) for n in names} for d, names in concepts.items()})
            return suggest.not_yet_bundled(suggest.groups(graph), bundled)

        candidates = await asyncio.to_thread(grouped)
        titles = {d["id"]: d["title"] for d in docs}
        async with self.db.owner.connection() as conn:
            known = await suggestion_store.known(conn, hub["id"])
        offered = []
        for group in candidates:
            sig = suggest.signature(group)
            previous = known.get(sig)
            if previous is not None and previous["status"] != "open":
                continue  # accepted or dismissed: never offered again
            ordered = suggest.reading_order(group, vectors)
            if previous is not None:
                title, description, mode, sid = (
                    previous["title"],
                    previous["description"],
                    previous["mode"],
                    previous["id"],
                )
            else:
                members = [
                    {
                        "title": titles[d],
                        "concepts": concepts.get(d, []),
                        "summary": ((enriched.get(d) or {}).get("data") or {}).get("summary"),
                    }
                    for d in ordered
                ]
                title, description, mode = await self._name(members, hub_counts, len(newest))
                sid = new_id()
            offered.append(
                {
                    "id": sid,
                    "signature": sig,
                    "title": title,
                    "description": description,
                    "doc_ids": ordered,
                    "mode": mode,
                }
            )
        async with self.db.owner.connection() as conn:
            await suggestion_store.replace_open(conn, hub["id"], hub["mark"], offered)

    async def suggest_owed(self) -> int:
        async with self.db.owner.connection() as conn:
            hubs = await suggestion_store.claim_owed(
                conn, worker=await self.session_pid(), limit=BATCH, debounce=self.settings.suggest_debounce
            )
        for i, hub in enumerate(hubs):
            try:
                await self.suggest_for_hub(hub)
            except ModelUnavailable:
                async with self.db.owner.connection() as conn:
                    await suggestion_store.release(conn, [h["id"] for h in hubs[i:]], self.lease())
                raise
        return len(hubs)

    # ---- the round ------------------------------------------------------------------------

    async def run_once(self) -> int:
        """One round of each job; how many items were claimed."""
        return await self.enrich_owed() + await self.analyse_owed() + await self.suggest_owed()


def make_curator(settings: Settings, db: Database, *, have_embedder: bool) -> Curator | None:
    """The curator these settings ask for (None when curation is off)."""
    if not settings.curation:
        return None
    model = ChatModel.from_settings(settings) if settings.llm_model else None
    return Curator(db, model, settings, wait_for_vectors=have_embedder)


async def start_curator(curator: Curator) -> None:
    """Before the first round: with a model configured, extractive enrichments are redone."""
    if curator.model is not None:
        async with curator.db.owner.connection() as conn:
            redone = await enrichment_store.redo_extractive(conn)
        if redone:
            log.info("chat model %s configured: %d extractive enrichments will be redone", curator.model.name, redone)


def curation_mode(curator: Curator | None) -> str:
    """ "off", "extractive" or the model's name: what /healthz and the logs say."""
    if curator is None:
        return "off"
    return curator.model.name if curator.model is not None else "extractive"
