"""Capture over HTTP: share links, web pages, uploaded files and chat exports land as docs."""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path

import pytest

from tests.polling import wait_indexed
from tests.test_capture_support import LocalServer

DATA = Path(__file__).parent / "data" / "capture"
FIXTURES = Path(__file__).parent / "data" / "fixtures"


@pytest.fixture
def client(make_client):
    """The app with fetches allowed to reach this machine's test web servers."""
    return make_client(fetch_allow_loopback=True)


@pytest.fixture
def hub(client):
    token = client.post("/api/hubs", json={"slug": "inbox"}).json()["owner_token"]
    return {"Authorization": f"Bearer {token}"}


def _doc_count(client) -> int:
    return len(client.get("/api/hub/inbox").json()["docs"])


def test_chatgpt_share_url_becomes_a_doc_with_one_section_per_turn(client, hub):
    page = (FIXTURES / "chatgpt-share" / "chatgpt-share-modern.html").read_bytes()
    with LocalServer() as site:
        site.routes["/share/abc"] = (200, "text/html; charset=utf-8", page)
        response = client.post("/api/capture", json={"url": site.url("/share/abc"), "hub": "inbox"}, headers=hub)
    assert response.status_code == 201, response.text
    body = response.json()
    assert body["source"] == "chatgpt-share" and body["edit_token"]
    raw = client.get(f"/raw/{body['id']}").text
    assert "## User" in raw and "## Assistant" in raw
    assert '"chatgpt-share"' in raw.split("---")[1]  # front matter names the source


def test_article_url_capture_and_recall_by_section(client, hub):
    with LocalServer() as site:
        site.routes["/post"] = (200, "text/html", (DATA / "article.html").read_bytes())
        response = client.post(
            "/api/capture", json={"url": site.url("/post"), "hub": "inbox", "title": "Saved article"}, headers=hub
        )
    assert response.status_code == 201, response.text
    doc = client.get(f"/api/docs/{response.json()['id']}").json()
    assert doc["title"] == "Saved article" and doc["source"] == "article" and doc["markdown"].strip()


def test_loopback_urls_are_refused_without_the_opt_in(make_client):
    client = make_client()  # the default settings: fetches never reach this machine
    token = client.post("/api/hubs", json={"slug": "inbox"}).json()["owner_token"]
    hub = {"Authorization": f"Bearer {token}"}
    with LocalServer() as site:
        site.routes["/x"] = (200, "text/html", b"<p>secret admin page</p>")
        response = client.post("/api/capture", json={"url": site.url("/x"), "hub": "inbox"}, headers=hub)
        assert site.hits == []
    assert response.status_code == 403
    assert response.json()["error"]["code"] == "blocked_address"
    for url in ("http://169.254.169.254/latest/meta-data/", "http://10.0.0.1/", "file:///etc/passwd"):
        response = client.post("/api/capture", json={"url": url, "hub": "inbox"}, headers=hub)
        assert 400 <= response.status_code < 500, url
    assert _doc_count(client) == 0


@pytest.mark.parametrize(
    "name, source, expect",
    [
        ("meeting.vtt", "vtt", "## 00:00"),
        ("standup.srt", "srt", "## 00:00"),
        ("report.pdf", "pdf", ""),
        ("notes.docx", "docx", ""),
        ("roadmap.pptx", "pptx", "## Slide 1"),
    ],
)
def test_file_upload_becomes_a_doc(client, hub, name, source, expect):
    data = (DATA / name).read_bytes()
    response = client.post("/api/capture/file", files={"file": (name, data)}, data={"hub": "inbox"}, headers=hub)
    assert response.status_code == 201, response.text
    doc = client.get(f"/api/docs/{response.json()['id']}").json()
    assert doc["source"] == source
    assert doc["meta"].get("file_name") == name
    assert expect in doc["markdown"] and len(doc["markdown"]) > 20


@pytest.mark.parametrize(
    "name, payload, code",
    [
        ("empty.txt", b"", "empty"),
        ("garbage.bin", bytes(range(256)) * 40, None),
        ("encrypted.pdf", None, "encrypted_pdf"),
        ("broken.pdf", b"%PDF-1.7\n1 0 obj << /Type /Catalog >>\ngarbage", None),
    ],
)
def test_bad_files_get_a_clear_4xx_and_create_nothing(client, hub, name, payload, code):
    data = payload if payload is not None else (DATA / name).read_bytes()
    response = client.post("/api/capture/file", files={"file": (name, data)}, data={"hub": "inbox"}, headers=hub)
    assert 400 <= response.status_code < 500, response.text
    error = response.json()["error"]
    assert error["message"]
    if code:
        assert error["code"] == code
    assert _doc_count(client) == 0


def test_upload_without_a_file_or_not_multipart(client, hub):
    assert client.post("/api/capture/file", data={"hub": "inbox"}, headers=hub).status_code == 400
    response = client.post("/api/capture/file", content=b"{}", headers={**hub, "content-type": "application/json"})
    assert response.status_code == 400


