"""POST /api/hub/{slug}/recall: the public recall endpoint (chunks, docs or bundles that answer a question)."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from ..web.openapi import TEXT, body_schema, json_response, obj, operation
from ..store import recall
from ..embedding.base import EmbedderError
from ..errors import ApiError, unknown_hub
from ..embedding.rerank import RerankError
from ..store.hubs import find_hub_for_recall
from ..store.space import current_space, vector_backlog
from ..web.timing import Phases
from ..web.validate import get_bool, get_int, get_str, read_json
from ..web.state import app_state, bundle_url, doc_url

log = logging.getLogger("memorywiki.recall")

LEVELS = ("chunk", "doc", "bundle")
MAX_QUESTION = 4000
FIELDS = ("question", "k", "level", "hybrid", "rerank")
MAX_RERANK = 50  # fused candidates the reranker sees at most (k's own upper bound)

NUMBER = {"type": ["number", "null"]}
RANK = {"type": ["integer", "null"], "minimum": 1}
RECALL_BODY = body_schema(
    ["question"], question={"type": "string", "maxLength": MAX_QUESTION, "examples": ["how do I restart the database?"]},
    k={"type": ["integer", "null"], "minimum": 1, "maximum": 50, "description": "results wanted (default 5)"},
    level={"type": ["string", "null"], "enum": [*LEVELS, None], "description": "chunk (default), doc or bundle"},
    hybrid={"type": ["boolean", "null"], "description": "default true: vector and full text fused; false: vector only"},
    rerank={"type": ["boolean", "null"], "description": "default false: re-score the fused candidates with the "
            "reranker at MEMORYWIKI_RERANK_URL"})
RECALL = obj(["hub", "level", "k", "mode", "vector", "results"], hub=TEXT, level={"enum": list(LEVELS)},
             k={"type": "integer"}, mode={"enum": ["hybrid", "vector", "fulltext"]},
             vector={"enum": ["ok", "unavailable"]},
             vector_note={"type": "string", "description": "why vectors were not used, in plain words"},
             reranked={"type": "boolean", "description": "with rerank: whether the reranker set the order"},
             rerank_note={"type": "string", "description": "with rerank: why the results are in fused order"},
             results={"type": "array", "items": {**obj(
                 score=NUMBER | {"description": "chunk and doc levels: the fused score (each ranker's score above "
                                 "the floor of its candidates, in standard deviations of them, summed); "
                                 "results come in its order"},
                 rrf_score=NUMBER | {"deprecated": True, "description": "the same value as score, kept for clients "
                                     "written when fusion was Reciprocal Rank Fusion"},
                 vector_rank=RANK | {"description": "rank in the vector list, null when absent from it"},
                 fts_rank=RANK | {"description": "rank in the full-text list, null when absent from it"},
                 similarity=NUMBER, fts_score=NUMBER,
                 rerank_score=NUMBER | {"description": "with rerank: the reranker's score (its order)"},
                 section={"type": ["object", "null"], "description": (
                     "doc level: the section that ranked the doc (chunk_id, heading_path, markdown)")}),
                 "description": (
                     "chunk: markdown, heading_path, doc_id, doc_url, title, chunk_id and the scores; "
                     "doc: doc_id, doc_url, title, markdown, the scores and the section that ranked it "
                     "(rerank_score when reranked); "
                     "bundle: bundle_id, bundle_url, title, description, similarity")}})


def _pages(n: int) -> str:
    return f"{n} page{'' if n == 1 else 's'}"


async def _why_no_vectors(state, hub_id: int, space: tuple[str, int] | None) -> str:
    """Why the question's vector cannot be used, in words a user understands (recall then
    answers from full text)."""
    async with state.db.owner.connection() as conn:
        owed, replaced = await vector_backlog(conn, hub_id)
    if (replaced or space is not None) and owed:
        return f"re-indexing after an embedder change: {_pages(owed)} left"
    if replaced or space is not None:
        return "re-indexing after an embedder change: answering from full text"
    if owed:
        return f"vectors not ready yet: {_pages(owed)} still indexing"
    return "vectors not ready yet: answering from full text"


async def _await_vector(task: asyncio.Task | None) -> tuple[list[float] | None, str]:
    if task is None:
        return None, "no embedder configured: answering from full text"
    try:
        return await task, ""
    except EmbedderError as exc:
        log.warning("query embedding failed, answering from full text: %s", exc)
        return None, "the embedder is unreachable: answering from full text"


async def question_vector(request: Request, hub_id: int,
                          question: str) -> tuple[list[float] | None, int | None, str]:
    """(vector, dim, "") of a question, through the question lane, or (None, None, why not):
    for routes that search one hub by meaning besides recall (the topic reading list)."""
    state = app_state(request)
    if state.questions is None:
        return None, None, "no embedder configured: answering from full text"
    async with state.db.public.connection() as conn:
        space = await current_space(conn)
    if space is None or space[0] != state.embedder.name:
        return None, None, await _why_no_vectors(state, hub_id, space)
    qvec, why_not = await _await_vector(asyncio.create_task(state.questions.embed(question)))
    return qvec, (space[1] if qvec is not None else None), why_not


def _rerank_text(level: str, result: dict[str, Any]) -> str:
    if level == "chunk":
        return f"{result['heading_path']}\n\n{result['markdown']}"
    if level == "doc":
        return f"{result['title']}\n\n{result['markdown']}"
    return f"{result['title']}\n\n{result['description']}"


async def _rerank(state, question: str, level: str, results: list[dict[str, Any]],
                  k: int) -> tuple[list[dict[str, Any]], str]:
    """The fused candidates in the reranker's order, cut to k; or the fused order and why."""
    if state.reranker is None:
        return results[:k], "no reranker configured (MEMORYWIKI_RERANK_URL): results in fused order"
    try:
        scores = await state.reranker.scores(question, [_rerank_text(level, r) for r in results])
    except RerankError as exc:
        log.warning("rerank failed, answering in fused order: %s", exc)
        return results[:k], "the reranker is unreachable: results in fused order"
    for result, score in zip(results, scores):
        result["rerank_score"] = _round(score)
    order = sorted(range(len(results)), key=lambda i: -scores[i])  # stable: ties keep the fused order
    return [results[i] for i in order[:k]], ""


