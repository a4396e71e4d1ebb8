"""Running the benchmark suite from a test: `python -m bench ...` in the repository root (bench/
is not installed), on tiny generated data and the test embedding server instead of
all-MiniLM-L6-v2."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def bench(*args: str, env: dict[str, str], timeout: float = 240) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout
    )


@pytest.fixture
def smoke_env(pg_server, embedding_server, tmp_path):
    """The environment of a --smoke run, with tiny BEIR and LoCoMo sets under tmp_path."""
    from bench.tiny import make_beir, make_locomo

    make_beir(tmp_path / "beir")
    make_locomo(tmp_path / "locomo")
    env = dict(os.environ)
    env.update(
        {
            "OPENAI_BASE_URL": embedding_server.base_url,
            "OPENAI_API_KEY": "x",
            "MEMORYWIKI_EMBEDDER": "openai",
            "MEMORYWIKI_OPENAI_MODEL": "test-embed",
            "DATABASE_URL": pg_server._server.get_uri("postgres"),
        }
    )
    env.pop("MEMORYWIKI_BENCH_COUNTS", None)
    return env
