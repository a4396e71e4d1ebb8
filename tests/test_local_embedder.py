"""The local embedder on ONNX Runtime, on a tiny BERT the tests build (tests/tiny_bert.py).

No torch anywhere: the graph is built from the weights by server/embedding/onnx_bert.py. The real
all-MiniLM-L6-v2 is checked against sentence-transformers by the bench
(`python -m bench embedding`: cosine, nDCG@10, speed); here, that the graph computes BERT
with mean pooling, that it is built once into the data dir, and that questions go first.
"""

from __future__ import annotations

import asyncio
import sys
import threading

import numpy as np
import pytest
from memorywiki.server.config import Settings
from memorywiki.server.embedding import onnx_bert
from memorywiki.server.embedding.base import EmbedderError
from memorywiki.server.embedding.factory import make_embedder
from memorywiki.server.embedding.local import LocalEmbedder
from memorywiki.server.embedding.onnx import OnnxChildEmbedder, OnnxEmbedder

from tests.polling import wait_until
from tests.tiny_bert import make_tiny_bert, reference_embed

TEXTS = [
    "Cats purr when content",
    "the rocket needs fuel and oxygen for launch",
    "dog",
    "",
    "warm sun and milk for the cats sleeping",
    "zebra quokka",
]  # unknown words, an empty text


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory):
    return make_tiny_bert(tmp_path_factory.mktemp("tiny-bert") / "tiny-bert")


def onnx_embedder(model_dir, data_dir, **settings) -> OnnxEmbedder:
    """ONNX Runtime in this (test) process; a server runs it in a child: test_onnx_privacy.py.
    fp32 unless asked (int8, the default, gives close but not equal vectors)."""
    settings.setdefault("local_quantize", False)
    embedder = make_embedder(
        Settings(embedder="local", local_model_dir=str(model_dir), data_dir=data_dir, **settings), onnx_in_process=True
    )
    assert isinstance(embedder, OnnxEmbedder)
    return embedder


async def test_the_graph_computes_bert_with_mean_pooling(model_dir, tmp_path):
    """Batched and padded to the longest text, the vectors are those of each text alone."""
    embedder = onnx_embedder(model_dir, tmp_path)
    assert embedder.name == "local:tiny-bert"
    vectors = np.array(await embedder.embed(TEXTS))
    expected = reference_embed(model_dir, TEXTS)
    assert vectors.shape == (len(TEXTS), 32)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert np.abs(vectors - expected).max() < 1e-4
    questions = np.array(await embedder.embed_questions(TEXTS[:3]))
    assert np.abs(questions - expected[:3]).max() < 1e-4
    assert "torch" not in sys.modules


async def test_bulk_keeps_the_order_across_small_passes(model_dir, tmp_path):
    """Indexing sorts texts by length into passes of local_batch; vectors come back in order."""
    embedder = onnx_embedder(model_dir, tmp_path, local_batch=2)
    passes = []
    run = embedder._run
    embedder._run = lambda texts, **kw: passes.append(len(texts)) or run(texts, **kw)
    texts = TEXTS * 3
    vectors = np.array(await embedder.embed(texts))
    assert passes == [2] * 9
    assert np.abs(vectors - reference_embed(model_dir, texts)).max() < 1e-4


async def test_the_model_is_built_once_into_the_data_dir(model_dir, tmp_path, monkeypatch):
    await onnx_embedder(model_dir, tmp_path).embed(["cats"])
    [built] = (tmp_path / "models").glob("*.onnx")
    assert built.name.startswith("tiny-bert-")
    stamp = built.stat().st_mtime_ns

    def must_not_build(*args, **kwargs):
        raise AssertionError("the model was built again")

    monkeypatch.setattr(onnx_bert, "build", must_not_build)
    again = onnx_embedder(model_dir, tmp_path)  # a new process would do the same: reuse the file
    assert len(await again.embed(["dogs bark"])) == 1
    assert [p.stat().st_mtime_ns for p in (tmp_path / "models").glob("*.onnx")] == [stamp]
    assert not list((tmp_path / "models").glob(".export-*"))  # no temporary file left behind


