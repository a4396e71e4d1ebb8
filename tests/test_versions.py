"""Version history with restore: nothing is lost on edit.

Every save that changes a doc keeps the previous version, with when and through which
credential it was made; versions are exactly as private as their doc; a restore is a new
version, re-indexed like an edit; bad input changes nothing.
"""

from __future__ import annotations

import psycopg
import pytest

from tests.polling import wait_indexed


@pytest.fixture
def world(client):
    hubs = {}
    for slug in ("main", "other"):
        r = client.post("/api/hubs", json={"slug": slug})
        hubs[slug] = {"Authorization": f"Bearer {r.json()['owner_token']}"}
    doc = client.post(
        "/api/docs",
        json={"title": "Narwhals", "markdown": "The narwhal tusk is a tooth.\n", "hub": "main"},
        headers=hubs["main"],
    ).json()
    return {
        "owner": hubs["main"],
        "other": hubs["other"],
        "doc": doc["id"],
        "edit": {"Authorization": f"Bearer {doc['edit_token']}"},
    }


def versions(client, doc_id, headers=None):
    r = client.get(f"/api/docs/{doc_id}/versions", headers=headers or {})
    assert r.status_code == 200, r.text
    return r.json()


def version(client, doc_id, n, headers=None):
    r = client.get(f"/api/docs/{doc_id}/versions/{n}", headers=headers or {})
    assert r.status_code == 200, r.text
    return r.json()


def recall_ids(client, question):
    r = client.post("/api/hub/main/recall", json={"question": question, "k": 5})
    assert r.status_code == 200, r.text
    return [hit["doc_id"] for hit in r.json()["results"]]


def test_an_edit_through_one_credential_and_a_restore_through_another_lose_nothing(client, world):
    doc_id, owner, edit = world["doc"], world["owner"], world["edit"]
    r = client.patch(f"/api/docs/{doc_id}", json={"markdown": "Walruses haul out on ice.\n"}, headers=edit)
    assert r.status_code == 200 and r.json()["version"] == 2
    r = client.patch(f"/api/docs/{doc_id}", json={"title": "Walruses", "meta": {"tag": "arctic"}}, headers=owner)
    assert r.status_code == 200 and r.json()["version"] == 3

    # restore the first version through the edit token
    r = client.post(f"/api/docs/{doc_id}/restore", json={"version": 1}, headers=edit)
    assert r.status_code == 200, r.text
    body = r.json()
    assert (body["version"], body["restored_from"], body["changed"]) == (4, 1, True)
    assert (body["title"], body["markdown"], body["meta"]) == ("Narwhals", "The narwhal tusk is a tooth.\n", {})

    listing = versions(client, doc_id)
    assert listing["version"] == 4 and not listing["deleted"]
    assert [(v["version"], v["via"], v["action"], v["restored_from"], v["current"]) for v in listing["versions"]] == [
        (4, "edit_token", "restore", 1, True),
        (3, "owner", "edit", None, False),
        (2, "edit_token", "edit", None, False),
        (1, "owner", "create", None, False),
    ]
    assert [v["size"] for v in listing["versions"]] == [29, 26, 26, 29]
    assert all(v["saved_at"] for v in listing["versions"])
    # every version reads back exactly as it was saved
    expected = {
        1: ("Narwhals", "The narwhal tusk is a tooth.\n", {}),
        2: ("Narwhals", "Walruses haul out on ice.\n", {}),
        3: ("Walruses", "Walruses haul out on ice.\n", {"tag": "arctic"}),
        4: ("Narwhals", "The narwhal tusk is a tooth.\n", {}),
    }
    for n, (title, markdown, meta) in expected.items():
        v = version(client, doc_id, n)
        assert (v["title"], v["markdown"], v["meta"], v["version"]) == (title, markdown, meta, n)

    # and the other way round: the owner restores what the edit token's restore replaced
    r = client.post(f"/api/docs/{doc_id}/restore", json={"version": 3}, headers=owner)
    assert r.status_code == 200 and r.json()["version"] == 5
    assert client.get(f"/api/docs/{doc_id}").json()["title"] == "Walruses"
    for n, (_title, markdown, _meta) in expected.items():
        assert (version(client, doc_id, n)["markdown"]) == markdown
    assert version(client, doc_id, 5)["via"] == "owner"


