"""The client operations the CLI and the MCP server share, called directly against a real
server (`live_server`): each behaviour here is reached from both surfaces through one path."""

from __future__ import annotations

import socket
import types
import uuid

import httpx
import pytest
from memorywiki.client import ApiError, Config, MemoryWikiError
from memorywiki.client import operations as ops
from memorywiki.client.errors import (
    FORBIDDEN,
    INVALID_INPUT,
    NO_HUB,
    NO_SECTION,
    UNAUTHORIZED,
    UNREACHABLE,
    VERSION_CONFLICT,
    InputError,
    VersionConflict,
)

NOTES = "## Context\n\npgvector and HNSW.\n\n## Decision\n\nUse RRF; the constant is 60.\n\n## Later\n\nPrune.\n"


@pytest.fixture
def env(live_server, tmp_path, monkeypatch):
    for name in ("MEMORYWIKI_TOKEN", "MEMORYWIKI_HUB", "MEMORYWIKI_URL", "XDG_CONFIG_HOME"):
        monkeypatch.delenv(name, raising=False)
    path = tmp_path / "config.toml"
    Config(path, {"server": live_server.url.rstrip("/")}).save()
    env = types.SimpleNamespace(url=live_server.url.rstrip("/"), path=path)
    env.wiki = lambda **kw: ops.Wiki.open(Config.load(path), source="test", user_agent="test", **kw)
    with env.wiki() as wiki:
        env.hub = ops.create_hub(wiki, "ops" + uuid.uuid4().hex[:8]).slug
    return env


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def saved(env, markdown: str = NOTES, title: str = "Design") -> ops.Captured:
    with env.wiki() as wiki:
        return ops.capture_markdown(wiki, markdown, title=title)


def markdown_of(env, doc_id: str) -> str:
    with env.wiki() as wiki:
        return ops.read_doc(wiki, doc_id)["markdown"]


# ---- update ---------------------------------------------------------------------------


def test_section_update_keeps_the_rest_and_sends_the_version_it_read(env):
    doc = saved(env)
    with env.wiki() as wiki:
        updated = ops.update_doc(wiki, doc.url, section="Decision", markdown="Use z-score fusion.")
    assert updated.what == "section 'Decision'" and updated.url == doc.url
    assert updated.data["version"] == doc.data["version"] + 1
    assert markdown_of(env, doc.doc_id) == NOTES.replace("Use RRF; the constant is 60.", "Use z-score fusion.")


def test_a_stale_section_update_is_a_conflict_and_changes_nothing(env):
    doc = saved(env)
    with env.wiki() as wiki:
        ops.update_doc(wiki, doc.doc_id, title="Renamed")  # someone else's edit: the version moves on
        with pytest.raises(VersionConflict) as caught:
            ops.update_doc(wiki, doc.doc_id, section="Decision", markdown="mine", expected_version=1)
    assert caught.value.code == VERSION_CONFLICT
    assert (caught.value.doc_id, caught.value.current, caught.value.expected) == (doc.doc_id, 2, 1)
    assert markdown_of(env, doc.doc_id) == NOTES


def test_a_stale_whole_body_update_is_the_same_conflict_from_the_server(env):
    doc = saved(env)
    with env.wiki() as wiki:
        ops.update_doc(wiki, doc.doc_id, markdown=NOTES + "\nmore\n")
        with pytest.raises(VersionConflict) as caught:
            ops.update_doc(wiki, doc.doc_id, markdown="# gone\n", expected_version=1)
    assert (caught.value.current, caught.value.expected) == (2, 1)
    assert markdown_of(env, doc.doc_id) == NOTES + "\nmore\n"


def test_a_read_doc_sent_back_loses_its_front_matter_and_keeps_its_title(env):
    doc = saved(env)
    with env.wiki() as wiki:
        pulled = ops.doc_markdown(wiki, doc.doc_id)
        updated = ops.update_doc(wiki, doc.doc_id, markdown=pulled.replace("Prune.", "Prune at 100k."))
        assert updated.what == "page"
        after = ops.read_doc(wiki, doc.doc_id)
    assert after["markdown"] == NOTES.replace("Prune.", "Prune at 100k.") and after["title"] == "Design"


