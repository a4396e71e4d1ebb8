"""Curation parts with no server: the model contract, concept folding, the extractive
enrichment of a real capture, bundle grouping, and the digest's token budget."""

from __future__ import annotations

import json
import random
import re
from pathlib import Path

from memorywiki.server.capture import parse_claude_share
from memorywiki.server.curation import suggest
from memorywiki.server.curation.concepts import fold
from memorywiki.server.curation.contract import ENRICHMENT_SCHEMA, check_fields, parse_object, tidy_enrichment
from memorywiki.server.curation.enrich import Budget, ChunkText, enrich_extractively, select_sections, windows
from memorywiki.server.curation.llm import estimate_tokens
from memorywiki.server.curation.markdown import digest_markdown, enrichment_markdown
from memorywiki.server.indexing.chunker import chunk_markdown

DATA = Path(__file__).parent / "data" / "capture"


def test_parse_object_keeps_complete_fields_of_a_truncated_answer():
    text = '```json\n{"summary": "A summary.", "themes": ["a", "b"], "concepts": [{"name": "x"}, {"na'
    fields, complete = parse_object(text)
    assert fields == {"summary": "A summary.", "themes": ["a", "b"]} and not complete
    assert parse_object('{"summary": "whole"}') == ({"summary": "whole"}, True)
    assert parse_object("Sorry, I cannot do that.") == ({}, False)
    assert parse_object("[1, 2]") == ({}, False)
    # a half-written string is dropped, never stored cut
    assert parse_object('{"summary": "complete", "insights": ["one", "tw')[0] == {"summary": "complete"}


def test_check_fields_costs_a_bad_field_only_itself():
    checked = check_fields(
        {
            "summary": "Long enough to be a summary paragraph.",
            "themes": ["one"],
            "concepts": [{"name": "X", "kind": "thing", "gloss": "g", "aliases": []}],
        },
        ENRICHMENT_SCHEMA,
    )
    assert list(checked.valid) == ["summary"]
    assert checked.missing == ["themes", "takeaways", "insights", "open_questions", "concepts", "relations"]
    assert any("themes" in p and "short" in p for p in checked.problems)
    assert any(p.startswith("concepts:") and "thing" in p for p in checked.problems)


def test_tidy_keeps_relations_between_the_docs_own_concepts():
    data = tidy_enrichment(
        {
            "themes": ["  Vector   search ", "vector search", "- Hybrid"],
            "concepts": [
                {"name": "PostgreSQL", "kind": "entity", "gloss": "db", "aliases": ["Postgres"]},
                {"name": "**HNSW**", "kind": "concept", "gloss": "index", "aliases": []},
            ],
            "relations": [
                {"subject": "hnsw", "relation": "lives in", "object": "Postgres"},
                {"subject": "HNSW", "relation": "beats", "object": "Elasticsearch"},
                {"subject": "HNSW", "relation": "is", "object": "HNSW"},
            ],
        }
    )
    assert data["themes"] == ["Vector search", "Hybrid"]
    assert data["concepts"][1]["name"] == "HNSW"
    assert data["relations"] == [{"subject": "HNSW", "relation": "lives in", "object": "PostgreSQL"}]


def mention(doc, name, kind="concept", gloss="", aliases=()):
    return {"doc_id": doc, "title": doc.upper(), "name": name, "kind": kind, "gloss": gloss, "aliases": list(aliases)}


