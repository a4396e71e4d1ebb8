"""The default fusion's rule for a short full-text pool (issue 37): a chunk full text did not
return scores 0, so a word only one chunk holds stands out of the zeros instead of counting the
flat 1 of a pool of one; and recall answers odd questions and odd hubs in rank order, never
with a 500."""

from __future__ import annotations

import math

import psycopg
import pytest

from tests.embedding_server import embed_text
from tests.polling import wait_indexed

SERVICES = ["checkout", "billing", "search", "login", "upload", "export", "mailer", "reports", "uploads"]
# 45 deploy notes written to look alike (more than the vectors' pool of 40 at k 5), each naming
# one commit; commits come in near-miss groups (two neighbouring characters swapped).
BASES = ["9f3ab27c", "41c0de77", "a6b2f019", "5d1e88ca", "c03f6b24", "7e9a41d3", "b8d2c57e", "2f6c0a91", "e4a7193b"]


def _twins(base: str) -> list[str]:
    out = [base]
    for i in range(len(base) - 1):
        chars = list(base)
        chars[i], chars[i + 1] = chars[i + 1], chars[i]
        twin = "".join(chars)
        if twin not in out and len(out) < 5:
            out.append(twin)
    return out


COMMITS = [c for base in BASES for c in _twins(base)][:45]
TARGET = COMMITS[0]
DECOY = COMMITS[1]  # its near miss


def note(commit: str, i: int) -> str:
    return (
        f"## Deploy\n\nCommit {commit} went out to the {SERVICES[i % len(SERVICES)]} service on a Tuesday. "
        "Shortly after, a retry loop flooded the queue; the platform team rolled back the last deploy."
    )


def make_hub(client, slug: str, pages: dict[str, str]) -> dict[str, str]:
    r = client.post("/api/hubs", json={"slug": slug})
    headers = {"Authorization": f"Bearer {r.json()['owner_token']}"}
    ids = {}
    for title, markdown in pages.items():
        r = client.post("/api/docs", json={"title": title, "markdown": markdown, "hub": slug}, headers=headers)
        assert r.status_code == 201, r.text
        ids[title] = r.json()["id"]
    wait_indexed(client, ids.values())
    return ids


@pytest.fixture
def deploys(client):
    assert len(set(COMMITS)) == 45
    return make_hub(client, "deploys", {f"Deploy notes {i}": note(c, i) for i, c in enumerate(COMMITS)})


def recall(client, slug: str, question: str, **body) -> dict:
    r = client.post(f"/api/hub/{slug}/recall", json={"question": question, **body})
    assert r.status_code == 200, r.text
    return r.json()


def in_rank_order(body: dict) -> bool:
    scores = [r["score"] for r in body["results"]]
    return scores == sorted(scores, reverse=True)


@pytest.mark.parametrize("level", ["chunk", "doc"])
def test_a_word_only_one_chunk_holds_outweighs_the_vectors_top(client, deploys, embedding_server, level):
    """The vectors put the identifier's near miss first (the question's vector is planted on
    it); full text finds one chunk. That lone candidate stands n / sqrt(n - 1) deviations above
    the zeros of the chunks that did not match (6.4 in a pool of 40), above any vector z-score
    a pool of 40 allows (at most sqrt(39) = 6.2), so the identifier's note comes first."""
    decoy_index = COMMITS.index(DECOY)
    embedding_server.plant({TARGET: embed_text(note(DECOY, decoy_index))})
    try:
        vectors = recall(client, "deploys", TARGET, hybrid=False, level=level)
        assert vectors["results"][0]["doc_id"] == deploys[f"Deploy notes {decoy_index}"]
        body = recall(client, "deploys", TARGET, level=level)
    finally:
        embedding_server.plant({})
    assert body["mode"] == "hybrid" and body["fusion"] == "zscore"
    top = body["results"][0]
    assert top["doc_id"] == deploys["Deploy notes 0"] and top["fts_rank"] == 1
    assert sum(r["fts_rank"] is not None for r in body["results"]) == 1  # full text's pool of one
    assert top["score"] >= 40 / math.sqrt(39) - 1e-6 > math.sqrt(39)
    assert in_rank_order(body)


def test_an_identifier_among_look_alike_decoys_comes_first_in_every_form(client, deploys):
    for question in (TARGET, f"deploy commit {TARGET}", f"which deploy shipped commit {TARGET} and what went wrong"):
        body = recall(client, "deploys", question, k=3)
        assert body["results"][0]["doc_id"] == deploys["Deploy notes 0"], question
        assert in_rank_order(body)


