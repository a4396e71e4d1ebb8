"""The curator: a worker loop of its own beside the indexer, so a slow chat model never
holds up embeddings (and curation runs, extractively, even with no embedder at all).

Each round it claims owed work with SKIP LOCKED leases and does it:
1. enrich owed docs (model or extractive) and store them with their concepts;
2. re-analyse bundles whose public members or enrichments changed;
3. recompute the suggested bundles of hubs marked as changed (debounced, so a bulk import
   is grouped once, not after every doc).
A model outage releases the claims with an exponential back-off; nothing is lost.
"""

from __future__ import annotations

import asyncio
import logging
from collections import Counter
from dataclasses import dataclass
from typing import Any

import psycopg

from ..store import analyses as analysis_store
from ..store import concepts as concept_store
from ..store import enrichments as enrichment_store
from ..store import suggestions as suggestion_store
from ..store.db import Database
from ..tokens import new_id
from . import suggest
from .suggest import as_list
from .analysis import analyse_extractively, analyse_with_model
from .concepts import concept_key
from .contract import BUNDLE_NAME_SCHEMA
from .enrich import Budget, ChunkText, enrich
from .llm import ChatModel, ModelError, ModelRefused, ModelUnavailable, ask_validated

log = logging.getLogger("memorywiki.curation")

NAME_SYSTEM = """You name a group of related pages from someone's knowledge wiki so they can \
accept it as a reading list. Give a short topic title and one line on what the pages cover \
together. Use only what the page descriptions say. Answer with the JSON object only."""

MAX_BACKOFF = 300.0


@dataclass
class CurationConfig:
    budget: Budget
    wait_for_vectors: bool = True
    vector_grace: float = 120.0
    suggest_debounce: float = 5.0
    suggest_neighbors: int = 5
    suggest_min_similarity: float = 0.35
    suggest_max_docs: int = 2000
    batch: int = 4
    idle_seconds: float = 1.0
    retry_seconds: float = 5.0