def test_concepts_fold_case_plural_and_alias():
    concepts = fold(
        [
            mention("a", "Embedding cache", gloss="Keeps vectors."),
            mention("b", "embedding caches"),
            mention("c", "EMBEDDING CACHE"),
            mention("a", "Large Language Model", kind="entity"),
            mention("b", "LLMs", kind="entity"),
            mention("c", "policy"),
            mention("b", "Policies", aliases=["rules"]),
            mention("a", "Rules"),
            mention("a", "analysis"),
            mention("b", "analyses"),
            mention("c", "news"),
        ]
    )
    by_name = {c.name: c for c in concepts}
    cache = by_name["Embedding cache"]
    assert [d["doc_id"] for d in cache.docs] == ["a", "b", "c"] and cache.gloss == "Keeps vectors."
    assert {d["doc_id"] for d in by_name["Large Language Model"].docs} == {"a", "b"}
    assert "LLMs" in by_name["Large Language Model"].aliases
    policy = next(c for c in concepts if "policy" in c.keys)
    assert {d["doc_id"] for d in policy.docs} == {"a", "b", "c"}, "plural and a given alias fold together"
    assert len([c for c in concepts if c.keys & {"analysis", "analyses"}]) == 1
    assert concepts[0].name == "Embedding cache", "most widely shared first"
    assert "news" in {c.name for c in concepts}


def test_extractive_enrichment_of_a_real_capture_reads_well():
    cap = parse_claude_share((DATA / "claude-share-snapshot.json").read_text(), "https://claude.ai/share/x")
    chunks = [ChunkText(c.heading_path, c.markdown) for c in chunk_markdown(cap.title, cap.markdown)]
    e = enrich_extractively(cap.title, chunks)
    data = e.data
    assert e.mode == "extractive" and e.calls == 0
    flat = " ".join(cap.markdown.split())
    assert data["summary"] and all(s.split(": ", 1)[-1] in flat for s in re.split(r"(?<=[.?!]) ", data["summary"]))
    assert "Split long sections on blank lines" in data["summary"]
    assert 3 <= len(data["themes"]) <= 5 and "Chunking markdown" in data["themes"]
    assert data["relations"] == [], "extractive mode invents no relations"
    names = [c["name"] for c in data["concepts"]]
    assert "Chunking markdown" in names and len(names) == len(set(n.lower() for n in names))
    assert all(c["kind"] in ("tag", "entity", "concept") and c["gloss"] for c in data["concepts"])
    assert not any("|" in c["name"] or "\n" in c["name"] for c in data["concepts"]), "no table cells"
    block = enrichment_markdown({"mode": "extractive", "model": None, "data": data, "missing": []}, [], None, None)
    assert "## Concept relations" not in block and "_None" not in block, "no section that holds nothing"
    assert "_Hub:_" not in block, "a doc outside any hub has no hub line"


def test_extractive_without_vectors_and_with_them_both_answer():
    body = "\n\n".join(
        f"## Section {i}\n\nThe cache stores vectors for topic {i}. Topic {i} needs the cache." for i in range(4)
    )
    chunks = [ChunkText(c.heading_path, c.markdown) for c in chunk_markdown("Cache notes", body)]
    plain = enrich_extractively("Cache notes", chunks).data["summary"]
    for c, v in zip(chunks, ([1.0, 0.0], [0.9, 0.1], [0.0, 1.0], [0.95, 0.05])):
        c.vector = v
    central = enrich_extractively("Cache notes", chunks).data["summary"]
    assert plain and central
    assert "topic 2" not in central, "the chunk far from the doc's centre is not summarised"


def test_extractive_reads_a_huge_doc_within_its_budget_from_the_central_chunks():
    """A 5 MB page read whole took 95 s of CPU: past `max_chars` only the chunks most central
    to the doc are read, and the enrichment says how many were left out."""
    off = "Gardening tips: water the tomato plants early and mulch the beds against weeds."
    on = "The cache stores vectors for the recall index and evicts the least used entries first."
    chunks = [
        ChunkText(f"Doc > S{i}", off if i % 4 == 0 else on, vector=[0.0, 1.0] if i % 4 == 0 else [1.0, 0.0])
        for i in range(40)
    ]
    whole = enrich_extractively("Notes", chunks)
    assert whole.note is None and "tomato" in json.dumps(whole.data)
    bounded = enrich_extractively("Notes", chunks, max_chars=10 * len(on))
    assert bounded.note == "30 of 40 sections left out by the extractive budget"
    assert "tomato" not in json.dumps(bounded.data), "the off-centre chunks are not read"
    assert "cache" in bounded.data["summary"].lower()