def test_a_restore_is_reindexed_like_an_edit(client, world):
    doc_id, edit = world["doc"], world["edit"]
    client.patch(f"/api/docs/{doc_id}", json={"markdown": "Walruses haul out on ice floes.\n"}, headers=edit)
    wait_indexed(client, [doc_id])
    assert doc_id in recall_ids(client, "walrus ice floes")
    client.post(f"/api/docs/{doc_id}/restore", json={"version": 1}, headers=edit)
    wait_indexed(client, [doc_id])
    r = client.post("/api/hub/main/recall", json={"question": "narwhal tusk tooth", "k": 5}).json()
    assert r["results"] and r["results"][0]["doc_id"] == doc_id
    assert "narwhal" in r["results"][0]["markdown"].lower()
    assert r["results"][0]["vector_rank"] is not None  # embedded again, not only full text
    walrus = client.post("/api/hub/main/recall", json={"question": "walrus floes", "k": 5}).json()["results"]
    assert all("walrus" not in hit["markdown"].lower() for hit in walrus)


def test_restoring_the_current_content_makes_no_new_version(client, world):
    r = client.post(f"/api/docs/{world['doc']}/restore", json={"version": 1}, headers=world["edit"])
    assert r.status_code == 200 and (r.json()["version"], r.json()["changed"]) == (1, False)
    assert len(versions(client, world["doc"])["versions"]) == 1


def test_a_privacy_change_is_a_version_too_and_a_restore_keeps_privacy_as_it_is(client, world):
    doc_id, owner = world["doc"], world["owner"]
    client.patch(f"/api/docs/{doc_id}", json={"markdown": "Second text.\n"}, headers=owner)
    client.patch(f"/api/docs/{doc_id}", json={"is_draft": True}, headers=owner)
    r = client.post(f"/api/docs/{doc_id}/restore", json={"version": 1}, headers=owner)
    assert r.status_code == 200
    assert r.json()["is_draft"] is True  # restoring text never publishes a draft
    assert client.get(f"/api/docs/{doc_id}").status_code == 404


def test_versions_are_exactly_as_private_as_their_doc(client, world, settings):
    owner = world["owner"]
    draft = client.post(
        "/api/docs",
        json={"title": "Plans", "markdown": "secret-otter plan v1", "hub": "main", "is_draft": True},
        headers=owner,
    ).json()
    client.patch(f"/api/docs/{draft['id']}", json={"markdown": "secret-otter plan v2"}, headers=owner)
    locked = client.post(
        "/api/docs",
        json={"title": "Vault", "markdown": "secret-beaver v1", "hub": "main", "password": "hunter2"},
        headers=owner,
    ).json()
    client.patch(f"/api/docs/{locked['id']}", json={"markdown": "secret-beaver v2"}, headers=owner)
    client.patch(f"/api/docs/{world['doc']}", json={"markdown": "public text v2"}, headers=owner)

    # without credentials: the public doc's versions only
    assert len(versions(client, world["doc"])["versions"]) == 2
    for doc_id in (draft["id"], locked["id"]):
        for path in (f"/api/docs/{doc_id}/versions", f"/api/docs/{doc_id}/versions/1"):
            r = client.get(path)
            assert r.status_code == 404 and r.json()["error"]["code"] == "not_found", path
    # a draft's versions open to its editors, a password doc's to its password
    assert (
        version(client, draft["id"], 1, {"Authorization": f"Bearer {draft['edit_token']}"})["markdown"]
        == "secret-otter plan v1"
    )
    assert version(client, locked["id"], 1, {"X-Doc-Password": "hunter2"})["markdown"] == "secret-beaver v1"
    assert client.get(f"/api/docs/{locked['id']}/versions/1", headers={"X-Doc-Password": "nope"}).status_code == 404
    # another hub's owner token does not open them
    assert client.get(f"/api/docs/{draft['id']}/versions", headers=world["other"]).status_code == 404

    # in the database: the public role sees the public doc's versions and no others
    with psycopg.connect(settings.database_url, autocommit=True) as conn:
        conn.execute("SET ROLE memorywiki_public")
        rows = conn.execute("SELECT doc_id, markdown FROM doc_versions").fetchall()
        assert {r[0] for r in rows} == {world["doc"]}
        assert not any("secret" in r[1] for r in rows)
        conn.execute("RESET ROLE")
        owner_rows = conn.execute("SELECT count(*) FROM doc_versions WHERE markdown LIKE 'secret%'").fetchone()[0]
        assert owner_rows == 2  # they are there, just not for the public role


