"""Curation through the clients: `memorywiki related | digest | bundle suggest` and the MCP
tools `related`, `digest` and `suggest_bundles`, against a real server (live_server)."""

from __future__ import annotations

import json

import httpx

from tests.polling import wait_curated
from tests.test_cli import capture, doc_id, env, make_hub, run  # noqa: F401  (env is a fixture)
from tests.test_mcp import mcp_stdio, point_at, text  # noqa: F401  (mcp_stdio is a fixture)

VACUUM = [
    "PostgreSQL vacuum reclaims dead tuples. Autovacuum thresholds decide when vacuum runs in PostgreSQL.",
    "Dead tuples bloat PostgreSQL indexes. Vacuum and reindex shrink bloated PostgreSQL indexes.",
    "HOT updates leave fewer dead tuples. Fewer dead tuples mean less vacuum work in PostgreSQL.",
]
BREAD = "Feed the sourdough starter flour and water. Bake the sourdough loaf in a hot dutch oven."


def _hub_with_notes(env) -> list[str]:
    make_hub(env)
    ids = [
        doc_id(capture(env, f"{body}\n\n{body}\n", "--title", title))
        for title, body in zip(("Vacuum tuning", "Index bloat", "HOT updates"), VACUUM)
    ]
    ids.append(doc_id(capture(env, f"{BREAD}\n", "--title", "Sourdough")))
    wait_curated(env.url)
    return ids


def test_cli_related_digest_and_bundle_suggest(env):
    ids = _hub_with_notes(env)
    out = run("related", ids[0]).stdout
    assert "Index bloat" in out and "HOT updates" in out and f"{env.url}/{ids[1]}" in out
    data = json.loads(run("related", ids[0], "--json", "--k", "1").stdout)
    assert len(data["results"]) == 1 and data["results"][0]["id"] in ids[1:3]

    digest = run("digest", "--compact").stdout
    assert "concepts (compact)" in digest and "PostgreSQL" in digest

    listing = run("bundle", "suggest").stdout
    assert "Vacuum tuning" in listing and "Accept one with" in listing
    suggestions = json.loads(run("bundle", "suggest", "--json").stdout)["suggestions"]
    group = next(s for s in suggestions if {d["id"] for d in s["docs"]} == set(ids[:3]))
    bundle_url = run("bundle", "suggest", "--accept", group["id"], "--title", "Vacuum").stdout.strip()
    assert bundle_url.startswith(f"{env.url}/b/")
    bundle = httpx.get(f"{bundle_url.replace('/b/', '/raw/b/')}", timeout=10).text
    assert bundle.startswith('---\ntitle: "Vacuum"') and all(i in bundle for i in ids[:3])
    again = run("bundle", "suggest", "--accept", group["id"], ok=False)
    assert again.exit_code == 1 and "already accepted" in again.output

    topic = run("bundle", "suggest", "--intent", "sourdough starter").stdout
    assert topic.startswith("1. Sourdough") and "matches the topic" in topic
    assert run("bundle", "suggest", "--intent", "x", "--accept", "y", ok=False).exit_code == 1


def test_cli_pull_gives_the_doc_as_saved(env):
    """A pulled page pushed back must not carry its enrichment into the body."""
    make_hub(env)
    url = capture(env, "## Notes\n\nPostgreSQL vacuum reclaims dead tuples.\n", "--title", "Vacuum")
    wait_curated(env.url)
    assert "## Concepts in this document" in httpx.get(url.replace(env.url, f"{env.url}/raw"), timeout=10).text
    pulled = run("pull", doc_id(url)).stdout
    assert "## Concepts in this document" not in pulled and pulled.rstrip().endswith(
        "PostgreSQL vacuum reclaims dead tuples."
    )


def test_mcp_related_digest_and_suggest_bundles(live_server, mcp_stdio):
    wiki = point_at(mcp_stdio, live_server.url.rstrip("/"))
    ids = []
    for title, body in zip(("Vacuum tuning", "Index bloat", "HOT updates"), VACUUM):
        r = mcp_stdio.call("capture", {"title": title, "markdown": f"{body}\n\n{body}\n"})
        ids.append(r.structured_content["id"])
    mcp_stdio.call("capture", {"title": "Sourdough", "markdown": BREAD})
    wait_curated(live_server)

    r = mcp_stdio.call("related", {"doc": f"{wiki.base}/{ids[0]}"})
    assert {x["id"] for x in r.structured_content["results"]} >= set(ids[1:3])
    assert "Index bloat" in text(r)

    r = mcp_stdio.call("digest", {})
    assert "concepts (compact)" in text(r) and "PostgreSQL" in text(r)

    r = mcp_stdio.call("suggest_bundles", {})
    groups = [{d["id"] for d in s["docs"]} for s in r.structured_content["suggestions"]]
    assert set(ids) in groups and "suggestion id:" in text(r)
    r = mcp_stdio.call("suggest_bundles", {"intent": "dead tuples and vacuum", "k": 3})
    assert {d["id"] for d in r.structured_content["docs"]} == set(ids) and "1. " in text(r)
    tools = {t.name for t in mcp_stdio.run(lambda s: s.list_tools()).tools}
    assert {"related", "digest", "suggest_bundles"} <= tools