@pytest.mark.parametrize(
    "args,words",
    [
        ({}, "nothing to update"),
        ({"section": "Decision"}, "needs the section's new text"),
        ({"markdown": "  \n"}, "empty body"),
        ({"markdown": " ", "section": "Decision"}, "empty body"),
        ({"title": "  "}, "the title is empty"),
    ],
    ids=["nothing", "section-without-text", "blank-body", "blank-section", "blank-title"],
)
def test_update_refuses_what_it_cannot_act_on_before_sending(tmp_path, args, words):
    wiki = ops.Wiki.open(
        Config(tmp_path / "config.toml"), f"http://127.0.0.1:{closed_port()}", source="test", user_agent="test"
    )
    with wiki, pytest.raises(InputError) as caught:  # a closed port: nothing could have been sent
        ops.update_doc(wiki, "abcdefabcd", **args)
    assert caught.value.code == INVALID_INPUT and words in caught.value.message


def test_an_unknown_section_names_the_sections(env):
    doc = saved(env)
    with env.wiki() as wiki, pytest.raises(MemoryWikiError) as caught:
        ops.update_doc(wiki, doc.doc_id, section="Nope", markdown="x")
    assert caught.value.code == NO_SECTION
    assert "'Context'" in caught.value.message and "'Later'" in caught.value.message


def test_a_refused_update_says_which_token_was_tried(env, monkeypatch):
    doc = saved(env)
    monkeypatch.setenv("MEMORYWIKI_TOKEN", "mwe_wrong")
    with env.wiki() as wiki, pytest.raises(MemoryWikiError) as caught:
        ops.update_doc(wiki, doc.doc_id, title="Theirs")
    assert caught.value.code == FORBIDDEN and caught.value.message.endswith("(sent $MEMORYWIKI_TOKEN)")
    assert not isinstance(caught.value, ApiError)  # explained: the surfaces show the message as it is


def test_without_a_token_the_refusal_says_none_is_configured(env):
    loose = httpx.post(f"{env.url}/api/docs", json={"title": "Loose", "markdown": "text"}, timeout=10).json()
    Config(env.path, {"server": env.url}).save()
    with env.wiki() as wiki, pytest.raises(MemoryWikiError) as caught:
        ops.update_doc(wiki, loose["id"], title="New")
    assert caught.value.code == UNAUTHORIZED
    assert caught.value.message.startswith(f"no token for doc {loose['id']} is configured")


# ---- capture --------------------------------------------------------------------------


def test_capture_keeps_each_edit_token_even_from_a_stale_config(env):
    """Two surfaces (a shell and an MCP call) capture with configs read before either saved."""
    with env.wiki() as first, env.wiki() as second:
        a = ops.capture_markdown(first, "# One\n\nfirst\n")
        b = ops.capture_markdown(second, "# Two\n\nsecond\n")
    stored = Config.load(env.path)
    assert stored.doc_entry(a.doc_id)["edit_token"] == a.data["edit_token"]
    assert stored.doc_entry(b.doc_id)["edit_token"] == b.data["edit_token"]
    assert stored.doc_entry(a.doc_id)["hub"] == env.hub and a.config_warning is None


def test_capture_titles_and_dedupe(env):
    with env.wiki() as wiki:
        first = ops.capture_markdown(wiki, "# From the heading\n\nbody\n")
        again = ops.capture_markdown(wiki, "# From the heading\n\nbody\n")
        copy = ops.capture_markdown(wiki, "# From the heading\n\nbody\n", new=True)
        with pytest.raises(InputError, match="the title is empty"):
            ops.capture_markdown(wiki, "body", title=" ")
        with pytest.raises(InputError, match="title is required"):
            ops.capture_markdown(wiki, "no heading here")
    assert first.status == "created" and again.status == ops.EXISTS and again.doc_id == first.doc_id
    assert copy.status == "created" and copy.doc_id != first.doc_id
    hub = httpx.get(f"{env.url}/api/hub/{env.hub}", timeout=10).json()
    assert {d["title"] for d in hub["docs"]} == {"From the heading"}


