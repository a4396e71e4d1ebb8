"""The owner's export of a hub (GET /api/hub/{slug}/export) and what an import asks of the API:
the lookup of importer ids, saves that carry privacy and a password hash, bundles upserted
by importer id. Real app, real PostgreSQL; the zip is read back with zipfile."""

from __future__ import annotations

import io
import zipfile

import pytest
import yaml
from memorywiki.formats.frontmatter import read_front_matter
from memorywiki.server.tokens import hash_password, verify_password


def owner_of(client, slug: str) -> tuple[dict, str]:
    token = client.post("/api/hubs", json={"slug": slug}).json()["owner_token"]
    return {"Authorization": f"Bearer {token}"}, token


def save(client, headers, **fields) -> dict:
    r = client.post("/api/docs", json=fields, headers=headers)
    assert r.status_code in (200, 201), r.text
    return r.json()


@pytest.fixture
def hub(client):
    """A hub with a page of each visibility, links between them, an edit, a bundle."""
    owner, token = owner_of(client, "notes")
    loose = save(client, {}, title="Loose", markdown="In no hub.")
    alpha = save(client, owner, hub="notes", title="Alpha", markdown="First words.")
    draft = save(
        client,
        owner,
        hub="notes",
        title="Plans: Q3/Q4?",
        is_draft=True,
        markdown=f"Builds on [alpha](http://testserver/{alpha['id']}#first), <http://testserver/{alpha['id']}>"
        f" and [this](/{alpha['id']}); [elsewhere](/{loose['id']}).\n\n"
        f"```\nhttp://testserver/{alpha['id']} in code stays\n```\n",
    )
    secret = save(client, owner, hub="notes", title="Alpha", markdown="Behind a password.", password="hunter2")
    people = save(
        client,
        owner,
        hub="notes",
        title="For two",
        markdown="Two readers.",
        allowed_emails=["b@example.org", "a@example.org"],
    )
    access = client.post(f"/api/docs/{people['id']}/access", json={"email": "a@example.org"}, headers=owner).json()
    client.patch(f"/api/docs/{alpha['id']}", json={"markdown": "First words, edited."}, headers=owner)
    bundle = client.post(
        "/api/bundles",
        json={
            "hub": "notes",
            "title": "Start here",
            "description": "In order.",
            "doc_ids": [draft["id"], alpha["id"], people["id"]],
        },
        headers=owner,
    ).json()
    return {
        "owner": owner,
        "token": token,
        "loose": loose,
        "alpha": alpha,
        "draft": draft,
        "secret": secret,
        "people": people,
        "access": access["access_token"],
        "bundle": bundle,
    }


def unzip(content: bytes) -> dict[str, str]:
    with zipfile.ZipFile(io.BytesIO(content)) as zf:
        assert zf.testzip() is None
        return {name: zf.read(name).decode("utf-8") for name in zf.namelist()}


def test_the_owner_downloads_every_page_bundle_and_the_index(client, hub):
    r = client.get("/api/hub/notes/export", headers=hub["owner"])
    assert r.status_code == 200
    assert r.headers["content-type"] == "application/zip"
    assert r.headers["content-disposition"].startswith('attachment; filename="notes-')
    assert r.headers["cache-control"] == "private, no-store"
    files = unzip(r.content)
    assert sorted(files) == [
        "notes/bundles/Start here.md",
        "notes/index.md",
        "notes/pages/Alpha (2).md",
        "notes/pages/Alpha.md",
        "notes/pages/For two.md",
        "notes/pages/Plans Q3 Q4.md",
    ]
    pages = {name: read_front_matter(text) for name, text in files.items() if "/pages/" in name}
    alpha = pages["notes/pages/Alpha.md"]
    assert alpha.fields["id"] == hub["alpha"]["id"] and alpha.fields["visibility"] == "public"
    assert alpha.body == "First words, edited."
    assert {"created", "updated"} <= alpha.fields.keys()
    draft = pages["notes/pages/Plans Q3 Q4.md"]
    assert draft.fields["title"] == "Plans: Q3/Q4?" and draft.fields["visibility"] == "draft"
    # links to pages of the hub become links between the files; code is left as it was
    assert draft.body.startswith(
        f"Builds on [alpha](Alpha.md#first), [http://testserver/{hub['alpha']['id']}]"
        f"(Alpha.md) and [this](Alpha.md); [elsewhere](http://testserver/{hub['loose']['id']})."
    )
    assert f"http://testserver/{hub['alpha']['id']} in code stays" in draft.body
    secret = pages["notes/pages/Alpha (2).md"]
    assert secret.fields["visibility"] == "password"
    assert verify_password(secret.fields["password_hash"], "hunter2")
    people = pages["notes/pages/For two.md"]
    assert people.fields["visibility"] == "people"
    assert people.fields["allowed_emails"] == ["a@example.org", "b@example.org"]

    bundle = read_front_matter(files["notes/bundles/Start here.md"])
    assert bundle.fields["title"] == "Start here" and bundle.fields["description"] == "In order."
    assert bundle.body == (
        "Reading order:\n\n1. [Plans: Q3/Q4?](../pages/Plans%20Q3%20Q4.md)\n"
        "2. [Alpha](../pages/Alpha.md)\n3. [For two](../pages/For%20two.md)\n"
    )
    index = read_front_matter(files["notes/index.md"])
    assert index.fields["memorywiki_export"] == 1 and index.fields["hub"] == "notes"
    assert index.fields["pages"] == 4 and index.fields["bundles"] == 1 and index.fields["versions"] is False
    assert "- [Plans: Q3/Q4?](pages/Plans%20Q3%20Q4.md) · draft" in index.body
    assert "- [Alpha](pages/Alpha%20%282%29.md) · password" in index.body


