"""The Memory.Wiki MCP server, driven by the SDK's real MCP client.

One `memorywiki mcp` subprocess per module speaks MCP over stdio (the `mcp_stdio` fixture);
each test gets its own real Memory.Wiki server (`live_server`) and points the MCP server at
it by rewriting the config file the MCP server reads on every call (MEMORYWIKI_CONFIG) —
the same file the CLI writes. One test per tool or resource, so one failure hides nothing.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import sys
import threading
import time
import types
import uuid

import httpx
import mcp
import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client
from memorywiki.adapters.install.launch import mcp_server_command
from memorywiki.client import Config

from tests.polling import wait_indexed

TOOLS = {
    "recall",
    "capture",
    "read_doc",
    "update_doc",
    "doc_history",
    "restore_doc",
    "list_docs",
    "hub_url",
    "create_bundle",
    "delete_bundle",
}

NOTES = """## Context

We store vectors in PostgreSQL with pgvector and an HNSW index.

## Decision

Use reciprocal rank fusion of BM25 and cosine similarity; the zebra-quokka constant is 60.

## Open questions

Whether to prune postings at 100k docs.
"""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class StdioMcp:
    """A real MCP server subprocess and one client session to it, usable from sync tests.

    The session lives in a thread with its own event loop: an MCP session's task group must be
    closed by the task that opened it, which a fixture shared across tests cannot guarantee.
    """

    def __init__(self, command: str, args: list[str], env: dict[str, str]):
        self.params = StdioServerParameters(command=command, args=args, env=env)
        self._ready = threading.Event()
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=lambda: asyncio.run(self._main()), daemon=True)

    async def _main(self) -> None:
        try:
            async with stdio_client(self.params) as (read, write), ClientSession(read, write) as session:
                self.init = await asyncio.wait_for(session.initialize(), 90)
                self.session = session
                self.loop = asyncio.get_running_loop()
                self._stop = asyncio.Event()
                self._ready.set()
                await self._stop.wait()
        except BaseException as exc:
            self._error = exc
            self._ready.set()

    def start(self) -> StdioMcp:
        self._thread.start()
        self._ready.wait(120)
        if self._error is not None or not self._ready.is_set():
            raise RuntimeError(f"the MCP server did not start: {self._error!r}")
        return self

    def close(self) -> None:
        self.loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(30)

    def run(self, make_coro, timeout: float = 60):
        return asyncio.run_coroutine_threadsafe(make_coro(self.session), self.loop).result(timeout)

    def call(self, name: str, args: dict, ok: bool = True):
        result = self.run(lambda s: s.call_tool(name, args))
        if ok:
            assert not result.is_error, text(result)
        else:
            assert result.is_error, text(result)
        return result


def text(result) -> str:
    return "\n".join(c.text for c in result.content if getattr(c, "type", None) == "text")


@pytest.fixture(scope="module")
def mcp_stdio(tmp_path_factory):
    """`memorywiki mcp` over stdio, started the way `install --mcp` registers it."""
    root = tmp_path_factory.mktemp("mcp")
    (root / "home").mkdir()
    config = root / "config.toml"
    env = {"MEMORYWIKI_CONFIG": str(config), "HOME": str(root / "home"), "PYTHONUNBUFFERED": "1"}
    command, *args = mcp_server_command()
    server = StdioMcp(command, args, env).start()
    server.config = config
    yield server
    server.close()


def point_at(mcp_stdio: StdioMcp, base_url: str, with_hub: bool = True) -> types.SimpleNamespace:
    """Write the config the MCP server reads: this server, and (optionally) a fresh hub with its owner token."""
    cfg = Config(mcp_stdio.config, {"server": base_url})
    slug = None
    if with_hub:
        slug = "mcp" + uuid.uuid4().hex[:8]
        resp = httpx.post(f"{base_url}/api/hubs", json={"slug": slug}, timeout=10)
        assert resp.status_code == 201, resp.text
        cfg.remember_hub(slug, resp.json()["owner_token"], resp.json()["url"])
    cfg.save()
    return types.SimpleNamespace(base=base_url, slug=slug, config=mcp_stdio.config, owner_token=cfg.hub_token(slug))


@pytest.fixture
def wiki(live_server, mcp_stdio):
    wiki = point_at(mcp_stdio, live_server.url.rstrip("/"))
    wiki.live = live_server
    return wiki


def capture(mcp_stdio, title: str, markdown: str, **extra) -> dict:
    return mcp_stdio.call("capture", {"title": title, "markdown": markdown, **extra}).structured_content


# ---- the session ----------------------------------------------------------------------


def test_initialize_names_the_server_and_tells_the_model_when_to_recall(mcp_stdio):
    assert mcp_stdio.init.server_info.name == "memorywiki"
    assert "recall" in (mcp_stdio.init.instructions or "")


def test_tool_schemas_describe_every_parameter(mcp_stdio):
    tools = {t.name: t for t in mcp_stdio.run(lambda s: s.list_tools()).tools}
    assert TOOLS <= set(tools)
    recall_schema = tools["recall"].input_schema
    assert recall_schema["required"] == ["question"]
    assert recall_schema["properties"]["level"]["enum"] == ["chunk", "doc", "bundle"]
    assert recall_schema["properties"]["hybrid"]["default"] is True
    assert "doc_url" in tools["recall"].description
    assert set(tools["capture"].input_schema["required"]) == {"title", "markdown"}
    assert tools["capture"].input_schema["properties"]["new"]["default"] is False
    assert {"section", "expected_version"} <= set(tools["update_doc"].input_schema["properties"])
    for t in tools.values():
        assert t.description and len(t.description) > 40
        assert all(p.get("description") for p in t.input_schema.get("properties", {}).values()), t.name
    assert tools["recall"].annotations.read_only_hint is True


def test_resource_templates(mcp_stdio):
    templates = {t.uri_template for t in mcp_stdio.run(lambda s: s.list_resource_templates()).resource_templates}
    assert {"memorywiki://hub/{slug}", "memorywiki://doc/{doc_id}"} <= templates


# ---- tools ----------------------------------------------------------------------------


def test_capture_returns_the_url_and_remembers_the_edit_token(wiki, mcp_stdio):
    r = mcp_stdio.call("capture", {"title": "Hybrid recall design", "markdown": NOTES, "source": "test"})
    doc = r.structured_content
    assert doc["url"].startswith(wiki.base) and doc["hub"] == wiki.slug and doc["status"] == "created"
    assert doc["url"] in text(r)
    assert "edit_token" not in doc and "mwe" not in text(r)
    # the edit token is remembered in the same config the CLI uses
    assert Config.load(wiki.config).doc_entry(doc["id"]).get("edit_token")


def test_capture_of_the_same_page_returns_it_unless_new(wiki, mcp_stdio):
    first = capture(mcp_stdio, "Hybrid recall design", NOTES)
    r = mcp_stdio.call("capture", {"title": "Hybrid recall design", "markdown": NOTES})
    assert r.structured_content["status"] == "exists" and r.structured_content["id"] == first["id"]
    assert text(r).startswith(f"Already captured: {first['url']}")
    again = capture(mcp_stdio, "Hybrid recall design", NOTES, new=True)
    assert again["status"] == "created" and again["id"] != first["id"]


def test_recall_says_why_vectors_were_not_used(wiki, mcp_stdio, embedding_server):
    """The mode and the server's vector_note reach the model."""
    embedding_server.set_failing(True)
    capture(mcp_stdio, "Hybrid recall design", NOTES)
    r = mcp_stdio.call("recall", {"question": "zebra-quokka constant"})
    data = r.structured_content
    assert data["mode"] == "fulltext" and data["vector_note"]
    assert "fulltext" in text(r) and data["vector_note"] in text(r)
    assert data["results"] and "zebra-quokka" in data["results"][0]["markdown"]


