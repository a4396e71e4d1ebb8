"""The local embedder on ONNX Runtime writes nothing outside the data dir.

Loading onnxruntime writes a persistent device id (and an event store it uploads later) under
~/.cache unless its environment turns telemetry off, and the server never writes its own
environment: the model runs in child processes started with telemetry off
(server/children.py). Here a real `memorywiki serve`, with a fresh HOME, indexes docs and
answers a hybrid recall on a tiny BERT the test builds (tests/tiny_bert.py: no torch, no
network), and leaves nothing under that HOME.
"""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from tests.device_id import assert_onnxruntime_writes_a_device_id, files_under, fresh_home, user_env
from tests.polling import wait_until
from tests.processes import Server
from tests.tiny_bert import make_tiny_bert

pytestmark = pytest.mark.slow  # a server subprocess and its children


def _loads_onnxruntime(pid: int) -> bool:
    return "onnxruntime" in Path(f"/proc/{pid}/maps").read_text()


def _children(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(stat[1]) == pid:
                found.append(int(entry.name))
    return found


def test_a_server_on_the_onnx_embedder_leaves_no_device_id(database_url, tmp_path):
    pytest.importorskip("onnxruntime")
    model = make_tiny_bert(tmp_path / "tiny-bert")
    assert_onnxruntime_writes_a_device_id(tmp_path)
    home = fresh_home(tmp_path)
    env = {
        **user_env(),
        "HOME": str(home),
        "DATABASE_URL": database_url,
        "MEMORYWIKI_EMBEDDER": "local",
        "MEMORYWIKI_LOCAL_BACKEND": "onnx",
        "MEMORYWIKI_LOCAL_MODEL": str(model),
        "MEMORYWIKI_DATA_DIR": str(tmp_path / "data"),
        "MEMORYWIKI_CURATION": "off",
    }
    server = Server(env, tmp_path / "serve.log")
    base = server.url
    try:
        health = httpx.get(f"{base}/healthz").json()
        assert health["embedder"] == "local:tiny-bert-int8" and health["worker"] == "process"
        token = httpx.post(f"{base}/api/hubs", json={"slug": "pets"}).json()["owner_token"]
        auth = {"Authorization": f"Bearer {token}"}
        for title, body in (("Cats", "cats purr when warm"), ("Rockets", "rockets need fuel and oxygen")):
            r = httpx.post(f"{base}/api/docs", json={"hub": "pets", "title": title, "markdown": body}, headers=auth)
            assert r.status_code == 201, r.text
        wait_until(lambda: httpx.get(f"{base}/healthz").json()["owed"] == 0, "the child worker to index")
        answer = httpx.post(f"{base}/api/hub/pets/recall", json={"question": "rocket fuel", "k": 2}).json()
        assert answer["mode"] == "hybrid" and answer["vector"] == "ok", answer
        # the tiny model's weights are random, so its similarities say nothing about meaning: what
        # counts is that both docs were ranked by vector, and full text found the one that matches
        ranked = {r["title"]: r for r in answer["results"]}
        assert set(ranked) == {"Cats", "Rockets"}
        assert all(r["vector_rank"] is not None for r in ranked.values())
        assert ranked["Rockets"]["fts_rank"] == 1 and ranked["Cats"]["fts_rank"] is None
        assert httpx.get(f"{base}/healthz").json()["questions"]["forward_passes"] >= 1
        # the model ran in the children (the indexer and the question embedder), never in the server
        children = _children(server.pid)
        assert sum(_loads_onnxruntime(pid) for pid in children) == 2, children
        assert not _loads_onnxruntime(server.pid)
    finally:
        status = server.stop(timeout=60)
    assert status == 0, server.output()
    assert list((tmp_path / "data" / "models").glob("tiny-bert-*.onnx"))  # built into the data dir
    assert not (home / ".cache" / "Microsoft").exists(), files_under(home)
    assert not [p for p in files_under(home) if "onnxruntime" in p.lower() or p.endswith("deviceid")], files_under(home)
