"""AI curation end to end: the real `openai` client against the local chat server
(tests/chat_server.py), the curator worker, the store and every public surface."""

from __future__ import annotations

import json
import re
import time

import pytest

from tests.polling import wait_curated, wait_indexed

DOC = """We moved recall to PostgreSQL with pgvector. The HNSW index answers a question in a few
milliseconds, and BM25 covers exact names.

## Decisions

- Keep one HNSW index per embedding space.
- Vacuum after bulk loads because dead tuples slow the index.

## Open questions

- How large can the HNSW index grow before memory runs out?
"""

VALID = {
    "summary": "The team moved recall to PostgreSQL with pgvector, using an HNSW index for vectors and BM25 for names.",
    "themes": ["Vector search", "Index maintenance", "Hybrid recall"],
    "takeaways": ["Keep one HNSW index per embedding space.", "Vacuum after bulk loads."],
    "insights": ["Dead tuples slow the HNSW index, so bulk loads need a vacuum."],
    "open_questions": ["How large can the index grow before memory runs out?"],
    "concepts": [
        {
            "name": "PostgreSQL",
            "kind": "entity",
            "gloss": "The database that stores docs and vectors.",
            "aliases": ["Postgres"],
        },
        {"name": "HNSW index", "kind": "concept", "gloss": "The approximate nearest-neighbour index.", "aliases": []},
        {"name": "BM25", "kind": "concept", "gloss": "The full-text ranking for exact names.", "aliases": []},
    ],
    "relations": [
        {"subject": "HNSW index", "relation": "is stored in", "object": "PostgreSQL"},
        {"subject": "BM25", "relation": "complements", "object": "HNSW index"},
        {"subject": "HNSW index", "relation": "replaces", "object": "Elasticsearch"},  # not a concept: dropped
    ],
}


@pytest.fixture
def model_client(make_client, chat_server):
    def make(**overrides):
        return make_client(
            llm_model="test-chat",
            llm_base_url=chat_server.base_url,
            suggest_debounce=0,
            curation_retry_seconds=0.2,
            **overrides,
        )

    return make


def new_hub(client, slug="cur"):
    r = client.post("/api/hubs", json={"slug": slug})
    assert r.status_code == 201, r.text
    return {"Authorization": f"Bearer {r.json()['owner_token']}"}


def capture(client, owner, title, markdown, hub="cur", **extra):
    r = client.post("/api/docs", json={"title": title, "markdown": markdown, "hub": hub, **extra}, headers=owner)
    assert r.status_code == 201, r.text
    return r.json()["id"]


def front_matter(text):
    head = text.split("\n---\n", 1)[0]
    return {k: json.loads(v) for k, v in re.findall(r"^(\w+): (.*)$", head, re.M)}


def sections(text):
    """The headings of the curation block (after the page's body and its last `---`)."""
    _, cut, block = text.rpartition("\n---\n\n## ")
    return [h for h in re.findall(r"^## (.+)$", "## " + block, re.M) if h != "Summary"] if cut else []


SHAPE = [
    "Themes",
    "Key takeaways",
    "Insights",
    "Open questions / gaps",
    "Concepts in this document",
    "Concept relations (within this doc's concepts)",
    "Bundles containing this document",
]