async def test_new_weights_build_a_new_file(tmp_path):
    first = make_tiny_bert(tmp_path / "a" / "m", seed=1)
    second = make_tiny_bert(tmp_path / "b" / "m", seed=2)
    one = await onnx_embedder(first, tmp_path / "data").embed(["cats"])
    two = await onnx_embedder(second, tmp_path / "data").embed(["cats"])
    assert len(list((tmp_path / "data" / "models").glob("*.onnx"))) == 2
    assert np.dot(one[0], two[0]) < 0.999


async def test_int8_is_a_space_of_its_own(model_dir, tmp_path):
    fp32 = onnx_embedder(model_dir, tmp_path)
    int8 = onnx_embedder(model_dir, tmp_path, local_quantize=True)
    assert int8.name == "local:tiny-bert-int8" != fp32.name  # never mixed with fp32 vectors
    a, b = np.array(await fp32.embed(TEXTS)), np.array(await int8.embed(TEXTS))
    assert len(list((tmp_path / "models").glob("*-int8.onnx"))) == 1
    assert np.allclose(np.linalg.norm(b, axis=1), 1.0, atol=1e-5)
    assert (a * b).sum(1).min() > 0.9  # close, not equal


async def test_int8_questions_run_without_the_slower_skip_layer_norm_fusion(model_dir, tmp_path, monkeypatch):
    """ONNX Runtime fuses each residual Add + LayerNormalization of the int8 graph into
    SkipLayerNormalization, which made questions ~18 % dearer on the real model: the questions'
    session runs without that fusion; indexing keeps it, since docs' vectors lost quality
    without it (onnx.QUESTION_DISABLED_FUSIONS)."""
    import onnx
    import onnxruntime
    from memorywiki.server.embedding import onnx as onnx_backend
    from memorywiki.server.embedding.onnx import QUESTION_DISABLED_FUSIONS, onnx_session

    opened = {}

    def spy(model_file, threads, **kw):
        session = onnx_session(model_file, threads, **kw)
        opened[id(session)] = kw.get("disabled_fusions", ())
        return session

    monkeypatch.setattr(onnx_backend, "onnx_session", spy)
    int8 = onnx_embedder(model_dir, tmp_path, local_quantize=True)
    assert len(await int8.embed_questions(["cats"])) == 1
    assert opened[id(int8._questions_model)] == QUESTION_DISABLED_FUSIONS
    assert opened[id(int8._model)] == ()  # indexing: the runtime's default graph
    [built] = (tmp_path / "models").glob("*-int8.onnx")

    def kernels(optimized) -> set[str]:
        return {node.op_type for node in onnx.load(str(optimized)).graph.node}

    onnx_session(built, 1, optimized_to=tmp_path / "default.onnx")
    assert "SkipLayerNormalization" in kernels(tmp_path / "default.onnx")  # the fusion applies to this graph
    onnx_session(built, 1, disabled_fusions=QUESTION_DISABLED_FUSIONS, optimized_to=tmp_path / "questions.onnx")
    assert "SkipLayerNormalization" not in kernels(tmp_path / "questions.onnx")
    assert "LayerNormalization" in kernels(tmp_path / "questions.onnx")
    options = onnxruntime.SessionOptions()  # and what the runtime does by default is that fusion
    options.optimized_model_filepath = str(tmp_path / "runtime.onnx")
    onnxruntime.InferenceSession(str(built), options, providers=["CPUExecutionProvider"])
    assert kernels(tmp_path / "runtime.onnx") == kernels(tmp_path / "default.onnx")


