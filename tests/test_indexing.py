"""Indexing: explicit refresh, incremental chunks, the background worker, outages, batching."""

from __future__ import annotations

import math

import psycopg
import pytest
from memorywiki.server.indexing.indexer import chunk_text, doc_text

from tests.embedding_server import embed_text
from tests.polling import wait_indexed, wait_until

THREE_SECTIONS = (
    "# Alpha\n\nAardvarks eat ants in the alpha section.\n\n"
    "# Beta\n\nBeavers build dams in the beta section.\n\n"
    "# Gamma\n\nGorillas groom each other in the gamma section.\n"
)


def owner_hub(client, slug="notes"):
    r = client.post("/api/hubs", json={"slug": slug})
    assert r.status_code == 201, r.text
    return {"Authorization": f"Bearer {r.json()['owner_token']}"}


def create(client, headers, title="Animals", markdown=THREE_SECTIONS, **extra):
    r = client.post("/api/docs", json={"title": title, "markdown": markdown, "hub": "notes", **extra}, headers=headers)
    assert r.status_code == 201, r.text
    return r.json()["id"]


def db_rows(settings, sql, params=()):
    with psycopg.connect(settings.database_url) as conn:
        return conn.execute(sql, params).fetchall()


def parse_vector(text):
    return [float(x) for x in text.strip("[]").split(",")]


def close(a, b, tol=1e-4):
    return len(a) == len(b) and all(math.isclose(x, y, abs_tol=tol) for x, y in zip(a, b, strict=True))


def assert_vectors_current(settings, doc_id):
    """Every vector stored for the doc is the embedding of the doc's current text."""
    [(_title, _markdown, src, emb_hash, vec)] = db_rows(
        settings,
        "SELECT title, markdown, source_hash, embedded_hash, embedding::text FROM docs WHERE id = %s",
        (doc_id,),
    )
    assert emb_hash == src
    chunks = db_rows(
        settings, "SELECT heading_path, markdown, embedding::text FROM chunks WHERE doc_id = %s", (doc_id,)
    )
    assert chunks
    expected = [embed_text(chunk_text(heading_path, chunk_md)) for heading_path, chunk_md, _ in chunks]
    for (heading_path, _, chunk_vec), want in zip(chunks, expected, strict=True):
        assert chunk_vec is not None, heading_path
        assert close(parse_vector(chunk_vec), want)
    # the doc vector is the normalised mean of its chunk vectors
    mean = [sum(column) / len(expected) for column in zip(*expected, strict=True)]
    norm = math.sqrt(sum(x * x for x in mean))
    assert close(parse_vector(vec), [x / norm for x in mean])


@pytest.fixture
def manual(make_client):
    """An app with no background worker, so only explicit refreshes embed."""
    return make_client(in_process_worker=False)


def test_embed_is_idempotent_and_unchanged_costs_nothing(manual, embedding_server, settings):
    h = owner_hub(manual)
    doc_id = create(manual, h)
    assert embedding_server.calls == 0  # saving embedded nothing

    r = manual.post(f"/api/embed/{doc_id}")
    assert r.status_code == 200, r.text
    assert r.json() == {"embedded": {"doc": True, "chunks_embedded": 3, "chunks_unchanged": 0, "chunks_pruned": 0}}
    assert embedding_server.inputs == 3  # three chunks; the doc vector is their mean
    assert_vectors_current(settings, doc_id)

    embedding_server.reset()
    r = manual.post(f"/api/embed/{doc_id}")
    assert r.status_code == 200
    assert r.json() == {"skipped": "unchanged"}
    assert embedding_server.calls == 0

    # a PATCH that changes nothing leaves nothing owed either
    manual.patch(f"/api/docs/{doc_id}", json={"markdown": THREE_SECTIONS}, headers=h)
    assert manual.post(f"/api/embed/{doc_id}").json() == {"skipped": "unchanged"}
    assert embedding_server.calls == 0


def test_editing_one_section_reembeds_only_that_chunk(manual, embedding_server, settings):
    h = owner_hub(manual)
    doc_id = create(manual, h)
    manual.post(f"/api/embed/{doc_id}")
    embedding_server.reset()

    edited = THREE_SECTIONS.replace("Beavers build dams", "Badgers dig setts")
    assert manual.patch(f"/api/docs/{doc_id}", json={"markdown": edited}, headers=h).status_code == 200
    r = manual.post(f"/api/embed/{doc_id}")
    assert r.status_code == 200, r.text
    report = r.json()["embedded"]
    assert report["doc"] is True
    assert report["chunks_embedded"] == 1 and report["chunks_unchanged"] == 2
    assert embedding_server.inputs == 1 and embedding_server.calls == 1  # the edited chunk alone
    assert_vectors_current(settings, doc_id)


