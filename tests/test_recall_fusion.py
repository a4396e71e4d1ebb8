"""Recall's fusions: the default (z-scores weighed by how clearly each ranker singles out its
best candidates) and the seeds' exact Reciprocal Rank Fusion, each named in the answer."""

from __future__ import annotations

import psycopg
import pytest

from tests.polling import wait_indexed

NOTES = {
    "Walruses": "# Tusks\n\nWalruses use their tusks to haul out onto ice floes.\n\n"
    "# Diet\n\nWalruses eat clams from the sea floor.\n",
    "Otters": "# Tools\n\nSea otters crack shellfish open with stones.\n\n"
    "# Fur\n\nOtter fur is the densest of any animal.\n",
    "Penguins": "# Huddles\n\nEmperor penguins huddle against the antarctic wind.\n\n"
    "# Diving\n\nPenguins dive deep hunting for krill and fish in the sea.\n",
    "Seals": "# Ice\n\nSeals rest on the sea ice between dives for fish.\n",
    "Xylophones": "# Bars\n\nA xylophone has wooden bars struck with mallets.\n",
}
QUESTION = "which animals hunt fish in the sea near the ice"


@pytest.fixture
def zoo(client):
    r = client.post("/api/hubs", json={"slug": "zoo"})
    headers = {"Authorization": f"Bearer {r.json()['owner_token']}"}
    ids = {}
    for title, markdown in NOTES.items():
        r = client.post("/api/docs", json={"title": title, "markdown": markdown, "hub": "zoo"}, headers=headers)
        assert r.status_code == 201, r.text
        ids[title] = r.json()["id"]
    wait_indexed(client, ids.values())
    return ids


def ask(client, **body) -> dict:
    r = client.post("/api/hub/zoo/recall", json={"question": QUESTION, **body})
    assert r.status_code == 200, r.text
    return r.json()


def rrf(*ranks) -> float:
    return sum(1.0 / (60 + r) for r in ranks if r is not None)


def bm25_ranks(database_url: str, question: str, n: int) -> list[int]:
    """Full text's own list: the hub's chunks in BM25 order, best first."""
    with psycopg.connect(database_url) as conn:
        hub = conn.execute("SELECT id FROM hubs WHERE slug = 'zoo'").fetchone()[0]
        rows = conn.execute("SELECT chunk_id FROM bm25_search(%s, %s, %s, 1.2, 0.75)", (hub, question, n)).fetchall()
    return [r[0] for r in rows]


def test_rrf_is_the_seeds_formula_over_each_rankers_top_k_times_4(client, zoo, database_url):
    k = 2
    body = ask(client, k=k, fusion="rrf")
    assert body["mode"] == "hybrid" and body["fusion"] == "rrf"
    # the two lists RRF reads: each ranker's top k*4, ranked as the ranker ranks them
    by_vector = [r["chunk_id"] for r in ask(client, k=4 * k, hybrid=False)["results"]]
    by_text = bm25_ranks(database_url, QUESTION, 4 * k)
    assert len(by_vector) == 4 * k and len(by_text) >= 2
    chunks = set(by_vector) | set(by_text)
    expected = {
        c: rrf(by_vector.index(c) + 1 if c in by_vector else None, by_text.index(c) + 1 if c in by_text else None)
        for c in chunks
    }
    order = sorted(chunks, key=lambda c: -expected[c])[:k]
    results = body["results"]
    assert [r["chunk_id"] for r in results] == order
    for r in results:
        assert r["vector_rank"] == (by_vector.index(r["chunk_id"]) + 1 if r["chunk_id"] in by_vector else None)
        assert r["fts_rank"] == (by_text.index(r["chunk_id"]) + 1 if r["chunk_id"] in by_text else None)
        assert r["rrf_score"] == r["score"] == rrf(r["vector_rank"], r["fts_rank"])  # exactly, not rounded


def test_rrf_at_doc_level_ranks_docs(client, zoo):
    body = ask(client, level="doc", k=3, fusion="rrf")
    assert body["fusion"] == "rrf"
    results = body["results"]
    assert len({r["doc_id"] for r in results}) == len(results) == 3
    for r in results:
        assert all(rank is None or 1 <= rank <= 12 for rank in (r["vector_rank"], r["fts_rank"]))
        assert r["rrf_score"] == r["score"] == rrf(r["vector_rank"], r["fts_rank"])
    # the vector ranks are the docs' places in vector search at doc level
    by_vector = [r["doc_id"] for r in ask(client, level="doc", k=5, hybrid=False, fusion="rrf")["results"]]
    for r in results:
        if r["vector_rank"] is not None:
            assert by_vector[r["vector_rank"] - 1] == r["doc_id"]
    assert [r["score"] for r in results] == sorted((r["score"] for r in results), reverse=True)


@pytest.mark.parametrize("level", ["chunk", "doc"])
def test_the_answer_names_its_fusion_and_rrf_score_means_rrf(client, zoo, level):
    default = ask(client, level=level)
    assert default["fusion"] == "zscore"
    assert ask(client, level=level, fusion="zscore")["results"] == default["results"]
    assert default["results"] and all("rrf_score" in r for r in ask(client, level=level, fusion="rrf")["results"])
    vector_only = ask(client, level=level, hybrid=False, fusion="rrf")
    assert vector_only["mode"] == "vector" and vector_only["fusion"] == "rrf"


