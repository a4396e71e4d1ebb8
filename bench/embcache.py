"""A disk cache of embedding vectors for benchmark reruns (bench only, never the server).

Embedding SciFact with all-MiniLM-L6-v2 on the 2-core bench machine takes ~8 minutes, and
every ranking change is measured on the same texts again. Vectors are keyed by
sha256(embedder name, text), so a cached vector is exactly the one the same model gave for
the same input; a new text (a new chunking) is embedded and added. One SQLite file per
cache folder, written in WAL mode so a server and a worker process can share it.

Used by `bench.proc` when MEMORYWIKI_BENCH_EMBED_CACHE names a folder, and by
`bench.studies.ablation` for its in-process studies.
"""

from __future__ import annotations

import hashlib
import sqlite3
import threading
from pathlib import Path

import numpy as np

SCHEMA = "CREATE TABLE IF NOT EXISTS vectors (key BLOB PRIMARY KEY, vector BLOB NOT NULL)"


def _key(name: str, text: str) -> bytes:
    return hashlib.sha256(f"{name}\0{text}".encode()).digest()


class VectorCache:
    """get / put float32 vectors by (embedder name, text)."""

    def __init__(self, folder: Path):
        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        self.path = folder / "vectors.sqlite"
        self._local = threading.local()
        with self._conn() as conn:
            conn.execute(SCHEMA)

    def _conn(self) -> sqlite3.Connection:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = sqlite3.connect(self.path, timeout=60)
            conn.execute("PRAGMA journal_mode=WAL")
            self._local.conn = conn
        return conn

    def get_many(self, name: str, texts: list[str]) -> list[np.ndarray | None]:
        conn = self._conn()
        keys = [_key(name, t) for t in texts]
        found: dict[bytes, np.ndarray] = {}
        for i in range(0, len(keys), 500):
            part = keys[i : i + 500]
            rows = conn.execute(
                f"SELECT key, vector FROM vectors WHERE key IN ({','.join('?' * len(part))})", part
            ).fetchall()
            found.update((k, np.frombuffer(v, dtype=np.float32)) for k, v in rows)
        return [found.get(k) for k in keys]

    def put_many(self, name: str, texts: list[str], vectors) -> None:
        conn = self._conn()
        with conn:
            conn.executemany(
                "INSERT OR REPLACE INTO vectors (key, vector) VALUES (?, ?)",
                [
                    (_key(name, t), np.asarray(v, dtype=np.float32).tobytes())
                    for t, v in zip(texts, vectors, strict=False)
                ],
            )


class CachedEmbedder:
    """Wraps an Embedder: answers cached texts from disk, embeds the rest in one call."""

    def __init__(self, inner, cache: VectorCache):
        self.inner = inner
        self.name = inner.name
        self.cache = cache

    async def embed(self, texts: list[str]) -> list[list[float]]:
        return await self._cached(self.inner.embed, texts)

    async def _cached(self, call, texts: list[str]) -> list[list[float]]:
        cached = self.cache.get_many(self.name, texts)
        missing = [i for i, v in enumerate(cached) if v is None]
        if missing:
            fresh = await call([texts[i] for i in missing])
            self.cache.put_many(self.name, [texts[i] for i in missing], fresh)
            for i, v in zip(missing, fresh, strict=False):
                cached[i] = np.asarray(v, dtype=np.float32)
        return [v.astype(np.float64).tolist() for v in cached]

    async def embed_questions(self, texts: list[str]) -> list[list[float]]:
        """Recall's questions: the same vectors as `embed` gives (the question path of every
        embedder is the same model), so they share the cache."""
        return await self._cached(self.inner.embed_questions, texts)