def test_a_public_doc_made_private_takes_its_versions_with_it(client, world):
    doc_id = world["doc"]
    client.patch(f"/api/docs/{doc_id}", json={"markdown": "v2"}, headers=world["owner"])
    assert client.get(f"/api/docs/{doc_id}/versions/1").status_code == 200
    client.patch(f"/api/docs/{doc_id}", json={"allowed_emails": ["a@b.co"]}, headers=world["owner"])
    assert client.get(f"/api/docs/{doc_id}/versions/1").status_code == 404
    assert client.get(f"/api/docs/{doc_id}/versions").status_code == 404
    assert version(client, doc_id, 1, world["edit"])["markdown"] == "The narwhal tusk is a tooth.\n"


def test_a_deleted_doc_is_restored_by_its_hub_owner_not_by_its_edit_token(client, world):
    doc_id, owner, edit = world["doc"], world["owner"], world["edit"]
    assert client.delete(f"/api/docs/{doc_id}", headers=edit).status_code == 200
    assert client.get(f"/api/docs/{doc_id}").status_code == 404
    # the edit token may neither list nor restore what was deleted
    assert client.get(f"/api/docs/{doc_id}/versions", headers=edit).status_code == 404
    r = client.post(f"/api/docs/{doc_id}/restore", json={"version": 1}, headers=edit)
    assert r.status_code == 403 and r.json()["error"]["code"] == "forbidden"
    assert client.post(f"/api/docs/{doc_id}/restore", json={"version": 1}).status_code == 401
    # the hub owner sees the deletion as a version and restores the text before it
    listing = versions(client, doc_id, owner)
    assert listing["deleted"] is True
    assert [(v["version"], v["action"], v["via"], v["deleted"]) for v in listing["versions"]] == [
        (2, "delete", "edit_token", True),
        (1, "create", "owner", False),
    ]
    r = client.post(f"/api/docs/{doc_id}/restore", json={"version": 1}, headers=owner)
    assert r.status_code == 200 and r.json()["version"] == 3
    assert client.get(f"/api/docs/{doc_id}").json()["markdown"] == "The narwhal tusk is a tooth.\n"
    assert [d["id"] for d in client.get("/api/hub/main").json()["docs"]] == [doc_id]
    wait_indexed(client, [doc_id])
    assert doc_id in recall_ids(client, "narwhal tusk")


def test_a_deleted_doc_in_no_hub_is_restored_by_its_edit_token(client):
    doc = client.post("/api/docs", json={"title": "Loose", "markdown": "loose page"}).json()
    edit = {"Authorization": f"Bearer {doc['edit_token']}"}
    client.delete(f"/api/docs/{doc['id']}", headers=edit)
    assert versions(client, doc["id"], edit)["versions"][1]["via"] == "anonymous"
    r = client.post(f"/api/docs/{doc['id']}/restore", json={"version": 1}, headers=edit)
    assert r.status_code == 200, r.text
    assert client.get(f"/api/docs/{doc['id']}").json()["markdown"] == "loose page"


def test_an_import_update_is_a_version(client, world):
    owner = world["owner"]
    first = client.post(
        "/api/docs", json={"title": "Chat", "markdown": "hello", "hub": "main", "external_id": "conv-1"}, headers=owner
    ).json()
    client.post(
        "/api/docs",
        json={"title": "Chat", "markdown": "hello again", "hub": "main", "external_id": "conv-1"},
        headers=owner,
    )
    listing = versions(client, first["id"])
    assert [(v["version"], v["action"], v["via"]) for v in listing["versions"]] == [
        (2, "import", "owner"),
        (1, "import", "owner"),
    ]
    assert version(client, first["id"], 1)["markdown"] == "hello"


def test_a_stale_edit_gets_both_sides_in_the_409(client, world):
    doc_id, edit = world["doc"], world["edit"]
    client.patch(f"/api/docs/{doc_id}", json={"markdown": "Theirs.\n"}, headers=world["owner"])
    r = client.patch(f"/api/docs/{doc_id}", json={"markdown": "Mine.\n"}, headers={**edit, "If-Match": '"1"'})
    assert r.status_code == 409
    error = r.json()["error"]
    assert error["code"] == "version_conflict" and error["expected"] == 1
    current = error["current"]
    assert (current["version"], current["title"], current["markdown"]) == (2, "Narwhals", "Theirs.\n")
    assert current["updated_at"] == client.get(f"/api/docs/{doc_id}").json()["updated_at"]
    # a stale restore is refused the same way, and changes nothing
    r = client.post(f"/api/docs/{doc_id}/restore", json={"version": 1}, headers={**edit, "If-Match": "1"})
    assert r.status_code == 409 and r.json()["error"]["current"]["version"] == 2
    assert client.get(f"/api/docs/{doc_id}").json()["markdown"] == "Theirs.\n"


