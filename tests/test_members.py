"""Members of a hub over HTTP and the CLI: the owner adds co-authors by name, each writes with
a token of their own and is named in the history, and a removed member is refused at once."""

from __future__ import annotations

import pytest

from tests.test_cli import run


@pytest.fixture
def hub(client):
    token = client.post("/api/hubs", json={"slug": "team"}).json()["owner_token"]
    return {"Authorization": f"Bearer {token}"}


def add(client, owner, name="bob"):
    r = client.post("/api/hub/team/members", json={"name": name}, headers=owner)
    assert r.status_code == 201, r.text
    return r.json()


def test_a_member_writes_with_their_own_token_and_is_named_in_every_version(client, hub):
    added = add(client, hub)
    assert added["name"] == "bob" and added["via"] == "member:bob" and added["token"].startswith("mwm_")
    listed = client.get("/api/hub/team/members", headers=hub).json()["members"]
    assert [m["name"] for m in listed] == ["bob"] and "token" not in listed[0]  # shown once only
    bob = {"Authorization": f"Bearer {added['token']}"}

    doc = client.post("/api/docs", json={"hub": "team", "title": "Plan", "markdown": "First draft."}, headers=bob)
    assert doc.status_code == 201, doc.text
    doc_id = doc.json()["id"]
    owner_edit = client.patch(f"/api/docs/{doc_id}", json={"markdown": "The owner's words."}, headers=hub)
    assert owner_edit.status_code == 200
    edit = client.patch(f"/api/docs/{doc_id}", json={"markdown": "Bob's words."}, headers=bob)
    assert edit.status_code == 200, edit.text
    assert client.post(f"/api/docs/{doc_id}/restore", json={"version": 1}, headers=bob).status_code == 200
    assert client.delete(f"/api/docs/{doc_id}", headers=bob).status_code == 200
    # what was deleted is the owner's: its versions, and bringing it back
    assert client.get(f"/api/docs/{doc_id}/versions", headers=bob).status_code == 404
    assert client.post(f"/api/docs/{doc_id}/undelete", json={}, headers=bob).status_code == 403
    assert client.post(f"/api/docs/{doc_id}/undelete", json={}, headers=hub).status_code == 200

    versions = client.get(f"/api/docs/{doc_id}/versions", headers=bob).json()["versions"]
    assert [(v["action"], v["via"]) for v in reversed(versions)] == [
        ("create", "member:bob"),
        ("edit", "owner"),
        ("edit", "member:bob"),
        ("restore", "member:bob"),
        ("delete", "member:bob"),
        ("restore", "owner"),
    ]
    page = client.get(f"/{doc_id}/history", headers={"Accept": "text/html", **hub})
    assert page.status_code == 200 and "member bob" in page.text and "the hub&#39;s owner" in page.text
    twin = client.get(f"/{doc_id}/history.md", headers=hub).text
    assert "| member bob |" in twin and "| the hub's owner |" in twin


def test_a_member_cannot_manage_the_hub(client, hub):
    bob = {"Authorization": f"Bearer {add(client, hub)['token']}"}
    assert client.post("/api/hub/team/members", json={"name": "eve"}, headers=bob).status_code == 403
    assert client.get("/api/hub/team/members", headers=bob).status_code == 403
    assert client.delete("/api/hub/team/members/bob", headers=bob).status_code == 403
    assert client.patch("/api/hub/team", json={"listed": True}, headers=bob).status_code == 403
    assert client.get("/api/hub/team/trash", headers=bob).status_code == 403
    assert client.get("/api/hub/team", headers=bob).json()["view"] == "public"
    page = client.get("/hub/team/signin", headers={"Accept": "text/html"})
    csrf = page.text.split('name="csrf-token" content="', 1)[1].split('"', 1)[0]
    signin = client.post(
        "/api/hub/team/session", json={"token": bob["Authorization"][7:]}, headers={"X-CSRF-Token": csrf}
    )
    assert signin.status_code == 403 and signin.json()["error"]["code"] == "wrong_token"
    # and a member of one hub writes nothing into another
    other = client.post("/api/hubs", json={"slug": "other"}).json()["owner_token"]
    theirs = client.post(
        "/api/docs", json={"hub": "other", "title": "T", "markdown": "x"}, headers={"Authorization": f"Bearer {other}"}
    ).json()
    assert (
        client.post("/api/docs", json={"hub": "other", "title": "T", "markdown": "x"}, headers=bob).status_code == 403
    )
    assert client.patch(f"/api/docs/{theirs['id']}", json={"markdown": "y"}, headers=bob).status_code == 403


