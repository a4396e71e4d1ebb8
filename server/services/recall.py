"""Recall: the chunks, docs or bundles of a hub that answer a question, read as the public role."""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from typing import Any, NotRequired, TypedDict

from ..embedding.base import EmbedderError
from ..embedding.rerank import RerankError
from ..embedding.scripts import embedder_scripts, reads
from ..embedding.tokens import estimate_tokens
from ..errors import BadRequest, unknown_hub
from ..store import recall
from ..store.hubs import find_hub_for_recall
from ..store.space import current_space, vector_backlog
from ..timing import Phases
from .context import Context
from .urls import Urls

log = logging.getLogger("memorywiki.recall")

LEVELS = ("chunk", "doc", "bundle")
FUSIONS = recall.FUSIONS  # the first is the default
MAX_QUESTION = 4000
MAX_TOKENS = 10_000_000  # a budget above any context window a model has
# Results longer than this (whole docs at doc level) have their tokens estimated off the event
# loop: a 5 MB page takes a good part of a second.
LONG_RESULTS = 200_000
MAX_RERANK = 50  # fused candidates the reranker sees at most (k's own upper bound)


@dataclass(frozen=True)
class Question:
    slug: str
    question: str
    k: int = 5
    level: str = "chunk"
    hybrid: bool = True  # the API, the CLI and MCP agree
    rerank: bool = False
    fusion: str = FUSIONS[0]
    max_tokens: int | None = None  # results in rank order while their tokens fit


def check_question(question: str) -> str:
    if len(question) > MAX_QUESTION:
        raise BadRequest("question_too_long", f"'question' is longer than {MAX_QUESTION} characters")
    return question


def check_fusion(fusion: str) -> str:
    if fusion not in FUSIONS:
        raise BadRequest("unknown_fusion", f"'fusion' must be one of {', '.join(FUSIONS)}")
    return fusion


def _pages(n: int) -> str:
    return f"{n} page{'' if n == 1 else 's'}"


async def _why_no_vectors(ctx: Context, hub_id: int, space: tuple[str, int] | None) -> str:
    """Why the question's vector cannot be used, in words a user understands (recall then
    answers from full text)."""
    async with ctx.db.owner.connection() as conn:
        owed, replaced = await vector_backlog(conn, hub_id)
    if (replaced or space is not None) and owed:
        return f"re-indexing after an embedder change: {_pages(owed)} left"
    if replaced or space is not None:
        return "re-indexing after an embedder change: answering from full text"
    if owed:
        return f"vectors not ready yet: {_pages(owed)} still indexing"
    return "vectors not ready yet: answering from full text"


async def _await_vector(task: asyncio.Task[list[float]] | None) -> tuple[list[float] | None, str]:
    if task is None:
        return None, "no embedder configured: answering from full text"
    try:
        return await task, ""
    except EmbedderError as exc:
        log.warning("query embedding failed, answering from full text: %s", exc)
        return None, "the embedder is unreachable: answering from full text"


async def question_vector(ctx: Context, hub_id: int, question: str) -> tuple[list[float] | None, int | None, str]:
    """(vector, dim, "") of a question, through the question lane, or (None, None, why not):
    for use cases that search one hub by meaning besides recall (the topic reading list)."""
    if ctx.questions is None:
        return None, None, "no embedder configured: answering from full text"
    async with ctx.db.public.connection() as conn:
        space = await current_space(conn)
    if space is None or space[0] != ctx.model:
        return None, None, await _why_no_vectors(ctx, hub_id, space)
    qvec, why_not = await _await_vector(asyncio.create_task(ctx.questions.embed(question)))
    return qvec, (space[1] if qvec is not None else None), why_not


def _result_text(level: str, result: dict[str, Any]) -> str:
    """What a result hands to the model that reads it (the reranker, or the caller's model)."""
    if level == "chunk":
        return f"{result['heading_path']}\n\n{result['markdown']}"
    if level == "doc":
        return f"{result['title']}\n\n{result['markdown']}"
    return f"{result['title']}\n\n{result['description']}"


async def _rerank(
    ctx: Context, question: str, level: str, results: list[dict[str, Any]], k: int
) -> tuple[list[dict[str, Any]], str]:
    """The fused candidates in the reranker's order, cut to k; or the fused order and why."""
    if ctx.reranker is None:
        return results[:k], "no reranker configured (MEMORYWIKI_RERANK_URL): results in fused order"
    try:
        scores = await ctx.reranker.scores(question, [_result_text(level, r) for r in results])
    except RerankError as exc:
        log.warning("rerank failed, answering in fused order: %s", exc)
        return results[:k], "the reranker is unreachable: results in fused order"
    for result, score in zip(results, scores, strict=True):
        result["rerank_score"] = _round(score)
    order = sorted(range(len(results)), key=lambda i: -scores[i])  # stable: ties keep the fused order
    return [results[i] for i in order[:k]], ""


def _round(value: Any) -> Any:
    return round(value, 6) if isinstance(value, float) else value