def test_removing_a_section_prunes_it(manual, embedding_server, settings):
    h = owner_hub(manual)
    doc_id = create(manual, h)
    manual.post(f"/api/embed/{doc_id}")
    embedding_server.reset()

    without_gamma = THREE_SECTIONS.split("# Gamma")[0]
    manual.patch(f"/api/docs/{doc_id}", json={"markdown": without_gamma}, headers=h)
    r = manual.post(f"/api/embed/{doc_id}")
    assert r.json() == {"embedded": {"doc": True, "chunks_embedded": 0, "chunks_unchanged": 2, "chunks_pruned": 1}}
    assert embedding_server.calls == 0  # pruning re-derives the doc vector from the kept chunks
    assert_vectors_current(settings, doc_id)
    headings = [
        row[0]
        for row in db_rows(settings, "SELECT heading_path FROM chunks WHERE doc_id = %s ORDER BY ordinal", (doc_id,))
    ]
    assert headings == ["Animals > Alpha", "Animals > Beta"]
    r = manual.post("/api/hub/notes/recall", json={"question": "gorillas groom", "hybrid": True})
    assert r.status_code == 200
    assert all("Gorillas" not in res["markdown"] for res in r.json()["results"])
    assert_vectors_current(settings, doc_id)


def test_embed_unknown_or_deleted_doc_is_404(manual):
    h = owner_hub(manual)
    doc_id = create(manual, h)
    assert manual.post("/api/embed/zzzzzzzzzz").status_code == 404
    assert manual.post("/api/embed/..%2F..%2Fetc").status_code == 404
    manual.delete(f"/api/docs/{doc_id}", headers=h)
    r = manual.post(f"/api/embed/{doc_id}")
    assert r.status_code == 404 and r.json()["error"]["code"] == "not_found"


def test_save_returns_before_embedding_and_is_findable_by_full_text_at_once(make_client, embedding_server):
    embedding_server.set_failing(True)
    client = make_client()  # the background worker runs, but the embedder is down
    h = owner_hub(client)
    doc_id = create(client, h, markdown="# Zeppelins\n\nHindenburg airships floated over Lakehurst.\n")
    for hybrid in (False, True):
        r = client.post("/api/hub/notes/recall", json={"question": "airships over Lakehurst", "hybrid": hybrid})
        assert r.status_code == 200, r.text
        body = r.json()
        assert body["vector"] == "unavailable"
        assert [res["doc_id"] for res in body["results"]] == [doc_id]
        assert body["results"][0]["fts_rank"] == 1
    for level in ("doc",):
        r = client.post("/api/hub/notes/recall", json={"question": "Hindenburg", "level": level})
        assert [res["doc_id"] for res in r.json()["results"]] == [doc_id]
    assert client.get("/healthz").json()["owed"] == 1


def test_worker_indexes_by_itself(client, embedding_server, settings):
    h = owner_hub(client)
    ids = [
        create(client, h, title=f"Doc {i}", markdown=f"# Part {i}\n\nText number {i} about walruses.\n")
        for i in range(3)
    ]
    wait_indexed(client, ids)
    for doc_id in ids:
        assert_vectors_current(settings, doc_id)
    assert client.get(f"/api/docs/{ids[0]}", headers=h).json()["indexed"] is True
    r = client.post("/api/hub/notes/recall", json={"question": "walruses number 2", "hybrid": False})
    body = r.json()
    assert body["vector"] == "ok" and body["mode"] == "vector"
    assert body["results"][0]["doc_id"] == ids[2] and body["results"][0]["vector_rank"] == 1
    # an edit is picked up too, without anyone asking
    client.patch(f"/api/docs/{ids[0]}", json={"markdown": "# Part 0\n\nNow about narwhals.\n"}, headers=h)
    wait_indexed(client, ids)
    assert_vectors_current(settings, ids[0])