def test_model_enrichment_is_stored_and_rendered_in_the_shape(model_client, chat_server):
    client = model_client()
    owner = new_hub(client)
    chat_server.script(json.dumps(VALID))
    doc_id = capture(client, owner, "Recall on PostgreSQL", DOC)
    wait_curated(client)
    r = client.post(
        "/api/bundles",
        json={"hub": "cur", "title": "Search stack", "description": "How recall\nworks.", "doc_ids": [doc_id]},
        headers=owner,
    )
    assert r.status_code == 201
    bundle_id = r.json()["id"]

    text = client.get(f"/raw/{doc_id}").text
    fields = front_matter(text)
    assert fields["enrichment"] == "model" and fields["enrichment_model"] == "openai:test-chat"
    assert fields["concept_count"] == 3 and fields["bundle_count"] == 1
    body, _, block = text.partition("\n---\n\n## Summary\n\n")
    assert body.rstrip().endswith("memory runs out?"), "the enrichment comes after the whole body"
    assert block.startswith(
        VALID["summary"] + "\n\n## Themes\n\n- Vector search\n- Index maintenance\n- Hybrid recall\n"
    )
    assert sections(text) == SHAPE
    assert "## Key takeaways\n\n- Keep one HNSW index per embedding space.\n- Vacuum after bulk loads.\n" in text
    assert (
        "## Concepts in this document\n\n- **PostgreSQL** _(entity)_\n"
        "  The database that stores docs and vectors. (also: Postgres)\n"
        "- **HNSW index** _(concept)_\n  The approximate nearest-neighbour index.\n"
    ) in text
    relations = text.split("## Concept relations (within this doc's concepts)\n\n", 1)[1].split("\n\n")[0]
    assert relations == "- **HNSW index** is stored in **PostgreSQL**\n- **BM25** complements **HNSW index**"
    assert (
        f"## Bundles containing this document\n\n- [Search stack](http://testserver/b/{bundle_id}.md)\n"
        "  > How recall works.\n"
    ) in text
    assert text.rstrip().endswith(
        "_Hub:_ http://testserver/hub/cur.md\n\n_Concept digest:_ http://testserver/raw/hub/cur?digest=1"
    )
    # the markdown twin an AI fetcher gets is the same document
    assert client.get(f"/{doc_id}", headers={"Accept": "text/markdown"}).text == text

    request = chat_server.requests[0]
    assert request["model"] == "test-chat" and request["response_format"]["type"] == "json_schema"
    assert "memory runs out" in request["messages"][-1]["content"]

    page = client.get(f"/{doc_id}", headers={"Accept": "text/html"}).text
    folded = page.split("<details", 1)[1].split("</details>", 1)[0]
    assert VALID["summary"] in folded and "is stored in" in folded and "Search stack" in folded
    assert page.index("memory runs out") < page.index("<details"), "folded under the body"

    health = client.get("/healthz").json()["curation"]
    assert health["mode"] == "openai:test-chat" and health["model_calls"] == 1 and health["enriched_by_model"] == 1
    assert health["prompt_tokens"] == chat_server.prompt_tokens


def test_malformed_output_is_retried_once(model_client, chat_server):
    client = model_client()
    owner = new_hub(client)
    chat_server.script("Sure! Here is the summary you asked for: it is about Postgres.", json.dumps(VALID))
    doc_id = capture(client, owner, "Recall on PostgreSQL", DOC)
    wait_curated(client)
    assert chat_server.calls == 2
    retry = chat_server.requests[1]["messages"][-1]["content"]
    assert "not valid JSON" in retry
    e = client.get(f"/api/docs/{doc_id}/enrichment").json()
    assert e["status"] == "model" and e["missing"] == [] and e["calls"] == 2


def test_truncated_output_keeps_what_validated_and_marks_the_rest_missing(model_client, chat_server):
    client = model_client()
    owner = new_hub(client)
    whole = json.dumps(VALID)
    cut = whole[: whole.index('"takeaways"') + 30]  # summary and themes complete, cut inside takeaways
    bad_themes = json.dumps(
        {
            **VALID,
            "themes": ["only one"],
            "takeaways": 7,
            "insights": "not a list",
            "open_questions": None,
            "concepts": [],
            "relations": {},
        }
    )
    chat_server.script({"content": cut, "finish_reason": "length"}, bad_themes)
    doc_id = capture(client, owner, "Recall on PostgreSQL", DOC)
    wait_curated(client)
    assert chat_server.calls == 2, "one retry, then whatever validated is stored"
    e = client.get(f"/api/docs/{doc_id}/enrichment").json()
    assert e["data"]["summary"] == VALID["summary"] and e["data"]["themes"] == VALID["themes"]
    assert e["missing"] == ["takeaways", "insights", "open_questions", "concepts", "relations"]
    text = client.get(f"/raw/{doc_id}").text
    assert front_matter(text)["enrichment_missing"] == e["missing"]
    assert sections(text) == SHAPE[:-1], "every section the model owed says it is missing (no bundle: none)"
    takeaways = text.split("## Key takeaways\n\n", 1)[1].split("\n\n")[0]
    assert takeaways.startswith("_Missing:")
    assert "cut off at the token limit" in chat_server.requests[1]["messages"][-1]["content"]

    # the curator lives on: the next doc is enriched normally
    chat_server.script(json.dumps(VALID))
    other = capture(client, owner, "Second", DOC + "\nMore.\n")
    wait_curated(client)
    assert client.get(f"/api/docs/{other}/enrichment").json()["missing"] == []


