"""A local reranker speaking the `/rerank` API of Cohere / Jina (`documents` in, `results` with
`relevance_score` out) and of Text Embeddings Inference (`texts` in, a list with `score` out).

Its score is a plain rule the tests can predict: the share of the query's words found in the
text, plus a bonus when the text contains the word "gold" (so a test can make the reranker
promote a candidate the fused ranking placed last). Counters and switches like the embedding
test server: requests seen, texts scored, failing (HTTP 503) or answering garbage.
"""

from __future__ import annotations

import re

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from tests.threaded_server import ThreadedServer

_WORD = re.compile(r"[a-z0-9]+")


def score(query: str, text: str) -> float:
    words = set(_WORD.findall(query.lower()))
    found = set(_WORD.findall(text.lower()))
    return len(words & found) / (len(words) or 1) + (2.0 if "gold" in found else 0.0)


class RerankServer(ThreadedServer):
    name = "rerank-server"

    def __init__(self) -> None:
        self.requests: list[dict] = []
        self.failing = False
        self.garbage = False
        self.app = Starlette(
            routes=[
                Route("/v1/rerank", self._rerank, methods=["POST"]),
                Route("/rerank", self._rerank, methods=["POST"]),
            ]
        )

    async def _rerank(self, request: Request) -> JSONResponse:
        body = await request.json()
        self.requests.append({"body": body, "authorization": request.headers.get("authorization")})
        if self.failing:
            return JSONResponse({"message": "overloaded"}, status_code=503)
        if self.garbage:
            return JSONResponse({"results": [{"index": 99, "relevance_score": "high"}]})
        if "texts" in body:  # Text Embeddings Inference
            scored = [{"index": i, "score": score(body["query"], t)} for i, t in enumerate(body["texts"])]
            return JSONResponse(sorted(scored, key=lambda r: -r["score"]))
        scored = [{"index": i, "relevance_score": score(body["query"], t)} for i, t in enumerate(body["documents"])]
        scored.sort(key=lambda r: -r["relevance_score"])
        return JSONResponse({"id": "rr", "results": scored[: body.get("top_n") or len(scored)]})
