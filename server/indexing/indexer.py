"""Index refresh: embed what a doc or bundle owes, and nothing else.

Owed work is derived from the data (`source_hash IS DISTINCT FROM embedded_hash`), so a
crash or an embedder outage leaves it owed, never lost. Claims are short leases taken
with FOR UPDATE SKIP LOCKED; the embedding call itself runs outside any transaction, and
the result is written only for chunks whose hash still matches what was embedded.
"""

from __future__ import annotations

import logging
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from ..embedding.base import Embedder
from ..store import indexing
from ..store.db import Database
from ..store.graph import EdgeRule, refresh_doc_edges
from ..store.space import ensure_space

log = logging.getLogger("memorywiki.indexer")

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
        return texts + [self.doc_input] if self.doc_input is not None else texts

    def report(self) -> dict[str, Any]:
        pruned = Counter(self.previous_hashes) - Counter(self.current_hashes)
        return {"embedded": {
            "doc": True,
            "chunks_embedded": len(self.missing),
            "chunks_unchanged": len(self.current_hashes) - len(self.missing),
            "chunks_pruned": sum(pruned.values()),
        }}


async def _plan_doc(conn, doc_id: str) -> DocPlan | dict[str, Any] | None:
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


async def _write_doc(conn, plan: DocPlan, edges: EdgeRule) -> bool:
    """Store the vectors; mark the doc indexed only if it did not change meanwhile. The doc's
    vector changed, so its graph edges are measured again (its own rows only)."""
    vectors = plan.vectors
    async with conn.transaction():
        source_hash = await indexing.lock_source_hash(conn, plan.doc_id)
        if source_hash is None:
            return False
        await indexing.store_chunk_vectors(conn, plan.missing, vectors)
        if source_hash != plan.source_hash:
            await indexing.release_docs(conn, [plan.doc_id])
            return False
        if plan.doc_input is None:
            await indexing.doc_vector_from_chunks(conn, plan.doc_id)
        else:
            await indexing.set_doc_vector(conn, plan.doc_id, vectors[-1])
        await refresh_doc_edges(conn, plan.doc_id, edges)
        await indexing.mark_doc_indexed(conn, plan.doc_id, plan.current_hashes)
    return True


async def _embed(embedder: Embedder, db: Database, texts: list[str]) -> list[list[float]]:
    vectors = await embedder.embed(texts)
    if vectors:
        async with db.owner.connection() as conn:
            await ensure_space(conn, embedder.name, len(vectors[0]))
    return vectors


async def index_docs(db: Database, embedder: Embedder, doc_ids: list[str],
                     edges: EdgeRule = EdgeRule(), *, slice_inputs: int | None = None) -> dict[str, Any]:
    """Embed what each doc owes in one batched call; return a report per doc id.

    `slice_inputs` (the worker's): embed at most this many inputs in this call, smallest docs
    first. A doc that does not fit gets its first chunks' vectors written (it stays owed: the
    rest are still missing) and its claim let go, like the docs left for next time. So a very
    long page shows its progress as it goes and never holds back the pages saved after it.

    Raises EmbedderError with nothing written when the embedder fails.
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
    texts = [text for plan in whole for text in plan.inputs]
    if part is not None:
        plan, take = part
        texts += plan.inputs[:take]
    vectors = await _embed(embedder, db, texts) if texts else []
    offset = 0
    async with db.owner.connection() as conn:
        for plan in whole:
            plan.vectors = vectors[offset:offset + len(plan.inputs)]
            offset += len(plan.inputs)
            await _write_doc(conn, plan, edges)
            reports[plan.doc_id] = plan.report()
        if part is not None:
            plan, take = part
            async with conn.transaction():
                await indexing.store_chunk_vectors(conn, plan.missing[:take], vectors[offset:])
            reports[plan.doc_id] = {"partly": {"chunks_embedded": take, "chunks_left": len(plan.missing) - take}}
        for plan in later:
            reports[plan.doc_id] = {"later": True}
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


async def release_with_error(db: Database, doc_ids: list[str], bundle_ids: list[str],
                             error: str, retry_seconds: float) -> None:
    """Keep the work owed, but wait a little before trying again."""
    async with db.owner.connection() as conn:
        await indexing.release_with_error(conn, doc_ids, bundle_ids, error, retry_seconds)