def test_a_nul_or_a_lone_surrogate_in_the_answer_is_dropped_not_the_enrichment(model_client, chat_server):
    """PostgreSQL's jsonb refuses "\\u0000": such an answer once failed its write on every retry,
    so the doc was owed forever."""
    client = model_client()
    owner = new_hub(client)
    answer = dict(
        VALID,
        summary=VALID["summary"].replace("moved", "\u0000moved"),
        themes=["Vector search \ud800", *VALID["themes"][1:]],
    )
    chat_server.script(json.dumps(answer))
    doc_id = capture(client, owner, "Recall on PostgreSQL", DOC)
    wait_curated(client)
    e = client.get(f"/api/docs/{doc_id}/enrichment").json()
    assert e["status"] == "model" and e["missing"] == [] and e["calls"] == 1
    assert e["data"]["summary"] == VALID["summary"] and e["data"]["themes"] == VALID["themes"]


def test_unchanged_save_makes_no_model_call(model_client, chat_server):
    client = model_client()
    owner = new_hub(client)
    doc_id = capture(client, owner, "Recall on PostgreSQL", DOC, external_id="import-1")
    wait_curated(client)
    first = chat_server.calls
    assert first == 1
    # the same content again: a re-import and a PATCH that changes nothing
    r = client.post(
        "/api/docs",
        json={"title": "Recall on PostgreSQL", "markdown": DOC, "hub": "cur", "external_id": "import-1"},
        headers=owner,
    )
    assert r.json()["status"] == "unchanged"
    assert client.patch(f"/api/docs/{doc_id}", json={"markdown": DOC}, headers=owner).status_code == 200
    client.app.state.mw.curator.wake.set()
    wait_curated(client)
    time.sleep(0.5)
    assert chat_server.calls == first
    # a real edit is enriched again, once
    client.patch(f"/api/docs/{doc_id}", json={"markdown": DOC + "\nOne more line.\n"}, headers=owner)
    wait_curated(client)
    assert chat_server.calls == first + 1


def test_an_edit_drops_the_old_enrichment_at_once(model_client, chat_server):
    """An edited doc never shows an enrichment of text that may be gone (e.g. a pasted secret)."""
    client = model_client()
    owner = new_hub(client)
    chat_server.script(json.dumps({**VALID, "summary": "Mentions the key sk-secret-123 in passing, sadly."}))
    doc_id = capture(client, owner, "Recall", DOC)
    wait_curated(client)
    assert "sk-secret-123" in client.get(f"/raw/{doc_id}").text
    chat_server.set_failing(True)  # the new enrichment cannot come yet
    client.patch(f"/api/docs/{doc_id}", json={"markdown": DOC + "\nRedacted.\n"}, headers=owner)
    text = client.get(f"/raw/{doc_id}").text
    assert "sk-secret-123" not in text and front_matter(text)["enrichment"] == "pending"
    assert "sk-secret-123" not in client.get("/raw/hub/cur?digest=1").text


