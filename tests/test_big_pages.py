"""Hostile pages through the API: saved at once, cut into chunks no longer than the maximum,
found by recall, never a 500 or a lost page."""

from __future__ import annotations

import psycopg
import pytest
from markdown_it import MarkdownIt
from memorywiki.server.indexing.chunker import ChunkSize

from tests.polling import wait_indexed

MAX = ChunkSize().max_chars


def owner(client) -> dict:
    r = client.post("/api/hubs", json={"slug": "big"})
    assert r.status_code == 201, r.text
    return {"Authorization": f"Bearer {r.json()['owner_token']}"}


def save(client, headers, title: str, markdown: str) -> str:
    r = client.post("/api/docs", json={"hub": "big", "title": title, "markdown": markdown}, headers=headers)
    assert r.status_code == 201, r.text[:300]
    doc_id = r.json()["id"]
    r = client.get(f"/api/docs/{doc_id}")
    assert r.status_code == 200 and r.json()["markdown"] == markdown  # the page, whole, as sent
    return doc_id


def chunks(settings, doc_id: str) -> list[str]:
    with psycopg.connect(settings.database_url) as conn:
        return [
            m
            for (m,) in conn.execute(
                "SELECT markdown FROM chunks WHERE doc_id = %s ORDER BY ordinal", (doc_id,)
            ).fetchall()
        ]


def found(make_client, question: str) -> str:
    """The best chunk full text gives (a server with no embedder answers from full text only)."""
    r = make_client(embedder="none", in_process_worker=False).post(
        "/api/hub/big/recall", json={"question": question, "k": 3}
    )
    assert r.status_code == 200 and r.json()["mode"] == "fulltext", r.text
    return r.json()["results"][0]["markdown"]


def indexed(client, settings, doc_id: str) -> bool:
    """Every chunk of the doc has its vector."""
    wait_indexed(client, [doc_id], timeout=300)
    with psycopg.connect(settings.database_url) as conn:
        return conn.execute(
            "SELECT bool_and(embedding IS NOT NULL) FROM chunks WHERE doc_id = %s", (doc_id,)
        ).fetchone()[0]


def test_a_5_mb_page_of_one_line(make_client, settings):
    client = make_client(in_process_worker=False)  # full text is current at commit; vectors would take minutes
    marker = "the seashell Pelagia hides here"
    line = " ".join(f"grain{i % 997} of sand number {i} drifts" for i in range(200_000))
    line = line[: line.rindex(" ", 0, 5_000_000 - len(marker))] + " " + marker
    assert len(line) <= 5_000_000 and "\n" not in line
    doc_id = save(client, owner(client), "Dunes", line)
    pieces = chunks(settings, doc_id)
    assert len(pieces) >= len(line) // MAX and max(map(len, pieces)) <= MAX
    assert " ".join(pieces) == line  # cut between words, nothing lost or doubled
    assert "Pelagia" in found(make_client, "seashell Pelagia")


def test_a_10000_row_table(client, make_client, settings):
    header = "| id | animal | note |\n| ---: | --- | --- |"
    rows = [f"| {i} | animal {i} | seen in pen {i % 50} |" for i in range(10_000)]
    rows[9_876] = "| 9876 | okapi Zuberi | the only one |"
    doc_id = save(client, owner(client), "Census", "## Census\n\n" + header + "\n" + "\n".join(rows) + "\n")
    pieces = chunks(settings, doc_id)
    assert max(map(len, pieces)) <= MAX
    assert all(p.startswith("## Census\n\n" + header + "\n") for p in pieces)  # every piece a table
    assert [r for p in pieces for r in p.split("\n")[4:]] == rows
    assert "okapi Zuberi" in found(make_client, "okapi Zuberi")
    assert indexed(client, settings, doc_id)


def test_a_50000_character_code_fence(client, make_client, settings):
    code = "\n".join(f"def step_{i}(x):\n    return x * {i}  # plain step" for i in range(1_000))
    code = code.replace("def step_777(x):", "def quokka_777(x):")
    fence = "```python\n" + code[: 50_000 - 14] + "\n```"
    assert len(fence) <= 50_000
    doc_id = save(client, owner(client), "Steps", fence)
    pieces = chunks(settings, doc_id)
    assert len(pieces) >= len(fence) // MAX and max(map(len, pieces)) <= MAX
    for p in pieces:  # each piece one whole python fence
        assert [t.info for t in MarkdownIt("commonmark").parse(p) if t.type == "fence"] == ["python"]
    assert "quokka_777" in found(make_client, "quokka_777")
    assert indexed(client, settings, doc_id)


@pytest.mark.parametrize("glue", [" ", ""])
def test_mixed_scripts_with_combining_marks_and_emoji(client, make_client, settings, glue):
    parts = [
        "Ångström naïve café",
        "e\u0301te\u0301 n\u0303",
        "北京是中国的首都",
        "東京は日本の首都です",
        "한국어 문장입니다",
        "مرحبا بالعالم",
        "नमस्ते दुनिया",
        "👨\u200d👩\u200d👧\u200d👦 🇫🇷 👍🏽",
        "Ελληνικά",
        "Кириллица",
    ]
    if not glue:  # one run with no space at all: cut between graphemes
        parts = [part.replace(" ", "") for part in parts]
    text = glue.join(parts[i % len(parts)] for i in range(3_000)) + " zanzibar marker"
    doc_id = save(client, owner(client), "Scripts", text)
    pieces = chunks(settings, doc_id)
    assert len(pieces) > 10 and max(map(len, pieces)) <= MAX
    assert "".join(pieces).replace(" ", "") == text.replace(" ", "")  # every character kept, in order
    joined = {"\u0301", "\u0303", "\u200d", "\U0001f3fd"}
    assert not any(p[0] in joined for p in pieces)  # no accent, joiner or skin tone torn from its letter
    assert "zanzibar marker" in found(make_client, "zanzibar marker")
    assert indexed(client, settings, doc_id)