def test_recall_is_hybrid_by_default_and_cites_doc_url(wiki, mcp_stdio):
    first = capture(mcp_stdio, "Hybrid recall design", NOTES)
    second = capture(mcp_stdio, "Grocery list", "## Items\n\nApples, pears and oat milk.\n")
    wait_indexed(wiki.live, [first["id"], second["id"]])
    r = mcp_stdio.call("recall", {"question": "what is the zebra-quokka constant?", "k": 3})
    data = r.structured_content
    assert data["mode"] == "hybrid" and data["level"] == "chunk"
    top = data["results"][0]
    assert top["doc_id"] == first["id"] and "zebra-quokka" in top["markdown"]
    assert top["doc_url"] in text(r) and "Decision" in text(r)
    r = mcp_stdio.call("recall", {"question": "oat milk", "level": "doc", "hybrid": False, "k": 1})
    assert r.structured_content["results"][0]["doc_id"] == second["id"]


def test_recall_passes_the_fusion_and_the_token_budget(wiki, mcp_stdio):
    first = capture(mcp_stdio, "Hybrid recall design", NOTES)
    second = capture(mcp_stdio, "Grocery list", "## Items\n\nApples, pears and oat milk.\n")
    wait_indexed(wiki.live, [first["id"], second["id"]])
    question = {"question": "what is the zebra-quokka constant?", "k": 3}
    rrf = mcp_stdio.call("recall", {**question, "fusion": "rrf"}).structured_content
    assert rrf["fusion"] == "rrf" and all("rrf_score" in r for r in rrf["results"])
    budget = rrf["results"][0]["tokens"]
    r = mcp_stdio.call("recall", {**question, "fusion": "rrf", "max_tokens": budget})
    assert [x["chunk_id"] for x in r.structured_content["results"]] == [rrf["results"][0]["chunk_id"]]
    assert r.structured_content["tokens"] == budget and f"{budget} tokens" in text(r)
    assert mcp_stdio.call("recall", question).structured_content["fusion"] == "zscore"