def test_model_outage_keeps_work_owed_and_backs_off(model_client, chat_server):
    client = model_client()
    owner = new_hub(client)
    chat_server.set_failing(True)
    doc_id = capture(client, owner, "Recall", DOC)
    deadline = time.monotonic() + 10
    while client.app.state.mw.curator.failures < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    curator = client.app.state.mw.curator
    assert curator.failures >= 2 and curator.backoff() > 0.2, "the back-off grows with each outage"
    assert client.get("/healthz").json()["curation"]["owed_enrichments"] == 1
    assert client.get(f"/api/docs/{doc_id}/enrichment").json()["status"] == "pending"
    chat_server.set_failing(False)
    wait_curated(client, timeout=30)
    assert client.get(f"/api/docs/{doc_id}/enrichment").json()["status"] == "model"
    assert curator.failures == 0


def test_json_schema_refused_falls_back_to_json_mode(model_client, chat_server):
    client = model_client()
    owner = new_hub(client)
    chat_server.reject_json_schema = True
    chat_server.script(json.dumps(VALID))
    doc_id = capture(client, owner, "Recall", DOC)
    wait_curated(client)
    assert chat_server.requests[0]["response_format"] == {"type": "json_object"}
    assert '"summary"' in chat_server.requests[0]["messages"][0]["content"], "the field guide is in the prompt"
    assert client.get(f"/api/docs/{doc_id}/enrichment").json()["missing"] == []


def test_long_doc_is_map_reduced_within_the_budget(model_client, chat_server):
    client = model_client(llm_window_tokens=300, llm_doc_tokens=1000)
    owner = new_hub(client)
    sections_md = "\n\n".join(
        f"## Part {i}\n\n" + " ".join(f"Sentence {i}.{j} about topic{i} and more words." for j in range(25))
        for i in range(12)
    )
    doc_id = capture(client, owner, "Long notes", sections_md)
    wait_curated(client, timeout=60)
    e = client.get(f"/api/docs/{doc_id}/enrichment").json()
    assert e["status"] == "model" and e["missing"] == []
    prompts = [r["messages"][-1]["content"] for r in chat_server.requests]
    maps = [p for p in prompts if "(part " in p]
    assert len(maps) >= 3 and len(prompts) == len(maps) + 1, "map calls, then one reduce"
    assert "Part 1:" in prompts[-1] and "Part 2:" in prompts[-1]
    from memorywiki.server.curation.llm import estimate_tokens

    sent = sum(estimate_tokens(p.split("<<<\n", 1)[1].rsplit("\n>>>", 1)[0]) for p in maps)
    assert sent <= 1000, "no more doc text than the budget"
    assert e["calls"] == len(prompts)


def test_extractive_mode_without_a_model(make_client):
    client = make_client(suggest_debounce=0, embedder="none")
    owner = new_hub(client)
    doc_id = capture(client, owner, "Recall on PostgreSQL", DOC)
    wait_curated(client)
    text = client.get(f"/raw/{doc_id}").text
    fields = front_matter(text)
    assert fields["enrichment"] == "extractive" and "enrichment_model" not in fields
    # no section that holds nothing: no relations in extractive mode, no empty bundle list
    shown = sections(text)
    assert shown == [s for s in SHAPE if s in shown] and {"Themes", "Concepts in this document"} <= set(shown)
    assert not any(s.startswith(("Concept relations", "Bundles")) for s in shown)
    summary = client.get(f"/api/docs/{doc_id}/enrichment").json()["data"]["summary"]
    assert "## Summary" not in text, "a summary as long as half the page says the page again"
    flat = " ".join(DOC.split())
    for sentence in re.split(r"(?<=\.) ", summary):
        assert sentence in flat, f"an extractive summary only quotes the doc: {sentence!r}"
    assert "- How large can the HNSW index grow before memory runs out?" in text
    assert "_None" not in text and "Not in any bundle" not in text
    assert "- **HNSW index**" in text
    assert client.get("/healthz").json()["curation"]["model_calls"] == 0


# ---------------------------------------------------------------- privacy, digest, related