def _round(value: Any) -> Any:
    return round(value, 6) if isinstance(value, float) else value


def _scores(r: dict[str, Any]) -> dict[str, Any]:
    """The fused score, under its name and (deprecated) under the name it had when fusion was
    RRF, so clients written against `rrf_score` keep ranking and printing the same order."""
    score = _round(r["score"])
    return {"score": score, "rrf_score": score}


def check_question(question: str) -> str:
    if len(question) > MAX_QUESTION:
        raise ApiError(400, "question_too_long", f"'question' is longer than {MAX_QUESTION} characters")
    return question


@operation("Recall: the chunks, docs or bundles of a hub that answer a question", body=RECALL_BODY,
           errors=(400, 404, 413), responses={200: {
               **json_response(RECALL, "The results and the mode that ran"),
               "headers": {"Server-Timing": {"description": (
                   "where the time went, in ms: hub (the hub's lookup), embed (the wait for the question's "
                   "vector), recall (the recall statement), rerank, app (the whole request)"),
                   "schema": TEXT}}}})
async def recall_endpoint(request: Request) -> Response:
    phases = Phases()
    state = app_state(request)
    slug = request.path_params["slug"]
    data = await read_json(request, state.settings.max_query_bytes, fields=FIELDS)
    question = check_question(get_str(data, "question", required=True, allow_empty=False))
    k = get_int(data, "k", default=5, low=1, high=50)
    level = get_str(data, "level", default="chunk")
    if level not in LEVELS:
        raise ApiError(400, "unknown_level", f"'level' must be one of {', '.join(LEVELS)}")
    hybrid = get_bool(data, "hybrid", default=True)  # the API, the CLI and MCP agree
    rerank = get_bool(data, "rerank", default=False)
    body = await answer(request, slug, question, k=k, level=level, hybrid=hybrid, rerank=rerank, phases=phases)
    response = JSONResponse(body)
    response.headers["server-timing"] = phases.header()
    return response