async def test_a_question_does_not_wait_for_indexing(model_dir, tmp_path):
    """A question arriving during a long indexing job runs at once; the job's next pass
    waits until the question is done."""
    embedder = onnx_embedder(model_dir, tmp_path, local_batch=1)
    await embedder.embed(["warm up"])
    log: list[str] = []
    first_pass_running, release_first_pass = threading.Event(), threading.Event()
    run = embedder._run

    def recorded(texts, **kw):
        kind = "question" if texts == ["how do cats purr"] else "bulk"
        if kind == "bulk" and not first_pass_running.is_set():
            first_pass_running.set()
            release_first_pass.wait(30)
        log.append(kind)
        return run(texts, **kw)

    embedder._run = recorded
    bulk = asyncio.create_task(embedder.embed(TEXTS))
    await asyncio.to_thread(first_pass_running.wait, 30)
    vector = await asyncio.wait_for(embedder.embed_questions(["how do cats purr"]), 30)
    assert len(vector) == 1 and not bulk.done()  # answered while the first pass still runs
    release_first_pass.set()
    assert len(await bulk) == len(TEXTS)
    assert log == ["question"] + ["bulk"] * len(TEXTS)


async def test_indexing_waits_while_a_question_runs(model_dir, tmp_path):
    embedder = onnx_embedder(model_dir, tmp_path, local_batch=1)
    await embedder.embed(["warm up"])
    log: list[str] = []
    question_running, release_question = threading.Event(), threading.Event()
    run = embedder._run

    def recorded(texts, **kw):
        if texts == ["how do cats purr"]:
            question_running.set()
            release_question.wait(30)
        log.append("question" if texts == ["how do cats purr"] else "bulk")
        return run(texts, **kw)

    embedder._run = recorded
    question = asyncio.create_task(embedder.embed_questions(["how do cats purr"]))
    await asyncio.to_thread(question_running.wait, 30)
    bulk = asyncio.create_task(embedder.embed(TEXTS[:3]))
    await asyncio.sleep(0.3)
    assert log == [] and not bulk.done()  # no pass started while the question runs
    release_question.set()
    await question
    await bulk
    assert log == ["question", "bulk", "bulk", "bulk"]


async def test_an_unsupported_model_is_a_clear_error(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "sentence_transformers", None)  # no torch fallback either
    folder = make_tiny_bert(tmp_path / "mpnet-like", model_type="mpnet")
    embedder = onnx_embedder(folder, tmp_path)
    with pytest.raises(EmbedderError, match="cannot run .* on ONNX Runtime: .* is not a BERT model"):
        await embedder.embed(["cats"])


def test_torch_is_the_fallback_when_onnx_runtime_is_missing(model_dir, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "onnxruntime", None)  # as if not installed
    embedder = make_embedder(Settings(embedder="local", local_model_dir=str(model_dir), data_dir=tmp_path))
    assert type(embedder) is LocalEmbedder and embedder.backend == "torch"
    forced = make_embedder(
        Settings(embedder="local", local_model_dir=str(model_dir), data_dir=tmp_path, local_backend="torch")
    )
    assert type(forced) is LocalEmbedder
    assert "torch" not in sys.modules  # choosing never imports it


def test_an_unknown_backend_is_a_clear_settings_error():
    from memorywiki.server.config import SettingsError

    with pytest.raises(SettingsError, match="MEMORYWIKI_LOCAL_BACKEND must be one of auto, onnx, torch, not 'tf'"):
        Settings.from_env({"MEMORYWIKI_LOCAL_BACKEND": "tf"})