ANIMALS = {
    "otter": "Otters hold hands while sleeping. The sea otter uses rocks as tools to open shellfish.",
    "beaver": "Beavers build dams from branches and mud. The beaver dam creates ponds for wetland habitats.",
    "heron": "Herons wade in wetland habitats. The grey heron hunts fish with its sharp beak.",
}
SECRET = "The quokkazyx project codename stays internal. The quokkazyx budget is private."


def test_private_docs_never_reach_digest_related_or_suggestions(make_client):
    # every page within reach of every other (no floor on related): only privacy keeps one out
    client = make_client(suggest_debounce=0, graph_max_distance=2.0)
    owner = new_hub(client)
    ids = {
        name: capture(client, owner, f"Notes on the {name}", f"# {name}\n\n{body}\n\n{body}")
        for name, body in ANIMALS.items()
    }
    draft = capture(client, owner, "Quokkazyx plans", f"{SECRET}\n\n{SECRET}", is_draft=True)
    locked = capture(client, owner, "Locked quokkazyx", f"{SECRET}\n\n{SECRET}", password="pw")
    wait_curated(client)
    assert client.get(f"/api/docs/{draft}/enrichment", headers=owner).json()["status"] == "extractive", (
        "private docs are enriched too, for their owner"
    )

    for url in (
        "/raw/hub/cur?digest=1",
        "/raw/hub/cur?digest=1&compact=1",
        "/api/hub/cur/digest",
        "/api/hub/cur/suggestions",
        f"/api/docs/{ids['otter']}/related?k=10",
    ):
        text = client.get(url).text.lower()
        assert "quokkazyx" not in text and draft not in text and locked not in text, url
    page = client.get("/hub/cur", headers={"Accept": "text/html"}).text.lower()
    assert "quokkazyx" not in page
    related = client.get(f"/api/docs/{ids['otter']}/related?k=10").json()["results"]
    assert {r["id"] for r in related} == {ids["beaver"], ids["heron"]}

    # a public doc made private leaves every surface at once (no worker round needed)
    client.app.state.mw.curator.stop()
    digest = client.get("/api/hub/cur/digest").json()
    assert any(ids["heron"] in [d["id"] for d in c["docs"]] for c in digest["concepts"])
    assert client.patch(f"/api/docs/{ids['heron']}", json={"is_draft": True}, headers=owner).status_code == 200
    digest = client.get("/api/hub/cur/digest").json()
    assert all(ids["heron"] not in [d["id"] for d in c["docs"]] for c in digest["concepts"])
    assert "heron" not in client.get("/raw/hub/cur?digest=1").text.lower()
    related = client.get(f"/api/docs/{ids['otter']}/related?k=10").json()["results"]
    assert ids["heron"] not in {r["id"] for r in related}
    for s in client.get("/api/hub/cur/suggestions").json()["suggestions"]:
        assert ids["heron"] not in [d["id"] for d in s["docs"]]


def test_related_falls_back_to_shared_concepts_without_vectors(make_client):
    client = make_client(embedder="none", suggest_debounce=0)
    owner = new_hub(client)
    a = capture(client, owner, "Beaver dams", "Beaver dams hold water. Beaver dams shape wetland habitats.")
    b = capture(client, owner, "Wetland habitats", "Wetland habitats need beaver dams. Wetland habitats shelter birds.")
    capture(client, owner, "Sourdough", "Feed the starter the night before. Bake the loaf hot.")
    wait_curated(client)
    results = client.get(f"/api/docs/{a}/related").json()["results"]
    assert [r["id"] for r in results] == [b]
    assert results[0]["via"] == "concepts" and results[0]["shared_concepts"]
    for k in ("0", "51", "abc", "\u2075", "\u0663", "-1"):  # "⁵" and "٣" pass str.isdigit(); "⁵" failed int(): a 500
        r = client.get(f"/api/docs/{a}/related", params={"k": k})
        assert r.status_code == 400 and r.json()["error"]["code"] == "invalid_query", (k, r.text)
    assert client.get("/api/docs/zzzzzzzzzz/related").status_code == 404


