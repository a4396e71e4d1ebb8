"""The optional rerank stage: the fused top N re-scored by a cross-encoder behind HTTP.

Rerankers share one small API, `POST .../rerank` with a query and a list of texts, answered
with an index and a score per text: Cohere and Jina (`documents`, answered as
`{"results": [{"index", "relevance_score"}]}`), Text Embeddings Inference (`texts`, answered
as `[{"index", "score"}]`), and the servers that copy them (vLLM, Infinity, LocalAI). The URL
is configured whole (MEMORYWIKI_RERANK_URL), the request field follows MEMORYWIKI_RERANK_FORMAT,
and both answer shapes are read.

A reranker that is down or answers nonsense never fails a recall: the caller keeps the fused
order and says why (RerankError).
"""

from __future__ import annotations

import asyncio
import socket
from typing import Any

import httpx

from ..config import Settings

MAX_TEXT_CHARS = 4000  # per candidate: cross-encoders read ~512 tokens, a whole doc is waste
FORMATS = ("cohere", "tei")


class RerankError(Exception):
    """The reranker is unreachable or answered something unusable."""


class Reranker:
    def __init__(
        self,
        url: str,
        *,
        model: str | None = None,
        api_key: str | None = None,
        request_format: str = "cohere",
        timeout: float = 10.0,
    ) -> None:
        if request_format not in FORMATS:
            raise ValueError(f"rerank format must be one of {', '.join(FORMATS)}, got {request_format!r}")
        self.url = url
        self.model = model
        self.api_key = api_key
        self.request_format = request_format
        self.timeout = timeout
        self._client: httpx.AsyncClient | None = None
        self._client_loop: asyncio.AbstractEventLoop | None = None

    def _http(self) -> httpx.AsyncClient:
        """Per event loop, like the embedder's client (an httpx pool is bound to its loop)."""
        loop = asyncio.get_running_loop()
        if self._client is None or self._client_loop is not loop:
            transport = httpx.AsyncHTTPTransport(socket_options=[(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)])
            headers = {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}
            self._client = httpx.AsyncClient(transport=transport, timeout=self.timeout, headers=headers)
            self._client_loop = loop
        return self._client

    async def close(self) -> None:
        if self._client is not None:
            await self._client.aclose()
            self._client = None

    async def scores(self, query: str, texts: list[str]) -> list[float]:
        """One relevance score per text, in the order given."""
        if not texts:
            return []
        texts = [t[:MAX_TEXT_CHARS] or " " for t in texts]
        body: dict[str, Any] = {"query": query}
        if self.request_format == "tei":
            body["texts"] = texts
        else:
            body["documents"] = texts
            body["top_n"] = len(texts)
        if self.model:
            body["model"] = self.model
        try:
            response = await self._http().post(self.url, json=body)
        except httpx.HTTPError as exc:
            raise RerankError(f"reranker {self.url} unreachable: {exc!r}") from exc
        if response.status_code != 200:
            raise RerankError(f"reranker {self.url} answered HTTP {response.status_code}: {response.text[:200]}")
        try:
            return _read_scores(response.json(), len(texts))
        except (ValueError, TypeError, KeyError) as exc:
            raise RerankError(f"reranker {self.url} answered an unreadable body: {exc}") from exc


def _read_scores(body: Any, n: int) -> list[float]:
    items = body["results"] if isinstance(body, dict) else body
    if not isinstance(items, list):
        raise ValueError("no list of results")
    scores: list[float | None] = [None] * n
    for item in items:
        index = int(item["index"])
        score = item.get("relevance_score", item.get("score"))
        if not 0 <= index < n or isinstance(score, bool) or not isinstance(score, (int, float)):
            raise ValueError(f"bad result {item!r}")
        scores[index] = float(score)
    if any(s is None for s in scores):
        raise ValueError(f"{scores.count(None)} of {n} texts have no score")
    return scores  # type: ignore[return-value]


def make_reranker(settings: Settings) -> Reranker | None:
    if not settings.rerank_url:
        return None
    return Reranker(
        settings.rerank_url,
        model=settings.rerank_model,
        api_key=settings.rerank_api_key,
        request_format=settings.rerank_format,
        timeout=settings.rerank_timeout,
    )