class Curator:
    def __init__(self, db: Database, model: ChatModel | None, config: CurationConfig) -> None:
        self.db = db
        self.model = model
        self.config = config
        self.wake = asyncio.Event()
        self.outages = 0  # consecutive model outages: the back-off doubles with each
        self._stopping = False
        self._session = None  # held open: its backend pid marks this curator's claims

    def stop(self) -> None:
        self._stopping = True
        self.wake.set()

    async def _pid(self) -> int:
        import psycopg

        if self._session is None or self._session.closed:
            self._session = await psycopg.AsyncConnection.connect(self.db.url, autocommit=True)
        return self._session.info.backend_pid

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None

    def backoff(self) -> float:
        return min(MAX_BACKOFF, self.config.retry_seconds * (2 ** max(0, self.outages - 1)))

    # ---- 1. enrichment --------------------------------------------------------------------

    async def enrich_doc(self, doc_id: str) -> bool:
        async with self.db.owner.connection() as conn:
            doc = await enrichment_store.doc_input(conn, doc_id)
            if doc is None:
                await enrichment_store.let_go(conn, doc_id)
                return False
        chunks = [ChunkText(c["heading_path"], c["markdown"],
                            as_list(c["embedding"])) for c in doc["chunks"]]
        result = await enrich(self.model, doc["title"], chunks, self.config.budget)
        rows = [(concept_key(c["name"]), c["name"], c["kind"], c.get("gloss", ""), c.get("aliases", []))
                for c in result.data.get("concepts", [])]
        async with self.db.owner.connection() as conn:
            await enrichment_store.add_usage(conn, "enrich", result.calls, result.prompt_tokens, result.completion_tokens)
            return await enrichment_store.write(conn, doc_id, doc["source_hash"], result, rows)

    async def enrich_owed(self) -> int:
        async with self.db.owner.connection() as conn:
            ids = await enrichment_store.claim_owed(
                conn, worker=await self._pid(), limit=self.config.batch,
                wait_for_vectors=self.config.wait_for_vectors, vector_grace=self.config.vector_grace)
        for i, doc_id in enumerate(ids):
            try:
                await self.enrich_doc(doc_id)
            except ModelUnavailable as exc:
                self.outages += 1
                log.warning("chat model unavailable, enrichment stays owed (retry in %.0fs): %s", self.backoff(), exc)
                async with self.db.owner.connection() as conn:
                    await enrichment_store.release(conn, ids[i:], str(exc), self.backoff())
                raise
            except Exception as exc:  # a bad doc must not stop the others; it is retried later
                log.exception("enriching %s failed", doc_id)
                async with self.db.owner.connection() as conn:
                    await enrichment_store.release(conn, [doc_id], repr(exc), MAX_BACKOFF)
        if ids:
            self.outages = 0
        return len(ids)

    # ---- 2. bundle analysis ---------------------------------------------------------------

    async def analyse_owed(self) -> int:
        async with self.db.owner.connection() as conn:
            ids = await analysis_store.claim_owed(conn, worker=await self._pid(), limit=self.config.batch)
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
                        analysis = await analyse_with_model(self.model, bundle, members,
                                                            self.config.budget.output_tokens)
                    except ModelRefused as exc:
                        log.warning("chat model refused a bundle analysis, using the extractive one: %s", exc)
                if analysis is None:
                    analysis = analyse_extractively(members)
                async with self.db.owner.connection() as conn:
                    await enrichment_store.add_usage(conn, "analysis", analysis["calls"], analysis["prompt_tokens"],
                                                     analysis["completion_tokens"])
                    await analysis_store.write(conn, bundle_id, bundle["input_hash"],
                                               [m["id"] for m in bundle["members"]], analysis)
            except ModelUnavailable as exc:
                self.outages += 1
                async with self.db.owner.connection() as conn:
                    await analysis_store.release(conn, ids[i:], self.backoff())
                raise
        return len(ids)

    # ---- 3. suggested bundles -------------------------------------------------------------

    async def _name(self, members: list[dict[str, Any]], hub_counts: Any = None,
                    hub_size: int = 0) -> tuple[str, str, str]:
        """(title, description, mode) of a new group: by the model when there is one."""
        if self.model is not None:
            brief = "\n".join(f"- {m['title']}: {m.get('summary') or ''}" for m in members)
            try:
                got = await ask_validated(self.model, NAME_SYSTEM, f"Pages in the group:\n{brief}",
                                          schema_name="bundle_name", schema=BUNDLE_NAME_SCHEMA, max_tokens=300)
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
        async with self.db.public.connection() as conn:  # public docs only, by construction
            docs = await concept_store.hub_vectors(conn, hub["id"], self.config.suggest_max_docs)
            mentions = await concept_store.hub_mentions(conn, hub["id"])
            bundled = await concept_store.hub_bundle_members(conn, hub["id"])
            enriched = await concept_store.enrichments_of(conn, [d["id"] for d in docs])
        vectors = {d["id"]: as_list(d["embedding"]) for d in docs if d["embedding"] is not None}
        concepts: dict[str, list[str]] = {}
        for m in mentions:
            concepts.setdefault(m["doc_id"], []).append(m["name"])
        newest = {d["id"] for d in docs}
        concepts = {d: names for d, names in concepts.items() if d in newest}
        hub_counts = Counter(key for names in concepts.values() for key in {concept_key(n) for n in names})

        def grouped() -> list[list[str]]:  # CPU work: off the event loop
            if len(vectors) >= suggest.MIN_SIZE:
                graph = suggest.vector_graph(vectors, self.config.suggest_neighbors,
                                             self.config.suggest_min_similarity)
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
                title, description, mode, sid = previous["title"], previous["description"], previous["mode"], previous["id"]
            else:
                members = [{"title": titles[d], "concepts": concepts.get(d, []),
                            "summary": ((enriched.get(d) or {}).get("data") or {}).get("summary")} for d in ordered]
                title, description, mode = await self._name(members, hub_counts, len(newest))
                sid = new_id()
            offered.append({"id": sid, "signature": sig, "title": title, "description": description,
                            "doc_ids": ordered, "mode": mode})
        async with self.db.owner.connection() as conn:
            await suggestion_store.replace_open(conn, hub["id"], hub["mark"], offered)

    async def suggest_owed(self) -> int:
        async with self.db.owner.connection() as conn:
            hubs = await suggestion_store.claim_owed(conn, worker=await self._pid(), limit=self.config.batch,
                                                     debounce=self.config.suggest_debounce)
        for i, hub in enumerate(hubs):
            try:
                await self.suggest_for_hub(hub)
            except ModelUnavailable:
                self.outages += 1
                async with self.db.owner.connection() as conn:
                    await suggestion_store.release(conn, [h["id"] for h in hubs[i:]], self.backoff())
                raise
        return len(hubs)

    # ---- the loop -------------------------------------------------------------------------

    async def run_once(self) -> int:
        """One round of each job; how many items were claimed."""
        return await self.enrich_owed() + await self.analyse_owed() + await self.suggest_owed()

    async def run(self) -> None:
        db_failures = 0  # rounds in a row that found the database unreachable
        while not self._stopping:
            try:
                done = await self.run_once()
                db_failures = 0
            except ModelError:
                done = 0
                await self._sleep(min(self.backoff(), 5.0))
                continue
            except psycopg.OperationalError as exc:  # the database is down or restarting
                db_failures += 1
                wait = min(self.config.retry_seconds * 2 ** (db_failures - 1), 60.0)
                if db_failures & (db_failures - 1) == 0:  # one line on the 1st, 2nd, 4th... failure
                    log.warning("curation: database unavailable (failed round %d in a row), next try in %.0f s: %s",
                                db_failures, wait, str(exc).strip().splitlines()[0] if str(exc).strip() else exc)
                await self._sleep(wait)
                continue
            except Exception:  # keep the curator alive; the work stays owed
                log.exception("curation round failed")
                done = 0
                await self._sleep(self.config.retry_seconds)
                continue
            if done == 0:
                await self._sleep(self.config.idle_seconds)
        await self.close()

    async def _sleep(self, seconds: float) -> None:
        if self._stopping:
            return
        self.wake.clear()
        try:
            await asyncio.wait_for(self.wake.wait(), seconds)
        except TimeoutError:
            pass


