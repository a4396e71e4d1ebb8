"""The hub graph and cross-references: edges between a hub's public docs kept
current as vectors change (one doc's rows at a time), links between docs kept on every save,
and both exactly as private as their docs, including a doc made private after it was linked
or graphed."""

from __future__ import annotations

import re

import psycopg
import pytest
from memorywiki.formats.doclinks import doc_links, link_target

from tests.polling import wait_indexed

HTML = {"Accept": "text/html"}
# The test embedder (tests/embedding_server.py) hashes words: texts sharing most words are close.
ROSES_A = "Roses need sun, water and pruning in winter. Prune roses above a bud."
ROSES_B = "Roses need sun and water; prune roses in winter, above a bud."
ROSES_C = "Prune roses in winter above a bud; roses need sun and water."
TAXES = "File the quarterly tax forms before April and keep every receipt."


@pytest.fixture
def hub(client):
    r = client.post("/api/hubs", json={"slug": "garden"})
    owner = {"Authorization": f"Bearer {r.json()['owner_token']}"}

    def add(title: str, markdown: str, slug: str = "garden", **extra) -> dict:
        r = client.post("/api/docs", headers=owner, json={"hub": slug, "title": title, "markdown": markdown, **extra})
        assert r.status_code == 201, r.text
        return r.json()

    return {"owner": owner, "add": add}


def edge_rows(settings) -> dict[tuple[str, str], int]:
    """(source, target) -> the row's xmin: which transaction last wrote it."""
    with psycopg.connect(settings.database_url) as conn:
        return {(r[0], r[1]): int(r[2]) for r in conn.execute("SELECT source, target, xmin::text FROM doc_edges")}


def pairs(graph: dict) -> set[frozenset]:
    return {frozenset((e["source"], e["target"])) for e in graph["edges"]}


def test_the_graph_joins_close_docs_and_clusters_them(client, hub):
    docs = [hub["add"]("Roses A", ROSES_A), hub["add"]("Roses B", ROSES_B), hub["add"]("Taxes", TAXES)]
    wait_indexed(client, [d["id"] for d in docs])
    graph = client.get("/api/hub/garden/graph").json()
    a, b, t = (d["id"] for d in docs)
    assert pairs(graph) == {frozenset((a, b))}
    [edge] = graph["edges"]
    assert 0.58 < edge["weight"] <= 1 and set(edge) == {"source", "target", "weight"}
    nodes = {n["id"]: n for n in graph["nodes"]}
    assert set(nodes) == {a, b, t} and set(nodes[a]) == {"id", "title", "url", "size", "cluster"}
    assert nodes[a]["cluster"] == nodes[b]["cluster"] != nodes[t]["cluster"]
    assert nodes[a]["url"] == f"http://testserver/{a}" and nodes[t]["size"] == len(TAXES)
    html = client.get("/hub/garden/graph", headers=HTML).text
    assert html.count('<a href="http://testserver/') >= 3 and html.count("<line ") == 1
    assert "Cluster 1" in html and "Pages with no close neighbour" in html
    md = client.get("/hub/garden/graph.md").text
    assert "## Cluster 1" in md and re.search(r"- Roses [AB] ↔ Roses [AB] \(similarity 0\.\d+\)", md)