def test_versions_come_with_versions_1_and_names_stay_the_same_run_after_run(client, hub):
    first = unzip(client.get("/api/hub/notes/export?versions=1", headers=hub["owner"]).content)
    version = read_front_matter(first["notes/pages/Alpha.versions/1.md"])
    assert version.body == "First words."
    assert version.fields["version"] == 1 and version.fields["saved_action"] == "create"
    assert "notes/pages/Alpha.versions/2.md" not in first  # the current version is the page itself
    again = unzip(client.get("/api/hub/notes/export?versions=1", headers=hub["owner"]).content)
    assert sorted(again) == sorted(first)
    assert {k: v for k, v in again.items() if not k.endswith("index.md")} == {
        k: v for k, v in first.items() if not k.endswith("index.md")
    }


def test_a_stranger_gets_no_export(client, hub):
    assert client.get("/api/hub/notes/export").status_code == 401
    assert client.get("/api/hub/notes/export", headers={"Authorization": "Bearer mwo_guess"}).status_code == 403
    edit = {"Authorization": f"Bearer {hub['alpha']['edit_token']}"}
    assert client.get("/api/hub/notes/export", headers=edit).status_code == 403
    other, _ = owner_of(client, "other")
    r = client.get("/api/hub/notes/export", headers=other)
    assert r.status_code == 403 and r.json()["error"]["code"] == "forbidden"
    assert client.get("/api/hub/nowhere/export", headers=hub["owner"]).status_code == 404


def test_the_export_holds_no_token_and_no_password(client, hub):
    content = client.get("/api/hub/notes/export?versions=1", headers=hub["owner"]).content
    text = "\n".join(unzip(content).values())
    for secret in (
        hub["token"],
        hub["access"],
        "hunter2",
        *(hub[k]["edit_token"] for k in ("alpha", "draft", "secret", "people")),
    ):
        assert secret not in text
        assert secret.encode() not in content


def test_the_hub_page_offers_the_download_to_its_owner_only(client, hub):
    assert "/api/hub/notes/export" not in client.get("/hub/notes").text
    assert "/api/hub/notes/export" not in client.get("/hub/notes", headers={"Authorization": "Bearer x"}).text
    page = client.get("/hub/notes", headers=hub["owner"]).text
    assert 'href="/api/hub/notes/export" download' in page


def test_lookup_names_the_pages_an_importer_knows_owner_only(client, hub):
    owner = hub["owner"]
    save(client, owner, hub="notes", title="Imported", markdown="x", external_id="file:a.md")
    keys = ["file:a.md", f"memorywiki:{hub['alpha']['id']}", "memorywiki:zzzzzzzzzz", "file:none.md"]
    found = client.post("/api/hub/notes/lookup", json={"external_ids": keys}, headers=owner).json()["docs"]
    assert {d["external_id"]: d["deleted"] for d in found} == {
        "file:a.md": False,
        f"memorywiki:{hub['alpha']['id']}": False,
    }
    client.delete(f"/api/docs/{hub['alpha']['id']}", headers=owner)
    found = client.post("/api/hub/notes/lookup", json={"external_ids": keys}, headers=owner).json()["docs"]
    assert {d["external_id"]: d["deleted"] for d in found}[f"memorywiki:{hub['alpha']['id']}"] is True
    assert client.post("/api/hub/notes/lookup", json={"external_ids": keys}).status_code == 401
    assert client.post("/api/hub/notes/lookup", json={"external_ids": ["x"] * 1001}, headers=owner).status_code == 400
    assert client.post("/api/hub/notes/lookup", json={"external_ids": "x"}, headers=owner).status_code == 400


