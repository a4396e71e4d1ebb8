"""One `openai` client lifecycle for the embedder and the chat model: made from Settings, closed by its owner."""

from __future__ import annotations

import json

import pytest
from memorywiki.server.config import Settings
from memorywiki.server.curation.llm import ChatModel, ModelUnavailable
from memorywiki.server.embedding.base import EmbedderError
from memorywiki.server.embedding.openai import OpenAIEmbedder
from memorywiki.server.openai_client import OPENAI_BASE_URL, Endpoint


def test_endpoints_come_from_settings_never_the_environment(monkeypatch):
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")  # must not be read behind Settings' back
    monkeypatch.setenv("OPENAI_API_KEY", "from-the-environment")
    plain = Settings(llm_model="chat")
    assert Endpoint.for_chat(plain).base_url == OPENAI_BASE_URL == Endpoint.for_embeddings(plain).base_url
    assert Endpoint.for_chat(plain).api_key is None
    shared = Settings(openai_api_key="k", openai_base_url="http://embed/v1", llm_timeout=7.0, llm_max_retries=3)
    assert Endpoint.for_chat(shared) == Endpoint("k", "http://embed/v1", 7.0, 3)
    assert (
        Endpoint.for_chat(Settings(openai_base_url="http://embed/v1", llm_base_url="http://chat/v1")).base_url
        == "http://chat/v1"
    )
    assert Endpoint.for_embeddings(shared, timeout=2.0, max_retries=0) == Endpoint("k", "http://embed/v1", 2.0, 0)


async def test_without_a_key_each_owner_says_so_in_its_own_terms():
    with pytest.raises(EmbedderError, match="set OPENAI_API_KEY"):
        await OpenAIEmbedder.from_settings(Settings()).embed(["text"])
    with pytest.raises(ModelUnavailable, match="OPENAI_API_KEY is not set"):
        await ChatModel.from_settings(Settings(llm_model="chat")).ask_json(
            "system", "user", schema_name="x", schema={"type": "object", "properties": {}}
        )


async def test_the_embedder_and_the_chat_model_close_their_clients(embedding_server, chat_server):
    settings = Settings(
        openai_api_key="test-key",
        openai_base_url=embedding_server.base_url,
        openai_model="test-embed",
        llm_model="test-chat",
        llm_base_url=chat_server.base_url,
    )
    embedder = OpenAIEmbedder.from_settings(settings)
    model = ChatModel.from_settings(settings)
    chat_server.script(json.dumps({"title": "t"}))
    assert len(await embedder.embed(["okapi"])) == 1
    answer = await model.ask_json(
        "system",
        "user",
        schema_name="x",
        schema={"type": "object", "properties": {"title": {"type": "string"}}, "required": ["title"]},
    )
    assert json.loads(answer.text) == {"title": "t"}
    clients = [embedder.client.get(), model.client.get()]
    assert not any(c.is_closed() for c in clients)
    await embedder.aclose()
    await model.aclose()
    assert all(c.is_closed() for c in clients)
    assert len(await embedder.embed(["okapi again"])) == 1  # a new client on next use
    await embedder.aclose()
