"""Index refresh: embed what a doc or bundle owes, and nothing else.

Owed work is derived from the data (`source_hash IS DISTINCT FROM embedded_hash`), so a
crash or an embedder outage leaves it owed, never lost. Claims are short leases taken
with FOR UPDATE SKIP LOCKED; the embedding call itself runs outside any transaction, and
the result is written only for chunks whose hash still matches what was embedded.
"""

from __future__ import annotations

import asyncio
import logging
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from psycopg import errors as pg_errors

from ..embedding.base import Embedder
from ..store import indexing
from ..store.connection import Conn
from ..store.db import Database
from ..store.graph import EdgeRule, refresh_doc_edges
from ..store.space import ensure_space

log = logging.getLogger("memorywiki.indexer")

T = TypeVar("T")

DOC_TEXT_CHARS = 8000


def chunk_text(heading_path: str, markdown: str) -> str:
    """What a chunk's vector is computed from: its breadcrumb gives a section its context."""
    return f"{heading_path}\n\n{markdown}"


def doc_text(title: str, markdown: str) -> str:
    """Only for a doc with no chunks (an empty body): its title is all there is to embed."""
    return f"{title}\n\n{markdown[:DOC_TEXT_CHARS]}"


@dataclass
class DocPlan:
    """What one doc owes: the inputs to embed and how to report them."""

    doc_id: str
    source_hash: str
    previous_hashes: list[str]
    current_hashes: list[str]
    missing: list[dict[str, Any]]  # chunk rows with no vector yet
    doc_input: str | None  # set only when the doc has no chunks
    vectors: list[list[float]] = field(default_factory=list)

    @property
    def inputs(self) -> list[str]:
        texts = [chunk_text(c["heading_path"], c["markdown"]) for c in self.missing]
        return [*texts, self.doc_input] if self.doc_input is not None else texts

    def report(self) -> dict[str, Any]:
        pruned = Counter(self.previous_hashes) - Counter(self.current_hashes)
        return {
            "embedded": {
                "doc": True,
                "chunks_embedded": len(self.missing),
                "chunks_unchanged": len(self.current_hashes) - len(self.missing),
                "chunks_pruned": sum(pruned.values()),
            }
        }


async def _plan_doc(conn: Conn, doc_id: str) -> DocPlan | dict[str, Any] | None:
    doc = await indexing.doc_to_index(conn, doc_id)
    if doc is None:
        return None
    if doc["embedded_hash"] == doc["source_hash"]:
        return {"skipped": "unchanged"}
    chunks = await indexing.doc_chunks(conn, doc_id)
    return DocPlan(
        doc_id=doc_id,
        source_hash=doc["source_hash"],
        previous_hashes=list(doc["embedded_chunk_hashes"]),
        current_hashes=[c["hash"] for c in chunks],
        missing=[c for c in chunks if c["missing"]],
        doc_input=None if chunks else doc_text(doc["title"], doc["markdown"]),
    )


# A save or another worker may lock the same rows in another order; PostgreSQL then rolls one
# transaction back. Ours is safe to run again, and failing it would leave the doc claimed
# (owed but untouched) until its lease ran out.
RETRIES = 3
# What PostgreSQL raises for those (psycopg makes each its own OperationalError, not a subclass
# of another): the worker lets a doc's claim go on them rather than wait out an outage.
LOCK_CONFLICTS = (pg_errors.DeadlockDetected, pg_errors.SerializationFailure, pg_errors.TransactionRollback)


async def _retrying(work: Callable[[], Awaitable[T]]) -> T:
    for attempt in range(RETRIES):
        try:
            return await work()
        except LOCK_CONFLICTS:
            if attempt == RETRIES - 1:
                raise
            log.info("indexing transaction rolled back by a lock conflict; running it again")
            await asyncio.sleep(0.05 * (attempt + 1))
    raise AssertionError("unreachable")


async def _finish_doc(conn: Conn, plan: DocPlan, edges: EdgeRule) -> bool:
    return await _retrying(lambda: _finish_doc_once(conn, plan, edges))


