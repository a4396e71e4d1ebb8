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

from psycopg import sql

from ..embedding.base import Embedder
from ..store.db import Database
from ..store.graph import EdgeRule, refresh_doc_edges
from ..store.space import ensure_space

log = logging.getLogger("memorywiki.indexer")

DOC_TEXT_CHARS = 8000
LEASE = "5 minutes"

# A claim is a lease held by a worker's session (claimed_by = its backend pid): it
# lapses when the lease runs out or at once when that session is gone (a crashed or
# killed worker), so a restart picks the work up immediately.
CLAIM = """
UPDATE {table} SET claimed_until = now() + {lease}::interval, claimed_by = %(worker)s
WHERE id IN (
    SELECT id FROM {table} t
    WHERE deleted_at IS NULL
      AND source_hash IS DISTINCT FROM embedded_hash
      AND (claimed_until IS NULL OR claimed_until < now()
           OR NOT EXISTS (SELECT 1 FROM pg_stat_activity a WHERE a.pid = t.claimed_by))
    ORDER BY updated_at
    LIMIT %(limit)s
    FOR UPDATE SKIP LOCKED)
RETURNING id
"""
CLAIM_DOCS = sql.SQL(CLAIM).format(table=sql.Identifier("docs"), lease=sql.Literal(LEASE))
CLAIM_BUNDLES = sql.SQL(CLAIM).format(table=sql.Identifier("bundles"), lease=sql.Literal(LEASE))


def chunk_text(heading_path: str, markdown: str) -> str:
    """What a chunk's vector is computed from: its breadcrumb gives a section its context."""
    return f"{heading_path}\n\n{markdown}"


def doc_text(title: str, markdown: str) -> str:
    """Only for a doc with no chunks (an empty body): its title is all there is to embed."""
    return f"{title}\n\n{markdown[:DOC_TEXT_CHARS]}"


# A doc's vector is the normalised mean of its chunk vectors: it covers the whole doc
# (a model that truncates at 256 tokens would only see the start of a long one) and
# costs no embedding input of its own, so an edit embeds exactly the changed chunks.
DOC_VECTOR_FROM_CHUNKS = """
UPDATE docs SET embedding = (
    SELECT l2_normalize(avg(embedding)) FROM chunks WHERE doc_id = %(doc)s AND embedding IS NOT NULL)
WHERE id = %(doc)s
"""


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
    doc = await (await conn.execute(
        """SELECT id, title, markdown, source_hash, embedded_hash, embedded_chunk_hashes
           FROM docs WHERE id = %s AND deleted_at IS NULL""", (doc_id,)
    )).fetchone()
    if doc is None:
        return None
    if doc["embedded_hash"] == doc["source_hash"]:
        return {"skipped": "unchanged"}
    chunks = await (await conn.execute(
        "SELECT id, heading_path, markdown, hash, embedding IS NULL AS missing FROM chunks"
        " WHERE doc_id = %s ORDER BY ordinal", (doc_id,)
    )).fetchall()
    return DocPlan(
        doc_id=doc_id,
        source_hash=doc["source_hash"],
        previous_hashes=list(doc["embedded_chunk_hashes"]),
        current_hashes=[c["hash"] for c in chunks],
        missing=[c for c in chunks if c["missing"]],
        doc_input=None if chunks else doc_text(doc["title"], doc["markdown"]),
    )


RELEASE_DOCS = "UPDATE docs SET claimed_until = NULL, claimed_by = NULL WHERE id = ANY(%s)"
RELEASE_BUNDLES = "UPDATE bundles SET claimed_until = NULL, claimed_by = NULL WHERE id = ANY(%s)"


async def _store_chunk_vectors(conn, chunks: list[dict[str, Any]], vectors: list[list[float]]) -> None:
    """Each vector onto its chunk, only if the chunk still has the text that was embedded."""
    async with conn.cursor() as cur:
        await cur.executemany("UPDATE chunks SET embedding = %s WHERE id = %s AND hash = %s",
                              [(vec, c["id"], c["hash"]) for c, vec in zip(chunks, vectors)])