def _z(pool: dict[int, float]) -> dict[int, float]:
    values = list(pool.values())
    mean = sum(values) / len(values)
    sd = math.sqrt(sum((v - mean) ** 2 for v in values) / len(values))
    low = min(values)
    return {c: (v - low) / sd if sd > 0 else 1.0 for c, v in pool.items()}


def test_a_full_pool_is_normalised_as_before(client, deploys, database_url):
    """When full text fills its 40 candidate slots (the usual case on prose), each ranker's
    z-score is (score - the pool's floor) / the pool's deviation, as it always was."""
    question = "checkout billing search login deploy"
    with psycopg.connect(database_url) as conn:
        hub = conn.execute("SELECT id FROM hubs WHERE slug = 'deploys'").fetchone()[0]
        fts = dict(
            conn.execute("SELECT chunk_id, score FROM bm25_search(%s, %s, 40, 1.2, 0.75)", (hub, question)).fetchall()
        )
    assert len(fts) == 40  # a full pool
    vec = {r["chunk_id"]: r["similarity"] for r in recall(client, "deploys", question, hybrid=False, k=40)["results"]}
    zv, zf = _z(vec), _z(fts)
    expected = {c: zv.get(c, 0.0) + zf.get(c, 0.0) for c in set(vec) | set(fts)}
    body = recall(client, "deploys", question, k=10)
    for r in body["results"]:
        assert r["score"] == pytest.approx(expected[r["chunk_id"]], abs=1e-4)  # similarities come rounded
    assert [r["score"] for r in body["results"]] == pytest.approx(
        sorted(expected.values(), reverse=True)[:10], abs=1e-4
    )


def test_a_pool_of_equal_scores_counts_one_whatever_the_rounding(client, deploys):
    """Every note holds these words equally: their BM25 differs only in the last bits, which
    must not read as deviations (each counts 1, so the vectors order them)."""
    question = "deploy commit retry queue platform"
    vec = {r["chunk_id"]: r["similarity"] for r in recall(client, "deploys", question, hybrid=False, k=40)["results"]}
    zv = _z(vec)
    body = recall(client, "deploys", question, k=10)  # pools of 40: the 40 notes of the same length
    assert len({r["fts_score"] for r in body["results"] if r["fts_score"] is not None}) == 1
    in_both = [r for r in body["results"] if r["fts_rank"] is not None and r["vector_rank"] is not None]
    assert len(in_both) >= 5
    for r in in_both:  # full text's z is 1 for each: the sum is the vectors' z plus 1
        assert r["score"] == pytest.approx(zv[r["chunk_id"]] + 1, abs=1e-4)


LONG = " ".join(["deploy commit rolled back queue"] * 800)[:4000]


@pytest.mark.parametrize(
    "question",
    [
        TARGET,  # only an identifier
        "?!...;:,--//",  # only punctuation
        "!!!",
        LONG,  # as long as a question may be
        "deploy القاهرة 猫咪 rollback",  # scripts at once
        "commit 9f3ab27c 的 部署 и откат",
    ],
)
def test_odd_questions_get_an_answer_in_rank_order(client, deploys, question):
    for level in ("chunk", "doc"):
        for fusion in ("zscore", "rrf"):
            body = recall(client, "deploys", question, level=level, fusion=fusion, k=7)
            assert in_rank_order(body), (question, level, fusion)
            for r in body["results"]:
                assert r["rrf_score"] == sum(1.0 / (60 + x) for x in (r["vector_rank"], r["fts_rank"]) if x is not None)


def test_a_question_of_twenty_thousand_characters_is_refused_by_name(client, deploys):
    r = client.post("/api/hub/deploys/recall", json={"question": "deploy " * 2858})  # 20,006 characters
    assert r.status_code == 400 and r.json()["error"]["code"] == "question_too_long"


def test_a_hub_of_one_page(client):
    make_hub(client, "lonely", {"Only page": "## Notes\n\nThe one page of this hub names INC-20417."})
    for question in ("INC-20417", "notes", "nothing in common", "?!"):
        for level in ("chunk", "doc"):
            body = recall(client, "lonely", question, level=level)
            assert in_rank_order(body) and len(body["results"]) <= 1
    body = recall(client, "lonely", "INC-20417")
    assert body["results"] and body["results"][0]["fts_rank"] == 1


def test_a_hub_where_every_chunk_holds_the_questions_words(client):
    pages = {f"Same {i}": f"## Part {i}\n\nrollback queue deploy rollback queue deploy {i}" for i in range(12)}
    make_hub(client, "same", pages)
    for level in ("chunk", "doc"):
        for fusion in ("zscore", "rrf"):
            body = recall(client, "same", "rollback queue deploy", level=level, fusion=fusion, k=12)
            assert len(body["results"]) == 12 and in_rank_order(body)
            assert all(r["fts_rank"] is not None for r in body["results"])