def test_a_server_indexes_and_recalls_with_the_local_model(make_client, model_dir, tmp_path):
    """The whole path on ONNX Runtime: saved docs get vectors, recall runs hybrid."""
    client = make_client(embedder="local", local_model_dir=str(model_dir), data_dir=tmp_path, worker_process=False)
    token = client.post("/api/hubs", json={"slug": "pets"}).json()["owner_token"]
    auth = {"Authorization": f"Bearer {token}"}
    for title, body in (("Cats", "cats purr when warm"), ("Rockets", "rockets need fuel and oxygen")):
        assert (
            client.post("/api/docs", json={"hub": "pets", "title": title, "markdown": body}, headers=auth).status_code
            == 201
        )
    wait_until(lambda: client.get("/healthz").json()["owed"] == 0, "indexing")
    body = client.post("/api/hub/pets/recall", json={"question": "rocket fuel", "k": 2}).json()
    assert body["mode"] == "hybrid" and body["vector"] == "ok"
    # the tiny model's weights are random, so its similarities say nothing about meaning: what
    # counts is that both docs were ranked by vector, and full text found the one that matches
    ranked = {r["title"]: r for r in body["results"]}
    assert set(ranked) == {"Cats", "Rockets"}
    assert all(r["vector_rank"] is not None for r in ranked.values())
    assert ranked["Rockets"]["fts_rank"] == 1 and ranked["Cats"]["fts_rank"] is None
    assert client.get("/healthz").json()["embedder"] == "local:tiny-bert-int8"  # the default: int8


@pytest.mark.slow  # a worker subprocess
def test_with_the_local_model_indexing_runs_in_a_child_process(make_client, model_dir, tmp_path):
    """The default with the local embedder: encoding pages never shares the server's process."""
    client = make_client(embedder="local", local_model_dir=str(model_dir), data_dir=tmp_path)
    assert client.get("/healthz").json()["worker"] == "process"
    # its indexing passes yield to the questions of the server's embedding child (another process)
    state = client.app.state.mw
    assert state.worker_process.settings.question_board == state.embedder.question_board()
    token = client.post("/api/hubs", json={"slug": "kids"}).json()["owner_token"]
    client.post(
        "/api/docs",
        json={"hub": "kids", "title": "Rockets", "markdown": "rockets need fuel"},
        headers={"Authorization": f"Bearer {token}"},
    )
    wait_until(lambda: client.get("/healthz").json()["owed"] == 0, "the child process to index")
    assert client.post("/api/hub/kids/recall", json={"question": "fuel"}).json()["mode"] == "hybrid"


async def test_questions_of_similar_length_share_a_pass(model_dir, tmp_path):
    """A pass pads to its longest text: similar questions go together, a long one alone."""
    embedder = onnx_embedder(model_dir, tmp_path, local_threads=1)
    passes = []
    run = embedder._run
    embedder._run = lambda texts, **kw: passes.append(sorted(texts)) or run(texts, **kw)
    short = ["cats purr", "dogs bark", "sun warm", "ship crew"]
    long = "the rocket needs fuel and oxygen for the launch to the moon"  # long, yet within the window
    questions = [short[0], long, *short[1:]]
    vectors = np.array(await embedder.embed_questions(questions))
    assert passes == [sorted(short), [long]]
    assert np.abs(vectors - reference_embed(model_dir, questions)).max() < 1e-4  # each in its place


async def test_questions_run_side_by_side_on_one_thread_each(model_dir, tmp_path):
    """A question is too small to share out over the cores (on two threads one cost a third more
    CPU and took no less time), so each core takes questions of its own, in passes of one thread;
    indexing passes keep the runtime's threads."""
    embedder = onnx_embedder(model_dir, tmp_path, local_threads=2)
    passes = []
    run = embedder._run

    def spy(texts, **kw):
        passes.append((threading.current_thread().name, sorted(texts), kw.get("question", False)))
        return run(texts, **kw)

    embedder._run = spy
    questions = ["cats purr", "dogs bark", "sun warm", "ship crew"]
    vectors = np.array(await embedder.embed_questions(questions))
    assert len({thread for thread, _, _ in passes}) == 2  # side by side
    assert sorted(text for _, texts, _ in passes for text in texts) == sorted(questions)
    assert all(question for _, _, question in passes)
    assert np.abs(vectors - reference_embed(model_dir, questions)).max() < 1e-4  # each in its place
    assert embedder._questions_model.get_session_options().intra_op_num_threads == 1
    assert embedder._model.get_session_options().intra_op_num_threads == 2
    passes.clear()
    assert np.abs(np.array(await embedder.embed(questions)) - reference_embed(model_dir, questions)).max() < 1e-4
    assert passes and not any(question for _, _, question in passes)  # indexing: the bulk session
    assert len(await embedder.embed_questions([])) == 0