def rrf_score(vector_rank: int | None, fts_rank: int | None) -> float:
    """Reciprocal Rank Fusion of the ranks beside a result, sum(1 / (60 + rank)), in the order
    the SQL adds them (vector first), so that under "fusion": "rrf" it is the score bit for bit."""
    total = 0.0
    for rank in (vector_rank, fts_rank):
        if rank is not None:
            total += 1.0 / (recall.RRF_K + rank)
    return total


def _scores(r: dict[str, Any], fusion: str) -> dict[str, Any]:
    """The fused score, and `rrf_score` whatever fusion ran (the seeds' contract): unrounded, so
    that it is exactly sum(1 / (60 + rank)) over the ranks reported beside it; under RRF it is
    the score itself."""
    rrf = rrf_score(r["vector_rank"], r["fts_rank"])
    if fusion == "rrf":
        return {"score": r["score"], "rrf_score": rrf}
    return {"score": _round(r["score"]), "rrf_score": rrf}


def _within_budget(
    level: str, results: list[dict[str, Any]], max_tokens: int | None
) -> tuple[list[dict[str, Any]], int]:
    """Each result with its `tokens`; in rank order while they fit `max_tokens` (a result that
    does not fit ends the list: a chunk is never cut), and their total."""
    kept, total = [], 0
    for result in results:
        result["tokens"] = estimate_tokens(_result_text(level, result))
        if max_tokens is not None and total + result["tokens"] > max_tokens:
            break
        kept.append(result)
        total += result["tokens"]
    return kept, total


def _results(urls: Urls, level: str, rows: list[dict[str, Any]], fusion: str) -> list[dict[str, Any]]:
    if level == "chunk":
        return [
            {
                "markdown": r["markdown"],
                "heading_path": r["heading_path"],
                "doc_id": r["doc_id"],
                "doc_url": urls.doc(r["doc_id"]),
                "title": r["title"],
                "chunk_id": r["chunk_id"],
                **_scores(r, fusion),
                "vector_rank": r["vector_rank"],
                "fts_rank": r["fts_rank"],
                "similarity": _round(r["similarity"]),
                "fts_score": _round(r["fts_score"]),
            }
            for r in rows
        ]
    if level == "doc":
        return [
            {
                "doc_id": r["doc_id"],
                "doc_url": urls.doc(r["doc_id"]),
                "title": r["title"],
                "markdown": r["markdown"],
                "similarity": _round(r["similarity"]),
                **_scores(r, fusion),
                "vector_rank": r["vector_rank"],
                "fts_rank": r["fts_rank"],
                "fts_score": _round(r["fts_score"]),
                # the section that ranked the doc (its similarity / fts_score are this section's)
                "section": {
                    "chunk_id": r["chunk_id"],
                    "heading_path": r["heading_path"],
                    "markdown": r["section_markdown"],
                }
                if r["chunk_id"] is not None
                else None,
            }
            for r in rows
        ]
    return [
        {
            "bundle_id": r["bundle_id"],
            "bundle_url": urls.bundle(r["bundle_id"]),
            "title": r["title"],
            "description": r["description"],
            "similarity": _round(r["similarity"]),
            "score": _round(r["score"]),
            "vector_rank": r["vector_rank"],
            "fts_rank": r["fts_rank"],
            "rrf_score": _round(r["rrf_score"]),
            "fts_score": _round(r["fts_score"]),
        }
        for r in rows
    ]


class Space(TypedDict):
    model: str
    dim: int


class RecallAnswer(TypedDict):
    """What the recall endpoint answers; each result's fields depend on the level (chunk, doc or
    bundle) and are documented in the route's schema."""

    hub: str
    level: str
    k: int
    mode: str  # hybrid, vector or fulltext: what ran
    vector: str  # ok, or unavailable
    space: Space | None  # the embedding space searched; None when no vectors were used
    fusion: str
    results: list[dict[str, Any]]
    tokens: int
    max_tokens: NotRequired[int]
    vector_note: NotRequired[str]
    reranked: NotRequired[bool]
    rerank_note: NotRequired[str]


@dataclass
class Lookup:
    """What recall found before ranking: the hub, its embedding space, the question's vector
    (None with a note saying why) and, for a hybrid, full text's candidates read beside the hub."""

    hub: dict[str, Any]
    space: tuple[str, int] | None
    qvec: Any
    why_not: str | None
    fts: recall.FulltextCandidates | None