def test_budget_keeps_central_chunks_and_windows_fit():
    # seven chunks about one thing, three about another: the first seven are central
    chunks = [
        ChunkText(f"Doc > S{i}", "word " * 400, vector=[0.0, 1.0] if i in (0, 1, 3) else [1.0, 0.0]) for i in range(10)
    ]
    sections, left_out = select_sections(
        chunks, Budget(window_tokens=500, doc_tokens=1200, output_tokens=100, extract_chars=100_000)
    )
    assert left_out > 0 and sum(estimate_tokens(s) for s in sections) <= 1200
    assert [s.split("\n", 1)[0] for s in sections] == ["Doc > S2", "Doc > S4"], "the most central, in doc order"
    for w in windows(sections, 500):
        assert estimate_tokens(w) <= 500


def test_groups_come_from_communities_not_yet_bundled():
    rng = random.Random(1)

    def around(center):
        return [c + rng.uniform(-0.05, 0.05) for c in center]

    a, b, c = [1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0]
    vectors = {f"a{i}": around(a) for i in range(4)} | {f"b{i}": around(b) for i in range(3)}
    vectors |= {"c0": around(c), "c1": around(c)}  # a pair is not a group
    found = suggest.groups(suggest.vector_graph(vectors, k=3, min_similarity=0.5))
    assert sorted(map(sorted, found)) == [["a0", "a1", "a2", "a3"], ["b0", "b1", "b2"]]
    left = suggest.not_yet_bundled(found, [{"b0", "b1", "b2", "x"}])
    assert left == [sorted(["a0", "a1", "a2", "a3"])]
    assert suggest.not_yet_bundled(found, [{"a0", "a1", "a2"}]) == [["b0", "b1", "b2"]], "all but one bundled"
    assert suggest.signature(["a1", "a0"]) == suggest.signature(["a0", "a1"])
    concepts = {"x": {"pg", "vacuum", "index"}, "y": {"pg", "vacuum"}, "z": {"pg", "index", "vacuum"}, "w": {"bread"}}
    assert suggest.groups(suggest.concept_graph(concepts)) == [["x", "y", "z"]]


def test_compact_digest_of_a_100_doc_hub_fits_2000_tokens():
    rng = random.Random(3)
    words = [f"term{i}" for i in range(400)]
    mentions = []
    for d in range(100):
        doc = f"{d:010d}"
        for name in rng.sample(words, 12):
            mentions.append(
                {
                    "doc_id": doc,
                    "id": doc,
                    "title": f"Doc {d}",
                    "url": f"http://h/{doc}",
                    "name": name,
                    "kind": "concept",
                    "gloss": "A gloss that runs on for quite a few words, as glosses do.",
                    "aliases": [],
                }
            )
    concepts = fold(mentions)
    hub = {"slug": "big", "url": "http://h/hub/big"}
    compact = digest_markdown(
        hub, concepts, 100, compact=True, budget_tokens=2000, full_url="http://h/raw/hub/big?digest=1"
    )
    assert estimate_tokens(compact) <= 2000 and len(compact) / 4 <= 2000
    assert compact.rstrip().endswith("http://h/raw/hub/big?digest=1")
    shown = re.findall(r"^- (term\d+) \(concept\)", compact, re.M)
    assert shown == [c.name for c in concepts[: len(shown)]] and len(shown) > 30
    full = digest_markdown(hub, concepts, 100, compact=False)
    assert full.count("](http://h/") == sum(len(c.docs) for c in concepts)
    assert json.dumps(full)  # plain text


def test_wire_schema_keeps_a_property_named_description():
    from memorywiki.server.curation.contract import BUNDLE_NAME_SCHEMA, wire_schema

    wire = wire_schema(BUNDLE_NAME_SCHEMA)
    assert set(wire["properties"]) == {"title", "description"} and wire["required"] == ["title", "description"]
    assert "minLength" not in json.dumps(wire) and "description" not in wire["properties"]["title"]