def test_read_doc_by_url_shows_front_matter_and_version(wiki, mcp_stdio):
    doc = capture(mcp_stdio, "Hybrid recall design", NOTES)
    r = mcp_stdio.call("read_doc", {"doc": doc["url"]})
    body = text(r)
    assert body.startswith("---\n") and '"Hybrid recall design"' in body and NOTES in body
    assert r.structured_content["version"] == doc["version"]


def test_update_doc_replaces_one_section_and_keeps_the_rest(wiki, mcp_stdio):
    doc = capture(mcp_stdio, "Hybrid recall design", NOTES)
    r = mcp_stdio.call(
        "update_doc",
        {
            "doc": doc["id"],
            "section": "Decision",
            "markdown": "Use RRF with k = 60 (decided again).",
            "expected_version": doc["version"],
        },
    )
    assert r.structured_content["version"] == doc["version"] + 1
    new = mcp_stdio.call("read_doc", {"doc": doc["id"]}).structured_content["markdown"]
    assert new == NOTES.replace(
        "Use reciprocal rank fusion of BM25 and cosine similarity; the zebra-quokka constant is 60.",
        "Use RRF with k = 60 (decided again).",
    )


def test_update_doc_refuses_a_stale_version(wiki, mcp_stdio):
    doc = capture(mcp_stdio, "Hybrid recall design", NOTES)
    mcp_stdio.call("update_doc", {"doc": doc["id"], "title": "Renamed"})  # the version moves on
    r = mcp_stdio.call(
        "update_doc", {"doc": doc["id"], "markdown": "# gone\n", "expected_version": doc["version"]}, ok=False
    )
    assert "version conflict" in text(r)
    r = mcp_stdio.call(
        "update_doc",
        {"doc": doc["id"], "section": "Decision", "markdown": "x", "expected_version": doc["version"]},
        ok=False,
    )
    assert "version conflict" in text(r)
    assert mcp_stdio.call("read_doc", {"doc": doc["id"]}).structured_content["markdown"] == NOTES


def test_update_doc_round_trips_read_doc_output(wiki, mcp_stdio):
    doc = capture(mcp_stdio, "Hybrid recall design", NOTES)
    edited = text(mcp_stdio.call("read_doc", {"doc": doc["id"]})).replace(
        "Whether to prune", "Whether and when to prune"
    )
    mcp_stdio.call("update_doc", {"doc": doc["id"], "markdown": edited})
    after = mcp_stdio.call("read_doc", {"doc": doc["id"]}).structured_content
    assert after["markdown"].startswith("## Context")  # read_doc's front matter is dropped
    assert "Whether and when to prune" in after["markdown"]
    assert after["title"] == "Hybrid recall design"


def test_update_doc_unknown_section_lists_the_sections(wiki, mcp_stdio):
    doc = capture(mcp_stdio, "Hybrid recall design", NOTES)
    r = mcp_stdio.call("update_doc", {"doc": doc["id"], "section": "Nope", "markdown": "x"}, ok=False)
    assert "Decision" in text(r) and "Open questions" in text(r)


def test_update_doc_without_a_token_says_none_is_configured(wiki, mcp_stdio):
    """A hubless page made elsewhere: the MCP server holds no token for it, and says so."""
    resp = httpx.post(f"{wiki.base}/api/docs", json={"title": "Loose", "markdown": "loose text"}, timeout=10)
    doc_id = resp.json()["id"]
    Config(wiki.config, {"server": wiki.base}).save()  # no hub, no tokens
    r = mcp_stdio.call("update_doc", {"doc": doc_id, "title": "New"}, ok=False)
    assert f"no token for doc {doc_id} is configured" in text(r)
    assert f"memorywiki config --set-token TOKEN --doc {doc_id}" in text(r)


