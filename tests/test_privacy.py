"""Privacy: drafts, deleted, password and email-restricted docs never reach a public read."""

from __future__ import annotations

import re
from dataclasses import replace

import psycopg
import pytest

from tests.polling import wait_indexed

SECRETS = {  # kind -> a word that appears only in that doc
    "draft": "aardwolf",
    "password": "binturong",
    "email": "caracal",
    "deleted": "dugong",
}
PUBLIC_WORD = "echidna"
ALL_WORDS = " ".join([*SECRETS.values(), PUBLIC_WORD])


@pytest.fixture
def settings(settings):
    """Every doc here a graph neighbour of every other (the test embedder puts these texts
    further apart than the default 0.42), so the graph has private edges to hide."""
    return replace(settings, graph_max_distance=0.99)


def doc_body(word):
    return f"# About {word}\n\nThe {word} notes: {word} habitat, {word} diet.\n\n## More {word}\n\n{word} facts.\n"


@pytest.fixture
def world(client):
    r = client.post("/api/hubs", json={"slug": "priv"})
    owner = {"Authorization": f"Bearer {r.json()['owner_token']}"}

    def create(title, word, link_to=None, **extra):
        body = doc_body(word) + (f"\nSee [the public notes](/{link_to}).\n" if link_to else "")
        r = client.post("/api/docs", json={"title": title, "markdown": body, "hub": "priv", **extra}, headers=owner)
        assert r.status_code == 201, r.text
        return r.json()

    public = create(f"Public {PUBLIC_WORD}", PUBLIC_WORD)
    docs = {
        "public": public,
        "draft": create(f"Draft {SECRETS['draft']}", SECRETS["draft"], public["id"], is_draft=True),
        "password": create(f"Locked {SECRETS['password']}", SECRETS["password"], public["id"], password="hunter2"),
        "email": create(f"Emails {SECRETS['email']}", SECRETS["email"], allowed_emails=["Ann@Example.com"]),
        "deleted": create(f"Deleted {SECRETS['deleted']}", SECRETS["deleted"], public["id"]),
    }
    # three private docs link to the public one: cross-references that must not show (links from
    # a public doc to one made private later: tests/test_web_privacy.py)
    assert client.patch("/api/hub/priv", json={"listed": True}, headers=owner).status_code == 200
    r = client.post(
        "/api/bundles",
        json={
            "hub": "priv",
            "title": "Everything",
            "description": "all the animals",
            "doc_ids": [d["id"] for d in docs.values()],
        },
        headers=owner,
    )
    assert r.status_code == 201, r.text
    bundle_id = r.json()["id"]
    assert client.delete(f"/api/docs/{docs['deleted']['id']}", headers=owner).status_code == 200
    wait_indexed(client, [d["id"] for d in docs.values()], bundle_ids=[bundle_id])
    return {"owner": owner, "docs": docs, "bundle": bundle_id}


# reads that list no doc of the hub: recall of bundles, cross-references (the public doc links
# only to private ones), the hub listings
NOT_NAMING_DOCS = {"recall bundle hybrid=False", "recall bundle hybrid=True", "cross-refs hub", "home", "llms.txt"}


def private_ids(world):
    return [d["id"] for kind, d in world["docs"].items() if kind != "public"]


def assert_no_leak(text, world, where):
    low = text.lower()
    for word in SECRETS.values():
        assert word not in low, f"{word} leaked through {where}"
    for doc_id in private_ids(world):
        assert doc_id not in text, f"private doc id leaked through {where}"


# the reads that are the owner's view for a browser signed in as the owner (and public for anyone else)
OWNER_VIEWS = {"hub json", "hub html", "hub search"}