TOPICS = {
    "pg": [
        "PostgreSQL vacuum tuning: vacuum reclaims dead tuples in PostgreSQL tables and indexes.",
        "PostgreSQL index bloat: dead tuples bloat PostgreSQL indexes until vacuum runs.",
        "PostgreSQL autovacuum settings decide when vacuum cleans dead tuples in tables.",
        "PostgreSQL HOT updates avoid index bloat and leave fewer dead tuples for vacuum.",
    ],
    "bread": [
        "Sourdough starter feeding: feed the sourdough starter flour and water daily.",
        "Sourdough loaf baking: bake the sourdough loaf in a hot dutch oven.",
        "Sourdough hydration: a wetter sourdough dough gives an open crumb to the loaf.",
    ],
}


def _topic_hub(client, owner):
    ids = {}
    for topic, bodies in TOPICS.items():
        for i, body in enumerate(bodies):
            ids[f"{topic}{i}"] = capture(client, owner, body.split(":")[0], f"{body}\n\n{body}")
    return ids


def test_suggested_bundles_and_accepting_one(make_client):
    client = make_client(suggest_debounce=0)
    owner = new_hub(client)
    ids = _topic_hub(client, owner)
    wait_curated(client)
    suggestions = client.get("/api/hub/cur/suggestions").json()["suggestions"]
    groups = [{d["id"] for d in s["docs"]} for s in suggestions]
    pg = {ids[f"pg{i}"] for i in range(4)}
    bread = {ids[f"bread{i}"] for i in range(3)}
    assert pg in groups and bread in groups, suggestions
    chosen = next(s for s in suggestions if {d["id"] for d in s["docs"]} == pg)
    assert chosen["title"] and chosen["description"] and chosen["mode"] == "extractive"
    assert "postgresql" in (chosen["title"] + chosen["description"]).lower()
    html = client.get("/hub/cur", headers={"Accept": "text/html"}).text
    assert "Suggested bundles" in html and chosen["title"] in html

    accept = f"/api/hub/cur/suggestions/{chosen['id']}/accept"
    assert client.post(accept).status_code == 401
    assert client.post(accept, headers={"Authorization": "Bearer nope"}).status_code == 403
    assert client.post(accept, json={"titel": "x"}, headers=owner).json()["error"]["code"] == "unknown_field"
    r = client.post(accept, headers=owner)
    assert r.status_code == 201, r.text
    bundle = r.json()
    assert set(bundle["doc_ids"]) == pg and bundle["title"] == chosen["title"]
    assert bundle["redacted"] == {"secrets": 0, "kinds": {}, "private": 0, "scanned": True}
    assert client.post(accept, headers=owner).status_code == 409, "a suggestion is accepted once"
    left = client.get("/api/hub/cur/suggestions").json()["suggestions"]
    assert all({d["id"] for d in s["docs"]} != pg for s in left), "no longer offered once bundled"
    # a title given in its place is redacted as any text a bundle stores (docs/secrets.md)
    token = "ghp_" + "Q7uXk2Lm9Zt4Rb8Vn1Cw6Yh3Jd5Fs0Pe2Ga7"
    bread_id = next(s["id"] for s in left if {d["id"] for d in s["docs"]} == bread)
    r = client.post(
        f"/api/hub/cur/suggestions/{bread_id}/accept", json={"title": f"Bread, pushed with {token}"}, headers=owner
    )
    assert r.status_code == 201 and r.json()["title"] == "Bread, pushed with [redacted: github-pat]"
    assert r.json()["redacted"]["kinds"] == {"github-pat": 1}
    assert token not in client.get(f"/raw/b/{r.json()['id']}").text
    wait_curated(client)
    raw = client.get(f"/raw/b/{bundle['id']}").text
    assert "## Across these documents" in raw and "### Themes" in raw and "### Connections" in raw
    assert "both discuss" in raw
    # the doc pages now list the bundle
    assert client.get(f"/raw/{ids['pg0']}").text.count(f"/b/{bundle['id']}") == 1


