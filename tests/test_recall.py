"""POST /api/hub/{slug}/recall: levels, fields, hybrid fusion, any question text, the DESIGN example."""

from __future__ import annotations

import pytest

from tests.polling import wait_indexed

ANIMALS = {
    "Walruses": "# Tusks\n\nWalruses use their tusks to haul out onto ice floes.\n\n"
    "# Diet\n\nWalruses eat clams from the sea floor.\n",
    "Otters": "# Tools\n\nSea otters crack shellfish open with stones.\n\n"
    "# Fur\n\nOtter fur is the densest of any animal.\n",
    "Penguins": "# Huddles\n\nEmperor penguins huddle against the antarctic wind.\n\n"
    "# Diving\n\nPenguins dive deep hunting for krill and fish.\n",
    "Xylophones": "# Bars\n\nA xylophone has wooden bars struck with mallets.\n",
}


@pytest.fixture
def hub(client):
    r = client.post("/api/hubs", json={"slug": "zoo"})
    assert r.status_code == 201
    headers = {"Authorization": f"Bearer {r.json()['owner_token']}"}
    ids = {}
    for title, markdown in ANIMALS.items():
        r = client.post("/api/docs", json={"title": title, "markdown": markdown, "hub": "zoo"}, headers=headers)
        assert r.status_code == 201
        ids[title] = r.json()["id"]
    wait_indexed(client, ids.values())
    return {"headers": headers, "ids": ids}


def recall(client, slug="zoo", **body):
    r = client.post(f"/api/hub/{slug}/recall", json=body)
    assert r.status_code == 200, r.text
    return r.json()


def descending(values) -> bool:
    values = list(values)
    return values == sorted(values, reverse=True)


def test_chunk_results_carry_breadcrumb_and_scores(client, hub):
    body = recall(client, question="What do walruses use their tusks for?", hybrid=False)
    assert body["level"] == "chunk" and body["k"] == 5 and body["mode"] == "vector" and body["vector"] == "ok"
    results = body["results"]
    assert len(results) == 5  # k defaults to 5 (there are 7 chunks)
    top = results[0]
    assert set(top) >= {
        "markdown",
        "heading_path",
        "doc_id",
        "doc_url",
        "title",
        "score",
        "vector_rank",
        "fts_rank",
        "similarity",
        "fts_score",
    }
    assert top["doc_id"] == hub["ids"]["Walruses"]
    assert top["heading_path"] == "Walruses > Tusks"
    assert top["markdown"].startswith("# Tusks")
    assert top["doc_url"] == f"http://testserver/{top['doc_id']}"
    assert top["title"] == "Walruses"
    # hybrid off: the vector list alone, in its own order, no full-text rank
    assert [r["vector_rank"] for r in results] == [1, 2, 3, 4, 5]
    assert all(r["fts_rank"] is None and r["fts_score"] is None for r in results)
    assert descending(r["similarity"] for r in results) and descending(r["score"] for r in results)


def test_k_bounds_results(client, hub):
    assert len(recall(client, question="animals", k=1)["results"]) == 1
    assert len(recall(client, question="animals", k=50)["results"]) == 7


def test_hybrid_fuses_both_rankers(client, hub):
    k = 2
    body = recall(client, question="penguins krill fish", hybrid=True, k=k)
    assert body["mode"] == "hybrid"
    results = body["results"]
    assert len(results) == k
    assert results[0]["heading_path"] == "Penguins > Diving"
    assert results[0]["fts_rank"] == 1 and results[0]["vector_rank"] is not None
    for r in results:
        assert r["vector_rank"] is not None or r["fts_rank"] is not None
        assert r["score"] > 0
    assert descending(r["score"] for r in results)

    # each ranker contributes its candidate pool; the fused list is what k keeps of them
    wide = recall(client, question="sea walruses otters penguins", hybrid=True, k=1)["results"]
    assert len(wide) == 1
    body = recall(client, question="sea walruses otters penguins", hybrid=True, k=50)
    assert descending(r["score"] for r in body["results"])
    for r in body["results"]:
        assert r["vector_rank"] is None or 1 <= r["vector_rank"] <= 200
    ranks = sorted(r["fts_rank"] for r in body["results"] if r["fts_rank"] is not None)
    assert ranks == list(range(1, len(ranks) + 1))  # full-text ranks are dense from 1
    assert len(ranks) >= 4  # "sea", "walruses", "otters", "penguins" hit several chunks