def test_embedder_outage_loses_nothing_and_work_finishes_after_recovery(client, embedding_server, settings):
    client.app.state.mw.worker.retry_seconds = 0.2  # retry quickly in tests (default 5 s)
    h = owner_hub(client)
    embedding_server.set_failing(True)
    ids = [create(client, h, title=f"Outage {i}", markdown=f"# Note\n\nokapi sighting {i}\n") for i in range(3)]
    r = client.patch(f"/api/docs/{ids[0]}", json={"markdown": "# Note\n\nokapi sighting edited\n"}, headers=h)
    assert r.status_code == 200

    # the worker has tried and failed at least once, and recorded why
    wait_until(
        lambda: db_rows(settings, "SELECT count(*) FROM docs WHERE index_error IS NOT NULL")[0][0],
        "the worker to try the embedder and record why it failed",
    )
    r = client.post(f"/api/embed/{ids[1]}")
    assert r.status_code == 503 and r.json()["error"]["code"] == "embedder_failed"

    # docs intact and readable, findable by full text, still owed
    assert client.get(f"/api/docs/{ids[0]}").json()["markdown"] == "# Note\n\nokapi sighting edited\n"
    r = client.post("/api/hub/notes/recall", json={"question": "okapi sighting", "k": 10})
    assert r.status_code == 200 and r.json()["vector"] == "unavailable"
    assert sorted(res["doc_id"] for res in r.json()["results"]) == sorted(ids)
    assert client.get("/healthz").json()["owed"] == 3
    assert db_rows(settings, "SELECT count(*) FROM chunks WHERE embedding IS NOT NULL")[0][0] == 0

    embedding_server.set_failing(False)
    wait_indexed(client, ids)
    for doc_id in ids:
        assert_vectors_current(settings, doc_id)
    assert db_rows(settings, "SELECT count(*) FROM docs WHERE index_error IS NOT NULL")[0][0] == 0


def test_many_docs_are_embedded_in_few_calls(make_client, embedding_server, settings):
    writer = make_client(in_process_worker=False)
    h = owner_hub(writer)
    ids = [
        create(writer, h, title=f"Batch {i}", markdown=f"# One\n\nfirst {i}\n\n# Two\n\nsecond {i}\n")
        for i in range(30)
    ]
    assert embedding_server.calls == 0
    indexer = make_client()  # a second app on the same database, with a worker
    wait_indexed(indexer, ids)
    assert embedding_server.inputs == 30 * 2
    assert embedding_server.calls <= 3, embedding_server.calls
    for doc_id in (ids[0], ids[-1]):
        assert_vectors_current(settings, doc_id)


def test_embedder_none_answers_from_full_text(make_client, embedding_server):
    client = make_client(embedder="none")
    h = owner_hub(client)
    doc_id = create(client, h, markdown="# Tapirs\n\nTapirs have prehensile snouts.\n")
    r = client.post(f"/api/embed/{doc_id}")
    assert r.status_code == 409
    assert r.json()["error"]["code"] == "embedder_unavailable" and "embedder" in r.json()["error"]["message"]
    for level in ("chunk", "doc"):
        for hybrid in (False, True):
            r = client.post(
                "/api/hub/notes/recall", json={"question": "prehensile snouts", "level": level, "hybrid": hybrid}
            )
            assert r.status_code == 200, r.text
            body = r.json()
            assert body["vector"] == "unavailable" and body["mode"] == "fulltext"
            assert [res["doc_id"] for res in body["results"]] == [doc_id]
    r = client.post("/api/hub/notes/recall", json={"question": "snouts", "level": "bundle"})
    assert r.status_code == 200 and r.json()["vector"] == "unavailable"
    assert client.get("/healthz").json()["embedder"] is None
    assert embedding_server.calls == 0


def test_unindexed_doc_is_found_by_hybrid_recall_while_others_have_vectors(manual, embedding_server):
    h = owner_hub(manual)
    old = create(manual, h, title="Old", markdown="# Old\n\nalready indexed pangolin notes\n")
    assert manual.post(f"/api/embed/{old}").status_code == 200
    new = create(manual, h, title="New", markdown="# New\n\nfresh quetzal sighting\n")
    assert manual.get("/healthz").json()["owed"] == 1
    body = manual.post("/api/hub/notes/recall", json={"question": "quetzal sighting", "hybrid": True}).json()
    assert body["vector"] == "ok"
    [hit] = [r for r in body["results"] if r["doc_id"] == new]
    assert hit["fts_rank"] == 1 and hit["vector_rank"] is None  # no vector yet, found by its words
    body = manual.post(
        "/api/hub/notes/recall", json={"question": "quetzal sighting", "hybrid": True, "level": "doc"}
    ).json()
    [hit] = [r for r in body["results"] if r["doc_id"] == new]
    assert hit["fts_rank"] == 1


