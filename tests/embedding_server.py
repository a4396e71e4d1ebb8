"""A local OpenAI-compatible embeddings server, so tests drive the real `openai` client.

Embeddings are deterministic feature hashes of stemmed word tokens (plus character trigrams at
a low weight) in 256 dims: crude, but texts that share words land closer together, which is
all retrieval tests need. A test that needs a real model's geometry plants vectors for exact
texts (`plant`). Counters let tests check how many requests and inputs were embedded.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import math
import re
import struct
import threading
import time

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from tests.threaded_server import ThreadedServer

DIM = 256
MAX_INPUTS = 2048  # OpenAI's per-request limit, so missing batching shows up in tests
TRIGRAM_WEIGHT = 0.25
_WORD = re.compile(r"[a-z0-9]+")
_STOPWORDS = frozenset(
    "a an and are as at be by do does for from has have how i in is it its of on or that the "
    "this to was were what when where which who why will with you your".split()
)
_SUFFIXES = ("ations", "ation", "ings", "ing", "ies", "ied", "ers", "er", "ed", "es", "ly", "s")


def stem(word: str) -> str:
    """Strip one common English suffix, so "embedding" and "embeddings" share a feature."""
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)]
    return word


def _bucket(feature: str, dim: int) -> tuple[int, float]:
    digest = hashlib.blake2b(feature.encode(), digest_size=8).digest()
    value = int.from_bytes(digest, "little")
    return value % dim, (1.0 if (value >> 63) & 1 else -1.0)


def embed_text(text: str, dim: int = DIM) -> list[float]:
    """Deterministic, L2-normalised feature-hash embedding of one text."""
    vector = [0.0] * dim
    words = [stem(w) for w in _WORD.findall(text.lower()) if w not in _STOPWORDS]
    for word in words:
        index, sign = _bucket("w:" + word, dim)
        vector[index] += sign
        padded = f"#{word}#"
        for i in range(len(padded) - 2):
            index, sign = _bucket("t:" + padded[i : i + 3], dim)
            vector[index] += sign * TRIGRAM_WEIGHT
    if not words:  # blank or punctuation only: a fixed direction, still a unit vector
        vector[_bucket("empty", dim)[0]] = 1.0
    norm = math.sqrt(sum(x * x for x in vector)) or 1.0
    return [x / norm for x in vector]


def _error(status: int, message: str, type_: str, code: str | None = None) -> JSONResponse:
    body = {"error": {"message": message, "type": type_, "param": None, "code": code}}
    return JSONResponse(body, status_code=status)


class EmbeddingServer(ThreadedServer):
    """Starlette + uvicorn on 127.0.0.1 and a free port, in a background thread."""

    name = "embedding-server"
    url_path = "/v1"

    def __init__(self, dim: int = DIM) -> None:
        self.dim = dim
        self.calls = 0  # answered embedding requests
        self.inputs = 0  # texts embedded by them
        self.requests = 0  # every request received, failed ones too (retries show up here)
        self._failing = False
        self._delay = 0.0
        self._planted: dict[str, list[float]] = {}
        self._lock = threading.Lock()
        self.app = Starlette(routes=[Route("/v1/embeddings", self._embeddings, methods=["POST"])])

    def reset(self) -> None:
        with self._lock:
            self.calls = 0
            self.inputs = 0
            self.requests = 0

    def plant(self, vectors: dict[str, list[float]]) -> None:
        """Answer these exact texts with these vectors (of this server's dimension), the rest
        as before; an empty dict removes them."""
        with self._lock:
            self._planted = dict(vectors)

    def set_failing(self, failing: bool) -> None:
        """While failing, every request gets a 503, as during a provider outage."""
        with self._lock:
            self._failing = failing

    def set_delay(self, seconds: float) -> None:
        """Answer slowly, so a test can kill an indexer in the middle of a call. Setting it
        back to 0 also ends the waits in flight, so no request outlives its test."""
        with self._lock:
            self._delay = seconds

    async def _embeddings(self, request: Request) -> JSONResponse:
        auth = request.headers.get("authorization", "")
        if not auth.lower().startswith("bearer ") or not auth[7:].strip():
            return _error(401, "You didn't provide an API key.", "invalid_request_error", "invalid_api_key")
        with self._lock:
            self.requests += 1
            failing, delay = self._failing, self._delay
        # Read the body before any delay, as a real server would: a client killed during the
        # delay (the kill -9 test) then leaves nothing unread to fail on later.
        await request.body()
        deadline = time.monotonic() + delay
        while time.monotonic() < deadline and self._delay:
            await asyncio.sleep(0.05)
        if failing:
            return _error(503, "The server is overloaded or not ready yet.", "server_error", "service_unavailable")
        try:
            body = await request.json()
        except ValueError:
            return _error(400, "Request body is not valid JSON.", "invalid_request_error")
        if not isinstance(body, dict):
            return _error(400, "Request body must be a JSON object.", "invalid_request_error")
        model, raw, fmt = body.get("model"), body.get("input"), body.get("encoding_format") or "float"
        if not isinstance(model, str) or not model:
            return _error(400, "you must provide a model parameter", "invalid_request_error")
        texts = [raw] if isinstance(raw, str) else raw
        if not isinstance(texts, list) or not texts or not all(isinstance(t, str) for t in texts):
            return _error(400, "'input' must be a non-empty string or list of strings.", "invalid_request_error")
        if len(texts) > MAX_INPUTS:
            return _error(400, f"'input' must have at most {MAX_INPUTS} items.", "invalid_request_error")
        if any(t == "" for t in texts):
            return _error(400, "'input' cannot contain empty strings.", "invalid_request_error")
        if fmt not in ("float", "base64"):
            return _error(400, "'encoding_format' must be 'float' or 'base64'.", "invalid_request_error")
        dim = body.get("dimensions") or self.dim
        if not isinstance(dim, int) or dim < 1:
            return _error(400, "'dimensions' must be a positive integer.", "invalid_request_error")

        data = []
        with self._lock:
            planted = self._planted
        for i, text in enumerate(texts):
            vector = planted.get(text) or embed_text(text, dim)
            encoded: list[float] | str = (
                base64.b64encode(struct.pack(f"<{dim}f", *vector)).decode() if fmt == "base64" else vector
            )
            data.append({"object": "embedding", "index": i, "embedding": encoded})
        tokens = sum(len(_WORD.findall(t.lower())) or 1 for t in texts)
        with self._lock:
            self.calls += 1
            self.inputs += len(texts)
        return JSONResponse(
            {
                "object": "list",
                "data": data,
                "model": model,
                "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
            }
        )


def start_embedding_server() -> EmbeddingServer:
    """Start a server; call .stop() when done (a session fixture does this for the suite)."""
    return EmbeddingServer().start()