@pytest.mark.parametrize(
    "body, status, code",
    [
        ({}, 400, "missing_field"),
        ({"version": None}, 400, "missing_field"),
        ({"version": "1"}, 400, "invalid_field"),
        ({"version": True}, 400, "invalid_field"),
        ({"version": 1.5}, 400, "invalid_field"),
        ({"version": 0}, 400, "out_of_range"),
        ({"version": -1}, 400, "out_of_range"),
        ({"version": 2**31}, 400, "out_of_range"),
        ({"version": 99}, 404, "unknown_version"),
        ({"version": 1, "force": True}, 400, "unknown_field"),
    ],
)
def test_bad_restores_are_clear_4xx_and_change_nothing(client, world, body, status, code):
    doc_id = world["doc"]
    client.patch(f"/api/docs/{doc_id}", json={"markdown": "v2 text"}, headers=world["edit"])
    before = versions(client, doc_id)
    r = client.post(f"/api/docs/{doc_id}/restore", json=body, headers=world["owner"])
    assert r.status_code == status, r.text
    assert r.json()["error"]["code"] == code
    assert versions(client, doc_id) == before
    assert client.get(f"/api/docs/{doc_id}").json()["markdown"] == "v2 text"


def test_restore_refusals_change_nothing(client, world):
    doc_id = world["doc"]
    client.patch(f"/api/docs/{doc_id}", json={"markdown": "v2 text"}, headers=world["edit"])
    before = versions(client, doc_id)
    cases = [
        (world["other"], doc_id, 403, "forbidden"),  # another hub's owner token
        ({"Authorization": "Bearer mwo_not-a-real-token"}, doc_id, 403, "forbidden"),
        ({}, doc_id, 401, "unauthorized"),
        (world["owner"], "zzzzzzzzzz", 404, "not_found"),  # well-formed, unknown
        (world["owner"], "not-an-id", 404, "not_found"),
    ]
    for headers, target, status, code in cases:
        r = client.post(f"/api/docs/{target}/restore", json={"version": 1}, headers=headers)
        assert (r.status_code, r.json()["error"]["code"]) == (status, code), (headers, target, r.text)
    r = client.post(f"/api/docs/{doc_id}/restore", content=b"{not json", headers=world["owner"])
    assert r.status_code == 400 and r.json()["error"]["code"] == "invalid_json"
    r = client.post(
        f"/api/docs/{doc_id}/restore",
        json={"version": 1},
        headers={**world["owner"], "If-Match": "²".encode("latin-1")},
    )
    assert r.status_code == 400 and r.json()["error"]["code"] == "invalid_header"
    assert versions(client, doc_id) == before


@pytest.mark.parametrize(
    "path, status, code",
    [
        ("/api/docs/{doc}/versions/abc", 400, "invalid_version"),
        ("/api/docs/{doc}/versions/1.0", 400, "invalid_version"),
        ("/api/docs/{doc}/versions/-1", 400, "invalid_version"),
        ("/api/docs/{doc}/versions/%C2%B2", 400, "invalid_version"),
        ("/api/docs/{doc}/versions/0", 400, "out_of_range"),
        ("/api/docs/{doc}/versions/99999999999999999999", 400, "out_of_range"),
        ("/api/docs/{doc}/versions/2", 404, "unknown_version"),
        ("/api/docs/zzzzzzzzzz/versions", 404, "not_found"),
        ("/api/docs/zzzzzzzzzz/versions/1", 404, "not_found"),
        ("/api/docs/bad-id/versions", 404, "not_found"),
    ],
)
def test_bad_version_reads_are_clear_4xx(client, world, path, status, code):
    r = client.get(path.format(doc=world["doc"]))
    assert r.status_code == status, r.text
    assert r.json()["error"]["code"] == code