def public_reads(
    client,
    world,
    *,
    signed_in: bool = False,
    as_reader: bool = False,
    question: str = ALL_WORDS,
    bundle_gone: bool = False,
):
    """(label, response text) of every public read there is. `signed_in`: read with the
    owner's session cookie the client holds, leaving out the owner's own views of the hub;
    `as_reader`: with a reader's session cookie, every read included (all stay public);
    `bundle_gone`: the bundle holds no public page now, so its own URLs answer 404."""
    bundle = world["bundle"]
    reads = []
    if not (signed_in or as_reader):  # an anonymous reader: no cookie left from an earlier read
        client.cookies.clear()
    for level in ("chunk", "doc", "bundle"):
        for hybrid in (False, True):
            r = client.post(
                "/api/hub/priv/recall", json={"question": question, "level": level, "hybrid": hybrid, "k": 50}
            )
            assert r.status_code == 200, r.text
            reads.append((f"recall {level} hybrid={hybrid}", r.text))
    public_id = world["docs"]["public"]["id"]
    for label, url, headers in [
        ("hub json", "/api/hub/priv", {}),
        ("hub html", "/hub/priv", {"Accept": "text/html"}),
        ("hub search", "/hub/priv?q=notes+habitat+diet+facts", {"Accept": "text/html"}),
        ("hub twin", "/hub/priv.md", {}),
        ("hub llms.txt", "/hub/priv/llms.txt", {}),
        ("hub llms-full.txt", "/hub/priv/llms-full.txt", {}),
        ("graph json", "/api/hub/priv/graph", {}),
        ("graph html", "/hub/priv/graph", {"Accept": "text/html"}),
        ("graph markdown", "/hub/priv/graph.md", {}),
        ("doc page", f"/{public_id}", {"Accept": "text/html"}),
        ("cross-refs doc", f"/api/social/cross-refs?doc={public_id}", {}),
        ("cross-refs hub", "/api/social/cross-refs?hub=priv", {}),
        ("home", "/", {"Accept": "text/html"}),
        ("llms.txt", "/llms.txt", {}),
        ("hub markdown", "/hub/priv", {"Accept": "text/markdown"}),
        ("hub raw", "/raw/hub/priv", {}),
        ("bundle html", f"/b/{bundle}", {"Accept": "text/html"}),
        ("bundle markdown", f"/b/{bundle}", {"Accept": "text/markdown"}),
        ("bundle raw", f"/raw/b/{bundle}", {}),
    ]:
        if signed_in and label in OWNER_VIEWS:
            continue
        r = client.get(url, headers=headers)
        # the public doc itself is 404 while a test has made it private, and so is the bundle
        # whose only public page it is
        gone = ("doc page", "cross-refs doc", "bundle") if bundle_gone else ("doc page", "cross-refs doc")
        assert r.status_code == 200 or (r.status_code in (401, 404) and label.startswith(gone)), (label, r.text)
        reads.append((label, r.text))
    return reads


def test_private_docs_are_invisible_to_every_public_read(client, world):
    reads = public_reads(client, world)
    for label, text in reads:
        assert_no_leak(text, world, label)
    texts = dict(reads)
    # the public doc does show up everywhere, so the reads above were looking at real data
    public_id = world["docs"]["public"]["id"]
    for label, text in reads:
        if label not in NOT_NAMING_DOCS:
            assert public_id in text, label
    # and the private docs are linked and graphed in the database: the gates hide them
    with psycopg.connect(client.app.state.mw.settings.database_url) as conn:
        assert conn.execute("SELECT count(*) FROM links WHERE target = %s", (public_id,)).fetchone()[0] == 3
        assert (
            conn.execute("SELECT count(*) FROM doc_edges WHERE %s IN (source, target)", (public_id,)).fetchone()[0] > 0
        )
    assert "Everything" in texts["recall bundle hybrid=False"]
    # the bundle lists its public member only, in its reading order
    assert texts["bundle raw"].count("\n---\n\n## ") == 1  # one member section after the reading order
    assert f"1. [Public {PUBLIC_WORD}]" in texts["bundle raw"]


def sign_in_as_owner(client, world) -> None:
    """The browser path: a page's CSRF token, then the session endpoint with the owner token."""
    client.cookies.clear()
    page = client.get("/hub/priv/signin", headers={"Accept": "text/html"})
    token = re.search(r'<meta name="csrf-token" content="([^"]+)"', page.text).group(1)
    owner_token = world["owner"]["Authorization"].split(" ", 1)[1]
    r = client.post("/api/hub/priv/session", json={"token": owner_token}, headers={"X-CSRF-Token": token})
    assert r.status_code == 200 and r.json()["kind"] == "owner", r.text


