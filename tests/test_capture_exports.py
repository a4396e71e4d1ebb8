"""Chat-history exports: ChatGPT and claude.ai, zipped or bare, streamed; hostile archives."""

from __future__ import annotations

import copy
import gc
import json
import tracemalloc
import zipfile
from pathlib import Path

import pytest
from memorywiki.formats import (
    FormatError,
    count_conversations,
    export_kind,
    iter_chatgpt_export,
    iter_claude_export,
)
from memorywiki.formats.ziputil import ZipLimits

FIXTURES = Path(__file__).parent / "data" / "fixtures"
DATA = Path(__file__).parent / "data" / "capture"
CHATGPT_CONV = json.loads((FIXTURES / "chatgpt-export" / "native-conversation-v1.json").read_text())
CLAUDE_CONV = json.loads((FIXTURES / "claude-export" / "native-rich-blocks-v1.json").read_text())


def _zip(path: Path, entries: dict[str, bytes | str]) -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, body in entries.items():
            zf.writestr(name, body)
    return path


def _chatgpt_conv(i: int, turns: int = 6) -> dict:
    """A ChatGPT export conversation with a linear chain of user/assistant turns."""
    mapping = {"root": {"id": "root", "message": None, "parent": None, "children": ["m0"]}}
    prev = "root"
    for t in range(turns):
        nid = f"m{t}"
        role = "user" if t % 2 == 0 else "assistant"
        text = (
            f"Question {t} of conversation {i}: how do I tune HNSW ef_search for recall?"
            if role == "user"
            else f"Answer {t} for conversation {i}.\n\n```sql\nSET hnsw.ef_search = {40 + t};\n```\n\n"
            "| ef_search | recall |\n|---|---|\n| 40 | 0.95 |\n| 100 | 0.99 |\n\n" + "Filler sentence for size. " * 40
        )
        mapping[prev]["children"] = [nid]
        mapping[nid] = {
            "id": nid,
            "parent": prev,
            "children": [],
            "message": {
                "id": nid,
                "author": {"role": role, "name": None, "metadata": {}},
                "create_time": 1760000000.0 + t,
                "content": {"content_type": "text", "parts": [text]},
                "status": "finished_successfully",
                "weight": 1.0,
                "metadata": {},
                "recipient": "all",
            },
        }
        prev = nid
    return {
        "id": f"conv-{i:05d}",
        "conversation_id": f"conv-{i:05d}",
        "title": f"Tuning HNSW #{i}",
        "create_time": 1760000000.0 + i,
        "update_time": 1760000100.0 + i,
        "current_node": prev,
        "mapping": mapping,
    }


# ------------------------------------------------------------------ ChatGPT


def test_chatgpt_fixture_active_branch_wins(tmp_path):
    caps = list(iter_chatgpt_export(FIXTURES / "chatgpt-export" / "native-conversation-v1.json"))
    assert len(caps) == 1
    cap = caps[0]
    assert cap.source == "chatgpt-export"
    assert cap.external_id == "chatgpt:chatgpt-fixture-conversation"
    assert cap.title == "Privacy-safe ChatGPT native fixture"
    assert cap.meta["created_at"] == "2026-07-16T01:15:00+00:00"
    md = cap.markdown
    # exports date every message: a heading per day, a section per turn under it
    assert [ln for ln in md.splitlines() if ln.startswith("#")] == ["## 16 July 2026", "### User", "### Assistant"]
    assert "Analyze the attached fixture and create an artifact." in md
    assert "Final answer. [Download artifact](sandbox:/mnt/data/fixture-result.zip)" in md
    assert "Superseded answer." not in md  # inactive branch absent
    for noise in (
        "Privacy-safe reasoning trace.",
        "fixture evidence",
        "Privacy-safe tool result.",
        "Privacy-safe reasoning summary.",
        "Privacy-safe fixture profile.",
        "Preserve structured provider evidence.",
    ):
        assert noise not in md


def test_chatgpt_zip_sharded_in_order(tmp_path):
    other = copy.deepcopy(CHATGPT_CONV)
    other["id"] = other["conversation_id"] = "second"
    other["title"] = None  # null titles happen: fall back to the first user line
    path = _zip(
        tmp_path / "export.zip",
        {
            "conversations-001.json": json.dumps([other]),
            "conversations-000.json": json.dumps([CHATGPT_CONV, _chatgpt_conv(7)]),
            "chat.html": "<html></html>",
            "user.json": "{}",
            "file-abc.png": b"\x89PNG",
        },
    )
    caps = list(iter_chatgpt_export(path))
    assert [c.external_id for c in caps] == [
        "chatgpt:chatgpt-fixture-conversation",
        "chatgpt:conv-00007",
        "chatgpt:second",
    ]
    assert caps[2].title == "Analyze the attached fixture and create an artifact."
    assert caps[1].markdown.count("## User") == 3 and "SET hnsw.ef_search = 41;" in caps[1].markdown
    assert count_conversations(path) == 3
    assert export_kind(path) == "chatgpt"