def test_a_removed_member_is_refused_at_once(client, hub):
    bob = {"Authorization": f"Bearer {add(client, hub)['token']}"}
    doc_id = client.post("/api/docs", json={"hub": "team", "title": "Plan", "markdown": "x"}, headers=bob).json()["id"]
    removed = client.delete("/api/hub/team/members/bob", headers=hub)
    assert removed.status_code == 200 and removed.json()["removed"] is True
    assert client.post("/api/docs", json={"hub": "team", "title": "T", "markdown": "x"}, headers=bob).status_code == 403
    assert client.patch(f"/api/docs/{doc_id}", json={"markdown": "y"}, headers=bob).status_code == 403
    assert client.delete(f"/api/docs/{doc_id}", headers=bob).status_code == 403
    assert client.get("/api/hub/team/members", headers=hub).json()["members"] == []
    # the name can be given again, with a new token; the old one stays dead
    again = add(client, hub)
    assert again["token"] != bob["Authorization"][7:]
    assert client.patch(f"/api/docs/{doc_id}", json={"markdown": "y"}, headers=bob).status_code == 403


@pytest.mark.parametrize("name", ["bob\r\nBcc: eve@example.com", "bob smith", "", "-bob", "b" * 41, "<b>", "bób"])
def test_a_bad_member_name_is_a_clear_400(client, hub, name):
    r = client.post("/api/hub/team/members", json={"name": name}, headers=hub)
    assert r.status_code == 400 and r.json()["error"]["code"] in ("invalid_name", "invalid_field", "empty_field")


def test_member_mistakes_get_clear_answers(client, hub):
    assert add(client, hub, "Bob")["name"] == "bob"  # names are lower case
    dup = client.post("/api/hub/team/members", json={"name": "bob"}, headers=hub)
    assert dup.status_code == 409 and dup.json()["error"]["code"] == "member_exists"
    gone = client.delete("/api/hub/team/members/carol", headers=hub)
    assert gone.status_code == 404 and gone.json()["error"]["code"] == "unknown_member"
    assert client.post("/api/hub/team/members", json={"name": "carol"}).status_code == 401
    assert client.post("/api/hub/nohub/members", json={"name": "carol"}, headers=hub).status_code == 404
    assert client.post("/api/hub/team/members", json={"name": "carol", "role": "x"}, headers=hub).status_code == 400