def make_curator(settings: Any, db: Database, *, have_embedder: bool) -> Curator | None:
    """The curator these settings ask for (None when curation is off)."""
    if not settings.curation:
        return None
    model = None
    if settings.llm_model:
        model = ChatModel(settings.llm_model, api_key=settings.openai_api_key,
                          base_url=settings.llm_base_url or settings.openai_base_url, timeout=settings.llm_timeout,
                          max_retries=settings.llm_max_retries, max_output_tokens=settings.llm_output_tokens)
    config = CurationConfig(
        budget=Budget(window_tokens=settings.llm_window_tokens, doc_tokens=settings.llm_doc_tokens,
                      output_tokens=settings.llm_output_tokens, extract_chars=settings.curation_extract_chars),
        wait_for_vectors=have_embedder, vector_grace=settings.curation_vector_grace,
        suggest_debounce=settings.suggest_debounce, suggest_neighbors=settings.suggest_neighbors,
        suggest_min_similarity=settings.suggest_min_similarity, suggest_max_docs=settings.suggest_max_docs,
        retry_seconds=settings.curation_retry_seconds,
        idle_seconds=min(1.0, settings.curation_retry_seconds))
    return Curator(db, model, config)


async def start_curator(curator: Curator) -> None:
    """Before the first round: with a model configured, extractive enrichments are redone."""
    if curator.model is not None:
        async with curator.db.owner.connection() as conn:
            redone = await enrichment_store.redo_extractive(conn)
        if redone:
            log.info("chat model %s configured: %d extractive enrichments will be redone", curator.model.name, redone)


def curation_mode(curator: Curator | None) -> str:
    """"off", "extractive" or the model's name: what /healthz and the logs say."""
    if curator is None:
        return "off"
    return curator.model.name if curator.model is not None else "extractive"