def test_chatgpt_legacy_single_file_in_folder_zip(tmp_path):
    path = _zip(tmp_path / "old.zip", {"export/conversations.json": json.dumps([_chatgpt_conv(1)])})
    assert [c.external_id for c in iter_chatgpt_export(path)] == ["chatgpt:conv-00001"]


def test_a_lone_surrogate_midway_keeps_every_conversation_in_order(tmp_path):
    """The C parser stops on "\\udc00" (a broken emoji); the read goes on from there, and the
    conversations come out once each, in order, with the unstorable characters dropped."""
    convs = [_chatgpt_conv(i) for i in range(3)]
    convs[1]["title"] = "Broken \udc00emoji and a \x00 NUL"
    bare = tmp_path / "conversations.json"
    bare.write_text(json.dumps(convs))  # ASCII-escaped: the file holds the escapes, as exports do
    got = list(iter_chatgpt_export(bare))
    assert [c.external_id for c in got] == ["chatgpt:conv-00000", "chatgpt:conv-00001", "chatgpt:conv-00002"]
    assert got[1].title == "Broken emoji and a  NUL"
    assert count_conversations(bare) == 3


def test_chatgpt_skips_empty_conversations(tmp_path):
    empty = {
        "id": "empty",
        "title": "Nothing",
        "mapping": {"r": {"id": "r", "message": None, "parent": None, "children": []}},
        "current_node": "r",
    }
    bare = tmp_path / "conversations.json"
    bare.write_text(json.dumps([empty, _chatgpt_conv(2), {"not": "a conversation"}]))
    skipped: list = []
    caps = list(iter_chatgpt_export(bare, skipped=skipped))
    assert [c.external_id for c in caps] == ["chatgpt:conv-00002"]
    assert [s["reason"] for s in skipped] == ["no visible messages", "not a ChatGPT conversation"]
    assert count_conversations(bare) == 3


def test_chatgpt_truncated_json_keeps_earlier_conversations(tmp_path):
    bare = tmp_path / "conversations.json"
    full = json.dumps([_chatgpt_conv(1), _chatgpt_conv(2)])
    bare.write_text(full[: len(full) - 200])
    got = []
    with pytest.raises(FormatError) as err:
        for cap in iter_chatgpt_export(bare):
            got.append(cap.external_id)
    assert got == ["chatgpt:conv-00001"]
    assert err.value.code == "bad_json"


# ------------------------------------------------------------------ Claude


def test_claude_fixture_rich_blocks():
    caps = list(iter_claude_export(FIXTURES / "claude-export" / "native-rich-blocks-v1.json"))
    assert len(caps) == 1
    cap = caps[0]
    assert cap.source == "claude-export" and cap.external_id == "claude:native-rich-blocks"
    assert cap.title == "Synthetic canonical blocks"
    md = cap.markdown
    assert md.startswith("## 1 January 2026\n\n### Assistant\n\nLet me search.")
    assert "*[used tool: web_search]*" in md  # tool_use summarised in one line
    assert "considering options" not in md  # thinking dropped
    assert "first line" not in md and "aW1hZ2U=" not in md  # tool_result dropped
    assert "Complete." in md
    assert "### User" not in md  # human messages that only carried tool results are not turns


def test_claude_legacy_text_export_in_zip(tmp_path):
    path = _zip(
        tmp_path / "claude.zip",
        {
            "conversations.json": (DATA / "claude-export-legacy.json").read_text(),
            "users.json": "[]",
            "projects.json": "[]",
        },
    )
    skipped: list = []
    caps = list(iter_claude_export(path, skipped=skipped))
    assert len(caps) == 1 and skipped[0]["reason"] == "no visible messages"
    cap = caps[0]
    assert cap.external_id == "claude:7e57c0de-0001-4000-8000-00000000000a"
    assert cap.title == "Pick a vector index"
    assert cap.meta["created_at"].startswith("2025-05-01")
    assert cap.markdown == (
        "## 1 May 2025\n\n"
        "### User\n\nHNSW or IVFFlat for 100k vectors?\n\n### Assistant\n\nHNSW: better recall at the same latency.\n\n"
        "```sql\nCREATE INDEX ON chunks USING hnsw (embedding vector_cosine_ops);\n```\n"
    )
    assert export_kind(path) == "claude"
    assert count_conversations(path) == 2


# ------------------------------------------------------------------ hostile archives


