"""Any OpenAI-compatible /v1/embeddings endpoint through the official `openai` client."""

from __future__ import annotations

import math

from ..config import Settings
from ..openai_client import Endpoint, OpenAIClient
from .base import EmbedderError


def _normalise(vector: list[float]) -> list[float]:
    """L2-normalise, because OpenAI-compatible servers (Ollama, TEI...) do not all do it."""
    norm = math.sqrt(sum(x * x for x in vector))
    return [x / norm for x in vector] if norm > 0 else list(vector)


class OpenAIEmbedder:
    """Any OpenAI-compatible /v1/embeddings endpoint through the official `openai` client.

    The client and its lifecycle: server/openai_client.py.
    """

    def __init__(self, model: str, endpoint: Endpoint, *, batch_size: int = 128) -> None:
        if batch_size < 1:
            raise ValueError(f"embed_batch must be >= 1, got {batch_size}")
        self.model = model
        self.name = f"openai:{model}"
        self.batch_size = batch_size
        self.client = OpenAIClient(
            endpoint,
            lambda: EmbedderError(
                "openai embedder is not configured: set OPENAI_API_KEY (any value for a local OpenAI-compatible server)"
            ),
        )

    @classmethod
    def from_settings(
        cls, settings: Settings, *, timeout: float | None = None, max_retries: int | None = None
    ) -> OpenAIEmbedder:
        """`timeout` / `max_retries` override the settings' embed_timeout / embed_max_retries."""
        return cls(
            settings.openai_model,
            Endpoint.for_embeddings(settings, timeout=timeout, max_retries=max_retries),
            batch_size=settings.embed_batch,
        )

    async def aclose(self) -> None:
        await self.client.aclose()

    async def embed(self, texts: list[str]) -> list[list[float]]:
        if not texts:
            return []
        import openai

        client = self.client.get()
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

    async def embed_questions(self, texts: list[str]) -> list[list[float]]:
        """A request of its own, beside any indexing request in flight (the pool has room)."""
        return await self.embed(texts)
