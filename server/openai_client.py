"""The `openai` clients of the embedder and the chat model: made from Settings, closed by their owner.

Key, endpoint, timeout and retries come from Settings, never from the environment at call
time (the `openai` package would read OPENAI_BASE_URL itself if given no URL).
"""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, cast

import httpx

from .config import Settings

OPENAI_BASE_URL = "https://api.openai.com/v1"


@dataclass(frozen=True)
class Endpoint:
    api_key: str | None
    base_url: str
    timeout: float
    max_retries: int

    @classmethod
    def for_embeddings(
        cls, settings: Settings, *, timeout: float | None = None, max_retries: int | None = None
    ) -> Endpoint:
        return cls(
            api_key=settings.openai_api_key,
            base_url=settings.openai_base_url or OPENAI_BASE_URL,
            timeout=settings.embed_timeout if timeout is None else timeout,
            max_retries=settings.embed_max_retries if max_retries is None else max_retries,
        )

    @classmethod
    def for_chat(cls, settings: Settings) -> Endpoint:
        return cls(
            api_key=settings.openai_api_key,
            base_url=settings.llm_base_url or settings.openai_base_url or OPENAI_BASE_URL,
            timeout=settings.llm_timeout,
            max_retries=settings.llm_max_retries,
        )


def _http_client(timeout: float) -> httpx.AsyncClient:
    """An httpx client with TCP_NODELAY: httpx writes a request's headers and body separately,
    and with Nagle's algorithm the body may wait for the server's delayed ACK."""
    transport = httpx.AsyncHTTPTransport(socket_options=[(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)])
    return httpx.AsyncClient(transport=transport, timeout=timeout, follow_redirects=True)


class OpenAIClient:
    """An AsyncOpenAI client for one endpoint, made on first use in each event loop, because
    its httpx pool is bound to the loop it first ran on. `unconfigured` makes the error raised
    when there is no key, in the owner's own terms."""

    def __init__(self, endpoint: Endpoint, unconfigured: Callable[[], Exception]) -> None:
        self.endpoint = endpoint
        self._unconfigured = unconfigured
        self._client: Any = None
        self._loop: asyncio.AbstractEventLoop | None = None

    def get(self) -> Any:
        import openai

        loop = asyncio.get_running_loop()
        if self._client is None or self._loop is not loop:
            if not self.endpoint.api_key:
                raise self._unconfigured()
            e = self.endpoint
            self._client = openai.AsyncOpenAI(
                api_key=e.api_key,
                base_url=e.base_url,
                timeout=e.timeout,
                max_retries=e.max_retries,
                # typed as httpx2's client from openai 2 on, which still takes an httpx one
                http_client=cast(Any, _http_client(e.timeout)),
            )
            self._loop = loop
        return self._client

    async def aclose(self) -> None:
        """Close the client of this event loop (one made in a loop that is gone is dropped)."""
        client, self._client = self._client, None
        if client is not None and self._loop is asyncio.get_running_loop():
            await client.close()
