"""Settings read once from the environment, so every module sees the same values."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

import platformdirs


def default_data_dir() -> Path:
    return Path(platformdirs.user_data_dir("memorywiki"))


def _float(name: str, default: float) -> float:
    value = os.environ.get(name)
    return float(value) if value else default


def _int(name: str, default: int) -> int:
    value = os.environ.get(name)
    return int(value) if value else default


@dataclass(frozen=True)
class Settings:
    database_url: str | None = None
    data_dir: Path = field(default_factory=default_data_dir)
    public_url: str | None = None
    embedder: str = "auto"  # openai | local | none | auto
    openai_model: str = "text-embedding-3-small"
    local_model_dir: str | None = None
    embed_batch: int = 128
    embed_timeout: float = 30.0
    embed_max_retries: int = 2
    in_process_worker: bool = True
    max_body_bytes: int = 5 * 1024 * 1024
    bm25_k1: float = 1.2
    bm25_b: float = 0.75

    @classmethod
    def from_env(cls, **overrides) -> "Settings":
        env = os.environ
        values = dict(
            database_url=env.get("DATABASE_URL") or None,
            data_dir=Path(env["MEMORYWIKI_DATA_DIR"]) if env.get("MEMORYWIKI_DATA_DIR") else default_data_dir(),
            public_url=(env.get("MEMORYWIKI_PUBLIC_URL") or None),
            embedder=env.get("MEMORYWIKI_EMBEDDER", "auto").strip().lower() or "auto",
            openai_model=env.get("MEMORYWIKI_OPENAI_MODEL", "text-embedding-3-small"),
            local_model_dir=env.get("MEMORYWIKI_LOCAL_MODEL") or None,
            embed_batch=_int("MEMORYWIKI_EMBED_BATCH", 128),
            embed_timeout=_float("MEMORYWIKI_EMBED_TIMEOUT", 30.0),
            embed_max_retries=_int("MEMORYWIKI_EMBED_RETRIES", 2),
            in_process_worker=env.get("MEMORYWIKI_WORKER", "inprocess") != "external",
            max_body_bytes=_int("MEMORYWIKI_MAX_BODY_BYTES", 5 * 1024 * 1024),
            bm25_k1=_float("MEMORYWIKI_BM25_K1", 1.2),
            bm25_b=_float("MEMORYWIKI_BM25_B", 0.75),
        )
        values.update({k: v for k, v in overrides.items() if v is not None})
        return cls(**values)
