"""The server side of the coding tools' hooks: a session saved as its one page (a draft when made,
updated in place, the owner's edits and deletions respected), the memory a session starts with,
the passages for a prompt, and the count of what was injected, over HTTP as an attacker and as
the owner would use them."""

from __future__ import annotations

import json

import pytest
from memorywiki.formats.project import normalize_remote, project_keys, project_record

from tests.polling import wait_indexed

PROJECT = {"name": "acme-api", "remote": "git@github.com:Acme/api.git", "path": "/home/me/acme-api"}
FIRST = (
    "## User\n\nShould the cache keep SQLite in WAL mode?\n\n"
    "## Assistant\n\nYes. We decided to run the cache in WAL mode because readers never block the "
    "writer. I changed cache.py to set journal_mode=WAL on connect.\n"
)
MORE = (
    "\n## User\n\nAnd the checkpoints?\n\n"
    "## Assistant\n\nWe will checkpoint every 1000 pages with wal_autocheckpoint, so the WAL file stays small.\n"
)


@pytest.fixture
def owner(client):
    token = client.post("/api/hubs", json={"slug": "dev"}).json()["owner_token"]
    return {"Authorization": f"Bearer {token}"}


def put(client, headers, transcript=FIRST, sid="s-1", **extra):
    body = {"title": "acme-api: cache mode", "transcript": transcript, "project": PROJECT, **extra}
    return client.put(f"/api/hub/dev/agent-sessions/claude-code/{sid}", json=body, headers=headers)


def doc(client, headers, doc_id):
    r = client.get(f"/api/docs/{doc_id}", headers=headers)
    assert r.status_code == 200, r.text
    return r.json()


def start(client, headers=None, **extra):
    r = client.post("/api/hub/dev/agent-context", json={"kind": "start", "project": PROJECT, **extra}, headers=headers)
    assert r.status_code == 200, r.text
    assert r.headers["cache-control"] == "private, no-store"
    return r.json()


# ---- one page per session ------------------------------------------------------------------


def test_a_session_is_one_draft_page_with_a_summary_updated_in_place(client, owner):
    r = put(client, owner)
    assert r.status_code == 201, r.text
    assert r.headers["cache-control"] == "private, no-store"
    made = r.json()
    assert made["status"] == "created" and made["draft"] is True and made["summary"] == "extractive"
    page = doc(client, owner, made["id"])
    assert page["is_draft"] is True
    assert page["markdown"].startswith("## Summary\n\n")
    summary = page["markdown"].split("\n## User")[0]
    assert "WAL mode" in summary  # the decision, in the session's own words
    assert "## User\n\nShould the cache keep SQLite in WAL mode?" in page["markdown"]
    assert page["meta"]["project"]["keys"] == [
        "remote:github.com/Acme/api",
        "path:/home/me/acme-api",
        "name:acme-api",
    ]
    assert client.get(f"/{made['id']}", headers={"Accept": "text/markdown"}).status_code == 404  # private

    # the same session again: the same page, nothing new
    again = put(client, owner).json()
    assert (again["id"], again["status"], again["version"]) == (made["id"], "unchanged", made["version"])
    # the session went on: the same page, updated, its summary too
    resumed = put(client, owner, FIRST + MORE).json()
    assert (resumed["id"], resumed["status"], resumed["turns"]) == (made["id"], "updated", 4)
    page = doc(client, owner, made["id"])
    assert "wal_autocheckpoint" in page["markdown"] and page["is_draft"] is True
    listed = client.get("/api/hub/dev", headers=owner).json()["docs"]
    assert [d["id"] for d in listed] == [made["id"]]  # never two pages for one session


def test_a_published_session_stays_published_when_it_goes_on(client, owner):
    made = put(client, owner).json()
    assert client.patch(f"/api/docs/{made['id']}", json={"is_draft": False}, headers=owner).status_code == 200
    resumed = put(client, owner, FIRST + MORE).json()
    assert resumed["draft"] is False and resumed["appended"] is False  # publishing is no edit
    page = client.get(f"/{made['id']}", headers={"Accept": "text/markdown"})
    assert page.status_code == 200 and "wal_autocheckpoint" in page.text