async def test_a_server_runs_onnx_runtime_in_a_child_that_is_replaced_when_it_dies(model_dir, tmp_path):
    """What make_embedder gives a server: the model in a child process (telemetry off:
    test_onnx_privacy.py), the same vectors, and a child that dies fails what it owed with
    EmbedderError (recall then answers from full text) and is replaced on the next call."""
    import os
    import signal

    embedder = make_embedder(
        Settings(embedder="local", local_model_dir=str(model_dir), data_dir=tmp_path, local_quantize=False)
    )
    assert isinstance(embedder, OnnxChildEmbedder) and embedder.name == "local:tiny-bert"
    try:
        expected = reference_embed(model_dir, TEXTS)
        assert np.abs(np.array(await embedder.embed_questions(TEXTS)) - expected).max() < 1e-4
        assert np.abs(np.array(await embedder.embed(TEXTS)) - expected).max() < 1e-4
        first = embedder._child.proc.pid
        assert first != os.getpid()

        bulk = asyncio.create_task(embedder.embed(TEXTS * 5000))
        await asyncio.wait_for(_until(lambda: embedder._child._pending), 30)  # the request is sent
        os.kill(first, signal.SIGKILL)
        with pytest.raises(EmbedderError, match="embedding process stopped"):
            await asyncio.wait_for(bulk, 30)

        again = np.array(await embedder.embed_questions(TEXTS[:2]))
        assert embedder._child.proc.pid != first
        assert np.abs(again - expected[:2]).max() < 1e-4
    finally:
        embedder.close()


async def _until(check) -> None:
    while not check():
        await asyncio.sleep(0.01)


def _held_question_run(embedder, log: list, held: threading.Event, release: threading.Event, who: str = ""):
    """Record every pass in `log` as (who + "question" | who + "bulk", texts); the question
    "hold me" stays in flight until `release` is set."""
    run = embedder._run

    def recorded(texts, **kw):
        if texts == ["hold me"]:
            held.set()
            release.wait(60)
        elif texts and texts[0].startswith("question "):
            log.append((who + "question", len(texts)))
        else:
            log.append((who + "bulk", len(texts)))
        return run(texts, **kw)

    embedder._run = recorded


async def test_indexing_still_gets_done_under_a_stream_of_questions(model_dir, tmp_path):
    """Questions that never leave the lane empty do not starve indexing: a waiting pass goes
    after `local_floor_questions` answered, one text at a time while questions flow. (Before the
    floor, the pass waited for an empty lane, which never came: 96 chunks in 240 s under load.)"""
    embedder = onnx_embedder(
        model_dir, tmp_path, local_batch=4, local_floor_questions=3, local_floor_ms=600_000
    )  # only the question count lets indexing go here
    await embedder.embed(["warm up"])
    log: list = []
    held, release = threading.Event(), threading.Event()
    _held_question_run(embedder, log, held, release)
    holding = asyncio.create_task(embedder.embed_questions(["hold me"]))  # the lane is never empty
    try:
        await asyncio.to_thread(held.wait, 30)
        bulk = asyncio.create_task(embedder.embed(TEXTS))
        asked = 0
        while not bulk.done() and asked < 500:  # a stream of questions, one after another
            await embedder.embed_questions([f"question {asked}"])
            asked += 1
        assert bulk.done(), f"indexing starved: nothing done after {asked} questions"
        vectors = np.array(await bulk)
        assert np.abs(vectors - reference_embed(model_dir, TEXTS)).max() < 1e-4
        passes = [kind for kind, n in log]
        assert passes.count("bulk") == len(TEXTS)  # one text a pass while questions flow, not 4
        assert all(n == 1 for kind, n in log if kind == "bulk")
        # questions first: 3 answered before the first indexing pass, and 3 for each pass
        assert passes.index("bulk") >= 3 and asked >= 3 * len(TEXTS), passes
    finally:
        release.set()
        await holding