def test_a_doc_with_no_body_is_embedded_by_its_title(manual, embedding_server, settings):
    """The API refuses an empty page now; one saved before that is still indexed by its title."""
    h = owner_hub(manual)
    r = manual.post("/api/docs", json={"title": "Capybara census", "markdown": "", "hub": "notes"}, headers=h)
    assert r.status_code == 400 and r.json()["error"]["code"] == "empty_markdown"
    doc_id = create(manual, h, title="Capybara census", markdown="soon emptied")
    with psycopg.connect(settings.database_url) as conn:  # as an older version could store it
        conn.execute("DELETE FROM chunks WHERE doc_id = %s", (doc_id,))
        conn.execute("UPDATE docs SET markdown = '', source_hash = 'legacy' WHERE id = %s", (doc_id,))
    r = manual.post(f"/api/embed/{doc_id}")
    assert r.json() == {"embedded": {"doc": True, "chunks_embedded": 0, "chunks_unchanged": 0, "chunks_pruned": 0}}
    assert embedding_server.inputs == 1
    [(vec,)] = db_rows(settings, "SELECT embedding::text FROM docs WHERE id = %s", (doc_id,))
    assert close(parse_vector(vec), embed_text(doc_text("Capybara census", "")))
    result = manual.post("/api/hub/notes/recall", json={"question": "capybara census", "level": "doc"}).json()
    assert [d["doc_id"] for d in result["results"]][:1] == [doc_id]


def test_a_doc_deleted_after_its_claim_and_restored_is_indexed_at_once(manual, embedding_server, settings):
    """A worker claimed the doc, the doc was deleted before the worker read it, then its owner
    restored it: the worker lets its claim go when it finds the doc gone, so the restored doc
    is claimable at once instead of after the five-minute lease (CI once waited 60 s for it)."""
    import asyncio

    from memorywiki.server.embedding.factory import make_embedder
    from memorywiki.server.indexing.indexer import claim_owed, index_docs
    from memorywiki.server.store.db import Database

    h = owner_hub(manual)
    doc_id = create(manual, h)

    async def claim_delete_index_restore() -> list[str]:
        db = Database(settings.database_url, min_size=1, max_size=2)
        await db.open()
        try:
            async with db.owner.connection() as worker_session:  # a live worker holds the claim
                pid = (await (await worker_session.execute("SELECT pg_backend_pid() AS pid")).fetchone())["pid"]
                assert await claim_owed(db, 10, pid) == ([doc_id], [])
                r = await asyncio.to_thread(manual.delete, f"/api/docs/{doc_id}", headers=h)
                assert r.status_code == 200, r.text
                assert await index_docs(db, make_embedder(settings), [doc_id]) == {doc_id: None}
                r = await asyncio.to_thread(manual.post, f"/api/docs/{doc_id}/restore", json={"version": 1}, headers=h)
                assert r.status_code == 200, r.text
                docs, _ = await claim_owed(db, 10, pid)  # the first worker, still alive, asks again
                return docs
        finally:
            await db.close()

    assert asyncio.run(claim_delete_index_restore()) == [doc_id]
    assert embedding_server.calls == 0  # nothing was embedded for the deleted doc


def test_a_page_over_the_thread_threshold_is_chunked_whole_and_found_at_once(manual, settings):
    """A page past store.chunks.THREAD_CHARS is chunked in a thread (so the event loop is not
    held for its parse): the save still commits every chunk, the last one findable at once."""
    from memorywiki.server.store.chunks import THREAD_CHARS, chunks_of

    h = owner_hub(manual)
    markdown = "".join(
        f"# Section {i}\n\nAnimal number {i} grazes in meadow {i} of the long page. "
        + "Filler words about grass and fences. " * 40
        + "\n\n"
        for i in range(120)
    )
    markdown += "# Last\n\nThe zebra named Quagmire lives at the very end.\n"
    assert len(markdown) > THREAD_CHARS
    doc_id = create(manual, h, title="Long", markdown=markdown)
    rows = db_rows(settings, "SELECT count(*) FROM chunks WHERE doc_id = %s", (doc_id,))[0]
    assert rows[0] == len(chunks_of("Long", markdown, None))
    r = manual.post("/api/hub/notes/recall", json={"question": "zebra Quagmire", "hybrid": False})
    assert r.json()["results"][0]["doc_id"] == doc_id