@pytest.mark.parametrize("level", ["chunk", "doc"])
def test_every_hybrid_result_carries_rrf_score_whatever_fusion_ordered_it(client, zoo, level):
    """The seeds' contract: vector_rank, fts_rank and rrf_score on every hybrid result; under
    the default fusion the order follows `score`, and rrf_score is still RRF of the ranks."""
    default = ask(client, level=level, k=5)
    assert default["fusion"] == "zscore" and len(default["results"]) == 5
    for r in default["results"]:
        assert {"vector_rank", "fts_rank", "rrf_score", "score"} <= set(r)
        assert r["rrf_score"] == rrf(r["vector_rank"], r["fts_rank"])  # exactly, not rounded
    scores = [r["score"] for r in default["results"]]
    assert scores == sorted(scores, reverse=True)
    assert any(r["rrf_score"] != r["score"] for r in default["results"])  # not the order's score


@pytest.mark.parametrize("fusion", ["RRF", "combsum", "", 3, True, ["rrf"]])
def test_an_unknown_fusion_is_refused_naming_the_allowed_ones(client, zoo, fusion):
    r = client.post("/api/hub/zoo/recall", json={"question": QUESTION, "fusion": fusion})
    assert r.status_code == 400
    error = r.json()["error"]
    assert error["code"] in ("unknown_fusion", "invalid_field")
    if error["code"] == "unknown_fusion":
        assert "zscore" in error["message"] and "rrf" in error["message"]


# Arabic notes about cities. An English embedder reads no Arabic: every note written only in
# Arabic lands on one point, the question's, and only the note that also carries a year (digits it
# can read) lands elsewhere. Full text reads the Arabic and finds the one note on the Nile.
ARABIC_NOTES = {
    "القاهرة": "تقع مدينة القاهرة على ضفاف نهر النيل، وقد بنيت عام 969.",
    "دمشق": "مدينة دمشق من أقدم المدن المأهولة في العالم، وفيها الجامع الأموي.",
    "بغداد": "مدينة بغداد أسسها الخليفة المنصور على ضفاف نهر دجلة.",
    "الرباط": "مدينة الرباط عاصمة المغرب، وتطل على المحيط الأطلسي.",
    "تونس": "مدينة تونس قريبة من آثار قرطاج القديمة وميناء حلق الوادي.",
    "عمان": "مدينة عمان بنيت على سبعة جبال، وهي عاصمة الأردن.",
    "حلب": "مدينة حلب مشهورة بقلعتها وأسواقها القديمة المسقوفة.",
    "بيروت": "مدينة بيروت ميناء على البحر المتوسط وعاصمة لبنان.",
}
ARABIC_QUESTION = "أي مدينة تقع على ضفاف نهر النيل"


@pytest.mark.parametrize("level", ["chunk", "doc"])
def test_hybrid_leans_on_full_text_when_the_embedder_cannot_read_the_question(make_client, level):
    client = make_client(embedder_scripts="latin")  # the test embedder reads only [a-z0-9]
    r = client.post("/api/hubs", json={"slug": "cities"})
    headers = {"Authorization": f"Bearer {r.json()['owner_token']}"}
    ids = {}
    for title, markdown in ARABIC_NOTES.items():
        r = client.post("/api/docs", json={"title": title, "markdown": markdown, "hub": "cities"}, headers=headers)
        assert r.status_code == 201, r.text
        ids[title] = r.json()["id"]
    wait_indexed(client, ids.values())

    def ask_cities(question=ARABIC_QUESTION, **body):
        r = client.post("/api/hub/cities/recall", json={"question": question, "level": level, "k": 3, **body})
        assert r.status_code == 200, r.text
        return r.json()

    cairo = ids["القاهرة"]
    assert ask_cities(hybrid=False)["results"][0]["doc_id"] != cairo  # the vectors alone miss it
    hybrid = ask_cities()
    assert hybrid["mode"] == "hybrid" and "Latin" in hybrid["vector_note"]
    assert hybrid["results"][0]["doc_id"] == cairo and hybrid["results"][0]["fts_rank"] == 1
    # a question in the embedder's script is fused as usual
    latin = ask_cities("cairo 969")
    assert "vector_note" not in latin and latin["results"][0]["doc_id"] == cairo


@pytest.mark.parametrize(
    ("scripts", "question", "read"),
    [
        ("latin", "which city lies on the Nile", True),
        ("latin", "أي مدينة تقع على ضفاف نهر النيل", False),
        ("latin", "猫咪 阳光", False),
        ("latin", "고양이는 로켓", False),
        ("latin", "Café crème brûlée à Paris", True),
        ("latin", "what is 猫", True),  # mostly Latin letters
        ("latin", "2019 !!", True),  # no letters: nothing to be blind to
        ("all", "أي مدينة تقع على ضفاف نهر النيل", True),
    ],
)
def test_which_questions_an_embedder_reads(scripts, question, read):
    from memorywiki.server.embedding.scripts import reads

    assert reads(scripts, question) is read


def test_the_english_models_read_latin_and_any_other_model_all():
    from memorywiki.server.embedding.scripts import embedder_scripts

    assert embedder_scripts("auto", "local:all-MiniLM-L6-v2") == "latin"
    assert embedder_scripts("auto", "local:all-MiniLM-L6-v2-int8") == "latin"
    assert embedder_scripts("auto", "local:paraphrase-multilingual-MiniLM-L12-v2") == "all"
    assert embedder_scripts("auto", "openai:text-embedding-3-small") == "all"
    assert embedder_scripts("latin", "openai:text-embedding-3-small") == "latin"
