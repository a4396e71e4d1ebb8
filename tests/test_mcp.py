"""The Memory.Wiki MCP server, driven by the SDK's real MCP client.

`python -m memorywiki.adapters.mcp` (and `memorywiki mcp`) runs as a subprocess speaking MCP
over stdio; its tools call a real Memory.Wiki server (the `live_server` fixture). The
subprocess gets its own config file (MEMORYWIKI_CONFIG) holding the hub's owner token and
MEMORYWIKI_URL pointing at the live server. One session covers many steps, to stay fast.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import socket
import sys
import time
import uuid
from contextlib import asynccontextmanager
from pathlib import Path

import httpx
import mcp
import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client

from memorywiki.cli.config import Config
from tests.polling import wait_indexed

TOOLS = {"recall", "capture", "read_doc", "update_doc", "list_docs", "hub_url", "create_bundle"}

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


def _setup(base_url: str, tmp_path: Path, with_hub: bool = True) -> dict:
    """Claim a hub over HTTP, write a config with its owner token; return the subprocess env."""
    cfg_path = tmp_path / "config.toml"
    cfg = Config(cfg_path, {"server": base_url})
    slug = None
    if with_hub:
        slug = "mcp" + uuid.uuid4().hex[:8]
        resp = httpx.post(f"{base_url}/api/hubs", json={"slug": slug}, timeout=10)
        assert resp.status_code == 201, resp.text
        cfg.remember_hub(slug, resp.json()["owner_token"], resp.json()["url"])
    cfg.save()
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    env = {"MEMORYWIKI_URL": base_url, "MEMORYWIKI_CONFIG": str(cfg_path), "HOME": str(home),
           "PYTHONUNBUFFERED": "1"}
    return {"env": env, "slug": slug, "config": cfg_path}


@asynccontextmanager
async def session(env: dict, command: str = sys.executable, args: list[str] | None = None):
    params = StdioServerParameters(command=command, args=args or ["-m", "memorywiki.adapters.mcp"], env=env)
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as s:
            await asyncio.wait_for(s.initialize(), 60)
            yield s


def text(result) -> str:
    return "\n".join(c.text for c in result.content if getattr(c, "type", None) == "text")


async def call(s, name: str, args: dict, ok: bool = True):
    result = await asyncio.wait_for(s.call_tool(name, args), 60)
    if ok:
        assert not result.is_error, text(result)
    else:
        assert result.is_error, text(result)
    return result


async def test_mcp_stdio_end_to_end(live_server, tmp_path):
    base = live_server.url.rstrip("/")
    setup = _setup(base, tmp_path)
    slug = setup["slug"]
    async with session(setup["env"]) as s:
        init = s.initialize_result
        assert init.server_info.name == "memorywiki"
        assert "recall" in (init.instructions or "")

        # tools and their schemas
        tools = {t.name: t for t in (await s.list_tools()).tools}
        assert TOOLS <= set(tools)
        recall_schema = tools["recall"].input_schema
        assert recall_schema["required"] == ["question"]
        assert recall_schema["properties"]["level"]["enum"] == ["chunk", "doc", "bundle"]
        assert recall_schema["properties"]["hybrid"]["default"] is True
        assert "doc_url" in tools["recall"].description
        assert set(tools["capture"].input_schema["required"]) == {"title", "markdown"}
        assert {"section", "expected_version"} <= set(tools["update_doc"].input_schema["properties"])
        for t in tools.values():
            assert t.description and len(t.description) > 40
            assert all(p.get("description") for p in t.input_schema.get("properties", {}).values()), t.name
        assert tools["recall"].annotations.read_only_hint is True

        # resources
        templates = {t.uri_template for t in (await s.list_resource_templates()).resource_templates}
        assert {"memorywiki://hub/{slug}", "memorywiki://doc/{doc_id}"} <= templates

        # capture two docs
        r = await call(s, "capture", {"title": "Hybrid recall design", "markdown": NOTES, "source": "test"})
        first = r.structured_content
        assert first["url"].startswith(base) and first["hub"] == slug
        assert first["url"] in text(r)
        assert "edit_token" not in first and "mwe" not in text(r)
        doc_id = first["id"]
        r = await call(s, "capture", {"title": "Grocery list", "markdown": "## Items\n\nApples, pears and oat milk.\n"})
        second = r.structured_content["id"]
        # the edit token is remembered in the same config the CLI uses
        assert Config.load(setup["config"]).doc_entry(doc_id).get("edit_token")
        await asyncio.to_thread(wait_indexed, base)

        # recall (hybrid by default) cites doc_url
        r = await call(s, "recall", {"question": "what is the zebra-quokka constant?", "k": 3})
        data = r.structured_content
        assert data["mode"] == "hybrid" and data["level"] == "chunk"
        top = data["results"][0]
        assert top["doc_id"] == doc_id and "zebra-quokka" in top["markdown"]
        assert top["doc_url"] in text(r) and "Decision" in text(r)
        r = await call(s, "recall", {"question": "oat milk", "level": "doc", "hybrid": False, "k": 1})
        assert r.structured_content["results"][0]["doc_id"] == second

        # read it back (by URL), with its version
        r = await call(s, "read_doc", {"doc": first["url"]})
        body = text(r)
        assert body.startswith("---\n") and '"Hybrid recall design"' in body and NOTES in body
        version = r.structured_content["version"]

        # replace one section; everything else stays byte-for-byte
        r = await call(s, "update_doc", {"doc": doc_id, "section": "Decision",
                                         "markdown": "Use RRF with k = 60 (decided again).",
                                         "expected_version": version})
        assert r.structured_content["version"] == version + 1
        r = await call(s, "read_doc", {"doc": doc_id})
        new = r.structured_content["markdown"]
        assert new == NOTES.replace(
            "Use reciprocal rank fusion of BM25 and cosine similarity; the zebra-quokka constant is 60.",
            "Use RRF with k = 60 (decided again).")

        # a stale version is refused, not overwritten
        r = await call(s, "update_doc", {"doc": doc_id, "markdown": "# gone\n", "expected_version": version}, ok=False)
        assert "version" in text(r).lower()
        # whole-body update round-trips read_doc's output (its front matter is dropped)
        r = await call(s, "read_doc", {"doc": doc_id})
        edited = text(r).replace("Whether to prune", "Whether and when to prune")
        r = await call(s, "update_doc", {"doc": doc_id, "markdown": edited})
        r = await call(s, "read_doc", {"doc": doc_id})
        assert r.structured_content["markdown"].startswith("## Context")
        assert "Whether and when to prune" in r.structured_content["markdown"]
        assert r.structured_content["title"] == "Hybrid recall design"
        # unknown section: an error that lists the sections
        r = await call(s, "update_doc", {"doc": doc_id, "section": "Nope", "markdown": "x"}, ok=False)
        assert "Decision" in text(r)

        # list docs, hub url, bundle
        r = await call(s, "list_docs", {})
        ids = [d["id"] for d in r.structured_content["docs"]]
        assert set(ids) == {doc_id, second} and first["url"] in text(r)
        r = await call(s, "hub_url", {})
        assert r.structured_content["url"] == f"{base}/hub/{slug}"
        assert r.structured_content["raw_url"] == f"{base}/raw/hub/{slug}"
        r = await call(s, "create_bundle", {"title": "Recall design", "doc_ids": [first["url"], second],
                                            "description": "How recall works"})
        bundle_url = r.structured_content["url"]
        assert bundle_url.startswith(base) and bundle_url in text(r)

        # resources: hub index and doc markdown
        res = await s.read_resource(f"memorywiki://hub/{slug}")
        index = res.contents[0].text
        assert f"# {slug}" in index and first["url"] in index and "Recall design" in index
        res = await s.read_resource(f"memorywiki://doc/{doc_id}")
        assert "Whether and when to prune" in res.contents[0].text
        res = await s.read_resource("memorywiki://hub")
        assert f"# {slug}" in res.contents[0].text

        # errors are tool errors with the server's message, and the session lives on
        r = await call(s, "read_doc", {"doc": "zzzzzzzzzzzz"}, ok=False)
        assert "not found" in text(r).lower() and "404" in text(r)
        r = await call(s, "recall", {"question": "x", "hub": "no-such-hub-" + uuid.uuid4().hex[:6]}, ok=False)
        assert "does not exist" in text(r)
        r = await call(s, "recall", {"question": "x", "k": 0}, ok=False)
        r = await call(s, "create_bundle", {"title": "bad", "doc_ids": ["zzzzzzzzzzzz"]}, ok=False)
        assert "not a doc of this hub" in text(r)
        r = await call(s, "capture", {"title": "t", "markdown": "hello", "hub": "someone-elses"}, ok=False)
        assert "hub" in text(r)
        with pytest.raises(mcp.MCPError):
            await s.read_resource("memorywiki://doc/zzzzzzzzzzzz")
        r = await call(s, "hub_url", {})
        assert r.structured_content["hub"] == slug


async def test_mcp_server_down_is_a_tool_error(tmp_path):
    base = f"http://127.0.0.1:{_free_port()}"
    setup = _setup(base, tmp_path, with_hub=False)
    setup["env"]["MEMORYWIKI_HUB"] = "somehub"
    async with session(setup["env"]) as s:
        for name, args in [("recall", {"question": "anything"}), ("capture", {"title": "t", "markdown": "m"}),
                           ("read_doc", {"doc": "abcdefabcdef"}), ("list_docs", {})]:
            r = await call(s, name, args, ok=False)
            assert "not running" in text(r) and base in text(r), text(r)
        # still alive
        assert len((await s.list_tools()).tools) >= len(TOOLS)


async def test_mcp_without_a_hub_says_how_to_get_one(tmp_path):
    setup = _setup(f"http://127.0.0.1:{_free_port()}", tmp_path, with_hub=False)
    async with session(setup["env"]) as s:
        r = await call(s, "recall", {"question": "anything"}, ok=False)
        assert "memorywiki hub create" in text(r)


def _memorywiki_mcp_command() -> tuple[str, list[str]]:
    """`memorywiki mcp` when cli/main.py registers it, else the same app with register() applied."""
    from memorywiki.cli.main import app

    names = {c.name for c in app.registered_commands}
    exe = shutil.which("memorywiki", path=str(Path(sys.executable).parent)) or shutil.which("memorywiki")
    if "mcp" in names and exe:
        return exe, ["mcp"]
    code = ("import sys; from memorywiki.cli.main import app; from memorywiki.cli import integrations; "
            "integrations.register(app); sys.argv = ['memorywiki', 'mcp']; app()")
    return sys.executable, ["-c", code]


async def test_memorywiki_mcp_command_over_stdio(live_server, tmp_path):
    base = live_server.url.rstrip("/")
    setup = _setup(base, tmp_path)
    command, args = _memorywiki_mcp_command()
    async with session(setup["env"], command, args) as s:
        r = await call(s, "hub_url", {})
        assert r.structured_content["url"] == f"{base}/hub/{setup['slug']}"


async def test_mcp_streamable_http(live_server, tmp_path):
    from mcp import Client

    base = live_server.url.rstrip("/")
    setup = _setup(base, tmp_path)
    port = _free_port()
    env = {**os.environ, **setup["env"]}
    env.pop("MEMORYWIKI_TOKEN", None)
    env.pop("MEMORYWIKI_HUB", None)
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "memorywiki.adapters.mcp", "--http", "--port", str(port), env=env,
        stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE)
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                    break
            except OSError:
                assert proc.returncode is None, (await proc.stderr.read()).decode()
                assert time.monotonic() < deadline, "MCP HTTP server did not start"
                await asyncio.sleep(0.1)
        async with Client(f"http://127.0.0.1:{port}/mcp") as c:
            names = {t.name for t in (await c.list_tools()).tools}
            assert TOOLS <= names
            r = await c.call_tool("capture", {"title": "Over HTTP", "markdown": "## A\n\nsent over streamable http\n"})
            assert not r.is_error, text(r)
            assert r.structured_content["url"].startswith(base)
            r = await c.call_tool("read_doc", {"doc": "zzzzzzzzzzzz"})
            assert r.is_error
        await asyncio.to_thread(wait_indexed, base)  # a clean live_server shutdown
    finally:
        proc.terminate()
        try:
            await asyncio.wait_for(proc.wait(), 10)
        except asyncio.TimeoutError:
            proc.kill()
            await proc.wait()