def test_list_docs(wiki, mcp_stdio):
    first = capture(mcp_stdio, "Hybrid recall design", NOTES)
    second = capture(mcp_stdio, "Grocery list", "## Items\n\nApples.\n")
    draft = httpx.post(
        f"{wiki.base}/api/docs",
        headers={"Authorization": f"Bearer {wiki.owner_token}"},
        json={"hub": wiki.slug, "title": "Unsent letter", "markdown": "Not yet.", "is_draft": True},
        timeout=10,
    ).json()
    r = mcp_stdio.call("list_docs", {})  # the server holds the owner token: the owner's view
    assert {d["id"] for d in r.structured_content["docs"]} == {first["id"], second["id"], draft["id"]}
    assert first["url"] in text(r) and "Unsent letter [draft]" in text(r)
    assert "3 page(s), drafts and private ones included" in text(r)


def test_hub_url(wiki, mcp_stdio):
    r = mcp_stdio.call("hub_url", {})
    assert r.structured_content["url"] == f"{wiki.base}/hub/{wiki.slug}"
    assert r.structured_content["raw_url"] == f"{wiki.base}/raw/hub/{wiki.slug}"


def test_create_bundle(wiki, mcp_stdio):
    first = capture(mcp_stdio, "Hybrid recall design", NOTES)
    second = capture(mcp_stdio, "Grocery list", "## Items\n\nApples.\n")
    r = mcp_stdio.call(
        "create_bundle",
        {"title": "Recall design", "doc_ids": [first["url"], second["id"]], "description": "How recall works"},
    )
    bundle_url = r.structured_content["url"]
    assert bundle_url.startswith(wiki.base) and bundle_url in text(r)
    hub = httpx.get(f"{wiki.base}/api/hub/{wiki.slug}", timeout=10).json()
    assert [b["url"] for b in hub["bundles"]] == [bundle_url]


def test_delete_bundle(wiki, mcp_stdio):
    page = capture(mcp_stdio, "Deploy notes", NOTES)
    kept = mcp_stdio.call("create_bundle", {"title": "Kept", "doc_ids": [page["id"]]}).structured_content
    gone = mcp_stdio.call("create_bundle", {"title": "Gone", "doc_ids": [page["id"]]}).structured_content
    tools = {t.name: t for t in mcp_stdio.run(lambda s: s.list_tools()).tools}
    assert tools["delete_bundle"].annotations.destructive_hint is True

    r = mcp_stdio.call("delete_bundle", {"bundle": gone["url"]})
    assert r.structured_content == {"id": gone["id"], "hub": wiki.slug, "deleted": True}
    assert "its pages stay" in text(r)
    hub = httpx.get(f"{wiki.base}/api/hub/{wiki.slug}", timeout=10).json()
    assert [b["id"] for b in hub["bundles"]] == [kept["id"]]
    assert httpx.get(f"{wiki.base}/b/{gone['id']}", timeout=10).status_code == 404
    assert httpx.get(f"{wiki.base}/{page['id']}.md", timeout=10).status_code == 200

    again = mcp_stdio.call("delete_bundle", {"bundle": gone["id"]}, ok=False)
    assert "HTTP 404" in text(again)


# ---- resources ------------------------------------------------------------------------


def test_hub_resource(wiki, mcp_stdio):
    doc = capture(mcp_stdio, "Hybrid recall design", NOTES)
    index = mcp_stdio.run(lambda s: s.read_resource(f"memorywiki://hub/{wiki.slug}")).contents[0].text
    assert f"# {wiki.slug}" in index and doc["url"] in index


def test_default_hub_resource(wiki, mcp_stdio):
    index = mcp_stdio.run(lambda s: s.read_resource("memorywiki://hub")).contents[0].text
    assert f"# {wiki.slug}" in index


def test_doc_resource(wiki, mcp_stdio):
    doc = capture(mcp_stdio, "Hybrid recall design", NOTES)
    page = mcp_stdio.run(lambda s: s.read_resource(f"memorywiki://doc/{doc['id']}")).contents[0].text
    assert page.startswith("---\n") and "Whether to prune" in page