@pytest.mark.parametrize(
    ("question", "found"),
    [
        ("INC-20417", ["inc-20417"]),
        ("what happened during INC-20417?", ["inc-20417"]),
        ("what does ERR_RATE_6684 mean", ["err_rate_6684"]),
        ("commit 9f3ab27c and 12041788", ["9f3ab27c", "12041788"]),
        ("(req-9521-av62)", ["req-9521-av62"]),
        ("IL-6 levels and BRCA1", ["il-6", "brca1"]),
        ("what did Caroline do in May 2023", []),  # a year is a number, not an identifier
        ("3.5% of 10,000,000 people, -12 degrees", []),
        ("p53 X1", []),  # too short to single anything out
        ("met on Aug 15th, 1/2000 of them", []),  # an ordinal, a fraction
        ("anti-interleukin-2 and 0-dimensional", []),  # words joined to a number
        ("1990년에 무슨 일이", []),  # a year in Korean
        ("1960s and 1972-1979", []),  # a decade, a range
        ("MW_FLUSH_INTERVAL_MS3 on RX-220-B1", ["mw_flush_interval_ms3", "rx-220-b1"]),
        ("?!...;", []),
        ("", []),
    ],
)
def test_which_words_are_identifiers(question, found):
    from memorywiki.server.store.identifiers import identifiers

    assert identifiers(question) == found


def test_an_identifier_is_held_whole_never_as_part_of_a_longer_one():
    from memorywiki.server.store.identifiers import held

    text = "During INC-20417 the checkout failed; see ERR_RATE_6684 (and req-9521-av62)."
    assert held("inc-20417", text) and held("err_rate_6684", text) and held("req-9521-av62", text)
    assert not held("inc-2041", text) and not held("6684", text) and not held("err_rate_668", text)
    assert held("cd4+", "CD4+ T cells") and not held("cd4+", "CD4 T cells")


# Incident notes alike but for the incident's number; the numbers come in near misses, and
# PostgreSQL reads each as `inc` and a signed number, so full text barely tells them apart from
# the words around them while vectors cannot at all.
INCIDENTS = ["INC-20417", "INC-20471", "INC-24017", "INC-02417", "INC-20147", "INC-21407"] * 1


def test_an_identifier_held_whole_outweighs_near_misses_and_the_vectors_pick(client, embedding_server):
    pages = {
        f"Incident notes {i}": (
            f"## What happened\n\nDuring {inc} the {SERVICES[i]} service returned errors for {10 + i} minutes; "
            "the platform team rolled back the last deploy."
        )
        for i, inc in enumerate(INCIDENTS)
    }
    ids = make_hub(client, "incidents", pages)
    question = "incident INC-20417 errors"
    embedding_server.plant({question: embed_text(pages["Incident notes 1"])})  # vectors pick the near miss
    try:
        assert recall(client, "incidents", question, hybrid=False)["results"][0]["doc_id"] == ids["Incident notes 1"]
        body = recall(client, "incidents", question)
    finally:
        embedding_server.plant({})
    assert body["results"][0]["doc_id"] == ids["Incident notes 0"]
    assert in_rank_order(body)


def test_an_identifier_full_texts_top_does_not_hold_is_left_to_the_rankers(client):
    """An alias: the question says FoxO3a, the answer FOXO3. Full text puts the answer first, so
    the identifier is not what the question turns on, and the note that merely lists FoxO3a gets
    no identifier's weight: it ranks as the two rankers rank it."""
    pages = {
        "Neurons": "## Oxidative stress\n\nReactive oxygen species activate FOXO3 in neuronal death; FOXO3 "
        "activation is mediated by oxidative stress in neurons.",
        "Gene list": "## Genes\n\nGenes on the panel: FoxO3a, Sirt1, Tp53 and Bcl2 among others.",
        **{
            f"Filler {i}": f"## Notes {i}\n\nThe {SERVICES[i % len(SERVICES)]} service was deployed again."
            for i in range(10)
        },
    }
    ids = make_hub(client, "alias", pages)
    body = recall(client, "alias", "FoxO3a activation in neuronal death is mediated by reactive oxygen species")
    assert body["results"][0]["doc_id"] == ids["Neurons"] and body["results"][0]["fts_rank"] == 1
    gene_list = [r for r in body["results"] if r["doc_id"] == ids["Gene list"]]
    assert not gene_list or gene_list[0]["score"] < 12 / math.sqrt(11)  # no lone holder's weight