async def answer(request: Request, slug: str, question: str, *, k: int, level: str, hybrid: bool,
                 rerank: bool = False, phases: Phases | None = None) -> dict[str, Any]:
    """What the recall endpoint answers (the hub page's search box shows the same); `phases`
    gets where the time went: the hub lookup, the wait for the question's vector once the
    lookup is done, the recall statement, the rerank."""
    state = app_state(request)
    settings = state.settings
    phases = phases or Phases()

    n = min(MAX_RERANK, max(k, settings.rerank_candidates)) if rerank and state.reranker is not None else k
    # The question is embedded while the hub and the embedding space are looked up, and, for a
    # hybrid, while full text reads its candidates (it needs no vector): a local model's ~3 ms
    # then hide behind BM25's instead of adding to them.
    task = asyncio.create_task(state.questions.embed(question)) if state.questions is not None else None
    fts: recall.FulltextCandidates | None = None
    try:
        with phases.span("hub", "the hub's lookup (with full text's candidates when hybrid)"):
            async with state.db.public.connection() as conn:
                if task is not None and hybrid and level != "bundle":  # the hub and full text's pool at once
                    hub, fts = await recall.hub_and_fulltext(conn, slug=slug, model=state.embedder.name,
                                                             question=question, level=level, k=n,
                                                             k1=settings.bm25_k1, b=settings.bm25_b)
                else:
                    hub = await find_hub_for_recall(conn, slug)
        space = (hub["model"], hub["dim"]) if hub is not None and hub["model"] is not None else None
        with_vectors = task is not None and space is not None and space[0] == state.embedder.name
        if hub is None:
            raise unknown_hub(slug)
        if task is not None and not with_vectors:
            task.cancel()  # no vectors to search yet: answer now, without waiting for the embedder
            qvec, why_not = None, await _why_no_vectors(state, hub["id"], space)
        elif task is None:
            qvec, why_not = await _await_vector(None)  # no embedder: nothing to wait for
        else:
            with phases.span("embed", "waiting for the question's vector after the lookup"):
                qvec, why_not = await _await_vector(task)
    except BaseException:
        if task is not None and not task.done():
            task.cancel()
        raise
    dim = space[1] if qvec is not None else None

    query = dict(hub_id=hub["id"], question=question, k=n, qvec=qvec, dim=dim)
    with phases.span("recall", "the recall statement"):
        async with state.db.public.connection() as conn:
            if level == "bundle":
                rows = await recall.recall_bundles(conn, **query)
            else:
                rows = await (recall.recall_chunks if level == "chunk" else recall.recall_docs)(
                    conn, **query, hybrid=hybrid, k1=settings.bm25_k1, b=settings.bm25_b, fts=fts)
    if level == "chunk":
        results = [{
            "markdown": r["markdown"], "heading_path": r["heading_path"], "doc_id": r["doc_id"],
            "doc_url": doc_url(request, r["doc_id"]), "title": r["title"], "chunk_id": r["chunk_id"],
            **_scores(r), "vector_rank": r["vector_rank"], "fts_rank": r["fts_rank"],
            "similarity": _round(r["similarity"]), "fts_score": _round(r["fts_score"]),
        } for r in rows]
    elif level == "doc":
        results = [{
            "doc_id": r["doc_id"], "doc_url": doc_url(request, r["doc_id"]), "title": r["title"],
            "markdown": r["markdown"], "similarity": _round(r["similarity"]),
            **_scores(r), "vector_rank": r["vector_rank"], "fts_rank": r["fts_rank"],
            "fts_score": _round(r["fts_score"]),
            # the section that ranked the doc (its similarity / fts_score are this section's)
            "section": {"chunk_id": r["chunk_id"], "heading_path": r["heading_path"],
                        "markdown": r["section_markdown"]} if r["chunk_id"] is not None else None,
        } for r in rows]
    else:
        results = [{
            "bundle_id": r["bundle_id"], "bundle_url": bundle_url(request, r["bundle_id"]),
            "title": r["title"], "description": r["description"], "similarity": _round(r["similarity"]),
        } for r in rows]
    rerank_note = ""
    if rerank:
        with phases.span("rerank", "the reranker"):
            results, rerank_note = await _rerank(state, question, level, results, k)

    if qvec is None:
        mode = "fulltext"
    elif level == "bundle":
        mode = "vector"
    else:
        mode = "hybrid" if hybrid else "vector"
    body: dict[str, Any] = {"hub": slug, "level": level, "k": k, "mode": mode,
                            "vector": "ok" if qvec is not None else "unavailable", "results": results}
    if why_not:
        body["vector_note"] = why_not
    if rerank:
        body["reranked"] = not rerank_note
        if rerank_note:
            body["rerank_note"] = rerank_note
    return body


routes = [Route("/api/hub/{slug}/recall", recall_endpoint, methods=["POST"])]