def test_an_if_match_that_is_no_number_is_a_400_not_a_crash(client, world):
    r = client.patch(
        f"/api/docs/{world['doc']}",
        json={"markdown": "x"},
        headers={**world["edit"], "If-Match": "²".encode("latin-1")},
    )
    assert r.status_code == 400 and r.json()["error"]["code"] == "invalid_header"


def test_a_drafts_versions_stay_private_after_it_is_published(client, world):
    """Publishing shows the page as it is now; what was written while it was a draft (or
    shared with a password) stays with its editors, on every surface that reads history."""
    owner = world["owner"]
    made = client.post(
        "/api/docs",
        json={"hub": "main", "title": "Plan", "markdown": "First thoughts: acquire rival.", "is_draft": True},
        headers=owner,
    ).json()
    doc_id, edit = made["id"], {"X-Edit-Token": made["edit_token"]}
    client.patch(f"/api/docs/{doc_id}", json={"markdown": "Second thoughts: acquire rival quietly."}, headers=owner)
    client.patch(f"/api/docs/{doc_id}", json={"password": "hunter2", "is_draft": False}, headers=owner)
    client.patch(f"/api/docs/{doc_id}", json={"markdown": "Password era: rival talks."}, headers=owner)
    published = client.patch(
        f"/api/docs/{doc_id}", json={"password": "", "markdown": "We build our own."}, headers=owner
    )
    assert published.status_code == 200 and published.json()["version"] == 5
    client.patch(f"/api/docs/{doc_id}", json={"markdown": "We build our own, in public."}, headers=owner)

    # a stranger sees the public versions only (5: published, 6: current), everywhere
    listed = versions(client, doc_id)["versions"]
    assert [v["version"] for v in listed] == [6, 5]
    for number in (1, 2, 3, 4):
        r = client.get(f"/api/docs/{doc_id}/versions/{number}")
        assert r.status_code == 404 and r.json()["error"]["code"] == "unknown_version"
    assert client.get(f"/api/docs/{doc_id}/versions/5").json()["markdown"] == "We build our own."
    history = client.get(f"/{doc_id}/history", headers={"Accept": "text/html"}).text
    twin = client.get(f"/{doc_id}/history.md").text
    for text in (history, twin, str(listed)):
        assert "rival" not in text
    assert client.get(f"/{doc_id}/history.md", params={"a": 1, "b": 6}).status_code == 400
    # someone with the page's password later reads no draft either (the page is public now)
    assert "rival" not in str(versions(client, doc_id, {"X-Doc-Password": "hunter2"}))
    # its editors see every version
    for headers in (owner, edit):
        assert [v["version"] for v in versions(client, doc_id, headers)["versions"]] == [6, 5, 4, 3, 2, 1]
        assert "acquire rival" in client.get(f"/api/docs/{doc_id}/versions/1", headers=headers).text
    assert "rival" in client.get(f"/{doc_id}/history.md", params={"a": 1, "b": 6}, headers=owner).text
    # and restoring a draft-era version is the editors' choice to publish it
    assert client.post(f"/api/docs/{doc_id}/restore", json={"version": 2}, headers=owner).status_code == 200
    assert "acquire rival quietly" in client.get(f"/{doc_id}.md").text


def test_a_people_page_reader_sees_the_versions_shared_as_it_is_now_not_its_drafts(client, world):
    owner = world["owner"]
    made = client.post(
        "/api/docs",
        json={"hub": "main", "title": "Memo", "markdown": "Draft: salaries.", "is_draft": True},
        headers=owner,
    ).json()
    doc_id = made["id"]
    client.patch(f"/api/docs/{doc_id}", json={"markdown": "Memo for ann."}, headers=owner)  # still a draft
    client.patch(f"/api/docs/{doc_id}", json={"is_draft": False, "allowed_emails": ["ann@example.com"]}, headers=owner)
    client.patch(f"/api/docs/{doc_id}", json={"markdown": "For ann: the plan."}, headers=owner)
    token = client.post(f"/api/docs/{doc_id}/access", json={"email": "ann@example.com"}, headers=owner).json()
    ann = {"X-Doc-Access": token["access_token"]}
    listed = versions(client, doc_id, ann)["versions"]
    assert [v["version"] for v in listed] == [4, 3]  # 3: shared with people, as now; 1 and 2: drafts
    for number in (1, 2):
        assert client.get(f"/api/docs/{doc_id}/versions/{number}", headers=ann).status_code == 404
    assert "salaries" not in client.get(f"/{doc_id}/history.md", headers=ann).text
