"""Full text in scripts written without spaces (server/store/functions/25_bm25_analyzer.sql):
a word inside a run of Han, Kana or Hangul is found, a question may mix scripts, the hub search
marks the matched characters, and text without those scripts gets exactly its English terms.
The upgrade of a data dir made before: tests/test_migrations.py.

Notes and questions: tests/data/cjk/notes.json (written for these tests).
"""

from __future__ import annotations

import json
from pathlib import Path

import psycopg
import pytest
from memorywiki.server.store import highlight

from tests.polling import wait_indexed
from tests.test_bm25 import add_doc, add_hub, connect, search

NOTES = json.loads((Path(__file__).parent / "data" / "cjk" / "notes.json").read_text(encoding="utf-8"))
HTML = {"Accept": "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"}


def terms(conn: psycopg.Connection, text: str) -> dict[str, int]:
    """The analyzer's terms of a text, each with how often it occurs."""
    return dict(
        conn.execute("SELECT lexeme, cardinality(positions) FROM unnest(bm25_tsvector(%s))", (text,)).fetchall()
    )


def add_notes(conn: psycopg.Connection, hub: int, notes: list[dict]) -> list[int]:
    return [add_doc(conn, f"note{i:06d}", hub, n["title"], [n["markdown"]])[0] for i, n in enumerate(notes)]


# ---------------------------------------------------------------- the analyzer


def test_runs_become_overlapping_bigrams_and_a_lone_character_a_unigram(database_url):
    with connect(database_url) as conn:
        assert terms(conn, "我们在东京") == {"我们": 1, "们在": 1, "在东": 1, "东京": 1}
        assert terms(conn, "东京东京") == {"东京": 2, "京东": 1}
        assert terms(conn, "猫，狗") == {"猫": 1, "狗": 1}  # punctuation ends a run
        assert terms(conn, "서울의 날씨") == {"서울": 1, "울의": 1, "날씨": 1}  # a space ends a run too
        assert terms(conn, "ジョン・スミス") == {"ジョ": 1, "ョン": 1, "スミ": 1, "ミス": 1}  # the middle dot separates
        # whatever is not Han, Kana or Hangul keeps its English terms, even glued to a run
        assert terms(conn, "Deploying部署 every Friday") == {"deploy": 1, "部署": 1, "everi": 1, "friday": 1}


@pytest.mark.parametrize(
    "text",
    [
        "We deploy with a blue-green switch; rollbacks keep the previous release warm.",
        "جمال أحمد حمزة خاشقجي صحفي وإعلامي سعودي",
        "Москва — столица России, город федерального значения.",
        "Crème brûlée, naïve café, Ångström, ﬁle, e\u0301t\u0301e\u0301",
        "emoji 🎉🚀 and full-width ＡＢＣ１２３ and ½ ™ ∑",
        "",
    ],
    ids=["english", "arabic", "cyrillic", "accents", "symbols", "empty"],
)
def test_text_without_those_scripts_gets_exactly_its_english_terms(database_url, text):
    with connect(database_url) as conn:
        assert conn.execute("SELECT bm25_tsvector(%s) = to_tsvector('english', %s)", (text, text)).fetchone()[0]


# ---------------------------------------------------------------- search


@pytest.mark.parametrize("language", ["zh", "ja", "ko"])
def test_a_word_inside_a_longer_run_is_found(database_url, language):
    with connect(database_url) as conn:
        hub = add_hub(conn, "notes")
        chunks = add_notes(conn, hub, NOTES[language])
        for note, chunk in zip(NOTES[language], chunks):
            hits = search(conn, hub, note["question"])
            assert hits and hits[0][0] == chunk, note["question"]


def test_a_question_mixing_scripts_finds_both_parts(database_url):
    with connect(database_url) as conn:
        hub = add_hub(conn, "notes")
        decorators, lists = add_notes(conn, hub, NOTES["mixed"])
        # "Python" glued to Chinese is still the English word, and the Chinese word is found
        assert [c for c, _ in search(conn, hub, "Python 装饰器")] == [decorators, lists]
        assert [c for c, _ in search(conn, hub, "Python lists")] == [lists, decorators]


def test_recall_answers_each_language_through_the_api(make_client):
    client = make_client(embedder="none")
    owner = {"Authorization": f"Bearer {client.post('/api/hubs', json={'slug': 'notes'}).json()['owner_token']}"}
    expected = {}
    for language in ("zh", "ja", "ko", "mixed"):
        for note in NOTES[language]:
            r = client.post(
                "/api/docs", headers=owner, json={"hub": "notes", "title": note["title"], "markdown": note["markdown"]}
            )
            assert r.status_code == 201, r.text
            expected[note["question"]] = r.json()["id"]
    for question, doc_id in expected.items():
        body = client.post("/api/hub/notes/recall", json={"question": question, "k": 3}).json()
        assert body["mode"] == "fulltext" and body["results"][0]["doc_id"] == doc_id, question