def test_edges_change_only_for_the_doc_whose_vector_changed(client, hub, settings):
    docs = [
        hub["add"]("Roses A", ROSES_A),
        hub["add"]("Roses B", ROSES_B),
        hub["add"]("Roses C", ROSES_C),
        hub["add"]("Taxes", TAXES),
    ]
    wait_indexed(client, [d["id"] for d in docs])
    a, b, c, t = (d["id"] for d in docs)
    before = edge_rows(settings)
    assert {frozenset(k) for k in before} == {frozenset((a, b)), frozenset((a, c)), frozenset((b, c))}

    # C now talks about taxes: its own edges are measured again, nobody else's rows are touched
    r = client.patch(f"/api/docs/{c}", json={"markdown": TAXES + " Ask the accountant."}, headers=hub["owner"])
    assert r.status_code == 200
    wait_indexed(client, [c])
    after = edge_rows(settings)
    assert {frozenset(k) for k in after} == {frozenset((a, b)), frozenset((c, t))}
    ab = tuple(sorted((a, b)))
    assert after[ab] == before[ab]  # the pair that did not involve C was not rewritten

    # an edit that leaves the text alone re-measures nothing
    client.patch(f"/api/docs/{a}", json={"is_draft": False}, headers=hub["owner"])
    assert edge_rows(settings) == after

    # moving a doc to another hub takes its edges along
    owner_attic = client.post("/api/hubs", json={"slug": "attic2"}).json()["owner_token"]
    r = client.patch(
        f"/api/docs/{t}",
        json={"hub": "attic2"},
        # the owner of the hub it leaves lets it go, beside the owner token of the hub it joins
        headers={"Authorization": f"Bearer {owner_attic}", "X-Edit-Token": hub["owner"]["Authorization"][7:]},
    )
    assert r.status_code == 200, r.text
    assert {frozenset(k) for k in edge_rows(settings)} == {frozenset((a, b))}
    assert pairs(client.get("/api/hub/garden/graph").json()) == {frozenset((a, b))}


def test_the_distance_comes_from_settings(make_client):
    client = make_client(graph_max_distance=0.05)
    owner = {"Authorization": f"Bearer {client.post('/api/hubs', json={'slug': 'g'}).json()['owner_token']}"}
    ids = [
        client.post("/api/docs", headers=owner, json={"hub": "g", "title": t, "markdown": m}).json()["id"]
        for t, m in (("A", ROSES_A), ("B", ROSES_B))
    ]
    wait_indexed(client, ids)
    assert client.get("/api/hub/g/graph").json()["edges"] == []


@pytest.mark.parametrize(
    "change, undo",
    [
        ({"is_draft": True}, {"is_draft": False}),
        ({"password": "s3cret"}, {"password": None}),
        ({"allowed_emails": ["ann@example.com"]}, {"allowed_emails": []}),
        ("delete", None),
    ],
)
def test_a_doc_made_private_after_it_was_linked_and_graphed_drops_out(client, hub, change, undo):
    a = hub["add"]("Roses A", ROSES_A)
    b = hub["add"]("Roses B", ROSES_B + f"\n\nSee [the other notes](/{a['id']}).")
    a_md = ROSES_A + f"\n\nAnd [more](http://testserver/{b['id']}.md)."
    client.patch(f"/api/docs/{a['id']}", json={"markdown": a_md}, headers=hub["owner"])
    client.patch("/api/hub/garden", json={"listed": True}, headers=hub["owner"])
    wait_indexed(client, [a["id"], b["id"]])

    def seen() -> dict[str, bool]:
        graph = client.get("/api/hub/garden/graph").json()
        refs = client.get(f"/api/social/cross-refs?doc={a['id']}").json()
        hub_refs = client.get("/api/social/cross-refs?hub=garden").json()
        return {
            "node": b["id"] in {n["id"] for n in graph["nodes"]},
            "edge": bool(graph["edges"]),
            "outbound": [d["id"] for d in refs["outbound"]] == [b["id"]],
            "inbound": [d["id"] for d in refs["inbound"]] == [b["id"]],
            "hub pairs": bool(hub_refs["pairs"]),
            "linked from": "Roses B" in client.get(f"/{a['id']}", headers=HTML).text,
            "graph page": b["id"] in client.get("/hub/garden/graph", headers=HTML).text,
            "graph twin": "Roses B" in client.get("/hub/garden/graph.md").text,
            "llms.txt": b["id"] in client.get("/hub/garden/llms.txt").text,
            "llms-full": "Roses B" in client.get("/hub/garden/llms-full.txt").text,
            "hub twin": "Roses B" in client.get("/hub/garden.md").text,
        }

    assert all(seen().values()), seen()
    if change == "delete":
        assert client.delete(f"/api/docs/{b['id']}", headers=hub["owner"]).status_code == 200
    else:
        assert client.patch(f"/api/docs/{b['id']}", json=change, headers=hub["owner"]).status_code == 200
    assert not any(seen().values()), seen()
    r = client.get(f"/api/social/cross-refs?doc={b['id']}")
    assert r.status_code == 404  # a private doc has no public cross-references
    if undo is not None:  # public again: back everywhere, with no re-embedding
        assert client.patch(f"/api/docs/{b['id']}", json=undo, headers=hub["owner"]).status_code == 200
        assert all(seen().values()), seen()