def test_a_page_edited_by_hand_keeps_the_owners_text_and_gets_the_new_turns(client, owner):
    made = put(client, owner).json()
    mine = "## My notes\n\nWAL it is. Reviewed by me.\n"
    assert client.patch(f"/api/docs/{made['id']}", json={"markdown": mine}, headers=owner).status_code == 200
    resumed = put(client, owner, FIRST + MORE).json()
    assert resumed["id"] == made["id"] and resumed["appended"] is True
    page = doc(client, owner, made["id"])
    assert page["markdown"].startswith(mine.rstrip())  # the owner's words, first and whole
    assert "## Session continued" in page["markdown"] and "wal_autocheckpoint" in page["markdown"]
    assert "Should the cache keep SQLite" not in page["markdown"]  # old turns are not brought back
    # and it stays theirs: a later capture appends only what is new again
    third = FIRST + MORE + "\n## User\n\nShip it.\n\n## Assistant\n\nShipped in v2.3.\n"
    put(client, owner, third)
    page = doc(client, owner, made["id"])
    assert page["markdown"].startswith(mine.rstrip()) and page["markdown"].count("wal_autocheckpoint") == 1
    assert "Shipped in v2.3." in page["markdown"]
    versions = client.get(f"/api/docs/{made['id']}/versions", headers=owner).json()["versions"]
    assert any(v["action"] == "edit" for v in versions)  # nothing lost: the edit is a version


def test_a_deleted_page_stays_deleted_and_the_session_goes_on_a_new_one(client, owner):
    made = put(client, owner).json()
    assert client.delete(f"/api/docs/{made['id']}", headers=owner).status_code == 200
    resumed = put(client, owner, FIRST + MORE)
    assert resumed.status_code == 201, resumed.text
    body = resumed.json()
    assert body["id"] != made["id"] and body["draft"] is True and body["earlier_pages_deleted"] == 1
    assert client.get(f"/api/docs/{made['id']}", headers=owner).status_code == 404  # never resurrected
    assert "wal_autocheckpoint" in doc(client, owner, body["id"])["markdown"]
    assert put(client, owner, FIRST + MORE).json()["id"] == body["id"]  # and that one is the session's now


def test_capturing_needs_the_hubs_owner_or_a_member(client, owner):
    assert put(client, {}).status_code == 401
    assert put(client, {"Authorization": "Bearer mwo_not-the-token"}).status_code == 403
    member = client.post("/api/hub/dev/members", json={"name": "bob"}, headers=owner).json()["token"]
    r = put(client, {"Authorization": f"Bearer {member}"})
    assert r.status_code == 201 and r.headers["cache-control"] == "private, no-store"
    other = client.post("/api/hubs", json={"slug": "other"}).json()["owner_token"]
    assert put(client, {"Authorization": f"Bearer {other}"}).status_code == 403  # another hub's owner


@pytest.mark.parametrize(
    "path, body, code",
    [
        ("/api/hub/dev/agent-sessions/Claude Code/s", {"title": "t", "transcript": FIRST}, "invalid_field"),
        ("/api/hub/dev/agent-sessions/claude-code/s", {"title": "t", "transcript": "  "}, "empty_markdown"),
        ("/api/hub/dev/agent-sessions/claude-code/s", {"title": " ", "transcript": FIRST}, "invalid_field"),
        ("/api/hub/dev/agent-sessions/claude-code/s", {"transcript": FIRST}, "missing_field"),
        ("/api/hub/dev/agent-sessions/claude-code/s", {"title": "t", "transcript": FIRST, "x": 1}, "unknown_field"),
        ("/api/hub/dev/agent-sessions/claude-code/s", {"title": "t", "transcript": FIRST, "project": "a"}, None),
    ],
)
def test_bad_captures_are_refused_by_name(client, owner, path, body, code):
    r = client.put(path, json=body, headers=owner)
    assert r.status_code == 400, r.text
    if code:
        assert r.json()["error"]["code"] == code
    assert client.put("/api/hub/nope/agent-sessions/claude-code/s", json=body, headers=owner).status_code in (
        400,
        404,
    )


# ---- the memory a session starts with ------------------------------------------------------


def test_a_session_starts_with_the_projects_latest_pages_and_what_to_know(client, owner):
    made = put(client, owner).json()
    notes = client.post(
        "/api/docs",
        json={
            "hub": "dev",
            "title": "acme-api deploy notes",
            "markdown": "## Rollback\n\nTo roll back acme-api, run make rollback; acme-api keeps three releases.",
        },
        headers=owner,
    ).json()
    client.post(
        "/api/docs",
        json={"hub": "dev", "title": "Sourdough", "markdown": "Feed the starter twice a day."},
        headers=owner,
    )
    wait_indexed(client)

    ctx = start(client, owner)
    text = ctx["text"]
    assert ctx["private"] is True and ctx["kind"] == "start"
    assert "## Lately in acme-api" in text and f"(http://testserver/{made['id']})" in text
    assert "WAL mode" in text  # what was decided, from the page's summary
    assert "## Before working on acme-api" in text and f"http://testserver/{notes['id']}" in text
    assert "acme-api deploy notes > Rollback" in text  # the breadcrumb names the section
    assert "Sourdough" not in text  # another subject is no memory of this project
    assert {s["url"] for s in ctx["sources"]} == {f"http://testserver/{made['id']}", f"http://testserver/{notes['id']}"}
    assert 0 < ctx["tokens"] <= ctx["max_tokens"] == 1500

    # a stranger (no token) sees only what is public: the draft session is not there
    public = start(client)
    assert public["private"] is False and made["id"] not in public["text"]
    assert notes["id"] in public["text"]
    # the session's own page is not handed back to it when it resumes
    own = start(client, owner, tool="claude-code", session_id="s-1")
    assert made["id"] not in own["text"]
    # a wrong token is told so, not quietly shown less
    r = client.post(
        "/api/hub/dev/agent-context",
        json={"kind": "start", "project": PROJECT},
        headers={"Authorization": "Bearer mwo_wrong"},
    )
    assert r.status_code == 403