def test_a_big_doc_is_indexed_a_slice_at_a_time_and_holds_nothing_back(manual, embedding_server, settings):
    """A worker embeds at most `slice_inputs` texts a batch, smallest docs first: a big page gets
    its first chunks' vectors written and stays owed (so its progress shows, and the pages saved
    after it are not held back for the whole page), and each chunk is embedded exactly once."""
    import asyncio

    from memorywiki.server.embedding.factory import make_embedder
    from memorywiki.server.indexing.worker import Worker
    from memorywiki.server.store.db import Database

    h = owner_hub(manual)
    big = create(
        manual,
        h,
        title="Big",
        markdown="".join(
            f"# Section {i}\n\nAnimal number {i} lives in section {i} of the big page.\n\n" for i in range(10)
        ),
    )
    small = create(manual, h, title="Small", markdown="# Tiny\n\nA small page saved after the big one.\n")
    embedding_server.reset()

    def embedded(doc_id):
        return db_rows(
            settings,
            "SELECT count(*) FILTER (WHERE embedding IS NOT NULL), count(*) FROM chunks WHERE doc_id = %s",
            (doc_id,),
        )[0]

    async def run_once(worker) -> None:
        await worker.run_once()

    async def index() -> list:
        db = Database(settings.database_url, min_size=1, max_size=2)
        await db.open()
        worker = Worker(db, make_embedder(settings), batch=10, slice_inputs=4)
        try:
            await run_once(worker)
            first = (embedded(big), embedded(small))
            for _ in range(10):
                await run_once(worker)
            return [first, (embedded(big), embedded(small))]
        finally:
            await worker.close()
            await db.close()

    first, last = asyncio.run(index())
    assert first == ((3, 10), (1, 1))  # the small page whole, the big one's first 3 chunks
    assert last == ((10, 10), (1, 1))
    assert manual.get("/healthz").json()["owed"] == 0
    assert embedding_server.inputs == 11  # every chunk once: nothing embedded twice
    assert_vectors_current(settings, big)
    assert_vectors_current(settings, small)


def test_a_batch_is_embedded_shortest_first_and_stored_while_the_next_call_embeds(manual, embedding_server, settings):
    """With `pass_inputs`, the texts of all the docs in a batch go to the embedder shortest first
    (similar lengths share a pass, so little padding), a few per call; a call's vectors are
    stored while the next call runs, so by the time a call starts, every call two before it is
    written."""
    import asyncio

    from memorywiki.server.embedding.factory import make_embedder
    from memorywiki.server.indexing.indexer import index_docs
    from memorywiki.server.store.db import Database

    h = owner_hub(manual)
    ids = [
        create(
            manual,
            h,
            title=f"Page {i}",
            markdown="".join(
                f"# Part {j}\n\n{'word ' * (1 + (7 * i + 3 * j) % 11)}in part {j} of page {i}.\n\n" for j in range(3)
            ),
        )
        for i in range(4)
    ]
    calls: list[tuple[list[str], int]] = []

    class Recording:
        def __init__(self, inner):
            self.inner, self.name = inner, inner.name

        async def embed(self, texts):
            stored = db_rows(settings, "SELECT count(*) FROM chunks WHERE embedding IS NOT NULL")[0][0]
            calls.append((list(texts), stored))
            return await self.inner.embed(texts)

    async def index():
        db = Database(settings.database_url, min_size=1, max_size=2)
        await db.open()
        try:
            return await index_docs(db, Recording(make_embedder(settings)), ids, pass_inputs=2)
        finally:
            await db.close()

    reports = asyncio.run(index())
    assert all("embedded" in reports[i] for i in ids)
    sent = [text for texts, _ in calls for text in texts]
    assert len(sent) == 12 and [len(texts) for texts, _ in calls] == [2] * 6
    assert [len(t) for t in sent] == sorted(len(t) for t in sent)
    for number, (_, stored) in enumerate(calls):
        assert stored >= 2 * max(0, number - 1), (number, stored)
    for doc_id in ids:
        assert_vectors_current(settings, doc_id)