def test_unknown_doc_resource_is_an_mcp_error(wiki, mcp_stdio):
    with pytest.raises(mcp.MCPError):
        mcp_stdio.run(lambda s: s.read_resource("memorywiki://doc/zzzzzzzzzz"))


# ---- errors: tool errors with the server's message, and the session lives on -----------


@pytest.mark.parametrize(
    "name,args,words",
    [
        ("read_doc", {"doc": "zzzzzzzzzz"}, ["404", "not found"]),
        ("recall", {"question": "x", "hub": "no-such-hub-x1"}, ["does not exist"]),
        ("recall", {"question": "x", "k": 0}, []),
        ("create_bundle", {"title": "bad", "doc_ids": ["zzzzzzzzzz"]}, ["not a doc of this hub"]),
        ("capture", {"title": "t", "markdown": "hello", "hub": "someone-elses"}, ["hub"]),
        ("capture", {"title": "t", "markdown": "hel\x00lo"}, ["'markdown' must not contain NUL characters"]),
    ],
    ids=["unknown-doc", "unknown-hub", "k-out-of-range", "bundle-of-unknown-doc", "foreign-hub", "nul"],
)
def test_errors_are_tool_errors(wiki, mcp_stdio, name, args, words):
    r = mcp_stdio.call(name, args, ok=False)
    for word in words:
        assert word in text(r).lower() or word in text(r), text(r)
    assert mcp_stdio.call("hub_url", {}).structured_content["hub"] == wiki.slug  # still alive


def test_server_down_is_a_tool_error(mcp_stdio):
    base = f"http://127.0.0.1:{_free_port()}"
    point_at(mcp_stdio, base, with_hub=False)
    cfg = Config.load(mcp_stdio.config)
    cfg.set_default_hub("somehub")
    cfg.save()
    for name, args in [
        ("recall", {"question": "anything"}),
        ("capture", {"title": "t", "markdown": "m"}),
        ("read_doc", {"doc": "abcdefabcd"}),
        ("list_docs", {}),
    ]:
        r = mcp_stdio.call(name, args, ok=False)
        assert "not running" in text(r) and base in text(r), text(r)
    assert len(mcp_stdio.run(lambda s: s.list_tools()).tools) >= len(TOOLS)


def test_without_a_hub_says_how_to_get_one(mcp_stdio):
    point_at(mcp_stdio, f"http://127.0.0.1:{_free_port()}", with_hub=False)
    r = mcp_stdio.call("recall", {"question": "anything"}, ok=False)
    assert "memorywiki hub create" in text(r) and "memorywiki hub use" in text(r)


# ---- streamable HTTP ------------------------------------------------------------------


@contextlib.asynccontextmanager
async def mcp_http(live_server, tmp_path, token: str):
    """`memorywiki mcp --http --token TOKEN` on a free port, its config pointing at a fresh hub."""
    base = live_server.url.rstrip("/")
    config = tmp_path / "config.toml"
    cfg = Config(config, {"server": base})
    slug = "mcp" + uuid.uuid4().hex[:8]
    resp = httpx.post(f"{base}/api/hubs", json={"slug": slug}, timeout=10)
    cfg.remember_hub(slug, resp.json()["owner_token"], resp.json()["url"])
    cfg.save()
    port = _free_port()
    env = {**os.environ, "MEMORYWIKI_CONFIG": str(config), "HOME": str(tmp_path)}
    for name in ("MEMORYWIKI_TOKEN", "MEMORYWIKI_HUB", "MEMORYWIKI_URL", "MEMORYWIKI_MCP_TOKEN"):
        env.pop(name, None)
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "memorywiki.cli",
        "mcp",
        "--http",
        "--port",
        str(port),
        "--token",
        token,
        env=env,
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                    break
            except OSError:
                assert proc.returncode is None, (await proc.stderr.read()).decode()
                assert time.monotonic() < deadline, "MCP HTTP server did not start"
                await asyncio.sleep(0.1)
        yield types.SimpleNamespace(url=f"http://127.0.0.1:{port}/mcp", port=port, base=base, slug=slug, proc=proc)
        await asyncio.to_thread(wait_indexed, base)  # a clean live_server shutdown
    finally:
        proc.terminate()
        try:
            await asyncio.wait_for(proc.wait(), 10)
        except TimeoutError:
            proc.kill()
            await proc.wait()