def test_corrupt_zip(tmp_path):
    good = _zip(tmp_path / "good.zip", {"conversations.json": json.dumps([_chatgpt_conv(1)])}).read_bytes()
    bad = tmp_path / "bad.zip"
    bad.write_bytes(good[: len(good) // 2])
    with pytest.raises(FormatError) as err:
        list(iter_chatgpt_export(bad))
    assert err.value.code == "bad_archive"
    garbage = tmp_path / "garbage.zip"
    garbage.write_bytes(b"PK\x03\x04" + b"\x00" * 200)
    with pytest.raises(FormatError) as err:
        list(iter_claude_export(garbage))
    assert err.value.code == "bad_archive"


def test_zip_without_conversations(tmp_path):
    path = _zip(tmp_path / "x.zip", {"readme.txt": "hi"})
    with pytest.raises(FormatError) as err:
        list(iter_chatgpt_export(path))
    assert err.value.code == "bad_archive" and "conversations.json" in str(err.value)


@pytest.mark.parametrize(
    "name", ["../conversations.json", "/etc/conversations.json", "a/../../evil.json", "C:/x.json", "..\\evil.json"]
)
def test_zip_path_traversal_refused(tmp_path, name):
    path = _zip(tmp_path / "t.zip", {"conversations.json": json.dumps([_chatgpt_conv(1)]), name: "x"})
    with pytest.raises(FormatError) as err:
        list(iter_chatgpt_export(path))
    assert err.value.code == "bad_archive" and "unsafe entry name" in str(err.value)


def test_zip_bomb_ratio(tmp_path):
    # 30 MB of whitespace inside a valid JSON array compresses ~1000x
    path = tmp_path / "bomb.zip"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("conversations.json", b"[" + b" " * 30_000_000 + b"]")
    assert path.stat().st_size < 100_000
    with pytest.raises(FormatError) as err:
        list(iter_chatgpt_export(path))
    assert err.value.code == "bad_archive" and "zip bomb" in str(err.value)


def test_zip_size_and_entry_caps(tmp_path):
    body = json.dumps([_chatgpt_conv(i) for i in range(20)])
    path = _zip(tmp_path / "e.zip", {"conversations.json": body, **{f"f{i}.txt": "x" for i in range(30)}})
    with pytest.raises(FormatError) as err:
        list(iter_chatgpt_export(path, limits=ZipLimits(max_entries=10)))
    assert "entries" in str(err.value)
    with pytest.raises(FormatError) as err:
        list(iter_chatgpt_export(path, limits=ZipLimits(max_entry_bytes=10_000)))
    assert "uncompressed" in str(err.value)
    with pytest.raises(FormatError) as err:
        list(iter_chatgpt_export(path, limits=ZipLimits(max_total_bytes=10_000)))
    assert "total" in str(err.value)


def test_encrypted_zip_entry_refused(tmp_path):
    # set the "encrypted" flag bit on the entry; we never try to read it
    raw = bytearray(_zip(tmp_path / "p.zip", {"conversations.json": "[]"}).read_bytes())
    for sig in (b"PK\x03\x04", b"PK\x01\x02"):
        i = raw.find(sig)
        off = i + (6 if sig == b"PK\x03\x04" else 8)
        raw[off] |= 0x1
    enc = tmp_path / "enc.zip"
    enc.write_bytes(bytes(raw))
    with pytest.raises(FormatError) as err:
        list(iter_chatgpt_export(enc))
    assert err.value.code == "bad_archive"


def test_empty_and_non_json_files(tmp_path):
    empty = tmp_path / "conversations.json"
    empty.write_bytes(b"")
    with pytest.raises(FormatError) as err:
        list(iter_chatgpt_export(empty))
    assert err.value.code == "empty"
    junk = tmp_path / "junk.json"
    junk.write_bytes(b"hello world")
    with pytest.raises(FormatError) as err:
        list(iter_claude_export(junk))
    assert err.value.code == "bad_json"
    assert count_conversations(junk) is None


# ------------------------------------------------------------------ streaming at scale


def _write_big_export(path: Path, n: int) -> int:
    """Write an n-conversation ChatGPT export zip entry by entry, without building it in memory."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as zf:
        with zf.open("conversations.json", "w", force_zip64=True) as out:
            out.write(b"[")
            for i in range(n):
                if i:
                    out.write(b",")
                out.write(json.dumps(_chatgpt_conv(i, turns=8)).encode())
            out.write(b"]")
        return zf.getinfo("conversations.json").file_size


@pytest.mark.slow
def test_2000_conversation_export_streams(tmp_path):
    """Memory stays bounded by one conversation however big the export (speed: `python -m bench.micro`)."""
    path = tmp_path / "big.zip"
    uncompressed = _write_big_export(path, 2000)
    assert uncompressed > 15_000_000

    assert count_conversations(path) == 2000

    gc.collect()
    tracemalloc.start()
    n, last = 0, None
    for cap in iter_chatgpt_export(path):
        n += 1
        last = cap
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()

    assert n == 2000 and last.external_id == "chatgpt:conv-01999"
    assert last.markdown.count("## Assistant") == 4
    # memory is bounded by one conversation, not by the file
    assert peak < 5_000_000, peak
    assert peak < uncompressed / 5