def test_a_thousand_public_reads_with_the_owner_signed_in_find_nothing_private(client, world):
    """The owner signed in sees every page in the owner's view of the hub, and nothing else
    widens: every other read, with the owner's cookie or without it, is public-only."""
    sign_in_as_owner(client, world)
    owned = client.get("/api/hub/priv").json()
    assert owned["view"] == "owner" and {d["visibility"] for d in owned["docs"]} == {
        "public",
        "draft",
        "password",
        "people",
    }
    session = client.cookies["mw_session"]
    words = [*SECRETS.values(), PUBLIC_WORD, "habitat", "diet", "facts", "notes"]
    reads = round_ = 0
    while reads < 1000:
        round_ += 1
        signed_in = round_ % 2 == 0
        if signed_in:
            client.cookies.set("mw_session", session)
        question = " ".join(words[(round_ + i) % len(words)] for i in range(3))
        for label, text in public_reads(client, world, signed_in=signed_in, question=question):
            assert_no_leak(text, world, f"{label} ({'the owner signed in' if signed_in else 'a stranger'})")
            reads += 1
    client.cookies.set("mw_session", session)  # and the session was live all along
    assert client.get("/api/hub/priv").json()["view"] == "owner"


def test_private_docs_are_404_on_direct_reads(client, world):
    for kind, doc in world["docs"].items():
        if kind == "public":
            continue
        doc_id = doc["id"]
        for url, headers in [
            (f"/api/docs/{doc_id}", {}),
            (f"/raw/{doc_id}", {}),
            (f"/{doc_id}", {"Accept": "text/markdown"}),
        ]:
            r = client.get(url, headers=headers)
            assert r.status_code == 404, (kind, url)
            assert_no_leak(r.text, world, f"{kind} {url}")
        r = client.get(f"/{doc_id}", headers={"Accept": "text/html"})
        # the password doc asks for its password, the email-restricted one says it is shared
        # with specific people (and nothing of it); the others do not exist for the public
        assert r.status_code == (401 if kind in ("password", "email") else 404), kind
        assert_no_leak(r.text, world, f"{kind} html")


def test_password_doc_opens_with_the_password(client, world):
    doc_id = world["docs"]["password"]["id"]
    word = SECRETS["password"]
    for headers in ({"X-Doc-Password": "wrong"}, {"X-Doc-Password": ""}, {"X-Doc-Access": "nope"}):
        assert client.get(f"/api/docs/{doc_id}", headers=headers).status_code == 404
    ok = {"X-Doc-Password": "hunter2"}
    r = client.get(f"/api/docs/{doc_id}", headers=ok)
    assert r.status_code == 200 and word in r.json()["markdown"]
    assert "is_draft" not in r.json()  # a reader is not an editor
    assert word in client.get(f"/raw/{doc_id}", headers=ok).text
    assert word in client.get(f"/{doc_id}", headers={**ok, "Accept": "text/markdown"}).text
    # the browser form, posted with the CSRF token its page carries (tests/test_security.py)
    form = client.get(f"/{doc_id}", headers={"Accept": "text/html"})
    token = re.search(r'name="csrf_token" value="([^"]+)"', form.text).group(1)
    r = client.post(f"/{doc_id}", data={"password": "wrong", "csrf_token": token})
    assert r.status_code == 401 and word not in r.text.lower()
    r = client.post(f"/{doc_id}", data={"password": "hunter2", "csrf_token": token})
    assert r.status_code == 200 and word in r.text and "<h1>" in r.text
    # the password is not a key to the other private docs
    for kind in ("draft", "email"):
        assert client.get(f"/api/docs/{world['docs'][kind]['id']}", headers=ok).status_code == 404
        r = client.post(f"/{world['docs'][kind]['id']}", data={"password": "hunter2", "csrf_token": token})
        assert r.status_code == 404