def test_the_cli_adds_lists_and_removes_members_and_history_names_them(live_server, tmp_path, monkeypatch):

    for name in ("MEMORYWIKI_TOKEN", "MEMORYWIKI_HUB", "XDG_CONFIG_HOME", "MEMORYWIKI_DEBUG"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("MEMORYWIKI_CONFIG", str(tmp_path / "owner.toml"))
    monkeypatch.setenv("MEMORYWIKI_URL", live_server.url)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    run("hub", "create", "crew")
    token = run("hub", "member", "add", "bob").stdout.strip()
    assert token.startswith("mwm_")
    assert run("hub", "member", "list").stdout.split("\t")[0] == "bob"

    monkeypatch.setenv("MEMORYWIKI_CONFIG", str(tmp_path / "bob.toml"))  # bob's own machine
    run("hub", "use", "crew", "--token", token)
    url = run("capture", "--title", "Bob's page", "-", input="Written by bob.\n").stdout.strip()
    assert "member bob" in run("history", url).stdout
    refused = run("hub", "member", "list", ok=False)
    assert refused.exit_code != 0 and "owner token" in refused.output

    monkeypatch.setenv("MEMORYWIKI_CONFIG", str(tmp_path / "owner.toml"))
    assert "no longer a member" in run("hub", "member", "remove", "bob").output
    assert run("hub", "member", "list").stdout == ""
    monkeypatch.setenv("MEMORYWIKI_CONFIG", str(tmp_path / "bob.toml"))
    assert run("capture", "--title", "Again", "-", input="More.\n", ok=False).exit_code != 0
    assert run("hub", "member", "--help").exit_code == 0


def test_a_member_cannot_take_a_page_out_of_the_hub(client, hub):
    """Moving a page out of its hub, or into another, is the owner's: a member writes pages,
    they do not carry them off (not with the member token, not with the page's edit token,
    not beside the owner token of a hub of their own)."""
    bob = {"Authorization": f"Bearer {add(client, hub)['token']}"}
    mine = client.post("/api/hubs", json={"slug": "bobs"}).json()["owner_token"]  # a hub bob owns
    page = client.post(
        "/api/docs", json={"hub": "team", "title": "Plan", "markdown": "The team's plan."}, headers=hub
    ).json()
    made = client.post(
        "/api/docs", json={"hub": "team", "title": "Bob's", "markdown": "Bob wrote this."}, headers=bob
    ).json()
    tries = [
        (page["id"], {"hub": None}, bob),
        (page["id"], {"hub": "bobs"}, {"Authorization": f"Bearer {mine}", "X-Edit-Token": bob["Authorization"][7:]}),
        (page["id"], {"hub": None}, {"X-Edit-Token": page["edit_token"]}),
        (page["id"], {"hub": "bobs"}, {"Authorization": f"Bearer {mine}", "X-Edit-Token": page["edit_token"]}),
        (made["id"], {"hub": None}, {"X-Edit-Token": made["edit_token"]}),
        (made["id"], {"hub": "bobs"}, {"Authorization": f"Bearer {mine}", "X-Edit-Token": made["edit_token"]}),
    ]
    for doc_id, move, headers in tries:
        r = client.patch(f"/api/docs/{doc_id}", json=move, headers=headers)
        assert r.status_code == 403 and "owner of the hub" in r.json()["error"]["message"], r.text
    for doc_id in (page["id"], made["id"]):
        doc = client.get(f"/api/docs/{doc_id}", headers=hub)
        assert doc.status_code == 200 and doc.json()["hub"] == "team" and doc.json()["version"] == 1
    listed = {d["id"] for d in client.get("/api/hub/team", headers=hub).json()["docs"]}
    assert {page["id"], made["id"]} <= listed
    # naming the hub it is already in is no move; the owner may move it, out or away
    assert (
        client.patch(f"/api/docs/{made['id']}", json={"hub": "team", "title": "Bob's plan"}, headers=bob).status_code
        == 200
    )
    out = client.patch(f"/api/docs/{page['id']}", json={"hub": None}, headers=hub)
    assert out.status_code == 200 and out.json()["hub"] is None
    away = client.patch(
        f"/api/docs/{made['id']}",
        json={"hub": "bobs"},
        headers={"Authorization": f"Bearer {mine}", "X-Edit-Token": hub["Authorization"][7:]},
    )
    assert away.status_code == 200 and away.json()["hub"] == "bobs"


def test_a_removed_members_edit_tokens_end_with_them(client, hub):
    """The edit token a page answers with when a member creates it was theirs as a member:
    removed, it reads, edits and moves nothing, even after the name is given again."""
    bob = {"Authorization": f"Bearer {add(client, hub)['token']}"}
    made = client.post(
        "/api/docs", json={"hub": "team", "title": "Bob's", "markdown": "Bob's secret plan."}, headers=bob
    ).json()
    token = {"X-Edit-Token": made["edit_token"]}
    assert client.get(f"/api/docs/{made['id']}", headers=token).status_code == 200  # while bob is a member
    assert client.patch(f"/api/docs/{made['id']}", json={"is_draft": True}, headers=hub).status_code == 200
    assert client.delete("/api/hub/team/members/bob", headers=hub).status_code == 200
    for r in (
        client.get(f"/api/docs/{made['id']}", headers=token),
        client.get(f"/raw/{made['id']}", headers=token),
        client.get(f"/api/docs/{made['id']}/versions", headers=token),
    ):
        assert r.status_code == 404 and "secret plan" not in r.text
    assert client.patch(f"/api/docs/{made['id']}", json={"markdown": "defaced"}, headers=token).status_code == 403
    assert client.patch(f"/api/docs/{made['id']}", json={"hub": None}, headers=token).status_code == 403
    assert client.delete(f"/api/docs/{made['id']}", headers=token).status_code == 403
    add(client, hub)  # bob again: a new membership, and the old token stays dead
    assert client.get(f"/api/docs/{made['id']}", headers=token).status_code == 404
    doc = client.get(f"/api/docs/{made['id']}", headers=hub).json()
    assert (doc["markdown"], doc["hub"], doc["is_draft"]) == ("Bob's secret plan.", "team", True)
    # an edit token the owner's own save handed out is no member's: it keeps working
    own = client.post("/api/docs", json={"hub": "team", "title": "T", "markdown": "x"}, headers=hub).json()
    assert client.get(f"/api/docs/{own['id']}", headers={"X-Edit-Token": own["edit_token"]}).status_code == 200


def test_a_member_cannot_bring_back_what_the_owner_deleted(client, hub):
    bob = {"Authorization": f"Bearer {add(client, hub)['token']}"}
    page = client.post("/api/docs", json={"hub": "team", "title": "Old", "markdown": "Withdrawn text."}, headers=hub)
    doc_id = page.json()["id"]
    assert client.delete(f"/api/docs/{doc_id}", headers=hub).status_code == 200
    assert client.post(f"/api/docs/{doc_id}/undelete", json={}, headers=bob).status_code == 403
    assert client.post(f"/api/docs/{doc_id}/restore", json={"version": 1}, headers=bob).status_code == 403
    for url in (f"/api/docs/{doc_id}/versions", f"/api/docs/{doc_id}/versions/1"):
        r = client.get(url, headers=bob)
        assert r.status_code == 404 and "Withdrawn" not in r.text
    assert client.get(f"/{doc_id}.md").status_code == 404  # still deleted for everyone
    assert client.post(f"/api/docs/{doc_id}/undelete", json={}, headers=hub).status_code == 200