def test_candidate_pools():
    from memorywiki.server.store.recall import pool_size

    # hybrid: 4 candidates per result wanted, never fewer than 40 (they normalise the scores)
    assert [pool_size("chunk", k, True) for k in (1, 5, 10, 20, 50)] == [40, 40, 40, 80, 200]
    assert pool_size("chunk", 5, False) == 5  # one ranker alone: its own top k
    # doc level: a doc's sections share the slots, so five times as many chunks
    assert pool_size("doc", 10, True) == pool_size("doc", 10, False) == 200
    # RRF reads each ranker's top k*4, as the seeds define it
    assert [pool_size("chunk", k, True, "rrf") for k in (1, 5, 10)] == [4, 20, 40]
    assert pool_size("doc", 5, True, "rrf") == 100


def test_question_terms_are_ored_not_anded(client, hub):
    body = recall(client, question="walruses xylophone", hybrid=True, k=10)
    docs = {r["doc_id"] for r in body["results"] if r["fts_rank"] is not None}
    assert {hub["ids"]["Walruses"], hub["ids"]["Xylophones"]} <= docs


def test_doc_level(client, hub):
    body = recall(client, question="otters crack shellfish with stones", level="doc", k=2)
    assert body["level"] == "doc"
    results = body["results"]
    assert len(results) == 2
    top = results[0]
    assert set(top) >= {"doc_id", "doc_url", "title", "markdown", "similarity"}
    assert top["doc_id"] == hub["ids"]["Otters"] and top["title"] == "Otters"
    assert top["markdown"] == ANIMALS["Otters"]
    assert top["doc_url"].endswith("/" + top["doc_id"])
    assert -1 <= results[1]["similarity"] <= top["similarity"] <= 1
    assert top["section"]["heading_path"] == "Otters > Tools"  # the section that made it win
    assert top["section"]["markdown"] == "# Tools\n\nSea otters crack shellfish open with stones."
    hybrid = recall(client, question="otters stones", level="doc", hybrid=True)["results"]
    assert hybrid[0]["doc_id"] == hub["ids"]["Otters"]
    assert len({r["doc_id"] for r in hybrid}) == len(hybrid)  # one result per doc
    assert descending(r["score"] for r in hybrid)


def test_bundle_level(client, hub):
    ids = hub["ids"]
    bundle_ids = []
    for title, desc, members in [
        ("Polar life", "Animals of the ice", ["Penguins", "Walruses"]),
        ("Music", "Percussion instruments", ["Xylophones"]),
    ]:
        r = client.post(
            "/api/bundles",
            json={"hub": "zoo", "title": title, "description": desc, "doc_ids": [ids[m] for m in members]},
            headers=hub["headers"],
        )
        assert r.status_code == 201, r.text
        bundle_ids.append(r.json()["id"])
    wait_indexed(client, bundle_ids=bundle_ids)  # bundles are indexed by the same worker
    results = recall(client, question="percussion instruments", level="bundle")["results"]
    # the other bundle shares no word and is not near in meaning: it is no answer
    assert [r["title"] for r in results] == ["Music"]
    top = results[0]
    assert set(top) >= {"bundle_id", "bundle_url", "title", "description", "similarity"}
    assert top["title"] == "Music" and top["description"] == "Percussion instruments"
    assert top["bundle_url"] == f"http://testserver/b/{top['bundle_id']}"
    assert (
        recall(client, question="penguins and walruses on ice", level="bundle", k=1)["results"][0]["title"]
        == "Polar life"
    )


QUESTIONS = [
    "(((( & | ! :*",
    "'quoted' \"double\" `back`",
    "'; DROP TABLE docs; --",
    "walrus's tusk:* & !penguin",
    "<->",
    "a & (b | !c)",
    "über café naïve 東京 🦭",
    "the of and a is",
    "   ?   ",
    "\\",
    "%_%",
    "0",
    "null",
    "\u200b",
    "x" * 4000,
    "tusks" + " !" * 500,
]


@pytest.mark.parametrize("hybrid", [False, True])
@pytest.mark.parametrize("level", ["chunk", "doc", "bundle"])
def test_any_question_text_is_valid(client, hub, level, hybrid):
    for question in QUESTIONS:
        r = client.post("/api/hub/zoo/recall", json={"question": question, "level": level, "hybrid": hybrid})
        assert r.status_code == 200, (question, r.text)
        assert isinstance(r.json()["results"], list)
    # and nothing was dropped
    assert len(client.get("/api/hub/zoo").json()["docs"]) == 4