def test_email_restricted_doc_opens_with_an_issued_access_token(client, world):
    doc = world["docs"]["email"]
    doc_id, word = doc["id"], SECRETS["email"]
    url = f"/api/docs/{doc_id}/access"
    assert client.post(url, json={"email": "ann@example.com"}).status_code == 401
    assert (
        client.post(url, json={"email": "ann@example.com"}, headers={"Authorization": "Bearer wrong"}).status_code
        == 403
    )
    r = client.post(url, json={"email": "eve@example.com"}, headers=world["owner"])
    assert r.status_code == 400 and r.json()["error"]["code"] == "not_allowed"

    r = client.post(url, json={"email": "ANN@example.com"}, headers={"Authorization": f"Bearer {doc['edit_token']}"})
    assert r.status_code == 201, r.text
    token = r.json()["access_token"]
    assert client.get(f"/api/docs/{doc_id}", headers={"X-Doc-Access": token}).json()["markdown"] == doc_body(word)
    assert word in client.get(f"/raw/{doc_id}?access={token}").text
    assert word in client.get(f"/{doc_id}?access={token}", headers={"Accept": "text/html"}).text
    assert client.get(f"/api/docs/{doc_id}", headers={"X-Doc-Access": token + "x"}).status_code == 404
    # a token for this doc does not open another restricted doc
    other = client.post(
        "/api/docs", json={"title": "Other", "markdown": "other caracal", "allowed_emails": ["ann@example.com"]}
    ).json()
    assert client.get(f"/api/docs/{other['id']}", headers={"X-Doc-Access": token}).status_code == 404
    # taking the reader off the list revokes the token
    client.patch(f"/api/docs/{doc_id}", json={"allowed_emails": ["bob@example.com"]}, headers=world["owner"])
    assert client.get(f"/api/docs/{doc_id}", headers={"X-Doc-Access": token}).status_code == 404
    # and public reads still see nothing of it
    for label, text in public_reads(client, world):
        assert_no_leak(text, world, label)


READER_READS = 1000


def test_a_signed_in_reader_sees_exactly_the_pages_shared_with_them(client, world, make_client, smtp_server):
    """Ann signs in with a link mailed through the loopback SMTP server; in a thousand reads
    she sees the page shared with her (page, twin, API, history) and nothing else, and every
    listing, recall, graph and llms.txt stays what strangers see."""
    import itertools
    import re

    bob_only = client.post(
        "/api/docs",
        json={
            "hub": "priv",
            "title": "Bob's fennec",
            "markdown": doc_body("fennec"),
            "allowed_emails": ["bob@example.com"],
        },
        headers=world["owner"],
    ).json()
    reader = make_client(smtp_url=smtp_server.url)
    email_id = world["docs"]["email"]["id"]
    assert reader.post(f"/api/docs/{email_id}/access/request", json={"email": "ann@example.com"}).status_code == 202
    secret = re.search(r"#(mwl_[\w-]+)", smtp_server.wait_for("ann@example.com")[0].get_content()).group(1)
    page = reader.get(f"/{email_id}/signin", headers={"Accept": "text/html"}).text
    token = re.search(r'name="csrf-token" content="([^"]+)"', page).group(1)
    assert (
        reader.post(
            f"/api/docs/{email_id}/access/session", json={"link": secret}, headers={"X-CSRF-Token": token}
        ).status_code
        == 200
    )

    listings = public_reads(reader, world, as_reader=True)
    for label, text in listings:
        assert_no_leak(text, world, f"reader {label}")
        assert "fennec" not in text.lower(), label
    shared_word = SECRETS["email"]
    others = {kind: d["id"] for kind, d in world["docs"].items() if kind not in ("public", "email")}
    others["bob"] = bob_only["id"]
    reads = [
        ("/api/docs/{}", {}),
        ("/raw/{}", {}),
        ("/{}.md", {}),
        ("/{}", {"Accept": "text/html"}),
        ("/api/docs/{}/versions", {}),
        ("/{}/history", {"Accept": "text/html"}),
    ]
    targets = [("email", email_id), *others.items()]
    done = len(listings)
    for (kind, doc_id), (url, headers) in itertools.islice(
        itertools.cycle(itertools.product(targets, reads)), READER_READS - done
    ):
        r = reader.get(url.format(doc_id), headers=headers)
        done += 1
        if kind == "email":
            assert r.status_code == 200, (url, r.text)
            if "versions" not in url:
                assert shared_word in r.text.lower(), url
        else:
            assert r.status_code in (401, 404), (kind, url, r.status_code)
            low = r.text.lower()
            assert "fennec" not in low and all(w not in low for k, w in SECRETS.items() if k != "email"), (kind, url)
    assert done == READER_READS


def test_drafts_open_to_their_editors_only(client, world):
    doc = world["docs"]["draft"]
    doc_id = doc["id"]
    for headers in ({"Authorization": f"Bearer {doc['edit_token']}"}, world["owner"]):
        r = client.get(f"/api/docs/{doc_id}", headers=headers)
        assert r.status_code == 200 and r.json()["is_draft"] is True
    other = client.post("/api/docs", json={"title": "x", "markdown": "y"}).json()
    assert (
        client.get(f"/api/docs/{doc_id}", headers={"Authorization": f"Bearer {other['edit_token']}"}).status_code == 404
    )
    assert client.get(f"/api/docs/{doc_id}", headers={"X-Doc-Password": "hunter2"}).status_code == 404


