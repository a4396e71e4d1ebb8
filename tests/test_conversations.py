"""Conversations: the chat renderer dates turns, and a chat is chunked as windows of
turns, so recall hands back a question with its answer and the day it was said."""

from __future__ import annotations

from datetime import UTC, datetime

from memorywiki.formats.mdutil import render_turns

from tests.polling import wait_indexed
from tests.test_indexing import assert_vectors_current, create, db_rows, owner_hub


def at(day: int, hour: int = 12) -> datetime:
    return datetime(2023, 5, day, hour, tzinfo=UTC)


def test_dated_turns_get_a_heading_per_day_and_a_section_per_turn():
    md = render_turns(
        [
            ("User", "Which index for 100k vectors?", at(8, 9)),
            ("Assistant", "# HNSW\n\nBetter recall at the same latency.", at(8, 9)),
            ("Assistant", "Also set ef_search.", None),  # no time: the day it follows
            ("User", "And for a million?", at(9, 10)),
            ("Assistant", "  ", at(9, 10)),  # empty: no turn
        ]
    )
    assert md == (
        "## 8 May 2023\n\n"
        "### User\n\nWhich index for 100k vectors?\n\n"
        "### Assistant\n\n#### HNSW\n\nBetter recall at the same latency.\n\nAlso set ef_search.\n\n"
        "## 9 May 2023\n\n"
        "### User\n\nAnd for a million?\n"
    )


def test_turns_without_times_keep_the_plain_layout():
    md = render_turns([("User", "Hi"), ("User", "# Plan\n\nSteps"), ("Assistant", "Hello")])
    assert md == "## User\n\nHi\n\n### Plan\n\nSteps\n\n## Assistant\n\nHello\n"


CHAT = render_turns(
    [
        ("User", "I went to the pottery class yesterday and made a bowl.", at(8)),
        ("Assistant", "Lovely! What glaze did you choose?", at(8)),
        ("User", "A deep blue one, it came out glossy.", at(8)),
        ("Assistant", "Blue glazes often pool in the curves; that is the glossy look.", at(8)),
        ("User", "Next week I will try throwing a vase.", at(9)),
    ]
)


def test_a_chat_is_chunked_in_windows_of_turns_with_the_day_in_the_breadcrumb(client, settings):
    h = owner_hub(client)
    chat = create(client, h, title="Pottery", markdown=CHAT, source="chatgpt-export")
    note = create(client, h, title="Pottery note", markdown=CHAT, source="markdown")
    wait_indexed(client, [chat, note])
    chunks = {
        doc: [
            (p, m)
            for p, m in db_rows(
                settings, "SELECT heading_path, markdown FROM chunks WHERE doc_id = %s ORDER BY ordinal", (doc,)
            )
        ]
        for doc in (chat, note)
    }
    # the same markdown under another source: a chunk per turn, as any doc by its headings
    assert [p for p, _ in chunks[note]] == [
        "Pottery note > 8 May 2023 > User",
        "Pottery note > 8 May 2023 > Assistant",
    ] * 2 + ["Pottery note > 9 May 2023 > User"]
    # a chat: windows of turns under the day, each next to the turn that answers it
    assert {p for p, _ in chunks[chat]} == {"Pottery > 8 May 2023", "Pottery > 9 May 2023"}
    assert any("made a bowl" in m and "What glaze" in m for _, m in chunks[chat])
    assert all(m in CHAT for _, m in chunks[chat])
    assert_vectors_current(settings, chat)

    body = client.post("/api/hub/notes/recall", json={"question": "what glaze did the bowl get", "k": 3}).json()
    top = next(r for r in body["results"] if r["doc_id"] == chat)
    assert top["heading_path"] == "Pottery > 8 May 2023"
    assert "deep blue" in top["markdown"] and "What glaze" in top["markdown"]


def test_switching_a_doc_to_a_chat_source_rechunks_and_embeds_the_new_chunks(client, settings):
    h = owner_hub(client)
    doc = create(client, h, title="Pottery", markdown=CHAT, source="markdown")
    wait_indexed(client, [doc])
    before = db_rows(settings, "SELECT heading_path FROM chunks WHERE doc_id = %s ORDER BY ordinal", (doc,))
    token = h  # the hub owner may edit
    r = client.patch(f"/api/docs/{doc}", json={"source": "chat"}, headers=token)
    assert r.status_code == 200, r.text
    wait_indexed(client, [doc])
    after = db_rows(settings, "SELECT heading_path FROM chunks WHERE doc_id = %s ORDER BY ordinal", (doc,))
    assert len(after) < len(before) and {p for (p,) in after} == {"Pottery > 8 May 2023", "Pottery > 9 May 2023"}
    assert_vectors_current(settings, doc)  # the new windows got vectors, though the text did not change
