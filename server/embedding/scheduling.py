"""Questions first: indexing's forward passes wait their turn behind recall's questions."""

from __future__ import annotations

import threading
import time
from typing import Any


class QuestionsFirst:
    """Questions before bulk work, with a floor so that bulk work still gets done.

    A bulk pass starts when no question waits or runs. Bulk texts are encoded a few at a time
    (LocalEmbedder.bulk_batch), so a question that arrives during a large page waits for no
    sub-batch at all: it runs at once, beside at most the one sub-batch already started.

    That rule alone starves indexing under a steady stream of questions that never leaves the
    lane empty (bench/results/underload.md). So a waiting bulk pass goes anyway once
    `floor_questions` questions have been answered, or `floor_ms` have passed, since it began
    to wait; and while questions flow (one answered since the last bulk pass, or one waiting) a
    pass takes only `floor_batch` texts, so a question that arrives during it waits a few ms,
    not a whole sub-batch.

    `board`: when the questions are answered in another process (the indexing child of a
    server, see server/embedding/question_board.py), their counts are read from there; the
    process that answers questions publishes them there.
    """

    POLL_S = 0.002  # how often a bulk pass waiting on another process's questions looks again

    def __init__(
        self, *, floor_questions: int = 8, floor_ms: float = 500.0, floor_batch: int = 1, board: Any = None
    ) -> None:
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
