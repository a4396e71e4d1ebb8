"""The ONNX embedding child process (started by onnx.OnnxChildEmbedder with telemetry
off: server/children.py). Framing and messages are described in onnx._Child.

A reader (the main thread) takes requests as they come: a question is counted as waiting at
once, so the indexing pass that follows holds back, and runs on the question thread;
indexing texts run on a thread of their own, in passes that yield to questions (the gate of
LocalEmbedder). Exits when stdin closes: the server stopped, even by kill -9.
"""

from __future__ import annotations

import logging
import os
import pickle
import sys
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

from ..config import Settings
from .base import EmbedderError
from .factory import make_local_embedder
from .local import LocalEmbedder


def main() -> None:
    # answers go to the real stdout; anything a library prints goes to stderr instead of into them
    out = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(name)s (embedding child) %(message)s")
    stdin = sys.stdin.buffer
    write_lock = threading.Lock()

    def read() -> bytes | None:
        header = stdin.read(4)
        if len(header) < 4:
            return None
        return stdin.read(int.from_bytes(header, "big"))

    def answer(request: int, error: str | None, vectors: list[list[float]] | None = None) -> None:
        array = np.asarray(vectors if vectors else [], dtype=np.float32)
        dim = array.shape[1] if array.ndim == 2 else 0
        payload = pickle.dumps((request, error, dim, array.tobytes()))
        with write_lock:
            out.write(len(payload).to_bytes(4, "big") + payload)
            out.flush()

    first = read()
    if first is None:
        return
    data = pickle.loads(first)
    data["data_dir"] = Path(data["data_dir"])
    embedder: LocalEmbedder = make_local_embedder(Settings(**data), in_process=True)  # type: ignore[assignment]
    if embedder.gate.board is not None:  # this process answers the questions: it writes the board,
        embedder.gate.board.publish(0, 0)  # from zero (a child that died left its count behind)

    def run(request: int, work: Callable[[list[str]], list[list[float]]], texts: list[str]) -> None:
        try:
            answer(request, None, work(texts))
        except EmbedderError as exc:
            answer(request, str(exc))
        except Exception as exc:  # an answer in any case: the server is waiting for it
            logging.getLogger("memorywiki.embedders").exception("embedding failed")
            answer(request, f"local embedding failed: {exc!r}")

    def questions(texts: list[str]) -> list[list[float]]:
        try:
            return embedder.encode_questions(texts)
        finally:
            embedder.gate.question_done()

    def load(_texts: list[str]) -> list[list[float]]:
        questions(["load"])  # loads (or builds) the model, and a first pass warms it up
        return []

    question_lane = ThreadPoolExecutor(1, thread_name_prefix="questions")
    bulk_lane = ThreadPoolExecutor(1, thread_name_prefix="bulk")
    while (frame := read()) is not None:
        request, kind, texts = pickle.loads(frame)
        if kind == "bulk":
            bulk_lane.submit(run, request, embedder.encode_bulk, texts)
        else:
            embedder.gate.question_arrives()  # before the next bulk pass can start
            question_lane.submit(run, request, load if kind == "load" else questions, texts)
    os._exit(0)  # the server is gone: nobody is left to read an answer


if __name__ == "__main__":
    main()
