"""The `memorywiki` CLI against a real Memory.Wiki server (the `live_server` fixture from
conftest.py: a running server on 127.0.0.1 with a fresh database and the test embedder).

Every test gets its own config file (MEMORYWIKI_CONFIG in tmp_path) and MEMORYWIKI_URL
pointing at the live server.
"""

from __future__ import annotations

import json
import stat
import tomllib
import types
import uuid
from pathlib import Path

import httpx
import pytest
import tomli_w
from memorywiki.cli.main import app
from typer.testing import CliRunner

runner = CliRunner()


@pytest.fixture
def env(live_server, tmp_path, monkeypatch):
    for name in ("MEMORYWIKI_TOKEN", "MEMORYWIKI_HUB", "XDG_CONFIG_HOME", "MEMORYWIKI_DEBUG"):
        monkeypatch.delenv(name, raising=False)
    cfg = tmp_path / "config" / "config.toml"
    monkeypatch.setenv("MEMORYWIKI_CONFIG", str(cfg))
    monkeypatch.setenv("MEMORYWIKI_URL", live_server.url.rstrip("/"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    return types.SimpleNamespace(url=live_server.url.rstrip("/"), config=cfg, tmp=tmp_path)


def run(*args: str, input: str | None = None, ok: bool = True):
    result = runner.invoke(app, list(args), input=input)
    assert "Traceback" not in result.output, result.output
    if ok:
        assert result.exit_code == 0, f"exit {result.exit_code}: {result.output}"
    return result


def config(env) -> dict:
    return tomllib.loads(env.config.read_text())


def slug() -> str:
    return "h" + uuid.uuid4().hex[:10]


def make_hub(env) -> str:
    s = slug()
    run("hub", "create", s)
    return s


def capture(env, markdown: str, *args: str) -> str:
    result = run("capture", *args, "-", input=markdown)
    url = result.stdout.strip()
    assert url.startswith(env.url) and "\n" not in url
    return url


def doc_id(url: str) -> str:
    return url.rstrip("/").rsplit("/", 1)[-1]


# ---- hubs -----------------------------------------------------------------------------


def test_the_cli_remembers_the_server_a_hub_was_chosen_on(env, monkeypatch):
    """`MEMORYWIKI_URL=... hub use` (or `hub create`) records the server; a new shell without
    the variable talks to it, and an unreachable server is named with where its URL came from."""
    import socket

    s = slug()
    token = httpx.post(f"{env.url}/api/hubs", json={"slug": s}).json()["owner_token"]
    run("hub", "use", s, "--token", token)  # MEMORYWIKI_URL is set, as in the walk-through's shell
    assert config(env)["server"] == env.url
    monkeypatch.delenv("MEMORYWIKI_URL")  # a new shell
    run("capture", "--title", "Remembered", "-", input="Where the server was.\n")
    assert "Remembered" in run("list").stdout
    assert f"server: {env.url} (from `server` in {env.config})" in run("config").stdout

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        closed = f"http://127.0.0.1:{sock.getsockname()[1]}"
    failed = run("--server", closed, "list", ok=False)
    assert failed.exit_code == 1 and f"not running at {closed} (from --server)" in failed.stderr
    monkeypatch.setenv("MEMORYWIKI_URL", closed)
    assert f"not running at {closed} (from $MEMORYWIKI_URL)" in run("list", ok=False).stderr
    monkeypatch.delenv("MEMORYWIKI_URL")
    data = tomllib.loads(env.config.read_text())
    data["server"] = closed
    env.config.write_text(tomli_w.dumps(data))
    assert f"not running at {closed} (from `server` in {env.config})" in run("list", ok=False).stderr
    # a hub created on another server moves the record there
    s2 = slug()
    run("--server", env.url, "hub", "create", s2)
    assert config(env)["server"] == env.url and f"{s2}" in run("hub", "show", s2).stdout


def test_the_default_server_says_it_is_the_default(tmp_path, monkeypatch):
    for name in ("MEMORYWIKI_URL", "MEMORYWIKI_TOKEN", "MEMORYWIKI_HUB", "XDG_CONFIG_HOME"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("MEMORYWIKI_CONFIG", str(tmp_path / "none.toml"))
    from memorywiki.client.config import DEFAULT_SERVER, Config

    url, origin = Config.load().server()
    assert url == DEFAULT_SERVER and origin.startswith("the default")


def test_hub_create_stores_token_and_default(env):
    s = slug()
    result = run("hub", "create", s)
    assert result.stdout.strip() == f"{env.url}/hub/{s}"
    cfg = config(env)
    assert cfg["hub"] == s
    assert cfg["hubs"][s]["owner_token"]
    assert cfg["hubs"][s]["url"] == f"{env.url}/hub/{s}"
    assert stat.S_IMODE(env.config.stat().st_mode) == 0o600

    # a second hub does not steal the default
    other = slug()
    run("hub", "create", other)
    assert config(env)["hub"] == s

    taken = run("hub", "create", s, ok=False)
    assert taken.exit_code == 1
    assert taken.stderr.startswith("error: hub taken")


def test_hub_show_and_list(env):
    s = make_hub(env)
    url = capture(env, "# Alpha page\n\nalpha body\n", "--title", "Alpha page")
    capture(env, "beta body\n", "--title", "Beta page")
    capture(env, "secret draft\n", "--title", "Hidden draft", "--draft")

    data = json.loads(run("hub", "show", "--json").stdout)
    assert data["slug"] == s
    titles = {d["title"] for d in data["docs"]}
    assert titles == {"Alpha page", "Beta page"}  # the draft is not public
    assert doc_id(url) in {d["id"] for d in data["docs"]}

    shown = run("hub", s)  # `hub SLUG` means `hub show SLUG`
    assert "Alpha page" in shown.stdout and "Beta page" in shown.stdout
    assert run("hub").stdout == shown.stdout  # the default hub

    lines = run("list").stdout.strip().splitlines()
    assert len(lines) == 2
    rows = {line.split("\t")[1]: line.split("\t") for line in lines}
    assert rows["Alpha page"] == [doc_id(url), "Alpha page", url]

    missing = run("hub", "show", "nosuchhub" + uuid.uuid4().hex[:6], ok=False)
    assert missing.exit_code == 1 and missing.stderr.startswith("error: ")


def test_hub_set_lists_the_hub_on_the_home_page(env):
    s = make_hub(env)
    assert s not in httpx.get(f"{env.url}/llms.txt").text  # unlisted until its owner lists it
    result = run("hub", "set", "--listed", "--description", "Notes on boats")
    assert result.stdout.strip() == f"{env.url}/hub/{s}" and "is listed" in result.stderr
    assert f"- [{s}]({env.url}/hub/{s}/llms.txt): Notes on boats" in httpx.get(f"{env.url}/llms.txt").text
    run("hub", "set", s, "--unlisted")
    assert s not in httpx.get(f"{env.url}/llms.txt").text
    nothing = run("hub", "set", ok=False)
    assert nothing.exit_code == 1 and nothing.stderr.startswith("error: nothing to set")


def test_list_follows_the_pages_of_a_large_hub(env):
    s = make_hub(env)
    token = config(env)["hubs"][s]["owner_token"]
    with httpx.Client(base_url=env.url, headers={"Authorization": f"Bearer {token}"}) as http:
        for i in range(205):  # the API pages docs by 200
            assert http.post("/api/docs", json={"hub": s, "title": f"Note {i}", "markdown": f"n{i}"}).status_code == 201
    assert httpx.get(f"{env.url}/api/hub/{s}").json()["next"]
    lines = run("list").stdout.strip().splitlines()
    assert len(lines) == 205 and len({line.split("\t")[0] for line in lines}) == 205


def test_list_all_shows_every_page_with_its_visibility_and_the_trash_brings_one_back(env, monkeypatch):
    s = make_hub(env)
    public = capture(env, "public body\n", "--title", "Out in the open")
    draft = capture(env, "draft body\n", "--title", "Hidden draft", "--draft")
    owner = {"Authorization": f"Bearer {config(env)['hubs'][s]['owner_token']}"}
    assert (
        httpx.post(
            f"{env.url}/api/docs",
            headers=owner,
            json={"hub": s, "title": "For Ann", "markdown": "Ann's page.", "allowed_emails": ["ann@example.com"]},
        ).status_code
        == 201
    )
    assert [line.split("\t")[1] for line in run("list").stdout.strip().splitlines()] == ["Out in the open"]
    rows = {line.split("\t")[1]: line.split("\t") for line in run("list", "--all").stdout.strip().splitlines()}
    assert {title: row[3] for title, row in rows.items()} == {
        "Out in the open": "public",
        "Hidden draft": "draft",
        "For Ann": "people",
    }
    assert rows["Out in the open"][:3] == [doc_id(public), "Out in the open", public]
    listed = json.loads(run("list", "--all", "--json").stdout)
    assert {d["visibility"] for d in listed} == {"public", "draft", "people"}

    empty = run("trash")
    assert empty.stdout == "" and "is empty" in empty.stderr
    run("delete", doc_id(draft))
    assert "Hidden draft" not in run("list", "--all").stdout
    (line,) = run("trash").stdout.strip().splitlines()
    assert line.split("\t")[:2] == [doc_id(draft), "Hidden draft"]
    back = run("undelete", doc_id(draft))
    assert back.stdout.strip() == draft and "as version 3" in back.stderr
    assert "Hidden draft" in run("list", "--all").stdout and run("trash").stdout == ""
    again = run("undelete", doc_id(draft), ok=False)
    assert again.exit_code == 1 and "is not deleted" in again.stderr

    monkeypatch.setenv("MEMORYWIKI_TOKEN", "mwo_not-the-owner")  # no owner token: told so, not shown less
    for args in (("list", "--all"), ("trash",)):
        refused = run(*args, ok=False)
        assert refused.exit_code == 1 and "needs its owner token" in refused.stderr, refused.stderr


def test_hub_use_stores_a_token_the_user_already_holds(env):
    """The README's path: a hub claimed with curl (token in the shell), then used from the CLI."""
    s = slug()
    resp = httpx.post(f"{env.url}/api/hubs", json={"slug": s})
    token = resp.json()["owner_token"]

    taken = run("hub", "create", s, ok=False)
    assert taken.stderr == (
        f"error: hub taken: '{s}' already exists; if it is yours, "
        f"`memorywiki hub use {s} --token TOKEN` stores the owner token you hold\n"
    )

    result = run("hub", "use", s, "--token", token)
    assert result.stdout.strip() == f"{env.url}/hub/{s}"
    assert config(env)["hub"] == s and config(env)["hubs"][s]["owner_token"] == token
    url = capture(env, "# Deploy notes\n\nRun the migrations first.\n")
    assert httpx.get(f"{env.url}/api/docs/{doc_id(url)}").json()["hub"] == s

    unknown = run("hub", "use", "nosuch" + uuid.uuid4().hex[:6], "--token", "x", ok=False)
    assert unknown.exit_code == 1 and unknown.stderr.startswith("error: no hub 'nosuch")
    assert config(env)["hub"] == s  # unchanged


def test_config_set_token_for_a_hub_or_a_doc(env):
    s = slug()
    token = httpx.post(f"{env.url}/api/hubs", json={"slug": s}).json()["owner_token"]
    run("config", "--set-hub", s)
    out = run("config", "--set-token", token)
    assert f"hubs with owner tokens: {s}" in out.stdout and f"owner token stored for hub {s}" in out.stderr
    assert config(env)["hubs"][s]["owner_token"] == token

    loose = httpx.post(f"{env.url}/api/docs", json={"title": "Loose", "markdown": "loose"}).json()
    run("config", "--set-token", loose["edit_token"], "--doc", loose["url"])
    assert config(env)["docs"][loose["id"]]["edit_token"] == loose["edit_token"]
    run("update", loose["id"], "--title", "Tightened")
    assert httpx.get(f"{env.url}/api/docs/{loose['id']}").json()["title"] == "Tightened"

    bad = run("config", "--doc", "abc", ok=False)
    assert bad.stderr == "error: --hub and --doc go with --set-token TOKEN\n"


def test_update_with_no_token_configured_says_so(env):
    """Not "that token cannot edit this doc" when no token for it is configured."""
    # a doc in a hub claimed with curl; the CLI's default hub is another one
    theirs = slug()
    token = httpx.post(f"{env.url}/api/hubs", json={"slug": theirs}).json()["owner_token"]
    doc = httpx.post(
        f"{env.url}/api/docs",
        json={"hub": theirs, "title": "T", "markdown": "m"},
        headers={"Authorization": f"Bearer {token}"},
    ).json()
    mine = make_hub(env)
    hint = (
        f"store the doc's edit token with `memorywiki config --set-token TOKEN --doc {doc['id']}`, "
        "or its hub's owner token with `memorywiki hub use SLUG --token TOKEN` (or set MEMORYWIKI_TOKEN)"
    )
    result = run("update", doc["id"], "--title", "New", ok=False)
    assert result.exit_code == 1
    assert result.stderr == (
        f"error: no token for doc {doc['id']} is configured (the owner token of your "
        f"default hub '{mine}' does not cover it); {hint}\n"
    )
    # a hubless doc with no config at all: the server got no token
    env.config.unlink()
    loose = httpx.post(f"{env.url}/api/docs", json={"title": "Loose", "markdown": "loose"}).json()
    result = run("update", loose["id"], "--title", "New", ok=False)
    assert result.stderr.startswith(f"error: no token for doc {loose['id']} is configured; store the doc's")
    # with the hub's owner token stored, the same command works
    run("hub", "use", theirs, "--token", token)
    run("update", doc["id"], "--title", "New")
    assert httpx.get(f"{env.url}/api/docs/{doc['id']}").json()["title"] == "New"


def test_a_wrong_stored_token_is_named(env, monkeypatch):
    make_hub(env)
    url = capture(env, "mine\n", "--title", "Mine")
    monkeypatch.setenv("MEMORYWIKI_TOKEN", "mwe_wrong")
    result = run("update", url, "--title", "Theirs", ok=False)
    assert result.stderr.startswith("error: ") and result.stderr.endswith(" (sent $MEMORYWIKI_TOKEN)\n")


# ---- capture / pull -------------------------------------------------------------------


def test_capture_stdin_and_file_remember_edit_token(env):
    s = make_hub(env)
    md = "# Notes\n\nSome **markdown** body.\n"
    url = capture(env, md, "--title", "Notes", "--source", "chatgpt")
    entry = config(env)["docs"][doc_id(url)]
    assert entry["edit_token"] and entry["url"] == url and entry["hub"] == s

    f = env.tmp / "page.md"
    f.write_text("# From a file\n\nfile body\n")
    result = run("capture", str(f), "--json")
    data = json.loads(result.stdout)
    assert set(data) >= {"id", "url", "edit_token"}
    assert config(env)["docs"][data["id"]]["edit_token"] == data["edit_token"]

    # the title defaults to the first `# ` heading
    doc = httpx.get(
        f"{env.url}/api/docs/{data['id']}", headers={"Authorization": f"Bearer {data['edit_token']}"}
    ).json()
    assert doc["title"] == "From a file" and doc["hub"] == s and doc["source"] == "cli"

    # the title heading became the title: the body does not repeat it
    assert run("pull", "--body", data["id"]).stdout == "file body\n"
    body = "Some **markdown** body.\n"
    assert run("pull", "--body", url).stdout == body  # a full URL works too

    # plain `pull` is /raw: front matter with provenance, then the body
    raw = run("pull", url).stdout
    assert raw.startswith("---\n") and f'url: "{url}"' in raw and raw.endswith("---\n\n" + body)


def test_pull_edit_update_round_trip(env):
    make_hub(env)
    url = capture(env, "# Round trip\n\nfirst\n", "--title", "Round trip")
    pulled = run("pull", url).stdout
    f = env.tmp / "edit.md"
    f.write_text(pulled.replace("first", "second").replace('title: "Round trip"', 'title: "Round trip 2"'))
    run("update", url, str(f))
    assert run("pull", "--body", url).stdout == "second\n"  # no front matter (nor title heading) in the body
    assert json.loads(run("pull", "--json", url).stdout)["title"] == "Round trip 2"


def test_capture_hubless_without_auth(env):
    url = capture(env, "no hub here\n", "--title", "Loose page")
    assert "hub" not in config(env).get("docs", {})[doc_id(url)]
    assert run("pull", "--body", url).stdout == "no hub here\n"


def test_capture_wrong_owner_token_is_a_clean_error(env, monkeypatch):
    make_hub(env)
    monkeypatch.setenv("MEMORYWIKI_TOKEN", "mwo_not_a_real_token")
    result = run("capture", "--title", "T", "-", input="body\n", ok=False)
    assert result.exit_code == 1
    assert result.stderr.startswith("error: ") and result.stderr.count("\n") == 1
    assert result.stdout == ""


def test_capture_empty_is_rejected_and_nothing_saved(env):
    make_hub(env)
    result = run("capture", "--title", "T", "-", input="\n\n", ok=False)
    assert result.exit_code == 1 and "empty body" in result.stderr
    assert "docs" not in config(env)


def test_pull_private_doc_uses_remembered_edit_token(env):
    make_hub(env)
    url = capture(env, "draft text\n", "--title", "Draft", "--draft")
    assert run("pull", "--body", doc_id(url)).stdout == "draft text\n"
    # without the token the draft is not readable
    cfg = config(env)
    del cfg["docs"]
    del cfg["hubs"]
    import tomli_w

    env.config.write_text(tomli_w.dumps(cfg))
    result = run("pull", "--body", doc_id(url), ok=False)
    assert result.exit_code == 1 and result.stderr.startswith("error: ")


def test_agent_capture_with_the_real_codex_reader_and_an_alias(env, monkeypatch):
    """`--agent codex-cli` (an alias from the one tool registry) reads the rollout under $CODEX_HOME."""
    import shutil

    from memorywiki.adapters.codex.reader import read_session

    make_hub(env)
    fixture = Path(__file__).parent / "data" / "adapters" / "codex_rollout_realistic.jsonl"
    expected = read_session(fixture)
    assert expected.session_id and not expected.is_empty
    codex_home = env.tmp / "codex"
    day = codex_home / "sessions" / "2026" / "04" / "01"
    day.mkdir(parents=True)
    shutil.copy(fixture, day / f"rollout-2026-04-01T08-00-00-{expected.session_id}.jsonl")
    monkeypatch.setenv("CODEX_HOME", str(codex_home))

    data = json.loads(run("capture", "--agent", "codex-cli", "--session", expected.session_id, "--json").stdout)
    doc = httpx.get(
        f"{env.url}/api/docs/{data['id']}", headers={"Authorization": f"Bearer {data['edit_token']}"}
    ).json()
    assert doc["source"] == "codex"
    assert doc["meta"] == {
        "tool": "codex",
        "session_id": expected.session_id,
        "cwd": expected.cwd,
        "git_branch": expected.git_branch,
    }
    assert doc["markdown"] == expected.markdown


def test_capturing_the_same_page_twice_returns_the_first(env):
    """The hub already holds it, so say so; --new makes a second page."""
    make_hub(env)
    page = "# Deploy notes\n\nRun the migrations first.\n"
    first = capture(env, page)
    again = run("capture", "-", input=page)
    assert again.stdout.strip() == first  # stdout is still just the URL
    assert again.stderr.startswith(f"already captured: {first} ") and "--new" in again.stderr
    second = run("capture", "--new", "-", input=page)
    assert second.stdout.strip() != first and "already captured" not in second.stderr
    hub = json.loads(run("hub", "show", "--json").stdout)
    assert len(hub["docs"]) == 2

    vtt = Path(__file__).parent / "data" / "capture" / "meeting.vtt"
    one = run("capture", str(vtt)).stdout.strip()
    twice = run("capture", str(vtt))
    assert twice.stdout.strip() == one and twice.stderr.startswith(f"already captured: {one}")
    assert run("capture", "--new", str(vtt)).stdout.strip() != one


# ---- update ---------------------------------------------------------------------------

SECTIONED = """# Guide

Intro.

## Install

```sh
# not a heading
pip install thing
```

## Use

Old usage.

### Detail

Old detail.

## Later

Untouched.
"""


def test_update_section_keeps_the_rest(env):
    make_hub(env)
    url = capture(env, SECTIONED, "--title", "Guide")
    result = run("update", doc_id(url), "--section", "Use", "-", input="New usage.\n")
    assert result.stdout.strip() == url
    pulled = run("pull", "--body", url).stdout
    head, tail = SECTIONED.split("## Use", 1)[0], SECTIONED.split("## Later", 1)[1]
    head = head.removeprefix("# Guide\n\n")  # the title heading is the title, not part of the body
    assert pulled == head + "## Use\n\nNew usage.\n\n## Later" + tail


def test_update_whole_body_and_title(env):
    make_hub(env)
    url = capture(env, "v1\n", "--title", "Versioned")
    f = env.tmp / "v2.md"
    f.write_text("v2 body\n")
    run("update", url, str(f), "--title", "Versioned again")
    assert run("pull", "--body", url).stdout == "v2 body\n"
    data = json.loads(run("hub", "show", "--json").stdout)
    assert [d["title"] for d in data["docs"]] == ["Versioned again"]


def test_update_conflict_message(env):
    """A stale --expect-version (and a section edit racing another edit) is refused, not overwritten."""
    make_hub(env)
    url = capture(env, SECTIONED, "--title", "Guide")
    version = json.loads(run("pull", "--json", url).stdout)["version"]
    run("update", url, "-", input=SECTIONED.replace("Intro.", "Intro v2."))  # someone else's edit: version moves on
    result = run("update", url, "--section", "Use", "--expect-version", str(version), "-", input="mine\n", ok=False)
    assert result.exit_code == 1
    assert result.stderr == (
        f"error: the doc changed since you read it; pull it again "
        f"(`memorywiki pull {doc_id(url)}`), redo your edit and update\n"
    )
    assert "mine" not in run("pull", "--body", url).stdout
    run("update", url, "--section", "Use", "--expect-version", str(version + 1), "-", input="mine\n")
    assert "## Use\n\nmine\n" in run("pull", "--body", url).stdout


def test_update_without_token_is_refused(env, monkeypatch):
    make_hub(env)
    url = capture(env, "mine\n", "--title", "Mine")
    monkeypatch.setenv("MEMORYWIKI_TOKEN", "mwe_wrong")
    result = run("update", url, "-", input="theirs\n", ok=False)
    assert result.exit_code == 1 and result.stderr.startswith("error: ")
    monkeypatch.delenv("MEMORYWIKI_TOKEN")
    assert run("pull", "--body", url).stdout == "mine\n"


def test_update_unknown_section(env):
    make_hub(env)
    url = capture(env, SECTIONED, "--title", "Guide")
    result = run("update", url, "--section", "not a heading", "-", input="x\n", ok=False)
    assert result.exit_code == 1 and "no section 'not a heading'" in result.stderr


# ---- embed / recall / bundles / delete -----------------------------------------------


def test_embed_recall_bundle_delete(env):
    s = make_hub(env)
    a = capture(env, "# Zebra migration\n\nZebras migrate across the Serengeti every year.\n", "--title", "Zebras")
    b = capture(env, "# Kettle descaling\n\nVinegar removes limescale from a kettle.\n", "--title", "Kettles")

    first = json.loads(run("embed", doc_id(a)).stdout)
    assert "embedded" in first or "skipped" in first
    again = json.loads(run("embed", doc_id(a)).stdout)
    assert again == {"skipped": "unchanged"}
    run("embed", doc_id(b))

    data = json.loads(run("recall", "how do zebras migrate", "--json", "--k", "2").stdout)
    assert data["mode"] in ("hybrid", "vector", "fulltext")
    assert data["results"] and data["results"][0]["doc_url"] == a

    readable = run("recall", "limescale kettle vinegar").stdout
    assert b in readable and "Kettle descaling" in readable

    docs = json.loads(run("recall", "zebra", "--level", "doc", "--json").stdout)["results"]
    assert docs[0]["doc_url"] == a

    bundle_url = run(
        "bundle", "create", "--title", "Animals and kitchens", "--description", "two topics", doc_id(a), b
    ).stdout.strip()
    assert bundle_url.startswith(env.url)
    hub = json.loads(run("hub", "show", s, "--json").stdout)
    assert [x["url"] for x in hub["bundles"]] == [bundle_url]

    assert run("delete", doc_id(b)).stdout.strip() == f"deleted {doc_id(b)}"
    assert doc_id(b) not in config(env)["docs"]
    gone = run("pull", "--body", b, ok=False)
    assert gone.exit_code == 1 and gone.stderr.startswith("error: ")


def test_recall_says_which_search_ran_and_why_vectors_were_not_used(env, embedding_server):
    """The response's mode and vector_note are shown, in the server's words."""
    make_hub(env)
    embedding_server.set_failing(True)  # nothing can be embedded: recall answers from full text
    capture(env, "# Zebra migration\n\nZebras migrate across the Serengeti every year.\n")
    data = json.loads(run("recall", "zebras migrate", "--json").stdout)
    assert data["mode"] == "fulltext" and data["vector_note"]
    shown = run("recall", "zebras migrate").stdout
    assert "Zebra migration" in shown
    assert shown.rstrip().splitlines()[-1] == f"mode: fulltext, {data['tokens']} tokens ({data['vector_note']})"


def test_recall_shows_the_mode_when_vectors_were_used(env):
    make_hub(env)
    url = capture(env, "# Kettle descaling\n\nVinegar removes limescale from a kettle.\n")
    run("embed", doc_id(url))
    shown = run("recall", "limescale").stdout
    tokens = json.loads(run("recall", "limescale", "--json").stdout)["tokens"]
    assert shown.rstrip().splitlines()[-1] == f"mode: hybrid, zscore fusion, {tokens} tokens"


def test_recall_passes_the_fusion_and_the_token_budget(env):
    make_hub(env)
    url = capture(
        env,
        "# Kettle descaling\n\nVinegar removes limescale from a kettle.\n\n"
        "# Tea\n\nLimescale spoils the taste of tea.\n",
    )
    run("embed", doc_id(url))
    rrf = json.loads(run("recall", "limescale kettle", "--fusion", "rrf", "--json").stdout)
    assert rrf["fusion"] == "rrf" and rrf["results"] and all("rrf_score" in r for r in rrf["results"])
    assert "rrf fusion" in run("recall", "limescale kettle", "--fusion", "rrf").stdout.rstrip().splitlines()[-1]
    first = rrf["results"][0]["tokens"]
    budgeted = json.loads(
        run("recall", "limescale kettle", "--max-tokens", str(first), "--fusion", "rrf", "--json").stdout
    )
    assert [r["chunk_id"] for r in budgeted["results"]] == [rrf["results"][0]["chunk_id"]]
    assert budgeted["tokens"] == first and budgeted["max_tokens"] == first
    assert run("recall", "limescale", "--max-tokens", "0", ok=False).exit_code != 0
    assert run("recall", "limescale", "--fusion", "combsum", ok=False).exit_code != 0


def test_recall_errors_are_one_line(env):
    make_hub(env)
    result = run("recall", "anything", "--hub", "nosuch" + uuid.uuid4().hex[:6], ok=False)
    assert result.exit_code == 1 and result.stderr.startswith("error: ") and result.stderr.count("\n") == 1
    result = run("recall", "anything", "--k", "100000", ok=False)
    assert result.exit_code == 1 and result.stderr.startswith("error: ")


def test_agent_capture_with_the_real_claude_code_reader(env, monkeypatch):
    """`--agent claude` (an alias) finds the transcript under $HOME/.claude/projects by session id."""
    import shutil

    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    monkeypatch.delenv("CLAUDE_CODE_SESSION_ID", raising=False)
    make_hub(env)
    project = env.tmp / "home" / ".claude" / "projects" / "-work-proj"
    project.mkdir(parents=True)
    shutil.copy(Path(__file__).parent / "data" / "adapters" / "claude_branching.jsonl", project / "sess-branch.jsonl")

    data = json.loads(run("capture", "--agent", "claude", "--session", "sess-branch", "--json").stdout)
    doc = httpx.get(
        f"{env.url}/api/docs/{data['id']}", headers={"Authorization": f"Bearer {data['edit_token']}"}
    ).json()
    assert doc["title"] == "Lazy JSONL parsing" and doc["source"] == "claude-code"
    assert doc["meta"] == {
        "tool": "claude-code",
        "session_id": "sess-branch",
        "cwd": "/work/proj",
        "git_branch": "feature/x",
    }
    assert doc["markdown"].startswith("## User")

    missing = run("capture", "--agent", "cc", "--session", "no-such-session", ok=False)
    assert missing.exit_code == 1 and missing.stderr == "error: no claude-code session found with id no-such-session\n"


def test_an_argument_that_is_not_utf8_is_one_clear_line_and_sends_nothing(env):
    """`memorywiki recall $'\\xff'`: Python reads the byte as a lone surrogate, which no request can carry."""
    s = make_hub(env)
    for args, field, shown in (
        (["recall", "abc\udcff"], "question", "abc\\udcff"),
        (["capture", "-", "--title", "t\udcff"], "title", "t\\udcff"),
        (["hub", "create", "x\udcff"], "slug", "x\\udcff"),
        (["recall", "ok", "--hub", "h\udcff"], None, "h\\udcff"),
    ):  # in the URL's path
        result = run(*args, input="body text here", ok=False)
        assert result.exit_code == 1 and result.stderr.count("\n") == 1, result.stderr
        if field:
            assert result.stderr.startswith(f"error: '{field}' is not valid UTF-8 text ('{shown}': "), result.stderr
        else:
            assert result.stderr.startswith("error: not valid UTF-8 text near '") and shown in result.stderr
        assert result.stderr.endswith("; nothing was sent\n")
    assert httpx.get(f"{env.url}/api/hub/{s}").json()["docs"] == []


def test_agent_capture_keeps_a_session_whose_output_holds_a_nul(env, monkeypatch):
    """A tool that printed a binary file leaves "\\u0000" in the transcript; the server refuses a
    NUL in a request, so the session reader drops it and the session is saved."""
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    monkeypatch.delenv("CLAUDE_CODE_SESSION_ID", raising=False)
    make_hub(env)
    project = env.tmp / "home" / ".claude" / "projects" / "-work-proj"
    project.mkdir(parents=True)
    jsonl = (Path(__file__).parent / "data" / "adapters" / "claude_branching.jsonl").read_text()
    jsonl = jsonl.replace("Iterate the file object:", "Iterate the file\\u0000 object:")
    jsonl = jsonl.replace('"aiTitle": "Lazy JSONL parsing"', '"aiTitle": "Lazy \\u0000JSONL parsing"')
    assert jsonl.count("\\u0000") == 2
    (project / "sess-branch.jsonl").write_text(jsonl)

    data = json.loads(run("capture", "--agent", "claude", "--session", "sess-branch", "--json").stdout)
    doc = httpx.get(
        f"{env.url}/api/docs/{data['id']}", headers={"Authorization": f"Bearer {data['edit_token']}"}
    ).json()
    assert doc["title"] == "Lazy JSONL parsing" and "Iterate the file object:" in doc["markdown"]


@pytest.mark.parametrize("name", ["report.pdf", "notes.docx", "meeting.vtt"])
def test_capture_file_conversion(env, name):
    """Non-markdown files go to POST /api/capture/file (multipart) and come back as a page."""
    make_hub(env)
    path = Path(__file__).parent / "data" / "capture" / name
    data = json.loads(run("capture", str(path), "--title", f"From {name}", "--json").stdout)
    assert data["url"].startswith(env.url) and data["edit_token"]
    body = run("pull", "--body", data["id"]).stdout
    assert body.strip()
    hub = json.loads(run("hub", "show", "--json").stdout)
    assert f"From {name}" in {d["title"] for d in hub["docs"]}


def test_import_claude_export(env):
    s = make_hub(env)
    export = Path(__file__).parent / "data" / "capture" / "claude-export-legacy.json"
    first = run("import", "claude", str(export))
    assert first.stdout.startswith(f"claude export into hub {s}: ") and " created" in first.stdout
    created = int(first.stdout.split(": ", 1)[1].split(" created")[0])
    assert created >= 1
    hub = json.loads(run("hub", "show", "--json").stdout)
    assert len(hub["docs"]) == created
    assert first.stdout.rstrip().endswith("indexed: every page is searchable")  # it waited for the indexing
    health = httpx.get(f"{env.url}/healthz").json()
    assert health["embedder"] and health["owed_docs"] == 0
    again = json.loads(run("import", "claude", str(export), "--json").stdout)
    assert again["created"] == 0 and again["unchanged"] == created  # re-importing is idempotent
    assert "owed" not in again  # nothing saved: nothing to wait for
    other = make_hub(env)
    quick = json.loads(run("import", "claude", str(export), "--hub", other, "--no-wait", "--json").stdout)
    assert quick["created"] == created and "owed" not in quick  # saved, not waited for

    missing = run("import", "claude", str(env.tmp / "nope.zip"), ok=False)
    assert missing.exit_code == 1 and missing.stderr.startswith("error: no such file")
    bad = run("import", "gemini", str(export), ok=False)
    assert bad.exit_code == 2


def test_serve_runs_the_server_until_interrupted(database_url, tmp_path):
    """`memorywiki serve` as a user runs it: a real process on a free port, stopped by Ctrl-C."""
    import os
    import signal
    import socket
    import subprocess
    import time

    from memorywiki.adapters.install.launch import memorywiki_executable

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = {**os.environ, "DATABASE_URL": database_url, "MEMORYWIKI_EMBEDDER": "none", "HOME": str(tmp_path)}
    proc = subprocess.Popen(
        [str(memorywiki_executable()), "serve", "--port", str(port)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            assert proc.poll() is None, proc.stdout.read()
            try:
                if httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            assert time.monotonic() < deadline, "memorywiki serve did not answer"
            time.sleep(0.1)
        resp = httpx.post(f"http://127.0.0.1:{port}/api/hubs", json={"slug": slug()})
        assert resp.status_code == 201
    finally:
        proc.send_signal(signal.SIGINT)
        out = proc.communicate(timeout=60)[0]
    assert proc.returncode == 0, out
    assert "Traceback" not in out


# ---- history and restore ---------------------------------------------


def test_history_lists_versions_and_restore_brings_one_back(env):
    make_hub(env)
    url = capture(env, "first text\n", "--title", "Plan")
    did = doc_id(url)
    (env.tmp / "v2.md").write_text("second text\n")
    run("update", did, str(env.tmp / "v2.md"))
    lines = run("history", did).stdout.splitlines()
    assert len(lines) == 2
    assert lines[0].startswith("v2\t") and "edit · edit token" in lines[0] and lines[0].endswith("Plan (current)")
    assert lines[1].startswith("v1\t") and "create · hub owner token" in lines[1] and "11 bytes" in lines[1]
    assert run("history", did, "1").stdout == "first text\n"

    result = run("restore", did, "1")
    assert result.stdout.strip() == url and result.stderr == "restored version 1 as version 3\n"
    assert run("pull", "--body", did).stdout == "first text\n"
    assert run("history", url).stdout.splitlines()[0].split("\t")[3] == "restore of v1 · hub owner token"
    data = json.loads(run("history", did, "--json").stdout)
    assert [v["version"] for v in data["versions"]] == [3, 2, 1]


def test_restore_brings_back_a_deleted_doc(env):
    make_hub(env)
    did = doc_id(capture(env, "keep me\n", "--title", "Keeper"))
    run("delete", did)
    assert run("pull", did, ok=False).exit_code == 1
    assert run("history", did).stdout.startswith(f"doc {did} is deleted; `memorywiki restore {did} N`")
    run("restore", did, "1")
    assert run("pull", "--body", did).stdout == "keep me\n"


def test_restore_of_a_version_that_is_not_there_is_one_line(env):
    make_hub(env)
    did = doc_id(capture(env, "only one\n", "--title", "Single"))
    result = run("restore", did, "7", ok=False)
    assert result.exit_code == 1
    assert result.stderr == f"error: doc {did} has no version 7; GET /api/docs/{did}/versions lists them\n"
    assert run("restore", did, "0", ok=False).exit_code == 2  # refused by the CLI itself (N >= 1)
    assert run("history", did).stdout.count("\n") == 1
