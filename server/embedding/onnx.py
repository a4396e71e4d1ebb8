"""The local model on ONNX Runtime (no torch), and the child process the server runs it in."""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import os
import threading
import weakref
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..config import Settings
from .base import EmbedderError, importable
from .local import LocalEmbedder

if TYPE_CHECKING:
    from .question_board import QuestionBoard

LOAD_TIMEOUT = 300.0  # seconds the warm-up waits for the child to build and load the model

log = logging.getLogger("memorywiki.embedders")


class OnnxEmbedder(LocalEmbedder):
    """The same model on ONNX Runtime: the graph is built once from the model's weights into
    the data dir (server/embedding/onnx_bert.py, no torch), then only onnxruntime and tokenizers run.
    Its vectors match sentence-transformers', so it shares their space name
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
        MEMORYWIKI_LOCAL_THREADS): a question is too small to share out over threads, so the
        cores take different questions (bench/results, "Local embedder")."""
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
            model_file = onnx_bert.export(path, target, name=self.name.split(":", 1)[1], quantize=self.quantize)
        except onnx_bert.ModelFormatError as exc:
            if self.quantize or not importable("sentence_transformers"):
                raise EmbedderError(f"cannot run {path} on ONNX Runtime: {exc}") from exc
            log.warning("%s; using sentence-transformers (torch) instead", exc)
            self._fallback = LocalEmbedder(path)
            return self._fallback._load(path)
        except ImportError as exc:
            raise EmbedderError(
                f"local embedder needs onnx, onnxruntime, tokenizers and safetensors: "
                f"pip install 'memorywiki[onnx]' ({exc})"
            ) from exc
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


# In the int8 graph ONNX Runtime fuses each residual Add and its LayerNormalization into a
# SkipLayerNormalization kernel that is slower for questions; indexing keeps it, as docs' vectors
# lose quality without it. Questions' vectors barely move, so the int8 space keeps its name
# (bench/results/README.md, the int8 questions).
QUESTION_DISABLED_FUSIONS = ("SkipLayerNormFusion",)


def onnx_session(
    model_file: Path, threads: int, *, disabled_fusions: tuple[str, ...] = (), optimized_to: Path | None = None
) -> Any:
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
    return onnxruntime.InferenceSession(
        str(model_file), options, providers=["CPUExecutionProvider"], disabled_optimizers=list(disabled_fusions) or None
    )


class OnnxChildEmbedder:
    """The ONNX embedder as the server runs it: in a child process of its own.

    Loading onnxruntime writes a device id under ~/.cache unless the environment says not to
    (server/children.py); the server never writes its own environment, so the model runs in a
    child started with telemetry off (server/embedding/child.py, an OnnxEmbedder at the server's
    priority). Questions still go first there, and a round trip over the child's pipes costs
    little beside a pass (bench/results, "Local embedder"). A child that dies fails what was
    in flight with EmbedderError (recall answers from full text) and is replaced on next use."""

    backend = "onnx"

    def __init__(self, settings: Settings, *, timeout: float | None = None) -> None:
        self.settings = settings  # the child builds its OnnxEmbedder from them
        self.name = OnnxEmbedder(settings.local_model_dir, quantize=settings.local_quantize).name
        self._board: QuestionBoard | None = None
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

    def _running(self) -> _Child:
        with self._lock:
            if self._child is None or not self._child.alive():
                self._child = _Child(replace(self.settings, question_board=self.question_board()))
            return self._child

    def _submit(self, kind: str, texts: list[str]) -> concurrent.futures.Future[list[list[float]]]:
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

        self._pending: dict[int, concurrent.futures.Future[list[list[float]]]] = {}
        self._pending_lock = threading.Lock()
        self._next_id = 0
        self._write_lock = threading.Lock()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "memorywiki.server.embedding.child"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=child_env(),
        )
        self._write(pickle.dumps(asdict(settings)))
        threading.Thread(target=self._read, name="onnx-child-reader", daemon=True).start()

    def alive(self) -> bool:
        return self.proc.poll() is None

    def _write(self, payload: bytes) -> None:
        assert self.proc.stdin is not None
        with self._write_lock:
            self.proc.stdin.write(len(payload).to_bytes(4, "big") + payload)
            self.proc.stdin.flush()

    def send(self, kind: str, texts: list[str]) -> concurrent.futures.Future[list[list[float]]]:
        import pickle

        future: concurrent.futures.Future[list[list[float]]] = concurrent.futures.Future()
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
