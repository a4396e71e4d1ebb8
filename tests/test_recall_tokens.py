"""A token budget on recall: `max_tokens` keeps results in rank order while they fit, never a
cut chunk; each result says its `tokens` and the answer their total."""

from __future__ import annotations

import pytest
from memorywiki.server.embedding.tokens import estimate_tokens, estimate_tokens_by_piece

from tests.polling import wait_indexed

SECTIONS = [
    f"## Tide table {i}\n\n"
    + " ".join(f"On day {d} the tide at the harbour turns at {d % 12 + 1} o'clock" for d in range(i * 3 + 2))
    + "."
    for i in range(8)
]
NOTES = {
    "Harbour log": "\n\n".join(SECTIONS),
    "Lighthouse": "## Lamp\n\nThe harbour lighthouse lamp turns all night.",
    "港口": "## 潮汐\n\n港口的潮汐每天变化两次。",
}
QUESTION = "when does the tide turn at the harbour"


@pytest.fixture
def harbour(client):
    r = client.post("/api/hubs", json={"slug": "harbour"})
    headers = {"Authorization": f"Bearer {r.json()['owner_token']}"}
    ids = [
        client.post("/api/docs", json={"hub": "harbour", "title": t, "markdown": m}, headers=headers).json()["id"]
        for t, m in NOTES.items()
    ]
    wait_indexed(client, ids)
    return ids


def ask(client, **body) -> dict:
    r = client.post("/api/hub/harbour/recall", json={"question": QUESTION, **body})
    assert r.status_code == 200, r.text
    return r.json()


@pytest.mark.parametrize("level", ["chunk", "doc", "bundle"])
def test_every_result_carries_its_tokens_and_the_answer_their_sum(client, harbour, level):
    body = ask(client, level=level, k=10)
    assert "max_tokens" not in body
    assert body["tokens"] == sum(r["tokens"] for r in body["results"])
    assert all(r["tokens"] > 0 for r in body["results"])
    if level == "chunk":
        assert len(body["results"]) == 10 and body["tokens"] > 0


@pytest.mark.parametrize("level", ["chunk", "doc"])
def test_max_tokens_keeps_whole_results_in_rank_order_until_the_budget_is_spent(client, harbour, level):
    full = ask(client, level=level, k=10)["results"]
    assert len(full) >= 3
    sizes = [r["tokens"] for r in full]
    for budget in (sizes[0], sizes[0] + sizes[1] - 1, sizes[0] + sizes[1], sum(sizes) - 1, sum(sizes), 10**6):
        body = ask(client, level=level, k=10, max_tokens=budget)
        results = body["results"]
        assert results == full[: len(results)]  # the same results, whole, in the same order
        assert body["tokens"] == sum(r["tokens"] for r in results) <= budget == body["max_tokens"]
        if len(results) < len(full):  # it stopped because the next one would not fit
            assert body["tokens"] + full[len(results)]["tokens"] > budget
    assert ask(client, level=level, k=10, max_tokens=sizes[0] - 1)["results"] == []  # never a cut result
    assert ask(client, level=level, k=10, max_tokens=sizes[0])["results"] == full[:1]


def test_the_budget_applies_to_what_a_result_hands_a_model(client, harbour):
    """A chunk costs its breadcrumb and its markdown; Han characters count about one each."""
    for r in ask(client, k=10)["results"]:
        assert r["tokens"] == estimate_tokens(f"{r['heading_path']}\n\n{r['markdown']}")
    assert estimate_tokens("港口的潮汐每天变化两次") == 11
    assert estimate_tokens("the tide turns") == 3
    assert estimate_tokens("") == estimate_tokens("   \n ") == 0


def test_the_fast_count_is_the_rule_read_a_piece_at_a_time():
    """estimate_tokens (each character's class, in bytes) counts as the rule reads, a piece at a time."""
    import random

    rnd = random.Random(7)
    texts = [
        "",
        "the tide turns",
        "港口的潮汐每天变化两次 and the harbour_master's log (2026-12-01): 12.5 m!",
        "a" * 23 + " " + "b1" * 7 + "__" + "\x1c\x00\x7f\t",
        "Ünïcödé wörds, naïve café; ΑΒΓ αβγ — “quotes” 한국어 ｶﾀｶﾅ",
    ]
    texts += [
        "".join(
            rnd.choice("ab1_ .,;!\t\n\x1c\x7féß日한-–Αβ١\u00a0\u2028\u203f\U00020000\ud800")
            for _ in range(rnd.randint(0, 60))
        )
        for _ in range(3000)
    ]
    texts += ["".join(chr(rnd.randint(0, 127)) for _ in range(rnd.randint(0, 60))) for _ in range(3000)]
    for text in texts:
        assert estimate_tokens(text) == estimate_tokens_by_piece(text), repr(text)


@pytest.mark.parametrize("max_tokens", [0, -5, 10**8, "100", 1.5, True, [100], {"n": 1}])
def test_a_bad_budget_is_refused(client, harbour, max_tokens):
    r = client.post("/api/hub/harbour/recall", json={"question": QUESTION, "max_tokens": max_tokens})
    assert r.status_code == 400, r.text
    assert r.json()["error"]["code"] in ("invalid_field", "out_of_range")
    assert "max_tokens" in r.json()["error"]["message"]