def test_a_real_chinese_share_page_is_found_by_words_inside_its_sentences(make_client):
    """The ChatGPT share page of the fixtures (real, in Chinese), captured as a file: each
    question's word sits inside a longer sentence of the section that answers it."""
    from memorywiki.server.capture.files import convert_file

    page = Path(__file__).parent / "data" / "fixtures" / "chatgpt-share" / "chatgpt-share-modern.html"
    captured = convert_file(page.read_bytes(), "share.html")
    client = make_client(embedder="none")
    owner = {"Authorization": f"Bearer {client.post('/api/hubs', json={'slug': 'notes'}).json()['owner_token']}"}
    share = client.post(
        "/api/docs", headers=owner, json={"hub": "notes", "title": captured.title, "markdown": captured.markdown}
    ).json()["id"]
    client.post(
        "/api/docs",
        headers=owner,
        json={"hub": "notes", "title": "Flowcharts", "markdown": "A flowchart in mermaid syntax, drawn by the docs."},
    )
    for question, words in [
        ("政府停摆是怎么回事", "部分政府停摆"),
        ("新加坡的航展", "航展将至"),
        ("mermaid 流程图", "mermaid流程图"),
    ]:
        top = client.post("/api/hub/notes/recall", json={"question": question, "k": 3}).json()["results"][0]
        assert top["doc_id"] == share and words in top["markdown"], question


def test_bundles_are_found_by_a_word_inside_their_title_without_vectors(make_client):
    client = make_client(embedder="none")
    owner = {"Authorization": f"Bearer {client.post('/api/hubs', json={'slug': 'notes'}).json()['owner_token']}"}
    doc = client.post("/api/docs", headers=owner, json={"hub": "notes", "title": "花园", "markdown": "玫瑰"}).json()
    for title in ("春季花园养护指南", "秋季厨房腌菜手册"):
        r = client.post("/api/bundles", headers=owner, json={"hub": "notes", "title": title, "doc_ids": [doc["id"]]})
        assert r.status_code == 201, r.text
    body = client.post("/api/hub/notes/recall", json={"question": "花园怎么养护", "level": "bundle", "k": 5}).json()
    # the other bundle holds the page "花园" too, so it matches, below the one whose own title does
    assert [b["title"] for b in body["results"]] == ["春季花园养护指南", "秋季厨房腌菜手册"]


# ---------------------------------------------------------------- highlighting


def _result_for(html: str, doc_id: str) -> str:
    results = html.split('<ol class="results">', 1)[1].split("</ol>", 1)[0]
    return next(li for li in results.split("</li>") if f'/{doc_id}"' in li)


def test_the_hub_search_marks_the_matched_characters(client):
    owner = {"Authorization": f"Bearer {client.post('/api/hubs', json={'slug': 'notes'}).json()['owner_token']}"}
    docs = {}
    for key, title, markdown in [
        ("zh", "花园", NOTES["zh"][0]["markdown"]),
        ("ja", "庭", NOTES["ja"][0]["markdown"]),
        ("ko", "정원", NOTES["ko"][0]["markdown"]),
        ("mixed", "笔记", NOTES["mixed"][0]["markdown"]),
        ("hostile", "注意", "请不要运行<script>alert(1)</script>这段危险脚本。"),
    ]:
        r = client.post("/api/docs", headers=owner, json={"hub": "notes", "title": title, "markdown": markdown})
        docs[key] = r.json()["id"]
    wait_indexed(client, list(docs.values()))

    def snippet(question: str, key: str) -> str:
        page = client.get("/hub/notes", params={"q": question}, headers=HTML)
        assert page.status_code == 200
        return _result_for(page.text, docs[key])

    assert "<mark>玫瑰</mark>花开得" in snippet("玫瑰什么时候开？", "zh")
    assert "庭の<mark>バラ</mark>が" in snippet("バラはいつ咲く？", "ja")
    assert "마당의 <mark>장미</mark>꽃이" in snippet("장미는 언제 피나요?", "ko")
    # both scripts of a mixed question; the English word found where it touches Chinese
    mixed = snippet("Python 装饰器", "mixed")
    assert "<mark>Python</mark>的<mark>装饰器</mark>可以" in mixed
    # text is escaped before the marks become HTML
    hostile = snippet("危险脚本", "hostile")
    assert "<mark>危险脚本</mark>" in hostile and "<script>" not in hostile


def test_a_snippet_is_cut_around_its_matches():
    s, e = "[", "]"
    text = "甲" * 300 + "代码评审" + "乙" * 300 + "代码评审" + "丙" * 300
    first, second = text.index("代码评审"), text.rindex("代码评审")
    spans = [(first, first + 2), (first + 1, first + 3), (first + 2, first + 4), (second, second + 2)]
    out = highlight.snippet(text, spans, s, e)
    assert out.count(highlight.DELIMITER) == 1  # two fragments, one per match
    assert "[代码评审]" in out and "[代码]评审" in out
    assert len(out) < 2 * (highlight.FRAGMENT_CHARS + highlight.LEAD_CHARS) + 20
    assert (
        highlight.snippet("没有匹配的文字" * 100, [], s, e) == ("没有匹配的文字" * 100)[: 2 * highlight.FRAGMENT_CHARS]
    )
    # English words stay whole at a fragment's edges
    words = " ".join(f"word{i}" for i in range(200)) + " 代码评审 " + " ".join(f"tail{i}" for i in range(200))
    at = words.index("代码")
    cut = highlight.snippet(words, [(at, at + 4)], s, e)
    assert cut.split()[0].startswith("word") and cut.split()[-1].startswith("tail")
    assert all(w.rstrip("[]").isalnum() or "代码评审" in w for w in cut.split())