def http_client(url: str, token: str | None = None):
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    headers = {"Authorization": f"Bearer {token}"} if token else None
    return Client(streamable_http_client(url, http_client=create_mcp_http_client(headers=headers)))


async def test_mcp_streamable_http(live_server, tmp_path):
    async with mcp_http(live_server, tmp_path, "tok-" + uuid.uuid4().hex) as srv:
        async with http_client(srv.url) as c:  # reads need no token
            names = {t.name for t in (await c.list_tools()).tools}
            assert TOOLS <= names
            r = await c.call_tool("read_doc", {"doc": "zzzzzzzzzz"})
            assert r.is_error


async def test_mcp_http_writes_need_the_token(live_server, tmp_path):
    token = "tok-" + uuid.uuid4().hex
    async with mcp_http(live_server, tmp_path, token) as srv:
        page = {"title": "Over HTTP", "markdown": "## A\n\nsent over streamable http\n"}
        async with http_client(srv.url) as c:
            tools = (await c.list_tools()).tools
            writers = {t.name for t in tools if not (t.annotations and t.annotations.read_only_hint)}
            assert writers == {"capture", "update_doc", "restore_doc", "create_bundle", "delete_bundle"}
            for name, args in [
                ("capture", page),
                ("update_doc", {"doc": "zzzzzzzzzz", "markdown": "x"}),
                ("restore_doc", {"doc": "zzzzzzzzzz", "version": 1}),
                ("create_bundle", {"title": "B", "doc_ids": ["zzzzzzzzzz"]}),
                ("delete_bundle", {"bundle": "zzzzzzzzzz"}),
            ]:
                r = await c.call_tool(name, args)
                assert r.is_error and "Authorization: Bearer <token>" in text(r), (name, text(r))
            r = await c.call_tool("list_docs", {})
            assert not r.is_error, text(r)
        assert httpx.get(f"{srv.base}/api/hub/{srv.slug}").json()["docs"] == []  # nothing was written
        async with http_client(srv.url, "wrong-" + token) as c:
            assert (await c.call_tool("capture", page)).is_error
        async with http_client(srv.url, token) as c:
            r = await c.call_tool("capture", page)
            assert not r.is_error, text(r)
            assert r.structured_content["url"].startswith(srv.base)


async def test_mcp_http_refuses_dns_rebinding(live_server, tmp_path):
    init = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "probe", "version": "1"},
        },
    }
    headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    async with mcp_http(live_server, tmp_path, "tok-" + uuid.uuid4().hex) as srv:
        async with httpx.AsyncClient(timeout=10) as http:
            # a hostile name that resolves to 127.0.0.1: the browser sends its own Host
            r = await http.post(srv.url, json=init, headers={**headers, "Host": "evil.example"})
            assert r.status_code == 421
            r = await http.post(srv.url, json=init, headers={**headers, "Host": f"evil.example:{srv.port}"})
            assert r.status_code == 421
            # a page of another origin posting to the right host
            r = await http.post(srv.url, json=init, headers={**headers, "Origin": "http://evil.example"})
            assert r.status_code == 403
            r = await http.post(srv.url, json=init, headers={**headers, "Origin": f"http://localhost:{srv.port + 1}"})
            assert r.status_code == 403
            # the right host (and origin) gets an answer
            r = await http.post(srv.url, json=init, headers={**headers, "Origin": f"http://127.0.0.1:{srv.port}"})
            assert r.status_code == 200, r.text


def test_doc_history_and_restore_doc(wiki, mcp_stdio):
    doc = capture(mcp_stdio, "Versioned", "## Notes\n\nfirst words\n")
    mcp_stdio.call("update_doc", {"doc": doc["id"], "markdown": "## Notes\n\nsecond words\n"})
    r = mcp_stdio.call("doc_history", {"doc": doc["url"]})
    assert [v["version"] for v in r.structured_content["versions"]] == [2, 1]
    assert "v1 " in text(r) and "create via owner" in text(r)
    old = mcp_stdio.call("doc_history", {"doc": doc["id"], "version": 1})
    assert "first words" in text(old)
    r = mcp_stdio.call("restore_doc", {"doc": doc["id"], "version": 1})
    assert r.structured_content["version"] == 3 and "Restored version 1 as version 3" in text(r)
    assert "first words" in text(mcp_stdio.call("read_doc", {"doc": doc["id"]}))
    r = mcp_stdio.call("restore_doc", {"doc": doc["id"], "version": 9}, ok=False)
    assert "HTTP 404 unknown_version" in text(r)
