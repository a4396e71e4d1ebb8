"""POST /api/hub/{slug}/recall: the public recall endpoint (chunks, docs or bundles that answer a question)."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from ..errors import BadRequest
from ..services import recall
from ..services.recall import FUSIONS, LEVELS, MAX_QUESTION, MAX_TOKENS, Question, check_fusion, check_question
from ..timing import Phases
from ..web.openapi import SPACE, TEXT, body_schema, json_response, obj, operation
from ..web.state import app_state
from ..web.urls import urls
from ..web.validate import get_bool, get_int, get_str, read_json

FIELDS = ("question", "k", "level", "hybrid", "rerank", "fusion", "max_tokens")

NUMBER = {"type": ["number", "null"]}
RANK = {"type": ["integer", "null"], "minimum": 1}
RECALL_BODY = body_schema(
    ["question"],
    question={"type": "string", "maxLength": MAX_QUESTION, "examples": ["how do I restart the database?"]},
    k={"type": ["integer", "null"], "minimum": 1, "maximum": 50, "description": "results wanted (default 5)"},
    level={"type": ["string", "null"], "enum": [*LEVELS, None], "description": "chunk (default), doc or bundle"},
    hybrid={"type": ["boolean", "null"], "description": "default true: vector and full text fused; false: vector only"},
    rerank={
        "type": ["boolean", "null"],
        "description": "default false: re-score the fused candidates with the reranker at MEMORYWIKI_RERANK_URL",
    },
    fusion={
        "type": ["string", "null"],
        "enum": [*FUSIONS, None],
        "description": (
            "how a hybrid fuses its two rankers: zscore (default; each ranker's scores in standard deviations of "
            "its candidates, weighed by how clearly it singles out its best ones) or rrf (Reciprocal Rank Fusion, "
            "sum(1 / (60 + rank)) over each ranker's top k*4, reported as rrf_score)"
        ),
    },
    max_tokens={
        "type": ["integer", "null"],
        "minimum": 1,
        "maximum": MAX_TOKENS,
        "description": (
            "a token budget: results in rank order while their tokens fit it, never a cut chunk "
            "(tokens estimated, see `tokens`)"
        ),
    },
)
SPACE_USED = SPACE | {
    "description": "the embedding space the question was searched in: model name and "
    "dimension (null when no vectors were used)"
}
RECALL = obj(
    ["hub", "level", "k", "mode", "vector", "space", "results", "tokens"],
    hub=TEXT,
    level={"enum": list(LEVELS)},
    k={"type": "integer"},
    mode={"enum": ["hybrid", "vector", "fulltext"]},
    vector={"enum": ["ok", "unavailable"]},
    space=SPACE_USED,
    fusion={"enum": list(FUSIONS), "description": "chunk and doc levels: the fusion that scored the results"},
    tokens={
        "type": "integer",
        "description": (
            "the results' tokens, summed: estimated for the text each result hands a model (breadcrumb "
            "and markdown; doc: title and markdown; bundle: title and description)"
        ),
    },
    max_tokens={"type": "integer", "description": "the budget asked for, when one was"},
    vector_note={"type": "string", "description": "why vectors were not used, in plain words"},
    reranked={"type": "boolean", "description": "with rerank: whether the reranker set the order"},
    rerank_note={"type": "string", "description": "with rerank: why the results are in fused order"},
    results={
        "type": "array",
        "items": {
            **obj(
                score=NUMBER
                | {
                    "description": "chunk and doc levels: the fused score, results come in its "
                    "order (zscore: each ranker's score above the floor of its candidates, in "
                    "standard deviations of them, weighed and summed; rrf: as rrf_score)"
                },
                rrf_score=NUMBER
                | {
                    "description": "every result, whatever fusion ordered the list: sum(1 / (60 + rank)) "
                    "over the ranks reported beside it (vector_rank, fts_rank); the order follows score"
                },
                tokens={"type": "integer", "description": "the estimated tokens of what this result hands a model"},
                vector_rank=RANK | {"description": "rank in the vector list, null when absent from it"},
                fts_rank=RANK | {"description": "rank in the full-text list, null when absent from it"},
                similarity=NUMBER,
                fts_score=NUMBER,
                rerank_score=NUMBER | {"description": "with rerank: the reranker's score (its order)"},
                section={
                    "type": ["object", "null"],
                    "description": ("doc level: the section that ranked the doc (chunk_id, heading_path, markdown)"),
                },
            ),
            "required": ["tokens"],
            "description": (
                "chunk: markdown, heading_path, doc_id, doc_url, title, chunk_id and the scores; "
                "doc: doc_id, doc_url, title, markdown, the scores and the section that ranked it "
                "(rerank_score when reranked); "
                "bundle: bundle_id, bundle_url, title, description and the scores (rrf_score too)"
            ),
        },
    },
)


@operation(
    "Recall: the chunks, docs or bundles of a hub that answer a question",
    body=RECALL_BODY,
    errors=(400, 404, 413),
    responses={
        200: {
            **json_response(RECALL, "The results and the mode that ran"),
            "headers": {
                "Server-Timing": {
                    "description": (
                        "where the time went, in ms: hub (the hub's lookup), embed (the wait for the question's "
                        "vector), recall (the recall statement), rerank, app (the whole request)"
                    ),
                    "schema": TEXT,
                }
            },
        }
    },
)
async def recall_endpoint(request: Request) -> Response:
    phases = Phases()
    state = app_state(request)
    data = await read_json(request, state.settings.max_query_bytes, fields=FIELDS)
    question = check_question(get_str(data, "question", required=True, allow_empty=False))
    k = get_int(data, "k", default=5, low=1, high=50)
    level = get_str(data, "level", default="chunk")
    if level not in LEVELS:
        raise BadRequest("unknown_level", f"'level' must be one of {', '.join(LEVELS)}")
    hybrid = get_bool(data, "hybrid", default=True)  # the API, the CLI and MCP agree
    rerank = get_bool(data, "rerank", default=False)
    fusion = check_fusion(get_str(data, "fusion", default=FUSIONS[0]))
    max_tokens = get_int(data, "max_tokens", default=None, low=1, high=MAX_TOKENS)
    q = Question(
        request.path_params["slug"],
        question,
        k=k,
        level=level,
        hybrid=hybrid,
        rerank=rerank,
        fusion=fusion,
        max_tokens=max_tokens,
    )
    response = JSONResponse(await recall.answer(state, urls(request), q, phases))
    response.headers["server-timing"] = phases.header()
    return response


routes = [Route("/api/hub/{slug}/recall", recall_endpoint, methods=["POST"])]