async def test_the_indexing_child_yields_to_the_questions_of_the_embedding_child(model_dir, tmp_path):
    """A server answers questions in one process and indexes in another (each its own model):
    the indexing one reads the questions in flight from the board the other publishes, so it
    holds its passes while a question runs there, and still gets its floor."""
    from memorywiki.server.embedding.question_board import QuestionBoard

    board = QuestionBoard.create()
    try:
        asker = onnx_embedder(model_dir, tmp_path, question_board=board.path)
        asker.gate.board.publish(0, 0)  # what the embedding child does at start
        indexer = onnx_embedder(
            model_dir,
            tmp_path,
            question_board=board.path,
            local_batch=4,
            local_floor_questions=3,
            local_floor_ms=600_000,
        )
        await asker.embed_questions(["warm up"])
        await indexer.embed(["warm up"])
        log: list = []
        held, release = threading.Event(), threading.Event()
        _held_question_run(asker, log, held, release, who="asker ")
        _held_question_run(indexer, log, threading.Event(), threading.Event(), who="indexer ")
        holding = asyncio.create_task(asker.embed_questions(["hold me"]))
        try:
            await asyncio.to_thread(held.wait, 30)
            bulk = asyncio.create_task(indexer.embed(TEXTS[:3]))
            asked = 0
            while not bulk.done() and asked < 500:
                await asker.embed_questions([f"question {asked}"])
                asked += 1
            assert bulk.done(), f"indexing starved: nothing done after {asked} questions"
            assert len(await bulk) == 3
            passes = [kind for kind, n in log]
            assert passes.count("indexer bulk") == 3
            assert passes.index("indexer bulk") >= 3  # it waited for 3 questions of the other process
        finally:
            release.set()
            await holding
        # with no question in flight there and none answered since its last pass, a full pass
        await indexer.embed(["settle"])  # one text: a question was answered since the last pass
        log.clear()
        await indexer.embed(TEXTS[:4])
        assert log == [("indexer bulk", 4)]
    finally:
        board.unlink()


async def test_the_first_int8_start_logs_no_quantizer_advice(model_dir, tmp_path, capfd):
    """The int8 model is made on a server's first start, in the embedding child: onnxruntime's
    quantizer advised on stderr to "run pre-processing before quantization" (the graph built
    here needs none). Its log and stderr carry no such line, and the int8 vectors come out."""
    embedder = make_embedder(
        Settings(embedder="local", local_model_dir=str(model_dir), data_dir=tmp_path, local_quantize=True)
    )
    assert isinstance(embedder, OnnxChildEmbedder) and embedder.name == "local:tiny-bert-int8"
    try:
        vectors = np.array(await embedder.embed_questions(TEXTS))
    finally:
        embedder.close()
    assert len(list((tmp_path / "models").glob("*-int8.onnx"))) == 1  # made on this start
    assert np.abs(vectors - reference_embed(model_dir, TEXTS)).max() < 0.1  # close to fp32, not equal
    err = capfd.readouterr().err
    assert "pre-processing before quantization" not in err


def test_the_quantizer_filter_drops_only_its_advice_and_leaves_the_root_logger_as_it_was(caplog):
    import logging

    root = logging.getLogger()
    handlers = list(root.handlers)
    with onnx_bert._quiet_quantizer():
        logging.warning(onnx_bert.PREPROCESSING_ADVICE + ". Refer to example: ...")
        logging.getLogger("memorywiki.test").warning("something else")
    assert root.handlers == handlers and not root.filters
    assert [r.getMessage() for r in caplog.records] == ["something else"]