def test_punctuated_question_still_finds_by_full_text(make_client, embedding_server):
    client = make_client(embedder="none")
    r = client.post("/api/hubs", json={"slug": "zoo"})
    h = {"Authorization": f"Bearer {r.json()['owner_token']}"}
    r = client.post(
        "/api/docs", json={"title": "Tusks", "hub": "zoo", "markdown": "Walruses' tusks & ice: (haul-out)!"}, headers=h
    )
    doc_id = r.json()["id"]
    for q in ["walrus's tusk:* & !ice", "(((tusks)))", "TUSKS!!!", "'; DROP TABLE docs; -- tusks"]:
        body = recall(client, question=q)
        assert [res["doc_id"] for res in body["results"]] == [doc_id], q
    assert recall(client, question="(((( & | ! :*")["results"] == []


def test_recall_is_scoped_to_the_hub(client, hub):
    r = client.post("/api/hubs", json={"slug": "other"})
    h = {"Authorization": f"Bearer {r.json()['owner_token']}"}
    other_id = client.post(
        "/api/docs",
        json={"title": "Other walruses", "hub": "other", "markdown": "Walruses tusks walruses tusks."},
        headers=h,
    ).json()["id"]
    hubless = client.post("/api/docs", json={"title": "Loose walruses", "markdown": "Walruses tusks."}).json()
    wait_indexed(client, [other_id, hubless["id"]])
    for level in ("chunk", "doc"):
        for hybrid in (False, True):
            results = recall(client, question="walruses tusks", level=level, hybrid=hybrid, k=50)["results"]
            assert {r["doc_id"] for r in results} <= set(hub["ids"].values())
            assert hubless["id"] not in {r["doc_id"] for r in results}
    other = recall(client, slug="other", question="walruses tusks", k=50, hybrid=True)["results"]
    assert {r["title"] for r in other} == {"Other walruses"}


def test_design_example_mcp_server_chunk_comes_first(client):
    r = client.post("/api/hubs", json={"slug": "me"})
    h = {"Authorization": f"Bearer {r.json()['owner_token']}"}
    work_log = (
        "# March\n\nMostly reading papers and planning the quarter.\n\n"
        "## Built the MCP server\n\nWrote the MCP server so editors can call the recall endpoint "
        "over stdio; it is a thin client of the HTTP contract.\n\n"
        "## Onboarding\n\nHelped two new people set up their laptops.\n"
    )
    essay = (
        "# Why now?\n\nEvery era has its moment. Things change, people change, and the time feels "
        "right to build something that lasts. Servers come and go; ideas stay.\n"
    )
    log_id = client.post("/api/docs", json={"title": "Work log", "markdown": work_log, "hub": "me"}, headers=h).json()[
        "id"
    ]
    essay_id = client.post("/api/docs", json={"title": "Why now?", "markdown": essay, "hub": "me"}, headers=h).json()[
        "id"
    ]
    wait_indexed(client, [log_id, essay_id])

    body = recall(client, slug="me", question="MCP server", hybrid=True)
    assert body["mode"] == "hybrid"
    top = body["results"][0]
    assert top["doc_id"] == log_id
    assert top["heading_path"] == "Work log > March > Built the MCP server"
    assert "Built the MCP server" in top["markdown"]
    assert top["fts_rank"] == 1 and top["vector_rank"] == 1
    assert all(r["score"] < top["score"] for r in body["results"][1:])


def test_a_bare_heading_never_answers(client):
    """`# Deploy notes` with nothing under it used to win "how do we deploy?"."""
    r = client.post("/api/hubs", json={"slug": "ops"})
    h = {"Authorization": f"Bearer {r.json()['owner_token']}"}
    handbook = (
        "# Deploy notes\n\n## Steps\n\nWe deploy with make release on the build host, then watch the health page "
        "until it is green.\n\n## Rollback\n\nRun make rollback with the previous tag.\n"
    )
    ids = [
        client.post("/api/docs", json={"title": title, "markdown": markdown, "hub": "ops"}, headers=h).json()["id"]
        for title, markdown in [("Ops handbook", handbook), ("Lunch", "# Lunch\n\nThe canteen opens at noon.\n")]
    ]
    wait_indexed(client, ids)
    for hybrid in (True, False):
        results = recall(client, slug="ops", question="how do we deploy?", hybrid=hybrid)["results"]
        assert results[0]["doc_id"] == ids[0]
        assert results[0]["heading_path"] == "Ops handbook > Deploy notes > Steps"
        assert "make release" in results[0]["markdown"]
        assert not [r for r in results if r["markdown"].strip() == "# Deploy notes"]