def test_bundle_analysis_follows_members_and_privacy(make_client):
    client = make_client(suggest_debounce=0)
    owner = new_hub(client)
    ids = _topic_hub(client, owner)
    r = client.post(
        "/api/bundles", json={"hub": "cur", "title": "Vacuum", "doc_ids": [ids["pg0"], ids["pg1"]]}, headers=owner
    )
    bundle_id = r.json()["id"]
    wait_curated(client)
    first = client.get(f"/raw/b/{bundle_id}").text
    assert "PostgreSQL index bloat" in first.split("## Across these documents", 1)[1]
    client.patch(f"/api/bundles/{bundle_id}", json={"doc_ids": [ids["pg0"], ids["pg1"], ids["pg2"]]}, headers=owner)
    wait_curated(client)
    assert "PostgreSQL autovacuum settings" in client.get(f"/raw/b/{bundle_id}").text.split("## Across", 1)[1]
    client.app.state.mw.curator.stop()
    client.patch(f"/api/docs/{ids['pg2']}", json={"is_draft": True}, headers=owner)
    raw = client.get(f"/raw/b/{bundle_id}").text
    assert "autovacuum" not in raw.lower(), "an analysis that read a now-private member is hidden at once"


def test_topic_reading_list(make_client):
    client = make_client(suggest_debounce=0)
    owner = new_hub(client)
    ids = _topic_hub(client, owner)
    wait_curated(client)
    r = client.post("/api/bundles/suggest", json={"hub": "cur", "intent": "sourdough baking", "k": 5})
    assert r.status_code == 200, r.text
    docs = r.json()["docs"]
    assert {d["id"] for d in docs} == {ids[f"bread{i}"] for i in range(3)}
    assert all(d["why"] and d["url"].endswith(d["id"]) for d in docs)
    assert client.post("/api/bundles/suggest", json={"hub": "cur"}).json()["error"]["code"] == "missing_field"
    assert client.post("/api/bundles/suggest", json={"hub": "nope", "intent": "x"}).status_code == 404
    assert client.post("/api/bundles/suggest", json={"hub": "cur", "intent": "x", "k": 99}).status_code == 400
    typo = client.post("/api/bundles/suggest", json={"hub": "cur", "intent": "x", "top_k": 3}).json()["error"]
    assert typo["code"] == "unknown_field" and typo["unknown"] == ["top_k"]


def test_a_model_names_the_suggested_groups(model_client, chat_server):
    client = model_client()
    owner = new_hub(client)
    ids = _topic_hub(client, owner)
    wait_curated(client)
    suggestions = client.get("/api/hub/cur/suggestions").json()["suggestions"]
    pg = next(s for s in suggestions if {d["id"] for d in s["docs"]} == {ids[f"pg{i}"] for i in range(4)})
    assert pg["mode"] == "model" and pg["title"].startswith("This covers") and "(title 1)" in pg["title"]
    naming = [r for r in chat_server.requests if r["response_format"]["json_schema"]["name"] == "bundle_name"]
    assert (
        naming
        and "PostgreSQL index bloat"
        in next(r for r in naming if "PostgreSQL" in r["messages"][-1]["content"])["messages"][-1]["content"]
    )
    usage = client.get("/healthz").json()["curation"]["by_job"]
    assert usage["suggest"]["calls"] == len(naming) and usage["enrich"]["calls"] == 7
    # a recompute (another doc edited) keeps an offered group, its id and its name
    calls = chat_server.calls
    client.patch(f"/api/docs/{ids['bread0']}", json={"title": "Sourdough starter feeding, again"}, headers=owner)
    wait_curated(client)
    assert chat_server.calls > calls, "the edited doc was enriched again"
    assert any(
        s["id"] == pg["id"] and s["title"] == pg["title"]
        for s in client.get("/api/hub/cur/suggestions").json()["suggestions"]
    )


