"""The environment of every child process the server starts (markitdown, the ONNX embedder,
the indexing worker): ONNX Runtime's telemetry off, and nothing else of the server's own
environment (no DATABASE_URL, no API keys: a child gets what it needs on its stdin).

Loading onnxruntime (1.32 on Linux) creates ~/.cache/Microsoft/DeveloperTools/.onnxruntime/
with a persistent `deviceid` file and an offline event store (onnxruntime.db) that it uploads
later. The only switch is the environment (ORT_DISABLE_TELEMETRY, read once when the library
loads; ORT_TELEMETRY_DISABLED in newer releases): the write happens on `import onnxruntime`,
before any of its functions could be called, so `onnxruntime.disable_telemetry_events()` comes
too late. The server never writes its own environment and never imports onnxruntime; whatever
needs it runs in a child given this environment explicitly (tests/test_onnx_privacy.py).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

QUIET = {"ORT_DISABLE_TELEMETRY": "1", "ORT_TELEMETRY_DISABLED": "1", "PYTHONUTF8": "1", "PYTHONDONTWRITEBYTECODE": "1"}


def child_env() -> dict[str, str]:
    """The whole environment of a child: telemetry off, UTF-8 I/O, our own import path, and
    the server's home, so that anything a library might still write lands where the user's
    own files are (and where a test with a fresh HOME looks), not in the account's default."""
    return {**QUIET, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p), "HOME": str(Path.home())}