@pytest.mark.parametrize(
    "change,undo",
    [
        ({"is_draft": True}, {"is_draft": False}),
        ({"password": "s3cret"}, {"password": None}),
        ({"allowed_emails": ["ann@example.com"]}, {"allowed_emails": []}),
    ],
)
def test_public_doc_made_private_disappears_and_comes_back(client, world, change, undo):
    doc = world["docs"]["public"]
    doc_id = doc["id"]
    owner = world["owner"]

    def visible(bundle_gone=False):
        seen = {}
        for label, text in public_reads(client, world, bundle_gone=bundle_gone):
            if label not in NOT_NAMING_DOCS and label != "cross-refs doc":
                seen[label] = doc_id in text or PUBLIC_WORD in text.lower()
        for url in (f"/api/docs/{doc_id}", f"/raw/{doc_id}"):
            seen[url] = client.get(url).status_code == 200
        return seen

    before = visible()
    assert before["recall chunk hybrid=False"] and before["recall doc hybrid=False"]  # found by vector
    assert all(v for k, v in before.items() if not k.startswith("recall bundle")), before

    r = client.patch(f"/api/docs/{doc_id}", json=change, headers=owner)
    assert r.status_code == 200, r.text
    hidden = visible(bundle_gone=True)  # the bundle's only public page: the bundle goes with it
    assert not any(hidden.values()), hidden
    # privacy changes never touch the text, so no doc is re-embedded: the vectors stay, and
    # the gates alone hide them. (The bundle may be owed: its text lists its public members'
    # titles, so the worker re-embeds it, racing this check; it once failed under load.)
    assert client.get("/healthz").json()["owed_docs"] == 0

    r = client.patch(f"/api/docs/{doc_id}", json=undo, headers=owner)
    assert r.status_code == 200, r.text
    after = visible()
    assert after == before, after
    # it comes back through the vector side too, not only full text
    res = client.post("/api/hub/priv/recall", json={"question": f"{PUBLIC_WORD} habitat"}).json()["results"]
    assert res and res[0]["doc_id"] == doc_id and res[0]["vector_rank"] == 1


def test_public_role_cannot_read_base_table_secrets(client, world, settings):
    with psycopg.connect(settings.database_url, autocommit=True) as conn:
        conn.execute("SET ROLE memorywiki_public")
        for sql in (
            "SELECT password_hash FROM docs",
            "SELECT edit_token_hash FROM docs",
            "SELECT owner_token_hash FROM hubs",
            "SELECT * FROM access_tokens",
            "SELECT allowed_emails FROM docs",
        ):
            with pytest.raises(psycopg.errors.InsufficientPrivilege):
                conn.execute(sql)
        # rows of private docs are not there at all, whatever the WHERE clause says
        try:
            rows = conn.execute("SELECT * FROM docs WHERE is_draft").fetchall()
        except psycopg.errors.InsufficientPrivilege:
            rows = []
        assert rows == []
        ids = {r[0] for r in conn.execute("SELECT id FROM docs").fetchall()}
        assert ids == {world["docs"]["public"]["id"]}
        for doc_id in private_ids(world):
            assert conn.execute("SELECT id FROM docs WHERE id = %s", (doc_id,)).fetchall() == []
        chunk_text = " ".join(r[0] for r in conn.execute("SELECT markdown FROM chunks").fetchall()).lower()
        assert PUBLIC_WORD in chunk_text
        assert all(w not in chunk_text for w in SECRETS.values())
        try:  # the full-text postings: either closed to this role, or public terms only
            terms = {r[0] for r in conn.execute("SELECT term FROM bm25_postings").fetchall()}
        except psycopg.errors.InsufficientPrivilege:
            terms = set()
        assert not terms & set(SECRETS.values())
        members = {r[0] for r in conn.execute("SELECT doc_id FROM bundle_docs").fetchall()}
        assert members == {world["docs"]["public"]["id"]}
    # and the owner role, by contrast, does see them (the check above is not vacuous)
    with psycopg.connect(settings.database_url) as conn:
        assert conn.execute("SELECT count(*) FROM docs WHERE is_draft").fetchone()[0] == 1