def _chatgpt_export(conversations: list[dict]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("conversations.json", json.dumps(conversations))
    return buffer.getvalue()


def test_chatgpt_export_import_is_idempotent_and_updates_changed_conversations(client, hub, embedding_server):
    conversation = json.loads((FIXTURES / "chatgpt-export" / "native-conversation-v1.json").read_text())
    second = json.loads(json.dumps(conversation))
    second["id"] = second["conversation_id"] = "chatgpt-fixture-conversation-2"
    second["title"] = "Another conversation"
    export = _chatgpt_export([conversation, second])

    first = client.post(
        "/api/import/chatgpt", files={"file": ("export.zip", export)}, data={"hub": "inbox"}, headers=hub
    )
    assert first.status_code == 200, first.text
    assert first.json()["created"] == 2
    wait_indexed(client, [d["id"] for d in first.json()["docs"]])

    embedding_server.reset()
    again = client.post(
        "/api/import/chatgpt", files={"file": ("export.zip", export)}, data={"hub": "inbox"}, headers=hub
    ).json()
    assert (again["created"], again["unchanged"]) == (0, 2)
    assert {d["id"] for d in again["docs"]} == {d["id"] for d in first.json()["docs"]}
    assert _doc_count(client) == 2
    assert client.get("/healthz").json()["owed"] == 0 and embedding_server.calls == 0

    second["title"] = "Another conversation, renamed"
    changed = client.post(
        "/api/import/chatgpt",
        files={"file": ("export.zip", _chatgpt_export([conversation, second]))},
        data={"hub": "inbox"},
        headers=hub,
    ).json()
    assert (changed["unchanged"], changed["updated"]) == (1, 1)


def test_claude_export_import(client, hub):
    data = (FIXTURES / "claude-export" / "native-rich-blocks-v1.json").read_bytes()
    payload = data if data.lstrip().startswith(b"[") else b"[" + data + b"]"
    response = client.post(
        "/api/import/claude", files={"file": ("conversations.json", payload)}, data={"hub": "inbox"}, headers=hub
    )
    assert response.status_code == 200, response.text
    assert response.json()["created"] == 1
    doc = client.get(f"/api/docs/{response.json()['docs'][0]['id']}").json()
    assert doc["source"] == "claude-export" and "## Assistant" in doc["markdown"]


def test_an_export_holding_a_nul_or_a_broken_surrogate_is_imported_without_them(client, hub):
    """Exports carry whatever the chat held; a stray NUL (escaped in the JSON) once made the
    whole import a 500. The characters PostgreSQL cannot store are dropped, the rest is kept."""
    conversation = json.loads((FIXTURES / "chatgpt-export" / "native-conversation-v1.json").read_text())
    conversation["title"] = "Binary\u0000 output \ud83d"
    node = next(
        n for n in conversation["mapping"].values() if n.get("message") and n["message"]["content"].get("parts")
    )
    node["message"]["content"]["parts"][0] = "before\u0000after \udc00" + node["message"]["content"]["parts"][0]
    response = client.post(
        "/api/import/chatgpt",
        files={"file": ("export.zip", _chatgpt_export([conversation]))},
        data={"hub": "inbox"},
        headers=hub,
    )
    assert response.status_code == 200, response.text
    doc = client.get(f"/api/docs/{response.json()['docs'][0]['id']}").json()
    assert doc["title"] == "Binary output" and "beforeafter " in doc["markdown"]


@pytest.mark.parametrize("field", ["title", "hub", "source"])
def test_a_nul_in_an_upload_form_field_is_a_400_naming_it(client, hub, field):
    form = {"hub": "inbox", field: "in\x00box"}
    response = client.post("/api/capture/file", files={"file": ("a.md", b"hello there")}, data=form, headers=hub)
    assert response.status_code == 400, response.text
    assert response.json()["error"]["message"] == f"'{field}' must not contain NUL characters"
    assert _doc_count(client) == 0


def test_import_refuses_zip_bombs_and_path_tricks_and_needs_the_owner(client, hub):
    bomb = io.BytesIO()
    with zipfile.ZipFile(bomb, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("conversations.json", b"[" + b" " * (50 * 1024 * 1024) + b"]")
    response = client.post(
        "/api/import/chatgpt", files={"file": ("export.zip", bomb.getvalue())}, data={"hub": "inbox"}, headers=hub
    )
    assert 400 <= response.status_code < 500 and response.json()["error"]["code"] == "bad_archive"

    tricky = io.BytesIO()
    with zipfile.ZipFile(tricky, "w") as archive:
        archive.writestr("../../conversations.json", b"[]")
    response = client.post(
        "/api/import/chatgpt", files={"file": ("export.zip", tricky.getvalue())}, data={"hub": "inbox"}, headers=hub
    )
    assert 400 <= response.status_code < 500

    response = client.post("/api/import/chatgpt", files={"file": ("export.zip", b"[]")}, data={"hub": "inbox"})
    assert response.status_code == 401
    assert (
        client.post(
            "/api/import/bard", files={"file": ("x.json", b"[]")}, data={"hub": "inbox"}, headers=hub
        ).status_code
        == 404
    )
    assert _doc_count(client) == 0
