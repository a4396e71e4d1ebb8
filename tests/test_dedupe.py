"""The same content captured twice into a hub is one page.

Within a hub, saving a title and body equal to a live doc's returns that doc: HTTP 200,
"status": "exists", no edit token, and a message that says so; `"dedupe": false` asks for a
separate page. Not for importers' upserts by external_id, not for hubless docs.
"""

from __future__ import annotations

import threading

import httpx
import pytest

from tests.test_capture_support import LocalServer

PAGE = {"title": "Deploy notes", "markdown": "We deploy with make release.\n", "hub": "notes"}


def hub(client, slug="notes"):
    r = client.post("/api/hubs", json={"slug": slug})
    return {"Authorization": f"Bearer {r.json()['owner_token']}"}


def docs_in(client, slug="notes"):
    return [d["id"] for d in client.get(f"/api/hub/{slug}").json()["docs"]]


def test_the_same_page_twice_is_the_page_it_already_has(client):
    h = hub(client)
    first = client.post("/api/docs", json=PAGE, headers=h)
    assert first.status_code == 201 and first.json()["status"] == "created" and first.json()["edit_token"]
    again = client.post("/api/docs", json=PAGE, headers=h)
    assert again.status_code == 200, again.text
    body = again.json()
    url = first.json()["url"]
    assert body == {
        "id": first.json()["id"],
        "url": url,
        "version": 1,
        "status": "exists",
        "edit_token": None,
        "message": f'already captured as {url}; send "dedupe": false for a separate page',
        "redacted": {"kinds": {}, "private": 0, "scanned": True, "secrets": 0},  # the text was scanned all the same
    }
    # the same content with its title heading still on top is the same content
    same = client.post("/api/docs", json={**PAGE, "markdown": "# Deploy notes\n\n" + PAGE["markdown"]}, headers=h)
    assert same.status_code == 200 and same.json()["id"] == first.json()["id"]
    assert docs_in(client) == [first.json()["id"]]


def test_asking_for_a_new_page_or_changing_anything_makes_one(client):
    h = hub(client)
    first = client.post("/api/docs", json=PAGE, headers=h).json()
    separate = client.post("/api/docs", json={**PAGE, "dedupe": False}, headers=h)
    assert separate.status_code == 201 and separate.json()["status"] == "created"
    other_title = client.post("/api/docs", json={**PAGE, "title": "Deploy notes (copy)"}, headers=h)
    other_body = client.post("/api/docs", json={**PAGE, "markdown": "We deploy on Fridays.\n"}, headers=h)
    assert other_title.status_code == other_body.status_code == 201
    assert len(set(docs_in(client))) == 4
    # a deleted page is gone: the same content again is a new page
    client.delete(f"/api/docs/{first['id']}", headers={"Authorization": f"Bearer {first['edit_token']}"})
    client.delete(f"/api/docs/{separate.json()['id']}", headers=h)
    assert client.post("/api/docs", json=PAGE, headers=h).status_code == 201
    assert client.post("/api/docs", json={**PAGE, "dedupe": "no"}, headers=h).status_code == 400


def test_only_within_one_hub_and_never_for_hubless_or_imported_pages(client):
    h, other = hub(client), hub(client, "other")
    assert client.post("/api/docs", json=PAGE, headers=h).status_code == 201
    assert client.post("/api/docs", json={**PAGE, "hub": "other"}, headers=other).status_code == 201
    loose = {k: v for k, v in PAGE.items() if k != "hub"}
    assert [client.post("/api/docs", json=loose).status_code for _ in range(2)] == [201, 201]
    # an importer keys its pages by external id: two conversations may well read the same
    imported = [
        client.post("/api/docs", json={**PAGE, "external_id": f"chatgpt:{i}"}, headers=h).json() for i in range(2)
    ]
    assert [d["status"] for d in imported] == ["created", "created"]
    assert len(docs_in(client)) == 3