def test_the_start_budget_holds_and_an_unknown_project_gets_nothing(client, owner):
    for i in range(8):
        put(client, owner, FIRST.replace("WAL", f"WAL{i}") * 3, sid=f"s-{i}")
    small = start(client, owner, max_tokens=120)
    assert 0 < small["tokens"] <= 120 and small["max_tokens"] == 120
    assert small["text"].endswith("</memorywiki>")
    nothing = client.post(
        "/api/hub/dev/agent-context",
        json={"kind": "start", "project": {"name": "elsewhere", "path": "/srv/elsewhere"}},
        headers=owner,
    ).json()
    assert nothing["text"] == "" and nothing["tokens"] == 0 and nothing["sources"] == []


def test_a_prompt_gets_the_passages_above_the_floor_and_no_others(client, owner):
    client.post(
        "/api/docs",
        json={
            "hub": "dev",
            "title": "Deploy runbook",
            "markdown": "## Rollback\n\nTo roll back the acme-api deploy, run make rollback and watch the canary.",
        },
        headers=owner,
    )
    wait_indexed(client)

    def ask(prompt):
        r = client.post("/api/hub/dev/agent-context", json={"kind": "prompt", "prompt": prompt}, headers=owner)
        assert r.status_code == 200 and r.headers["cache-control"] == "private, no-store"
        return r.json()

    hit = ask("how do I roll back the acme-api deploy?")
    assert "Deploy runbook > Rollback" in hit["text"] and "make rollback" in hit["text"]
    assert hit["tokens"] > 0 and len(hit["sources"]) == 1
    assert ask("what is the capital of Mongolia in winter?")["text"] == ""
    assert ask("yes")["text"] == ""  # too short to be a question


def test_every_injection_is_counted_for_the_owner(client, owner):
    put(client, owner)
    first = start(client, owner)
    second = start(client)  # strangers' calls count too: the hub's memory was handed out
    r = client.get("/api/hub/dev/agent-context/usage", headers=owner)
    assert r.status_code == 200 and r.headers["cache-control"] == "private, no-store"
    usage = r.json()
    assert usage["by_kind"]["start"] == {"calls": 2, "tokens": first["tokens"] + second["tokens"]}
    assert usage["calls"] == 2 and usage["by_day"][0]["kind"] == "start"
    assert client.get("/api/hub/dev/agent-context/usage").status_code == 401
    assert client.get("/api/hub/dev/agent-context/usage", headers={"Authorization": "Bearer x"}).status_code == 403
    assert client.get("/api/hub/dev/agent-context/usage?days=0", headers=owner).status_code == 400


@pytest.mark.parametrize(
    "body, status",
    [
        ({"kind": "later"}, 400),
        ({}, 400),
        ({"kind": "start", "max_tokens": 0}, 400),
        ({"kind": "start", "project": []}, 400),
        ({"kind": "prompt", "prompt": "x" * 5000}, 400),
        ({"kind": "start", "tool": "no tool!"}, 400),
    ],
)
def test_bad_context_requests_are_refused(client, owner, body, status):
    assert client.post("/api/hub/dev/agent-context", json=body, headers=owner).status_code == status
    assert client.post("/api/hub/nope/agent-context", json={"kind": "start"}).status_code == 404


# ---- projects --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "remote, key",
    [
        ("git@github.com:Acme/api.git", "github.com/Acme/api"),
        ("https://user:secret@GitHub.com/Acme/api.git", "github.com/Acme/api"),
        ("ssh://git@github.com:22/Acme/api", "github.com/Acme/api"),
        ("https://gitlab.example.org/group/sub/api/", "gitlab.example.org/group/sub/api"),
        ("/srv/git/api.git", "/srv/git/api.git"),
        ("", None),
    ],
)
def test_a_remote_is_the_same_key_however_it_was_cloned(remote, key):
    assert normalize_remote(remote) == key


