"""Secrets never reach storage, tried as a user would against a running server.

Credentials of the kinds people paste into a coding session (cloud keys, the model vendors'
API keys, chat and payment services, a JWT, a private key, a database URL's password: one of
each in tests/data/secrets/kinds.json, real formats with fresh random characters) are planted
in a page, an edit, an uploaded file and two chat exports. None of them may be found
afterwards: not in the doc, its HTML page, its markdown twin, its versions and history,
recall with the secret itself as the question, the chunks, nor anywhere in the database. The
answers say how many of each kind were redacted; `<private>` spans are dropped; a hub whose
owner turned redaction off keeps raw text.
"""

from __future__ import annotations

import base64
import html
import io
import json
import zipfile
from pathlib import Path

import httpx
import psycopg
import pytest
from memorywiki.cli.main import app
from typer.testing import CliRunner

from tests.polling import wait_indexed

DATA = Path(__file__).parent / "data"
KINDS = json.loads((DATA / "secrets" / "kinds.json").read_text(encoding="utf-8"))
SESSION = (DATA / "fixtures" / "aider" / "chat-history.excerpt.md").read_text(encoding="utf-8")
PRIVATE_NOTE = "the launch code is pelican forty two"


def probes(secret: str) -> list[str]:
    """Pieces of a secret that no page may hold: each line of it (a key block's lines), or its
    middle where a line is long (a marker may stand in a URL, so the middle is what matters)."""
    lines = [line for line in secret.splitlines() if len(line) >= 12]
    return [line if len(line) <= 32 else line[len(line) // 2 - 12 : len(line) // 2 + 12] for line in lines]


ALL_PROBES = [p for k in KINDS for p in probes(k["secret"])]


@pytest.fixture
def http(live_server):
    with httpx.Client(base_url=live_server.url, timeout=60) as client:
        yield client


def new_hub(http, slug: str) -> dict[str, str]:
    r = http.post("/api/hubs", json={"slug": slug})
    assert r.status_code == 201, r.text
    return {"Authorization": f"Bearer {r.json()['owner_token']}"}


def planted(secret_lines: list[str], private: bool = True) -> str:
    """A real session transcript with the credentials pasted into it, as they are in a session."""
    head, _, tail = SESSION.partition("\n\n")
    pasted = "\n".join(f"    {line}" if "\n" not in line else line for line in secret_lines)
    note = f"\n\nAlso <private>{PRIVATE_NOTE}</private> stays between us.\n" if private else ""
    return f"{head}\n\nHere is my environment, the deploy fails:\n\n{pasted}\n{note}\n{tail}"


def expected_kinds() -> dict[str, int]:
    """What the detector names each planted credential (its rule's kind)."""
    names = {
        "aws-access-key": "aws-access-token",
        "aws-secret-key": "aws-secret-access-key",
        "gcp-api-key": "gcp-api-key",
        "azure-storage-key": "azure-storage-account-key",
        "openai-api-key": "openai-api-key",
        "anthropic-api-key": "anthropic-api-key",
        "huggingface-token": "huggingface-access-token",
        "github-token": "github-pat",
        "gitlab-token": "gitlab-pat",
        "slack-bot-token": "slack-bot-token",
        "slack-webhook": "slack-webhook-url",
        "telegram-bot-token": "telegram-bot-api-token",
        "stripe-secret-key": "stripe-access-token",
        "sendgrid-api-key": "sendgrid-api-token",
        "twilio-api-key": "twilio-api-key",
        "npm-token": "npmjsaccesstoken",
        "jwt": "jwt",
        "private-key": "private-key",
        "database-url-password": "generic-credential-uri",
    }
    assert sorted(names) == sorted(k["name"] for k in KINDS)
    counts: dict[str, int] = {}
    for kind in names.values():
        counts[kind] = counts.get(kind, 0) + 1
    return counts


def leaks(text: str, secret_probes: list[str] = ALL_PROBES) -> list[str]:
    text = html.unescape(text)
    return [p for p in secret_probes if p in text]


def assert_nowhere(http, database_url: str, slug: str, owner: dict, doc_ids: list[str], secret_probes=ALL_PROBES):
    """No probe in any surface of these docs, in recall, or in any text column of the database."""
    for doc_id in doc_ids:
        surfaces = {
            "doc": http.get(f"/api/docs/{doc_id}", headers=owner).text,
            "html page": http.get(f"/{doc_id}", headers={**owner, "Accept": "text/html"}).text,
            "markdown twin": http.get(f"/{doc_id}", headers={**owner, "Accept": "text/markdown"}).text,
            "raw": http.get(f"/raw/{doc_id}", headers=owner).text,
            "history": http.get(f"/{doc_id}/history", headers=owner).text,
        }
        listing = http.get(f"/api/docs/{doc_id}/versions", headers=owner).json()
        for v in listing["versions"]:
            surfaces[f"version {v['version']}"] = http.get(
                f"/api/docs/{doc_id}/versions/{v['version']}", headers=owner
            ).text
        for where, text in surfaces.items():
            assert not leaks(text, secret_probes), f"{doc_id} {where} holds {leaks(text, secret_probes)}"
    for probe in secret_probes:
        for level in ("chunk", "doc"):
            r = http.post(f"/api/hub/{slug}/recall", json={"question": probe, "k": 10, "level": level}, headers=owner)
            assert r.status_code == 200, r.text
            assert not leaks(r.text, secret_probes), f"recall of {probe!r} answers {leaks(r.text, secret_probes)}"
    assert not stored_anywhere(database_url, secret_probes)


def stored_anywhere(database_url: str, secret_probes: list[str]) -> list[str]:
    """(table.column, probe) for every text or JSON column of the database that holds a probe:
    docs, doc_versions, chunks, the full-text tables, enrichments, everything."""
    found = []
    with psycopg.connect(database_url, autocommit=True) as conn:
        columns = conn.execute(
            "SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = 'public'"
            " AND data_type IN ('text', 'character varying', 'jsonb', 'json', 'ARRAY')"
        ).fetchall()
        for table, column in columns:
            for probe in secret_probes:
                row = conn.execute(
                    f'SELECT 1 FROM "{table}" WHERE "{column}"::text LIKE %s LIMIT 1',
                    ("%" + probe.replace("\\", "\\\\").replace("%", r"\%").replace("_", r"\_") + "%",),
                ).fetchone()
                if row:
                    found.append(f"{table}.{column}: {probe}")
    return found


def chatgpt_export(text: str) -> bytes:
    conversation = json.loads((DATA / "fixtures" / "chatgpt-export" / "native-conversation-v1.json").read_text())
    for node in conversation["mapping"].values():
        message = node.get("message") or {}
        content = message.get("content") or {}
        if (message.get("author") or {}).get("role") == "user" and content.get("parts"):
            content["parts"] = [text, *content["parts"][1:]]
            break
    else:
        raise AssertionError("the fixture has no user text message")
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("conversations.json", json.dumps([conversation]))
    return buffer.getvalue()


def claude_export(text: str) -> bytes:
    data = json.loads((DATA / "fixtures" / "claude-export" / "native-rich-blocks-v1.json").read_text())
    conversations = data if isinstance(data, list) else [data]
    for message in conversations[0]["chat_messages"]:
        if message.get("sender") == "human":
            message["text"] = text
            message["content"] = [{"type": "text", "text": text}]
            break
    else:
        raise AssertionError("the fixture has no human message")
    return json.dumps(conversations).encode()


def test_sixteen_kinds_in_a_page_an_edit_a_file_and_chat_exports_are_stored_nowhere(http, live_server, settings):
    owner = new_hub(http, "vault")
    lines = [k["line"] for k in KINDS]

    # a page (as `memorywiki capture --transcript` or an editor's save sends it)
    r = http.post(
        "/api/docs", json={"hub": "vault", "title": "Deploy session", "markdown": planted(lines)}, headers=owner
    )
    assert r.status_code == 201, r.text
    page = r.json()
    assert page["redacted"] == {"secrets": 19, "kinds": expected_kinds(), "private": 1, "scanned": True}
    stored = http.get(f"/api/docs/{page['id']}", headers=owner).json()["markdown"]
    assert "[redacted: github-pat]" in stored and "[redacted: private-key]" in stored
    assert PRIVATE_NOTE not in stored and "stays between us" in stored  # the span, not its sentence
    assert "postgresql://billing:[redacted: generic-credential-uri]@db-7.internal.acme.io" in stored

    # an edit: a section replaced with one that holds a key, and a title that holds one
    anthropic = next(k for k in KINDS if k["name"] == "anthropic-api-key")["secret"]
    edited = stored + f"\n\n## Follow-up\n\nRotated it: `{anthropic}`\n"
    r = http.patch(
        f"/api/docs/{page['id']}", json={"markdown": edited, "title": f"Deploy {anthropic[:40]}"}, headers=owner
    )
    assert r.status_code == 200, r.text
    assert r.json()["redacted"]["kinds"] == {"anthropic-api-key": 1}  # the title's piece is no key on its own
    assert anthropic not in r.json()["markdown"]

    # an uploaded file (an HTML page a tool printed)
    github = next(k for k in KINDS if k["name"] == "github-token")["secret"]
    stripe = next(k for k in KINDS if k["name"] == "stripe-secret-key")["secret"]
    page_html = (
        f"<html><body><h1>Runbook</h1><p>Push with {github}.</p><pre>STRIPE_SECRET_KEY={stripe}</pre></body></html>"
    )
    r = http.post(
        "/api/capture/file",
        files={"file": ("runbook.html", page_html.encode())},
        data={"hub": "vault"},
        headers=owner,
    )
    assert r.status_code == 201, r.text
    captured = r.json()
    assert captured["redacted"]["kinds"] == {"github-pat": 1, "stripe-access-token": 1}

    # chat exports, ChatGPT's and Claude's, imported into the hub
    secret_text = "My keys, for the record:\n" + "\n".join(lines)
    r = http.post(
        "/api/import/chatgpt",
        files={"file": ("export.zip", chatgpt_export(secret_text))},
        data={"hub": "vault"},
        headers=owner,
    )
    assert r.status_code == 200, r.text
    chatgpt = r.json()
    assert chatgpt["created"] == 1 and chatgpt["redacted"]["secrets"] == 19
    assert chatgpt["redacted"]["kinds"] == expected_kinds()
    r = http.post(
        "/api/import/claude",
        files={"file": ("conversations.json", claude_export(secret_text))},
        data={"hub": "vault"},
        headers=owner,
    )
    assert r.status_code == 200, r.text
    claude = r.json()
    assert claude["created"] == 1 and claude["redacted"]["kinds"] == expected_kinds()

    doc_ids = [page["id"], captured["id"], chatgpt["docs"][0]["id"], claude["docs"][0]["id"]]
    wait_indexed(live_server, doc_ids)
    assert_nowhere(http, settings.database_url, "vault", owner, doc_ids)
    private_probe = [PRIVATE_NOTE]
    assert not stored_anywhere(settings.database_url, private_probe)


def test_a_secret_split_across_lines_inside_json_base64_or_a_url_is_redacted(http, live_server, settings):
    owner = new_hub(http, "tricky")
    secret = {k["name"]: k["secret"] for k in KINDS}
    github, openai, anthropic = secret["github-token"], secret["openai-api-key"], secret["anthropic-api-key"]
    slack, sendgrid = secret["slack-bot-token"], secret["sendgrid-api-key"]
    aws_id, aws_secret = secret["aws-access-key"], secret["aws-secret-key"]
    wrapped = "\n".join(openai[i : i + 40] for i in range(0, len(openai), 40))
    tool_call = json.dumps({"tool": "bash", "input": {"command": f"curl -u admin:{sendgrid} https:\\/\\/api.acme.io"}})
    encoded = base64.b64encode(
        f"[default]\naws_access_key_id = {aws_id}\naws_secret_access_key = {aws_secret}\n".encode()
    )
    percent = aws_secret.replace("/", "%2F").replace("+", "%2B")
    markdown = (
        "# Debugging the deploy\n\n"
        f"The terminal wrapped the key:\n\n{wrapped}\n\nand it still failed.\n\n"
        f'In the script it is split: key = "{anthropic[:50]}" +\n    "{anthropic[50:]}"\n\n'
        f"The tool call was:\n\n```json\n{tool_call}\n```\n\n"
        f"The credentials file, base64: `{encoded.decode()}`\n\n"
        f"A link with a token in its query: https://api.acme.io/v1/export?access_token={github}&format=csv\n\n"
        f"And one with credentials in it: https://deploy:{slack}@ci.acme.io/hooks\n\n"
        f"Signed URL: https://bucket.s3.amazonaws.com/x?AWSAccessKeyId={aws_id}&Signature=abc&aws_secret_access_key={percent}\n"
    )
    r = http.post("/api/docs", json={"hub": "tricky", "markdown": markdown}, headers=owner)
    assert r.status_code == 201, r.text
    assert r.json()["redacted"]["secrets"] >= 7
    doc_id = r.json()["id"]
    stored = http.get(f"/api/docs/{doc_id}", headers=owner).json()["markdown"]
    assert "and it still failed" in stored and "https://api.acme.io/v1/export?access_token=[redacted:" in stored
    assert "https://deploy:[redacted: slack-bot-token]@ci.acme.io/hooks" in stored
    secret_probes = [p for s in (github, openai, anthropic, slack, sendgrid, aws_id, aws_secret) for p in probes(s)]
    secret_probes += [wrapped.splitlines()[1], percent[10:30], encoded.decode()[20:44]]
    wait_indexed(live_server, [doc_id])
    assert_nowhere(http, settings.database_url, "tricky", owner, [doc_id], secret_probes)


def test_private_spans_are_dropped_and_a_page_of_nothing_else_is_refused(http):
    owner = new_hub(http, "notes")
    markdown = (
        "Plan:\n\n<private>the acquisition closes on Friday</private>\n\nShip <PRIVATE>(and tell no one)</PRIVATE> v2."
    )
    r = http.post("/api/docs", json={"hub": "notes", "title": "Plan", "markdown": markdown}, headers=owner)
    assert r.status_code == 201, r.text
    assert r.json()["redacted"] == {"secrets": 0, "kinds": {}, "private": 2, "scanned": True}
    stored = http.get(f"/api/docs/{r.json()['id']}", headers=owner).json()["markdown"]
    assert "acquisition" not in stored and "tell no one" not in stored and "Ship  v2." in stored

    r = http.post(
        "/api/docs", json={"hub": "notes", "title": "x", "markdown": "<private>all of it</private>"}, headers=owner
    )
    assert r.status_code == 400 and r.json()["error"]["code"] == "empty_markdown"
    # an opening tag with no end is left as written: nobody can tell where it was meant to stop
    r = http.post(
        "/api/docs", json={"hub": "notes", "title": "Tags", "markdown": "Wrap it in <private> tags."}, headers=owner
    )
    assert r.status_code == 201 and r.json()["redacted"]["private"] == 0


def test_the_hub_owner_can_keep_raw_text_and_turning_it_back_on_redacts_the_next_write(http, live_server, settings):
    owner = new_hub(http, "rawtext")
    other = new_hub(http, "elsewhere")
    github = next(k for k in KINDS if k["name"] == "github-token")["secret"]

    # on by default, and only the owner may turn it off
    assert http.patch("/api/hub/rawtext", json={"redact_secrets": False}).status_code == 401
    assert http.patch("/api/hub/rawtext", json={"redact_secrets": False}, headers=other).status_code == 403
    doc = http.post("/api/docs", json={"title": "t", "markdown": "plain text"}, headers=owner).json()
    edit = {"Authorization": f"Bearer {doc['edit_token']}"}
    assert http.patch("/api/hub/rawtext", json={"redact_secrets": False}, headers=edit).status_code == 403
    r = http.patch("/api/hub/rawtext", json={"redact_secrets": False}, headers=owner)
    assert r.status_code == 200 and r.json()["redact_secrets"] is False
    assert http.get("/api/hub/rawtext", headers=owner).json()["redact_secrets"] is False
    assert "redact_secrets" not in http.get("/api/hub/rawtext").json()  # strangers are not told

    markdown = f"token: {github}\n\n<private>still private</private> kept."
    r = http.post("/api/docs", json={"hub": "rawtext", "title": "Raw", "markdown": markdown}, headers=owner)
    assert r.status_code == 201
    assert r.json()["redacted"] == {"secrets": 0, "kinds": {}, "private": 1, "scanned": False}
    doc_id = r.json()["id"]
    assert http.get(f"/api/docs/{doc_id}", headers=owner).json()["markdown"] == f"token: {github}\n\n kept."
    # a page in no hub is always redacted
    r = http.post("/api/docs", json={"title": "Loose", "markdown": f"token: {github}"})
    assert r.status_code == 201 and r.json()["redacted"]["kinds"] == {"github-pat": 1}

    # on again: the page saved raw keeps its text (nothing saved is rewritten behind its owner's
    # back), its next edit is redacted, and restoring the raw version does not publish it again
    assert http.patch("/api/hub/rawtext", json={"redact_secrets": True}, headers=owner).json()["redact_secrets"] is True
    assert github in http.get(f"/api/docs/{doc_id}", headers=owner).json()["markdown"]
    r = http.patch(f"/api/docs/{doc_id}", json={"markdown": "rotated, nothing to see"}, headers=owner)
    assert r.status_code == 200 and r.json()["version"] == 2
    r = http.post(f"/api/docs/{doc_id}/restore", json={"version": 1}, headers=owner)
    assert r.status_code == 200, r.text
    restored = r.json()
    assert restored["version"] == 3 and restored["redacted"]["kinds"] == {"github-pat": 1}
    assert restored["markdown"] == "token: [redacted: github-pat]\n\n kept."
    recall = http.post("/api/hub/rawtext/recall", json={"question": github, "k": 5}, headers=owner).text
    wait_indexed(live_server, [doc_id])
    recall = http.post("/api/hub/rawtext/recall", json={"question": github, "k": 5}, headers=owner).text
    assert github not in recall


def test_a_five_megabyte_page_is_redacted_whole(http):
    owner = new_hub(http, "big")
    github = next(k for k in KINDS if k["name"] == "github-token")["secret"]
    block = SESSION + "\n\n"
    body = (block * (4_900_000 // len(block) + 1))[:4_900_000]
    markdown = f"{github} at the start\n\n{body}\n\nand at the end {github}\n"
    r = http.post(
        "/api/docs", json={"hub": "big", "title": "Long session", "markdown": markdown}, headers=owner, timeout=600
    )
    assert r.status_code == 201, r.text[:300]
    assert r.json()["redacted"] == {"secrets": 2, "kinds": {"github-pat": 2}, "private": 0, "scanned": True}
    stored = http.get(f"/api/docs/{r.json()['id']}", headers=owner, timeout=600).json()["markdown"]
    assert github not in stored and len(stored) == len(markdown) - 2 * (len(github) - len("[redacted: github-pat]"))


def test_the_cli_says_what_it_redacted_and_the_owner_sets_raw_text(live_server, tmp_path, monkeypatch):
    for name in ("MEMORYWIKI_TOKEN", "MEMORYWIKI_HUB", "XDG_CONFIG_HOME", "MEMORYWIKI_DEBUG"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("MEMORYWIKI_CONFIG", str(tmp_path / "config.toml"))
    monkeypatch.setenv("MEMORYWIKI_URL", live_server.url)
    runner = CliRunner()

    def run(*args: str, input: str | None = None):
        result = runner.invoke(app, list(args), input=input)
        assert result.exit_code == 0 and "Traceback" not in result.output, result.output
        return result

    run("hub", "create", "cli-hub")
    secret = {k["name"]: k["secret"] for k in KINDS}
    aws = [k["line"] for k in KINDS if k["name"].startswith("aws-")]
    note = "# Notes\n\n## Keys\n\n" + "\n".join(aws) + f"\n\nand {secret['github-token']}\n"
    result = run("capture", "-", input=note)
    assert result.stderr.strip() == "redacted 3 secrets: 1 aws-access-token, 1 aws-secret-access-key, 1 github-pat"
    url = result.stdout.strip()
    assert secret["github-token"] not in run("pull", url).stdout

    section = tmp_path / "section.md"
    section.write_text(f"Use {secret['gitlab-token']} <private>not this</private> now.\n")
    result = run("update", url, "--section", "Keys", str(section))
    assert "redacted 1 secret: 1 gitlab-pat; dropped 1 private span" in result.stderr

    result = run("hub", "set", "cli-hub", "--keep-secrets")
    assert "secrets are kept in its pages as written" in result.stderr
    result = run("capture", "--title", "Raw", "-", input=f"raw {secret['github-token']}\n")
    assert result.stderr.strip() == ""
    assert secret["github-token"] in run("pull", result.stdout.strip()).stdout


def test_bundle_titles_descriptions_and_the_hub_description_are_redacted(http, live_server, settings):
    owner = new_hub(http, "labels")
    secret = {k["name"]: k["secret"] for k in KINDS}
    github, openai, stripe = secret["github-token"], secret["openai-api-key"], secret["stripe-secret-key"]
    doc = http.post("/api/docs", json={"hub": "labels", "title": "A page", "markdown": "plain"}, headers=owner)
    doc_id = doc.json()["id"]

    # a bundle: its title and description, created and then edited
    r = http.post(
        "/api/bundles",
        json={
            "hub": "labels",
            "title": f"Deploy with {github}",
            "description": f"Keys: OPENAI_API_KEY={openai} <private>the vault is in the attic</private> done.",
            "doc_ids": [doc_id],
        },
        headers=owner,
    )
    assert r.status_code == 201, r.text
    bundle = r.json()
    assert bundle["redacted"] == {
        "secrets": 2,
        "kinds": {"github-pat": 1, "openai-api-key": 1},
        "private": 1,
        "scanned": True,
    }
    page = http.get(f"/b/{bundle['id']}.md").text
    assert "Deploy with [redacted: github-pat]" in page and "OPENAI_API_KEY=[redacted: openai-api-key]  done." in page
    r = http.patch(f"/api/bundles/{bundle['id']}", json={"description": f"STRIPE_SECRET_KEY={stripe}"}, headers=owner)
    assert r.status_code == 200 and r.json()["redacted"]["kinds"] == {"stripe-access-token": 1}
    assert "STRIPE_SECRET_KEY=[redacted: stripe-access-token]" in http.get(f"/b/{bundle['id']}.md").text
    r = http.patch(f"/api/bundles/{bundle['id']}", json={"title": "<private>all of it</private>"}, headers=owner)
    assert r.status_code == 400 and r.json()["error"]["code"] == "missing_field"

    # the hub's description, which the home page and /llms.txt show strangers
    r = http.patch(
        "/api/hub/labels", json={"listed": True, "description": f"Our notes (token {github})"}, headers=owner
    )
    assert r.status_code == 200, r.text
    assert r.json()["description"] == "Our notes (token [redacted: github-pat])"
    assert r.json()["redacted"]["kinds"] == {"github-pat": 1}
    for surface in (http.get("/").text, http.get("/llms.txt").text, http.get("/api/hub/labels").text):
        assert not leaks(surface, probes(github))
    kept_out = [*probes(github), *probes(openai), *probes(stripe), "the vault is in the attic"]
    assert not stored_anywhere(settings.database_url, kept_out)

    # a hub that keeps raw text keeps it here too (the setting as this very change leaves it)
    r = http.patch("/api/hub/labels", json={"redact_secrets": False, "description": f"raw {github}"}, headers=owner)
    assert r.json()["description"] == f"raw {github}" and r.json()["redacted"]["scanned"] is False
    r = http.post("/api/bundles", json={"hub": "labels", "title": f"raw {github}", "doc_ids": [doc_id]}, headers=owner)
    assert r.status_code == 201 and r.json()["redacted"]["scanned"] is False
    assert github in http.get(f"/b/{r.json()['id']}.md").text
