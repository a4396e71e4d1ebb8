"""The question lane: repeated questions come from a cache, concurrent ones share a pass.

Driven through the real `openai` client against the local embedding server, whose request
counters show what reached the embedder.
"""

from __future__ import annotations

import asyncio

import pytest
from memorywiki.server.config import Settings
from memorywiki.server.embedding.base import EmbedderError
from memorywiki.server.embedding.factory import make_embedder
from memorywiki.server.embedding.questions import QuestionLane

from tests.embedding_server import embed_text
from tests.polling import wait_indexed, wait_until


@pytest.fixture
def server(embedding_server):
    embedding_server.reset()
    embedding_server.set_failing(False)
    embedding_server.set_delay(0)
    yield embedding_server
    embedding_server.set_delay(0)
    embedding_server.set_failing(False)


def lane(server, **kwargs) -> QuestionLane:
    embedder = make_embedder(
        Settings(
            embedder="openai",
            openai_api_key="k",
            openai_base_url=server.base_url,
            embed_timeout=30,
            embed_max_retries=0,
        )
    )
    return QuestionLane(embedder, **kwargs)


async def wait_for(condition, what: str) -> None:
    for _ in range(600):
        if condition():
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


async def test_questions_arriving_during_a_pass_share_the_next_one(server):
    questions = lane(server)
    server.set_delay(60)  # the first pass stays in flight until the delay is lifted
    first = asyncio.create_task(questions.embed("first question"))
    await wait_for(lambda: server.requests == 1, "the first pass to reach the embedder")
    others = [asyncio.create_task(questions.embed(f"question number {i}")) for i in range(7)]
    duplicate = asyncio.create_task(questions.embed("question number 3"))  # asked twice meanwhile
    await wait_for(lambda: questions.stats()["waiting"] == 7, "the others to queue")
    assert server.requests == 1  # they wait for the pass in flight, they do not queue 7 more
    server.set_delay(0)
    vectors = await asyncio.gather(first, *others, duplicate)
    assert (server.calls, server.inputs) == (2, 8)  # two passes: 1 question, then the 7 together
    texts = ["first question"] + [f"question number {i}" for i in range(7)] + ["question number 3"]
    for text, vector in zip(texts, vectors, strict=True):
        assert vector == pytest.approx(embed_text(text), abs=1e-6)  # each got its own vector
    assert questions.stats()["forward_passes"] == 2


async def test_a_repeated_question_is_answered_from_the_cache(server):
    questions = lane(server, cache_size=2)
    a = await questions.embed("what is a hub")
    assert await questions.embed("what is a hub") == a
    assert server.inputs == 1 and questions.stats()["cache_hits"] == 1
    await questions.embed("what is a bundle")
    await questions.embed("what is a chunk")  # the cache holds 2: the oldest one goes
    await questions.embed("what is a chunk")
    assert server.inputs == 3
    await questions.embed("what is a hub")
    assert server.inputs == 4


async def test_a_failed_pass_fails_its_questions_and_the_lane_recovers(server):
    questions = lane(server, cache_size=0)
    server.set_failing(True)
    results = await asyncio.gather(questions.embed("one"), questions.embed("two"), return_exceptions=True)
    assert all(isinstance(r, EmbedderError) for r in results)
    server.set_failing(False)
    assert await questions.embed("one") == pytest.approx(embed_text("one"), abs=1e-6)
    assert questions.stats()["waiting"] == 0


async def test_one_caller_giving_up_leaves_the_others_their_answer(server):
    questions = lane(server)
    server.set_delay(60)
    impatient = asyncio.create_task(questions.embed("shared question"))
    patient = asyncio.create_task(questions.embed("shared question"))
    await wait_for(lambda: server.requests == 1, "the pass to start")
    impatient.cancel()
    server.set_delay(0)
    assert await patient == pytest.approx(embed_text("shared question"), abs=1e-6)
    assert impatient.cancelled()


def test_recall_asks_the_embedder_once_for_a_repeated_question(client, embedding_server):
    token = client.post("/api/hubs", json={"slug": "faq"}).json()["owner_token"]
    doc = client.post(
        "/api/docs",
        json={"hub": "faq", "title": "Hubs", "markdown": "A hub groups pages."},
        headers={"Authorization": f"Bearer {token}"},
    ).json()
    wait_indexed(client, [doc["id"]])
    before = embedding_server.inputs
    for _ in range(3):
        body = client.post("/api/hub/faq/recall", json={"question": "what groups pages?"}).json()
        assert body["mode"] == "hybrid" and body["results"][0]["doc_id"] == doc["id"]
    assert embedding_server.inputs == before + 1
    stats = client.get("/healthz").json()["questions"]
    assert stats["cache_hits"] == 2 and stats["questions"] == 3


def test_question_cache_and_batch_settings(monkeypatch):
    s = Settings.from_env({"MEMORYWIKI_QUESTION_CACHE": "0", "MEMORYWIKI_QUESTION_BATCH": "8"})
    assert (s.question_cache, s.question_batch) == (0, 8)
    with pytest.raises(ValueError, match="question batch must be >= 1"):
        QuestionLane(object(), max_batch=0)  # type: ignore[arg-type]


def test_recall_while_the_embedder_is_slow_still_answers(client, embedding_server):
    """The lane does not hold a recall hostage: with the embedder down the answer comes from
    full text and says why."""
    token = client.post("/api/hubs", json={"slug": "slow"}).json()["owner_token"]
    doc = client.post(
        "/api/docs",
        json={"hub": "slow", "title": "Notes", "markdown": "narwhal tusks"},
        headers={"Authorization": f"Bearer {token}"},
    ).json()
    wait_indexed(client, [doc["id"]])
    embedding_server.set_failing(True)
    try:
        body = client.post("/api/hub/slow/recall", json={"question": "narwhal"}).json()
    finally:
        embedding_server.set_failing(False)
    assert body["mode"] == "fulltext" and "unreachable" in body["vector_note"]
    wait_until(
        lambda: client.post("/api/hub/slow/recall", json={"question": "narwhal"}).json()["mode"] == "hybrid",
        "recall to use vectors again",
    )
