"""What the question lane is doing, shared with the indexing child process.

A server with the local embedder embeds its questions in one child process
(server/embedding/child.py) and indexes in another (worker.WorkerProcess), each with its own
model. For indexing to yield to questions across that process boundary, the embedding child
publishes here the questions it has in flight and how many it has answered, and the indexing
child's gate (scheduling.QuestionsFirst) reads them before each forward pass. Two integers in a
small shared file (in /dev/shm when there is one), written by one process only: no lock needed,
a stale read only delays or advances one pass.
"""

from __future__ import annotations

import mmap
import os
import struct
import tempfile
from pathlib import Path

_LAYOUT = struct.Struct("<qq")  # questions in flight, questions answered (since the writer started)


class QuestionBoard:
    def __init__(self, path: str | Path) -> None:
        self.path = str(path)
        with open(self.path, "r+b") as fh:
            self._map = mmap.mmap(fh.fileno(), _LAYOUT.size)

    @classmethod
    def create(cls) -> QuestionBoard:
        """A new board in a private temp file (mode 0600); `unlink` removes it."""
        shm = "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) else None
        fd, path = tempfile.mkstemp(prefix="memorywiki-questions-", dir=shm)
        try:
            os.ftruncate(fd, _LAYOUT.size)
        finally:
            os.close(fd)
        return cls(path)

    def publish(self, in_flight: int, answered: int) -> None:
        _LAYOUT.pack_into(self._map, 0, in_flight, answered)

    def read(self) -> tuple[int, int]:
        """(questions in flight, questions answered)."""
        return _LAYOUT.unpack_from(self._map, 0)

    def close(self) -> None:
        self._map.close()

    def unlink(self) -> None:
        self.close()
        try:
            os.unlink(self.path)
        except FileNotFoundError:
            pass
