"""The embedding space (model and dimension) is named by /healthz and by every recall, and a
multilingual model directory is one setting away: switching to it re-indexes into its space."""

from __future__ import annotations

from dataclasses import replace

import psycopg
import pytest

from tests.polling import wait_indexed, wait_until
from tests.tiny_bert import HIDDEN, MULTILINGUAL_HIDDEN, make_tiny_bert

NOTES = {
    "Cats": "Cats purr when they are warm and fed.",
    "القطط": "القطط تحب الشمس والحليب في الصباح.",
    "猫咪": "猫咪喜欢在阳光下睡觉，也喜欢喝牛奶。",
}


def fill(client, slug: str = "pets") -> list[str]:
    r = client.post("/api/hubs", json={"slug": slug})
    assert r.status_code == 201, r.text
    headers = {"Authorization": f"Bearer {r.json()['owner_token']}"}
    ids = []
    for title, markdown in NOTES.items():
        r = client.post("/api/docs", json={"hub": slug, "title": title, "markdown": markdown}, headers=headers)
        assert r.status_code == 201, r.text
        ids.append(r.json()["id"])
    return ids


def recall(client, **body) -> dict:
    r = client.post("/api/hub/pets/recall", json={"question": "cats in the sun", **body})
    assert r.status_code == 200, r.text
    return r.json()


def test_healthz_and_every_recall_name_the_space(make_client, embedding_server):
    client = make_client()
    assert client.get("/healthz").json()["space"] is None  # no vectors yet
    wait_indexed(client, fill(client))
    health = client.get("/healthz").json()
    space = {"model": health["embedder"], "dim": embedding_server.dim}
    assert health["space"] == space
    for level in ("chunk", "doc", "bundle"):
        for hybrid in (True, False):
            body = recall(client, level=level, hybrid=hybrid)
            assert body["vector"] == "ok" and body["space"] == space, body
    # answered from full text: no space was searched, and the answer says so
    text_only = make_client(embedder="none")
    body = recall(text_only)
    assert body["mode"] == "fulltext" and body["space"] is None
    assert text_only.get("/healthz").json()["space"] == space  # the stored vectors' space is still that one


def _serve(settings, model_dir, data_dir):
    from memorywiki.server.app import create_app
    from starlette.testclient import TestClient

    # the question child builds and loads the model on its first question: no 5 s bound for that
    return TestClient(
        create_app(
            replace(
                settings,
                embedder="local",
                local_backend="onnx",
                local_quantize=False,
                local_model_dir=str(model_dir),
                data_dir=data_dir,
                embed_timeout=120.0,
            )
        )
    )


def _dims(database_url: str) -> set[int]:
    with psycopg.connect(database_url) as conn:
        return {r[0] for r in conn.execute("SELECT vector_dims(embedding) FROM chunks").fetchall()}


@pytest.mark.slow  # ONNX Runtime in two children of each server, twice
def test_a_multilingual_model_directory_switches_the_space_and_reindexes(settings, database_url, tmp_path):
    pytest.importorskip("onnxruntime")
    english = make_tiny_bert(tmp_path / "tiny-bert")
    multilingual = make_tiny_bert(tmp_path / "tiny-multilingual", multilingual=True)

    with _serve(settings, english, tmp_path / "data") as client:
        fill(client)
        wait_until(lambda: client.get("/healthz").json()["owed"] == 0, "the first model to index")
        assert client.get("/healthz").json()["space"] == {"model": "local:tiny-bert", "dim": HIDDEN}
        assert recall(client)["space"] == {"model": "local:tiny-bert", "dim": HIDDEN}
    assert _dims(database_url) == {HIDDEN}

    # one setting changed (MEMORYWIKI_LOCAL_MODEL): every page is indexed again, in the new space
    new_space = {"model": "local:tiny-multilingual", "dim": MULTILINGUAL_HIDDEN}
    with _serve(settings, multilingual, tmp_path / "data") as client:
        wait_until(
            lambda: client.get("/healthz").json()["owed"] == 0 and client.get("/healthz").json()["space"] == new_space,
            "the multilingual model to re-index",
        )
        for question in ("القطط والشمس", "猫咪 阳光", "cats in the sun"):
            body = recall(client, question=question, k=3)
            assert body["mode"] == "hybrid" and body["space"] == new_space, body
            assert all(r["vector_rank"] is not None for r in body["results"])  # every note has a new vector
    assert _dims(database_url) == {MULTILINGUAL_HIDDEN}