def test_building_the_int8_graph_says_nothing_at_info(model_dir, tmp_path, caplog):
    """The server logs at INFO, and its embedding child with it: onnxruntime's quantizer wrote
    a line per MatMul it leaves in float and per tensor it sets no parameters for (24 lines for
    all-MiniLM-L6-v2) on the first vector use. Its notes stay out of the log; the server's own
    INFO lines do not."""
    import logging

    caplog.set_level(logging.INFO)
    with onnx_bert._quiet_quantizer():
        logging.info("the server's own note")
    path = onnx_bert.export(model_dir, tmp_path, quantize=True)
    assert path.name.endswith("-int8.onnx") and path.is_file()
    assert [r.getMessage() for r in caplog.records] == ["the server's own note"]


async def test_a_multilingual_model_with_a_sentencepiece_tokenizer_runs_on_onnx(tmp_path):
    """paraphrase-multilingual-MiniLM-L12-v2's shape: a BERT body under XLM-R's SentencePiece
    tokenizer (<s> ... </s>, <pad> at 1). Texts in any script, padded together in one pass, get
    the vectors of each text alone."""
    model = make_tiny_bert(tmp_path / "tiny-multilingual", multilingual=True)
    embedder = onnx_embedder(model, tmp_path)
    assert embedder.name == "local:tiny-multilingual"
    texts = [
        "القطط تحب الوقود",
        "猫咪喜欢火箭燃料",
        "ねこ ロケット",
        "고양이는 로켓",
        "Кошка и ракета",
        "cats and the moon",
        "",
        "zebra 🦓 é",
    ]
    vectors = np.array(await embedder.embed(texts))
    assert vectors.shape == (len(texts), 48)
    assert np.abs(vectors - reference_embed(model, texts)).max() < 1e-4
    questions = np.array(await embedder.embed_questions(texts[:2]))
    assert np.abs(questions - vectors[:2]).max() < 1e-4


# ---------------------------------------------------------------- texts longer than the window

LONG_WORDS = (
    "the rocket fuel oxygen launch moon orbit space ship crew food water cat dog fish milk sun warm sleep engine"
).split()


async def test_a_text_past_the_window_is_the_mean_of_its_windows(model_dir, tmp_path):
    """The tiny model reads 16 word pieces (14 past [CLS] and [SEP]); every word here is one
    piece, so a 40-word text is windows of 14, 14 and 12 words, weighted by their pieces."""
    embedder = onnx_embedder(model_dir, tmp_path)
    words = [LONG_WORDS[i % len(LONG_WORDS)] for i in range(40)]
    text = " ".join(words)
    [vector] = await embedder.embed([text])
    windows = reference_embed(model_dir, [" ".join(words[0:14]), " ".join(words[14:28]), " ".join(words[28:])])
    expected = windows.T @ np.array([14, 14, 12])
    expected /= np.linalg.norm(expected)
    assert np.abs(np.array(vector) - expected).max() < 1e-4
    truncated = reference_embed(model_dir, [text])[0]  # what the model alone sees: the first 14 words
    assert float(np.array(vector) @ truncated) < 0.999
    embedder.windowed = False
    [cut] = await embedder.embed([text])
    assert np.abs(np.array(cut) - truncated).max() < 1e-4


async def test_texts_within_the_window_are_embedded_as_before(model_dir, tmp_path):
    embedder = onnx_embedder(model_dir, tmp_path)
    texts = ["cats purr", " ".join(LONG_WORDS[:14]), " ".join(LONG_WORDS * 3)]
    vectors = np.array(await embedder.embed(texts))
    assert np.abs(vectors[:2] - reference_embed(model_dir, texts[:2])).max() < 1e-4  # each in its place
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0)


async def test_a_window_never_starts_inside_a_word(model_dir, tmp_path):
    """ "moons" is two pieces (moon ##s): a window that would end between them ends before."""
    embedder = onnx_embedder(model_dir, tmp_path)
    await embedder.embed(["warm"])  # loads the model and its windows
    text = " ".join(["sun"] * 13 + ["moons"] + ["fish"] * 10)
    split = embedder._windows.split([text])
    assert split.texts == [" ".join(["sun"] * 13), " ".join(["moons"] + ["fish"] * 10)]
    assert split.weights == [13, 12]