async def _write_doc(conn, plan: DocPlan, edges: EdgeRule) -> bool:
    """Store the vectors; mark the doc indexed only if it did not change meanwhile. The doc's
    vector changed, so its graph edges are measured again (its own rows only)."""
    vectors = plan.vectors
    async with conn.transaction():
        doc = await (await conn.execute(
            "SELECT source_hash FROM docs WHERE id = %s FOR UPDATE", (plan.doc_id,)
        )).fetchone()
        if doc is None:
            return False
        await _store_chunk_vectors(conn, plan.missing, vectors)
        if doc["source_hash"] != plan.source_hash:
            await conn.execute(RELEASE_DOCS, ([plan.doc_id],))
            return False
        if plan.doc_input is None:
            await conn.execute(DOC_VECTOR_FROM_CHUNKS, {"doc": plan.doc_id})
        else:
            await conn.execute("UPDATE docs SET embedding = %s WHERE id = %s", (vectors[-1], plan.doc_id))
        await refresh_doc_edges(conn, plan.doc_id, edges)
        await conn.execute(
            """UPDATE docs SET embedded_hash = source_hash, embedded_chunk_hashes = %s,
                   claimed_until = NULL, claimed_by = NULL, index_error = NULL
               WHERE id = %s""",
            (plan.current_hashes, plan.doc_id),
        )
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
    rest are still missing) and its claim let go, like the docs left for next time. So a 5 MB
    page (~4,000 chunks, minutes of CPU) shows its progress as it goes and never holds back
    the pages saved after it; without it, nothing of a 32-doc batch holding such a page was
    written for the whole 240 s of bench/underload.py's window.

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
        await conn.execute(RELEASE_DOCS, ([d for d in doc_ids if d in reports],))
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
                await _store_chunk_vectors(conn, plan.missing[:take], vectors[offset:])
            reports[plan.doc_id] = {"partly": {"chunks_embedded": take, "chunks_left": len(plan.missing) - take}}
        for plan in later:
            reports[plan.doc_id] = {"later": True}
        await conn.execute(RELEASE_DOCS, ([p.doc_id for p in later] + ([part[0].doc_id] if part else []),))
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

BUNDLE_TEXT = """
SELECT b.id, b.title, b.description, b.source_hash,
       coalesce(string_agg(d.title, E'\\n' ORDER BY bd.position), '') AS member_titles
FROM bundles b
LEFT JOIN bundle_docs bd ON bd.bundle_id = b.id
LEFT JOIN docs d ON d.id = bd.doc_id AND doc_is_public(d)
WHERE b.id = %s AND b.deleted_at IS NULL
GROUP BY b.id
"""


def bundle_text(title: str, description: str, member_titles: str) -> str:
    return f"{title}\n\n{description}\n\n{member_titles}".strip()


async def index_bundle(db: Database, embedder: Embedder, bundle_id: str) -> dict[str, Any] | None:
    async with db.owner.connection() as conn:
        row = await (await conn.execute(BUNDLE_TEXT, (bundle_id,))).fetchone()
        current = row and await (await conn.execute(
            "SELECT embedded_hash FROM bundles WHERE id = %s", (bundle_id,)
        )).fetchone()
        if row is None or current["embedded_hash"] == row["source_hash"]:
            await conn.execute(RELEASE_BUNDLES, ([bundle_id],))  # as for docs: no claim outlives its use
            return None if row is None else {"skipped": "unchanged"}
    [vector] = await _embed(embedder, db, [bundle_text(row["title"], row["description"], row["member_titles"])])
    async with db.owner.connection() as conn:
        cur = await conn.execute(
            """UPDATE bundles SET embedding = %s, embedded_hash = %s, claimed_until = NULL, claimed_by = NULL
               WHERE id = %s AND source_hash = %s""",
            (vector, row["source_hash"], bundle_id, row["source_hash"]),
        )
        if cur.rowcount == 0:
            # Changed while it was being embedded: release the claim, so the new text is
            # indexed now rather than when the lease runs out.
            await conn.execute(RELEASE_BUNDLES, ([bundle_id],))
    return {"embedded": {"bundle": True}}


async def claim_owed(db: Database, batch: int, worker_pid: int) -> tuple[list[str], list[str]]:
    params = {"worker": worker_pid, "limit": batch}
    async with db.owner.connection() as conn:
        docs = [r["id"] for r in await (await conn.execute(CLAIM_DOCS, params)).fetchall()]
        bundles = [r["id"] for r in await (await conn.execute(CLAIM_BUNDLES, params)).fetchall()]
    return docs, bundles


OWED = """
SELECT (SELECT count(*) FROM docs WHERE deleted_at IS NULL
          AND source_hash IS DISTINCT FROM embedded_hash) AS docs,
       (SELECT count(*) FROM bundles WHERE deleted_at IS NULL
          AND source_hash IS DISTINCT FROM embedded_hash) AS bundles
"""


async def owed_counts(db: Database) -> dict[str, int]:
    """How many docs and bundles still owe indexing (derived from the data, like the claims)."""
    async with db.owner.connection() as conn:
        row = await (await conn.execute(OWED)).fetchone()
    return {"docs": row["docs"], "bundles": row["bundles"]}


async def release_with_error(db: Database, doc_ids: list[str], bundle_ids: list[str],
                             error: str, retry_seconds: float) -> None:
    """Keep the work owed, but wait a little before trying again."""
    async with db.owner.connection() as conn:
        await conn.execute(
            "UPDATE docs SET index_error = %s, claimed_until = now() + make_interval(secs => %s)"
            " WHERE id = ANY(%s)", (error[:500], retry_seconds, doc_ids))
        await conn.execute(
            "UPDATE bundles SET claimed_until = now() + make_interval(secs => %s) WHERE id = ANY(%s)",
            (retry_seconds, bundle_ids))
