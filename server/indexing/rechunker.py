"""Re-chunking where no indexing worker runs: docs whose rows another chunker made (older rules,
another MEMORYWIKI_CHUNK_MAX_CHARS) are chunked again, a batch at a time, until none is left.

Re-chunking embeds nothing, so a server without an embedder (full text only) does it too, and
its full text reads the new rows at once; the indexing worker does the same step itself before
it claims owed work (Worker.run_once)."""

from __future__ import annotations

from typing import Any

from ..store.chunks import rechunk_stale
from ..store.db import Database
from .loop import OwedWork


class Rechunker(OwedWork):
    """Chunks stale docs again until a round finds none, then stops (every later save records
    its chunker, so stale rows come only from before this process started)."""

    job = "re-chunking"

    def __init__(self, db: Database, *, batch: int = 32, **loop: Any) -> None:
        super().__init__(db, **loop)
        self.batch = batch

    async def run_once(self) -> int:
        done = await self.db.write(lambda conn: rechunk_stale(conn, self.batch))
        if not done:
            self.stop()
        return len(done)