def test_capture_file_reads_markdown_and_names_it_after_the_file(env, tmp_path):
    path = tmp_path / "meeting-notes.md"
    path.write_text("no heading, just notes\n")
    with env.wiki() as wiki:
        captured = ops.capture_file(wiki, path)
        with pytest.raises(InputError, match="no such file"):
            ops.capture_file(wiki, tmp_path / "missing.pdf")
    doc = httpx.get(f"{env.url}/api/docs/{captured.doc_id}", timeout=10).json()
    assert doc["title"] == "meeting-notes" and doc["source"] == "test"


# ---- history, restore, delete ----------------------------------------------------------


def test_history_restore_and_a_stale_restore(env):
    doc = saved(env, "## Notes\n\nfirst words\n")
    with env.wiki() as wiki:
        ops.update_doc(wiki, doc.doc_id, markdown="## Notes\n\nsecond words\n")
        assert [v["version"] for v in ops.history(wiki, doc.url)["versions"]] == [2, 1]
        assert "first words" in ops.version(wiki, doc.doc_id, 1)["markdown"]
        with pytest.raises(VersionConflict):
            ops.restore(wiki, doc.doc_id, 1, expected_version=1)
        restored = ops.restore(wiki, doc.doc_id, 1, expected_version=2)
        assert restored.data["version"] == 3 and restored.data["changed"] is True
        with pytest.raises(ApiError) as caught:
            ops.restore(wiki, doc.doc_id, 9)
    assert caught.value.code == "unknown_version"
    assert markdown_of(env, doc.doc_id) == "## Notes\n\nfirst words\n"


def test_delete_forgets_the_doc(env):
    doc = saved(env)
    with env.wiki() as wiki:
        deleted = ops.delete_doc(wiki, doc.url)
    assert deleted.doc_id == doc.doc_id and deleted.config_warning is None
    assert not Config.load(env.path).doc_entry(doc.doc_id)


# ---- hubs, recall, bundles ------------------------------------------------------------


def test_hub_urls_and_an_unknown_hub(env):
    with env.wiki() as wiki:
        urls = ops.hub_urls(wiki)
        with pytest.raises(MemoryWikiError) as caught:
            ops.hub_info(wiki, "no-such-hub-x1")
    assert (urls.hub, urls.url, urls.raw_url) == (env.hub, f"{env.url}/hub/{env.hub}", f"{env.url}/raw/hub/{env.hub}")
    assert caught.value.message.startswith(f"no hub 'no-such-hub-x1' on {env.url}: ")


def test_a_surface_default_hub_comes_before_the_config(env):
    with env.wiki(default_hub="elsewhere") as wiki:
        assert wiki.hub(None) == "elsewhere" and wiki.hub(" given ") == "given"
    Config(env.path, {"server": env.url}).save()
    with env.wiki() as wiki, pytest.raises(MemoryWikiError) as caught:
        ops.recall(wiki, "anything")
    assert caught.value.code == NO_HUB and "memorywiki hub create" in caught.value.message


def test_recall_and_bundles(env):
    doc = saved(env)
    with env.wiki() as wiki:
        with pytest.raises(InputError, match="the question is empty"):
            ops.recall(wiki, "  ")
        answer = ops.recall(wiki, "what is the constant?", k=3)
        bundle = ops.create_bundle(wiki, " Recall design ", [doc.url], description=None)
        with pytest.raises(InputError, match="the topic is empty"):
            ops.pages_on_topic(wiki, " ")
    assert answer["hub"] == env.hub and answer["mode"]
    assert bundle.hub == env.hub and bundle.doc_ids == [doc.doc_id]
    hub = httpx.get(f"{env.url}/api/hub/{env.hub}", timeout=10).json()
    assert [(b["title"], b["url"]) for b in hub["bundles"]] == [("Recall design", bundle.data["url"])]


def test_an_unreachable_server_has_its_code(tmp_path):
    wiki = ops.Wiki.open(
        Config(tmp_path / "config.toml"), f"http://127.0.0.1:{closed_port()}", source="test", user_agent="test"
    )
    with wiki, pytest.raises(MemoryWikiError) as caught:
        ops.read_doc(wiki, "abcdefabcd")
    assert caught.value.code == UNREACHABLE and "not running" in caught.value.message