async def answer(ctx: Context, urls: Urls, q: Question, phases: Phases | None = None) -> RecallAnswer:
    """What the recall endpoint answers (the hub page's search box shows the same), in three
    steps: look up, rank, shape. `phases` gets where the time went: the hub lookup, the wait for
    the question's vector once the lookup is done, the recall statement, the rerank."""
    phases = phases or Phases()
    n = min(MAX_RERANK, max(q.k, ctx.settings.rerank_candidates)) if q.rerank and ctx.reranker is not None else q.k
    found = await _lookup(ctx, q, phases, n)
    # an embedder that cannot read the question's script ranks chance: full text alone ranks
    blind = (
        found.qvec is not None
        and q.hybrid
        and q.level != "bundle"
        and not reads(embedder_scripts(ctx.settings.embedder_scripts, ctx.model), q.question)
    )
    rows = await _rank(ctx, q, phases, found, n, blind)
    results = _results(urls, q.level, rows, q.fusion)
    rerank_note = ""
    if q.rerank:
        with phases.span("rerank", "the reranker"):
            results, rerank_note = await _rerank(ctx, q.question, q.level, results, q.k)
    if sum(len(_result_text(q.level, r)) for r in results) > LONG_RESULTS:
        results, tokens = await asyncio.to_thread(_within_budget, q.level, results, q.max_tokens)
    else:
        results, tokens = _within_budget(q.level, results, q.max_tokens)
    return _shape(q, found, blind, results, tokens, rerank_note)


async def _lookup(ctx: Context, q: Question, phases: Phases, n: int) -> Lookup:
    """The hub and the question's vector. The question is embedded while the hub and the
    embedding space are looked up, and, for a hybrid, while full text reads its candidates (it
    needs no vector): the model's time then hides behind BM25's instead of adding to it."""
    settings = ctx.settings
    task = asyncio.create_task(ctx.questions.embed(q.question)) if ctx.questions is not None else None
    fts: recall.FulltextCandidates | None = None
    try:
        with phases.span("hub", "the hub's lookup (with full text's candidates when hybrid)"):
            async with ctx.db.public.connection() as conn:
                if task is not None and q.hybrid and q.level != "bundle":  # the hub and full text's pool at once
                    hub, fts = await recall.hub_and_fulltext(
                        conn,
                        slug=q.slug,
                        model=ctx.model,
                        question=q.question,
                        level=q.level,
                        k=n,
                        k1=settings.bm25_k1,
                        b=settings.bm25_b,
                        fusion=q.fusion,
                    )
                else:
                    hub = await find_hub_for_recall(conn, q.slug)
        space = (hub["model"], hub["dim"]) if hub is not None and hub["model"] is not None else None
        with_vectors = task is not None and space is not None and space[0] == ctx.model
        if hub is None:
            raise unknown_hub(q.slug)
        if task is not None and not with_vectors:
            task.cancel()  # no vectors to search yet: answer now, without waiting for the embedder
            qvec, why_not = None, await _why_no_vectors(ctx, hub["id"], space)
        elif task is None:
            qvec, why_not = await _await_vector(None)  # no embedder: nothing to wait for
        else:
            with phases.span("embed", "waiting for the question's vector after the lookup"):
                qvec, why_not = await _await_vector(task)
    except BaseException:
        if task is not None and not task.done():
            task.cancel()
        raise
    return Lookup(hub=hub, space=space, qvec=qvec, why_not=why_not, fts=fts)


async def _rank(ctx: Context, q: Question, phases: Phases, found: Lookup, n: int, blind: bool) -> list[dict[str, Any]]:
    """The recall statement's rows for the question's level."""
    settings, space, qvec = ctx.settings, found.space, found.qvec
    dim = space[1] if qvec is not None and space is not None else None
    query = {"hub_id": found.hub["id"], "question": q.question, "k": n, "qvec": qvec, "dim": dim}
    with phases.span("recall", "the recall statement"):
        async with ctx.db.public.connection() as conn:
            if q.level == "bundle":
                return await recall.recall_bundles(
                    conn,
                    **query,
                    hybrid=q.hybrid,
                    k1=settings.bm25_k1,
                    b=settings.bm25_b,
                    fusion=q.fusion,
                    max_distance=settings.edge_rule.ceiling(space[0] if space else None),
                )
            return await (recall.recall_chunks if q.level == "chunk" else recall.recall_docs)(
                conn,
                **query,
                hybrid=q.hybrid,
                k1=settings.bm25_k1,
                b=settings.bm25_b,
                fts=found.fts,
                fusion=q.fusion,
                vector_weight=0.0 if blind else 1.0,
            )


def _shape(
    q: Question, found: Lookup, blind: bool, results: list[dict[str, Any]], tokens: int, rerank_note: str
) -> RecallAnswer:
    """The answer's body: what ran (mode, space, fusion), the results and their tokens, and why
    vectors or the reranker were not used when they were not."""
    qvec, space = found.qvec, found.space
    body: RecallAnswer = {
        "hub": q.slug,
        "level": q.level,
        "k": q.k,
        "mode": "fulltext" if qvec is None else ("hybrid" if q.hybrid else "vector"),
        "vector": "ok" if qvec is not None else "unavailable",
        "space": {"model": space[0], "dim": space[1]} if qvec is not None and space is not None else None,
        "fusion": q.fusion,
        "results": results,
        "tokens": tokens,
    }
    if q.max_tokens is not None:
        body["max_tokens"] = q.max_tokens
    if found.why_not:
        body["vector_note"] = found.why_not
    elif blind and q.fusion == "zscore":
        body["vector_note"] = "the embedder reads Latin script only: ranked by full text"
    if q.rerank:
        body["reranked"] = not rerank_note
        if rerank_note:
            body["rerank_note"] = rerank_note
    return body
