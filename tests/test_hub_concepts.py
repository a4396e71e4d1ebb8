"""A hub's concepts with no model: few and real, each linked to every page that names it.

The hub is tests/data/small-hub: five short notes, three titled "Postgres …". The extraction
listed 36 concepts for it, fragments among them ("Alan writes", "Node lost"), and its
"Postgres" reached two of the four pages that name Postgres.
"""

from __future__ import annotations

from memorywiki.server.curation.extractive import extract
from memorywiki.server.curation.terms import is_term, page_terms, term_key
from memorywiki.server.indexing.chunker import chunk_markdown

from tests.polling import wait_curated
from tests.small_hub import make_small_hub, pages

FRAGMENTS = ("Alan writes", "Node lost", "Autovacuum fell", "API opened", "API locally", "Twenty minutes")


def test_a_pages_concepts_are_noun_phrases():
    for title, markdown in pages():
        body = markdown.split("\n", 1)[1]
        names = [c["name"] for c in extract(title, [c.markdown for c in chunk_markdown(title, body)])["concepts"]]
        assert names, title
        assert not set(names) & set(FRAGMENTS), f"{title}: {names}"
    for fragment in FRAGMENTS:
        assert not is_term(fragment), fragment
    for phrase in ("Postgres", "staging database", "WAL archiving", "pgBackRest"):
        assert is_term(phrase), phrase


def test_a_pages_terms_are_what_it_names():
    terms = {
        t.key: t
        for t in page_terms("Postgres backups", ["Backups run with pgBackRest and a restore takes twenty minutes."])
    }
    assert terms["backup"].in_title and terms["backup"].count == 2, "plural and singular are one term"
    assert terms[term_key("Postgres")].in_title and not terms[term_key("pgBackRest")].in_title
    assert "twenty minute" not in terms and "minute" not in terms, "no quantities or dates"
    assert term_key("Policies") == term_key("policy") == "policy"


def test_the_hub_lists_few_concepts_each_linked_to_every_page_naming_it(make_client):
    client = make_client(embedder="none")
    owner, ids = make_small_hub(client)
    wait_curated(client)
    digest = client.get("/api/hub/small/digest").json()
    concepts = {c["name"]: {d["title"] for d in c["docs"]} for c in digest["concepts"]}
    assert 3 <= len(concepts) <= 10, concepts
    assert not set(concepts) & set(FRAGMENTS)
    postgres = {t for t in ids if "Postgres" in t} | {"Onboarding checklist"}
    assert concepts["Postgres"] == postgres, "every page naming Postgres, titles included"
    assert concepts["Node"] == {"Node upgrade", "Onboarding checklist"}
    for name, docs in concepts.items():
        assert len(docs) >= 2 or any(name.lower() in t.lower() for t in docs), f"{name}: one page, not in its title"
    # the hub page lists the same concepts
    page = client.get("/hub/small").text
    assert all(f"<strong>{name}</strong>" in page for name in concepts)

    # a page made private leaves every concept's links at once (row-level security on its terms)
    r = client.patch(f"/api/docs/{ids['Postgres backups']}", json={"is_draft": True}, headers=owner)
    assert r.status_code == 200, r.text
    after = {c["name"]: {d["title"] for d in c["docs"]} for c in client.get("/api/hub/small/digest").json()["concepts"]}
    assert after["Postgres"] == postgres - {"Postgres backups"}
    assert all("Postgres backups" not in docs for docs in after.values())
