"""The LongMemEval bench's own code, offline on a tiny LongMemEval-shaped fixture: LongMemEval's
retrieval metrics, the stratified sample, and the haystack as a ChatGPT export read back by the
export reader with every evidence turn placed in its page."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from bench.suite import longmemeval as lme

DATA = Path(__file__).parent / "data" / "longmemeval"


def test_load_reads_one_file_per_question():
    qs = lme.load(DATA)
    assert sorted(q["question_id"] for q in qs) == ["q-multi-1", "q-user-1", "q-user-1_abs"]


def test_session_metrics_as_longmemeval_defines_them():
    corpus = ["a", "b", "c", "d", "e", "f"]
    m = lme.session_metrics(["c", "a", "d", "b", "e", "f"], {"a", "b"}, corpus, ks=(1, 2, 5))
    assert (m["recall_any@1"], m["recall_all@1"]) == (0.0, 0.0)
    assert (m["recall_any@2"], m["recall_all@2"]) == (1.0, 0.0)
    assert (m["recall_any@5"], m["recall_all@5"]) == (1.0, 1.0)
    # LongMemEval's DCG: rel_1 + sum_{i>=2} rel_i / log2(i); ideal [1, 1, 0...] -> 2
    assert m["ndcg_any@2"] == pytest.approx((0 + 1 / math.log2(2)) / 2)
    assert m["ndcg_any@5"] == pytest.approx((1 / math.log2(2) + 1 / math.log2(4)) / 2)
    perfect = lme.session_metrics(["a", "b", "c"], {"a", "b"}, corpus, ks=(10,))
    assert perfect["ndcg_any@10"] == pytest.approx(1.0)
    assert lme.session_metrics([], {"a"}, corpus, ks=(5,))["recall_any@5"] == 0.0


def test_sample_is_stratified_seeded_and_nested():
    qs = [
        {"question_id": f"{t}-{i}", "question_type": t, "haystack_sessions": []}
        for t, n in (("a", 60), ("b", 30), ("c", 10))
        for i in range(n)
    ] + [{"question_id": "x_abs", "question_type": "a", "haystack_sessions": []}]
    ten = lme.sample(qs, 10)
    assert [q["question_type"] for q in ten].count("a") == 6
    assert [q["question_type"] for q in ten].count("c") == 1
    assert ten == lme.sample(qs, 10)  # seeded
    assert {q["question_id"] for q in ten} <= {q["question_id"] for q in lme.sample(qs, 20)}
    assert len(lme.sample(qs, 0)) == 100  # all but the abstention question
    assert lme.sample(qs, 10, seed=1) != ten


def test_haystack_as_a_chatgpt_export_places_every_evidence_turn(tmp_path):
    from memorywiki.formats import iter_chatgpt_export

    q = next(q for q in lme.load(DATA) if q["question_id"] == "q-user-1")
    convs = lme.chatgpt_export(q)
    path = tmp_path / "conversations.json"
    path.write_text(json.dumps(convs))
    captured = list(iter_chatgpt_export(path))
    assert [c.external_id for c in captured] == [f"chatgpt:{s}" for s in q["haystack_session_ids"]]
    pages = lme.pages(q, convs)
    assert [pages[s].markdown for s in q["haystack_session_ids"]] == [c.markdown for c in captured]
    page = pages["answer_a1"]
    assert "10 May 2023" in page.markdown  # the session's date, as the reader renders it
    assert [i for i, *_ in page.turns] == [0, 1]
    # a chunk cut from the page: the turns it covers; a piece of a long turn without its heading
    assert page.turns_in(page.markdown) == {0, 1}
    evidence = lme.evidence_turns(q)
    assert evidence == {("answer_a1", 0)}
    by_doc = {"d2": page}
    hit = lme.chunk_metrics(
        [{"doc_id": "d2", "heading_path": "t", "markdown": "### User\n\nI just bought a blue kayak"}],
        by_doc,
        evidence,
        lambda text: len(text.split()),
    )
    assert hit["turn_any"] == 1.0 and hit["turn_recall"] == 1.0 and hit["unplaced"] == 0
    miss = lme.chunk_metrics(
        [{"doc_id": "d2", "heading_path": "t", "markdown": "not in the page"}], by_doc, evidence, len
    )
    assert miss["turn_any"] == 0.0 and miss["unplaced"] == 1
    # headings inside a turn are demoted by the renderer: the turn is still placed
    first = pages["s1"]
    assert [i for i, *_ in first.turns] == [0, 1]


def test_missing_data_says_where_to_get_it(tmp_path, capsys):
    assert lme.main(["--data", str(tmp_path), "--pg-dir", str(tmp_path / "pg")]) == 2
    assert "hussainzs/Memoria" in capsys.readouterr().err