async def _finish_doc_once(conn: Conn, plan: DocPlan, edges: EdgeRule) -> bool:
    """Once every input of the doc is embedded (its chunks' vectors already stored): mark the doc
    indexed, only if it did not change meanwhile. The doc's vector changed, so its graph edges
    are measured again (its own rows only)."""
    async with conn.transaction():
        source_hash = await indexing.lock_source_hash(conn, plan.doc_id)
        if source_hash is None:
            return False
        if source_hash != plan.source_hash:
            await indexing.release_docs(conn, [plan.doc_id])
            return False
        if plan.doc_input is None:
            await indexing.doc_vector_from_chunks(conn, plan.doc_id)
        else:
            await indexing.set_doc_vector(conn, plan.doc_id, plan.vectors[-1])
        await refresh_doc_edges(conn, plan.doc_id, edges)
        await indexing.mark_doc_indexed(conn, plan.doc_id, plan.current_hashes)
    return True


@dataclass
class _Input:
    """One text to embed: which doc it is for, and where in that doc's inputs."""

    plan: DocPlan
    index: int
    text: str


async def _embed_and_store(
    db: Database, embedder: Embedder, inputs: list[_Input], edges: EdgeRule, pass_inputs: int | None
) -> None:
    """Embed `inputs` shortest first, in calls of `pass_inputs` (all in one when None), storing each
    call's chunk vectors while the next call embeds, and finishing each doc whose inputs are all in.

    Similar lengths share a call, so a pass pads little; the writes (the vector index's inserts)
    overlap the model's work instead of leaving it idle between slices."""
    order = sorted(inputs, key=lambda item: len(item.text))
    size = max(1, pass_inputs or len(order))
    calls = [order[i : i + size] for i in range(0, len(order), size)]
    total = Counter(id(item.plan) for item in inputs)
    left = total.copy()
    for item in inputs:
        item.plan.vectors = [[] for _ in item.plan.inputs]
    running = asyncio.ensure_future(embedder.embed([item.text for item in calls[0]]))
    try:
        for number, call in enumerate(calls):
            vectors = await running
            if number + 1 < len(calls):
                running = asyncio.ensure_future(embedder.embed([item.text for item in calls[number + 1]]))
            async with db.owner.connection() as conn:
                if number == 0:
                    await ensure_space(conn, embedder.name, len(vectors[0]))
                chunks = [
                    (item.plan.missing[item.index], vector)
                    for item, vector in zip(call, vectors, strict=True)
                    if item.index < len(item.plan.missing)
                ]

                async def store(chunks: list[tuple[Any, list[float]]] = chunks) -> None:
                    async with conn.transaction():
                        await indexing.store_chunk_vectors(conn, [c for c, _ in chunks], [v for _, v in chunks])

                await _retrying(store)
                done = []
                for item, vector in zip(call, vectors, strict=True):
                    item.plan.vectors[item.index] = vector
                    left[id(item.plan)] -= 1
                    if left[id(item.plan)] == 0:
                        done.append(item.plan)
                for plan in done:
                    if total[id(plan)] == len(plan.inputs):  # a whole doc (not the slice's part)
                        await _finish_doc(conn, plan, edges)
    finally:
        if not running.done():
            running.cancel()
            await asyncio.gather(running, return_exceptions=True)