def test_a_project_record_never_keeps_a_remotes_password():
    record = project_record({"name": "api", "remote": "https://bob:hunter2@github.com/acme/api", "path": "/x/api"})
    assert "hunter2" not in str(record) and record["keys"][0] == "remote:github.com/acme/api"
    assert project_record({}) is None and project_record("api") is None
    assert project_keys(name="api") == ["name:api"]


def test_the_owners_hub_page_shows_the_count_and_a_publish_button(client, owner):
    made = put(client, owner).json()
    start(client, owner)
    page = client.get("/hub/dev", headers={**owner, "Accept": "text/html"})
    assert page.status_code == 200 and page.headers["cache-control"] == "private, no-store"
    assert "Coding-tool hooks handed" in page.text and "in 1 call, the last 30 days" in page.text
    assert f'data-publish="{made["id"]}"' in page.text
    stranger = client.get("/hub/dev", headers={"Accept": "text/html"})
    assert "Coding-tool hooks handed" not in stranger.text and "data-publish" not in stranger.text


def test_with_a_chat_model_the_model_writes_the_summary_once_per_change(make_client, chat_server):
    client = make_client(llm_model="test-chat", llm_base_url=chat_server.base_url, curation=False, llm_max_retries=0)
    token = client.post("/api/hubs", json={"slug": "dev"}).json()["owner_token"]
    owner = {"Authorization": f"Bearer {token}"}
    chat_server.script(
        json.dumps(
            {
                "summary": "The session settled the cache's journal mode.",
                "themes": ["Cache", "SQLite", "Journal mode"],
                "takeaways": ["Run the cache in WAL mode."],
                "insights": ["Readers never block the writer in WAL mode."],
                "open_questions": ["How often to checkpoint?"],
                "concepts": [
                    {"name": "WAL mode", "kind": "concept", "gloss": "SQLite's write-ahead log.", "aliases": []},
                    {"name": "SQLite", "kind": "entity", "gloss": "The cache's database.", "aliases": []},
                ],
                "relations": [{"subject": "WAL mode", "relation": "is a mode of", "object": "SQLite"}],
            }
        )
    )
    made = put(client, owner).json()
    assert made["summary"] == "openai:test-chat" and chat_server.calls == 1
    page = doc(client, owner, made["id"])["markdown"]
    assert page.startswith("## Summary\n\nThe session settled the cache's journal mode.")
    assert "**Decided and done**\n\n- Run the cache in WAL mode." in page and "summary by openai:test-chat" in page
    # the same session again (a compaction, then its end): no second call for the same summary
    assert put(client, owner).json()["status"] == "unchanged" and chat_server.calls == 1
    # a model that fails: the summary is extractive, the session is saved all the same
    chat_server.set_failing(True)
    resumed = put(client, owner, FIRST + MORE).json()
    assert resumed["status"] == "updated" and resumed["summary"] == "extractive"
    assert "summary extractive" in doc(client, owner, made["id"])["markdown"]


def test_without_a_chat_model_no_model_is_called(client, owner, chat_server):
    assert put(client, owner).json()["summary"] == "extractive"
    assert chat_server.calls == 0


def test_a_secret_in_a_session_reaches_neither_the_page_nor_the_model(make_client, chat_server):
    from pathlib import Path

    kinds = json.loads((Path(__file__).parent / "data" / "secrets" / "kinds.json").read_text())
    planted = [k for k in kinds if k["name"] in ("aws-access-key", "aws-secret-key", "openai-api-key")]
    client = make_client(llm_model="test-chat", llm_base_url=chat_server.base_url, curation=False)
    token = client.post("/api/hubs", json={"slug": "dev"}).json()["owner_token"]
    owner = {"Authorization": f"Bearer {token}"}
    leaky = FIRST + "\n## User\n\nUse these:\n" + "\n".join(k["line"] for k in planted) + "\n\n## Assistant\n\nDone.\n"
    made = put(client, owner, leaky).json()
    assert made["redacted"]["secrets"] == 3 and made["redacted"]["scanned"] is True
    page = doc(client, owner, made["id"])["markdown"]
    sent = json.dumps(chat_server.requests)
    for k in planted:
        assert k["secret"] not in page and k["secret"] not in sent
    assert "[redacted: openai-api-key]" in page
    # what the hook sends beside the transcript is stored too (the page's session line, its meta)
    github = next(k for k in kinds if k["name"] == "github-token")["secret"]
    again = put(client, owner, leaky, sid="s-2", note=f"Left out: the push with {github}").json()
    assert again["redacted"]["kinds"] == {
        "aws-access-token": 1,
        "aws-secret-access-key": 1,
        "github-pat": 1,
        "openai-api-key": 1,
    }
    assert github not in json.dumps(doc(client, owner, again["id"]))