async def test_an_enrichment_write_never_deadlocks_with_a_bundle_insert(make_client, database_url):
    """A bundle insert locks its members for its foreign keys, one by one, and marks the hub;
    an enrichment write locks its doc and marks the hub too. Marks are insert-only and the
    doc lock leaves foreign-key checks alone, so neither ever waits on the other (a counter
    on the hub row deadlocked them)."""
    import asyncio

    import psycopg
    from memorywiki.server.curation.enrich import Enrichment
    from memorywiki.server.store import enrichments as enrichment_store
    from psycopg.rows import dict_row

    client = make_client(curation=False)
    owner = new_hub(client)
    first = capture(client, owner, "First", "One.")
    second = capture(client, owner, "Second", "Two.")
    wait_indexed(client, [first, second])  # only the two transactions below touch these rows
    async with (
        await psycopg.AsyncConnection.connect(database_url, row_factory=dict_row) as a,
        await psycopg.AsyncConnection.connect(database_url, row_factory=dict_row, autocommit=True) as b,
    ):
        await b.execute("SET lock_timeout = '3s'")
        await a.execute("SET lock_timeout = '3s'")
        hub = await (await a.execute("SELECT hub_id, source_hash FROM docs WHERE id = %s", (second,))).fetchone()
        await a.execute("INSERT INTO bundles (id, hub_id, title) VALUES ('bundle0001', %s, 'B')", (hub["hub_id"],))
        await a.execute("INSERT INTO bundle_docs VALUES ('bundle0001', %s, 0)", (first,))  # marks the hub
        enrichment = Enrichment(mode="extractive", model=None, data={"summary": "Two."})
        written = await asyncio.wait_for(enrichment_store.write(b, second, hub["source_hash"], enrichment, []), 10)
        assert written
        await a.execute("INSERT INTO bundle_docs VALUES ('bundle0001', %s, 1)", (second,))
        await a.commit()
        marks = (
            await (
                await b.execute("SELECT count(*) AS n FROM curation_marks WHERE hub_id = %s", (hub["hub_id"],))
            ).fetchone()
        )["n"]
        assert marks >= 3, "both the bundle and the enrichment marked the hub for regrouping"


async def test_a_doc_deleted_after_its_enrichment_claim_is_let_go_for_its_restore(make_client, database_url):
    """The curator claimed a doc, the doc was deleted before the curator read it, then restored:
    the curator drops its claim when it finds the doc gone, so the restored doc is enriched at
    once rather than when the lease runs out."""
    import asyncio

    from memorywiki.server.config import Settings
    from memorywiki.server.curation.worker import Curator
    from memorywiki.server.store import enrichments as enrichment_store
    from memorywiki.server.store.db import Database

    client = make_client(curation=False)
    owner = new_hub(client)
    doc_id = capture(client, owner, "Narwhals", "The narwhal tusk is a tooth.")
    wait_indexed(client, [doc_id])  # the indexer's row lock would make the claim below skip the doc
    db = Database(database_url, min_size=1, max_size=3)
    await db.open()
    try:
        curator = Curator(db, None, Settings(), wait_for_vectors=False)
        async with db.owner.connection() as conn:
            assert await enrichment_store.claim_owed(
                conn, worker=await curator.session_pid(), limit=4, wait_for_vectors=False, vector_grace=0
            ) == [doc_id]
        r = await asyncio.to_thread(client.delete, f"/api/docs/{doc_id}", headers=owner)
        assert r.status_code == 200, r.text
        assert await curator.enrich_doc(doc_id) is False
        r = await asyncio.to_thread(client.post, f"/api/docs/{doc_id}/restore", json={"version": 1}, headers=owner)
        assert r.status_code == 200, r.text
        async with db.owner.connection() as conn:  # the same curator, still alive, asks again
            assert await enrichment_store.claim_owed(
                conn, worker=await curator.session_pid(), limit=4, wait_for_vectors=False, vector_grace=0
            ) == [doc_id]
    finally:
        await curator.close()
        await db.close()