def test_url_and_file_capture_dedupe_too(make_client):
    client = make_client(fetch_allow_loopback=True)  # the test site is on 127.0.0.1
    h = hub(client)
    with LocalServer() as site:
        site.routes["/trip.md"] = (200, "text/markdown", b"# Boat trip\n\nWe saw an otter.\n")
        capture = {"url": site.url("/trip.md"), "hub": "notes"}
        first = client.post("/api/capture", json=capture, headers=h)
        again = client.post("/api/capture", json=capture, headers=h)
        separate = client.post("/api/capture", json={**capture, "dedupe": False}, headers=h)
    assert (first.status_code, again.status_code, separate.status_code) == (201, 200, 201)
    assert again.json()["id"] == first.json()["id"] and again.json()["status"] == "exists"
    assert again.json()["edit_token"] is None and "already captured as" in again.json()["message"]

    upload = {"file": ("field.md", b"# Field notes\n\nWe saw a walrus.\n")}
    first = client.post("/api/capture/file", files=upload, data={"hub": "notes"}, headers=h)
    again = client.post("/api/capture/file", files=upload, data={"hub": "notes"}, headers=h)
    separate = client.post("/api/capture/file", files=upload, data={"hub": "notes", "dedupe": "false"}, headers=h)
    assert (first.status_code, again.status_code, separate.status_code) == (201, 200, 201)
    assert again.json()["id"] == first.json()["id"] and again.json()["status"] == "exists"
    assert again.json()["title"] == "Field notes" and again.json()["edit_token"] is None
    assert len(docs_in(client)) == 4


@pytest.mark.parametrize(
    "key,second_status",
    [
        ({"external_id": None, "dedupe": True}, "exists"),
        # an import's upsert: the second used to find nothing, insert, and hit the unique index (a 500)
        ({"external_id": "chatgpt:c1", "dedupe": False}, "unchanged"),
    ],
    ids=["same-content", "same-external-id"],
)
async def test_identical_saves_at_once_make_one_page(database_url, key, second_status):
    """Two transactions save the same content (or the same import id) into a hub at the same
    time: the second waits for the first to commit and gets its page back, instead of creating
    a twin or failing."""
    import asyncio

    import psycopg
    from memorywiki.server.store.docs import save_doc
    from psycopg.rows import dict_row

    fields = dict(
        title=PAGE["title"],
        markdown=PAGE["markdown"],
        source=None,
        meta={},
        is_draft=False,
        password_hash=None,
        allowed_emails=[],
        edit_token_hash="e",
        via="owner",
        **key,
    )
    async with (
        await psycopg.AsyncConnection.connect(database_url, row_factory=dict_row) as first,
        await psycopg.AsyncConnection.connect(database_url, row_factory=dict_row) as second,
    ):
        hub_id = (
            await (
                await first.execute("INSERT INTO hubs (slug, owner_token_hash) VALUES ('race', 'x') RETURNING id")
            ).fetchone()
        )["id"]
        await first.commit()
        row, status = await save_doc(first, hub_id=hub_id, **fields)  # not committed yet
        assert status == "created"

        async def save_second():
            result = await save_doc(second, hub_id=hub_id, **fields)
            await second.commit()
            return result

        racer = asyncio.create_task(save_second())
        pid = second.info.backend_pid
        async with await psycopg.AsyncConnection.connect(database_url, autocommit=True) as watch:
            for _ in range(400):  # until the second save waits on the first, or finishes without waiting
                waiting = await (
                    await watch.execute("SELECT wait_event_type = 'Lock' FROM pg_stat_activity WHERE pid = %s", (pid,))
                ).fetchone()
                if racer.done() or (waiting and waiting[0]):
                    break
                await asyncio.sleep(0.025)
        assert not racer.done(), f"the second save did not wait: {racer.result()[1]}"
        await first.commit()
        twin, status = await asyncio.wait_for(racer, 30)
        assert status == second_status and twin["id"] == row["id"]
        count = await (await first.execute("SELECT count(*) AS n FROM docs WHERE hub_id = %s", (hub_id,))).fetchone()
        assert count["n"] == 1


def test_identical_captures_over_http_at_once_make_one_page(live_server):
    owner = httpx.post(f"{live_server.url}/api/hubs", json={"slug": "race"}).json()["owner_token"]
    h = {"Authorization": f"Bearer {owner}"}
    writers = 8
    barrier = threading.Barrier(writers)
    results: dict[int, httpx.Response] = {}

    def save(i: int) -> None:
        barrier.wait()
        results[i] = httpx.post(
            f"{live_server.url}/api/capture/file",
            files={"file": ("same.md", b"Same words.\n")},
            data={"hub": "race"},
            headers=h,
            timeout=30,
        )

    threads = [threading.Thread(target=save, args=(i,)) for i in range(writers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(r.status_code for r in results.values()) == [200] * (writers - 1) + [201]
    assert len({r.json()["id"] for r in results.values()}) == 1
    assert len(httpx.get(f"{live_server.url}/api/hub/race").json()["docs"]) == 1