def test_an_import_carries_privacy_and_a_password_hash_into_a_new_hub(client):
    owner, _ = owner_of(client, "moved")
    carried = hash_password("hunter2")
    body = {
        "hub": "moved",
        "title": "Locked",
        "markdown": "text",
        "external_id": "memorywiki:aaaaaaaaaa",
        "is_draft": False,
        "password_hash": carried,
        "allowed_emails": [],
    }
    doc = save(client, owner, **body)
    assert doc["status"] == "created"
    assert client.get(f"/api/docs/{doc['id']}").status_code == 404
    assert client.get(f"/api/docs/{doc['id']}", headers={"X-Doc-Password": "hunter2"}).json()["title"] == "Locked"
    assert save(client, owner, **body)["status"] == "unchanged"
    # an upsert sets the privacy it names: the page becomes a draft, its password goes
    updated = save(client, owner, **{**body, "is_draft": True, "password_hash": None})
    assert updated["status"] == "updated"
    read = client.get(f"/api/docs/{doc['id']}", headers=owner).json()
    assert read["is_draft"] is True and read["has_password"] is False
    # and what it leaves out stays as the owner set it (a chat export imported again)
    assert (
        save(client, owner, hub="moved", title="Locked", markdown="new text", external_id="memorywiki:aaaaaaaaaa")[
            "status"
        ]
        == "updated"
    )
    assert client.get(f"/api/docs/{doc['id']}", headers=owner).json()["is_draft"] is True


def test_a_people_page_imported_by_external_id_stays_restricted(client):
    owner, _ = owner_of(client, "people")
    doc = save(
        client,
        owner,
        hub="people",
        title="Two",
        markdown="text",
        external_id="file:two.md",
        allowed_emails=["a@example.org"],
    )
    assert client.get(f"/api/docs/{doc['id']}").status_code == 404
    assert client.get("/api/hub/people").json()["docs"] == []


def test_a_plain_password_sent_again_keeps_its_hash_and_the_page_unchanged(client):
    owner, _ = owner_of(client, "again")
    body = {"hub": "again", "title": "Tea", "markdown": "Green tea.", "external_id": "k", "password": "pw"}
    assert save(client, owner, **body)["status"] == "created"
    assert save(client, owner, **body)["status"] == "unchanged"
    assert save(client, owner, **{**body, "password": "other"})["status"] == "updated"


HASH = "$argon2id$v=19$m=65536,t=3,p=4$UxHYolLdbRyVdiupLA7Keg$fn5etHgnFWs3L5fHDCpsjBYgO1OLtphix33oN8SPkRQ"


@pytest.mark.parametrize(
    "bad, code",
    [
        ("not a hash", "invalid_field"),
        (HASH.replace("m=65536", "m=4194304"), "invalid_field"),  # every guess would cost 4 GB
        (HASH.replace("$argon2id$", "$argon2i$"), "invalid_field"),
    ],
    ids=["not-a-hash", "costlier", "argon2i"],
)
def test_a_password_hash_the_server_would_not_make_is_refused(client, bad, code):
    owner, _ = owner_of(client, "hashes")
    r = client.post(
        "/api/docs", json={"hub": "hashes", "title": "T", "markdown": "x", "password_hash": bad}, headers=owner
    )
    assert r.status_code == 400 and r.json()["error"]["code"] == code
    r = client.post("/api/docs", json={"title": "T", "markdown": "x", "password_hash": hash_password("x")})
    assert r.status_code == 400 and "needs a 'hub'" in r.json()["error"]["message"]
    r = client.post(
        "/api/docs",
        json={"hub": "hashes", "title": "T", "markdown": "x", "password": "p", "password_hash": hash_password("x")},
        headers=owner,
    )
    assert r.status_code == 400


def test_a_bundle_saved_again_by_its_importer_id_is_updated_not_doubled(client):
    owner, _ = owner_of(client, "bund")
    a = save(client, owner, hub="bund", title="Apples", markdown="Green apples.")
    b = save(client, owner, hub="bund", title="Pears", markdown="Ripe pears.")
    body = {"hub": "bund", "title": "Order", "description": "d", "doc_ids": [a["id"], b["id"]], "external_id": "k1"}
    first = client.post("/api/bundles", json=body, headers=owner)
    assert first.status_code == 201 and first.json()["status"] == "created"
    again = client.post("/api/bundles", json=body, headers=owner)
    assert again.status_code == 200 and again.json() == {**first.json(), "status": "unchanged"}
    moved = client.post("/api/bundles", json={**body, "doc_ids": [b["id"], a["id"]]}, headers=owner).json()
    assert moved["status"] == "updated" and moved["id"] == first.json()["id"]
    assert len(client.get("/api/hub/bund").json()["bundles"]) == 1
    members = yaml.safe_load(client.get(f"/b/{moved['id']}.md").text.split("---")[1])
    assert members["docs"] == 2