def test_links_are_extracted_on_every_save(client, hub):
    target = hub["add"]("Target", "The page others link to.")
    other_hub = client.post("/api/hubs", json={"slug": "elsewhere"}).json()
    far = client.post(
        "/api/docs",
        json={"title": "Far", "markdown": f"Back to [target](/raw/{target['id']})", "hub": "elsewhere"},
        headers={"Authorization": f"Bearer {other_hub['owner_token']}"},
    ).json()
    loose = client.post("/api/docs", json={"title": "Loose", "markdown": f"[t](../{target['id']}#part)"}).json()
    source = hub["add"](
        "Source",
        f"""Links: [relative](/{target["id"]}), [absolute](http://testserver/{target["id"]}.md),
<http://testserver/{far["id"]}>, [another site](https://other.example/{loose["id"]}),

    [indented code](/{loose["id"]})

`[inline code](/{loose["id"]})` and a [missing page](/zzzzzzzzzz).
""",
    )
    refs = client.get(f"/api/social/cross-refs?doc={source['id']}").json()
    assert [d["id"] for d in refs["outbound"]] == [far["id"], target["id"]]  # by title: Far, Target
    assert refs["outbound"][0] == {"id": far["id"], "title": "Far", "url": far["url"], "hub": "elsewhere"}
    assert refs["inbound"] == []
    inbound = client.get(f"/api/social/cross-refs?doc={target['id']}").json()["inbound"]
    assert [d["title"] for d in inbound] == ["Far", "Loose", "Source"]
    pairs = client.get("/api/social/cross-refs?hub=garden").json()["pairs"]
    assert {(p["source"]["title"], p["target"]["title"]) for p in pairs} == {
        ("Source", "Target"),
        ("Source", "Far"),
        ("Far", "Target"),
        ("Loose", "Target"),
    }

    # an edit that drops the links drops the rows; a new link appears at once
    r = client.patch(
        f"/api/docs/{source['id']}",
        headers=hub["owner"],
        json={"markdown": f"Only [far](/{far['id']}) now, and [this page](/{source['id']})."},
    )
    assert r.status_code == 200
    assert [d["id"] for d in client.get(f"/api/social/cross-refs?doc={source['id']}").json()["outbound"]] == [far["id"]]
    assert "Source" not in [
        d["title"] for d in client.get(f"/api/social/cross-refs?doc={target['id']}").json()["inbound"]
    ]


def test_cross_refs_bad_input(client, hub):
    doc = hub["add"]("Page", "text")
    for query in ("", "?doc=", f"?doc={doc['id']}&hub=garden", "?colour=red", f"?doc={doc['id']}&x=1"):
        r = client.get(f"/api/social/cross-refs{query}")
        assert r.status_code == 400 and r.json()["error"]["code"] == "invalid_query", query
    assert client.get("/api/social/cross-refs?doc=zzzzzzzzzz").json()["error"]["code"] == "not_found"
    assert client.get("/api/social/cross-refs?doc=../etc").status_code == 404
    assert client.get("/api/social/cross-refs?hub=nohub").json()["error"]["code"] == "unknown_hub"


def test_link_targets():
    assert link_target("/abcdefghij") == ("abcdefghij", "")
    assert link_target("abcdefghij") == ("abcdefghij", "")
    assert link_target("./abcdefghij/") == ("abcdefghij", "")
    assert link_target("https://Wiki.Example:8443/raw/abcdefghij?x=1#y") == ("abcdefghij", "wiki.example:8443")
    for href in (
        "/abcdefghij/edit",
        "/hub/abcdefghij",
        "mailto:abcdefghij@x.y",
        "javascript:/abcdefghij",
        "/abcdefghi",
        "/abcdefghijk",
        "/ABCDEFGHIJ",
        "/abcdefghi1",
        "http://[bad",
    ):
        assert link_target(href) is None, href
    assert doc_links("no links at all, just abcdefghij in text") == set()
    assert doc_links("[a](/abcdefghij) [b][r]\n\n[r]: /bcdefghijk\n") == {("abcdefghij", ""), ("bcdefghijk", "")}