async def index_docs(
    db: Database,
    embedder: Embedder,
    doc_ids: list[str],
    edges: EdgeRule = EdgeRule(),
    *,
    slice_inputs: int | None = None,
    pass_inputs: int | None = None,
) -> dict[str, Any]:
    """Embed what each doc owes; return a report per doc id.

    `slice_inputs` (the worker's): embed at most this many inputs in this call, smallest docs
    first. A doc that does not fit gets its first chunks' vectors written (it stays owed: the
    rest are still missing) and its claim let go, like the docs left for next time. So a very
    long page shows its progress as it goes and never holds back the pages saved after it.
    `pass_inputs`: texts per embedding call (see _embed_and_store); None: one call.

    Raises EmbedderError when the embedder fails; the vectors stored until then match their
    chunks' text, and every doc not finished stays owed.
    """
    reports: dict[str, Any] = {}
    plans: list[DocPlan] = []
    async with db.owner.connection() as conn:
        for doc_id in doc_ids:
            plan = await _plan_doc(conn, doc_id)
            if isinstance(plan, DocPlan):
                plans.append(plan)
            else:
                reports[doc_id] = plan
        # Deleted (or already current) since it was claimed: let the claim go now. Kept, it
        # would hold the doc for the whole lease, so a restore or an edit right after the
        # delete would wait minutes to be indexed.
        await indexing.release_docs(conn, [d for d in doc_ids if d in reports])
    if not plans:
        return reports
    whole, part, later = _fit(plans, slice_inputs)
    inputs = [_Input(plan, i, text) for plan in whole for i, text in enumerate(plan.inputs)]
    if part is not None:
        plan, take = part
        inputs += [_Input(plan, i, text) for i, text in enumerate(plan.inputs[:take])]
    if inputs:
        await _embed_and_store(db, embedder, inputs, edges, pass_inputs)
    unembedded = [plan for plan in whole if not plan.inputs]  # a section removed: nothing to embed
    if unembedded:
        async with db.owner.connection() as conn:
            for plan in unembedded:
                await _finish_doc(conn, plan, edges)
    for plan in whole:
        reports[plan.doc_id] = plan.report()
    if part is not None:
        plan, take = part
        reports[plan.doc_id] = {"partly": {"chunks_embedded": take, "chunks_left": len(plan.missing) - take}}
    for plan in later:
        reports[plan.doc_id] = {"later": True}
    async with db.owner.connection() as conn:
        await indexing.release_docs(conn, [p.doc_id for p in later] + ([part[0].doc_id] if part else []))
    return reports


def _fit(plans: list[DocPlan], budget: int | None) -> tuple[list[DocPlan], tuple[DocPlan, int] | None, list[DocPlan]]:
    """(docs embedded whole, (a doc embedded in part, how many of its inputs), docs left for later):
    the smallest first, within `budget` inputs; the first doc always gets a share."""
    if budget is None:
        return plans, None, []
    whole: list[DocPlan] = []
    part = None
    later: list[DocPlan] = []
    budget = max(1, budget)
    for plan in sorted(plans, key=lambda p: len(p.inputs)):
        n = len(plan.inputs)
        if n <= budget:
            whole.append(plan)
            budget -= n
        elif part is None and budget > 0 and plan.doc_input is None:  # chunks only: a prefix of them
            part = (plan, budget)
            budget = 0
        else:
            later.append(plan)
    return whole, part, later


# ---------------------------------------------------------------- bundles


async def _embed(embedder: Embedder, db: Database, texts: list[str]) -> list[list[float]]:
    vectors = await embedder.embed(texts)
    if vectors:
        async with db.owner.connection() as conn:
            await ensure_space(conn, embedder.name, len(vectors[0]))
    return vectors


def bundle_text(title: str, description: str, member_titles: str) -> str:
    return f"{title}\n\n{description}\n\n{member_titles}".strip()


async def index_bundle(db: Database, embedder: Embedder, bundle_id: str) -> dict[str, Any] | None:
    async with db.owner.connection() as conn:
        row = await indexing.bundle_to_index(conn, bundle_id)
        if row is None or row["embedded_hash"] == row["source_hash"]:
            await indexing.release_bundles(conn, [bundle_id])  # as for docs: no claim outlives its use
            return None if row is None else {"skipped": "unchanged"}
    [vector] = await _embed(embedder, db, [bundle_text(row["title"], row["description"], row["member_titles"])])
    async with db.owner.connection() as conn:
        if not await indexing.set_bundle_vector(conn, bundle_id, vector, row["source_hash"]):
            # Changed while it was being embedded: release the claim, so the new text is
            # indexed now rather than when the lease runs out.
            await indexing.release_bundles(conn, [bundle_id])
    return {"embedded": {"bundle": True}}


async def claim_owed(db: Database, batch: int, worker_pid: int) -> tuple[list[str], list[str]]:
    async with db.owner.connection() as conn:
        return await indexing.claim(conn, worker_pid, batch)


async def owed_counts(db: Database) -> dict[str, int]:
    """How many docs and bundles still owe indexing (derived from the data, like the claims)."""
    async with db.owner.connection() as conn:
        return await indexing.owed_counts(conn)


async def release_with_error(
    db: Database, doc_ids: list[str], bundle_ids: list[str], error: str, retry_seconds: float
) -> None:
    """Keep the work owed, but wait a little before trying again."""
    async with db.owner.connection() as conn:
        await indexing.release_with_error(conn, doc_ids, bundle_ids, error, retry_seconds)
