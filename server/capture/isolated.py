"""markitdown runs in a child process, started with ONNX Runtime's telemetry switched off.

markitdown imports magika, which loads onnxruntime; from 1.32 on Linux, loading onnxruntime
creates ~/.cache/Microsoft/DeveloperTools/.onnxruntime/ with a persistent `deviceid` file and
an offline event store (onnxruntime.db) that it uploads later. The only switch is the
environment (ORT_DISABLE_TELEMETRY, read once when the library loads; ORT_TELEMETRY_DISABLED
in newer releases), and the server never writes its own environment, so converters run in a
child given that environment explicitly. The child also gets nothing else of the server's
environment (no DATABASE_URL, no API keys) while it parses an untrusted file, can be killed on
a timeout, and the server process never loads onnxruntime at all.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from ..errors import Unprocessable

CHILD = Path(__file__).with_name("markitdown_child.py")
TIMEOUT = 120.0  # seconds for one file; a converter stuck on a hostile file is killed
# the whole environment of the child: telemetry off, UTF-8 I/O, and our own import path
CHILD_ENV = {"ORT_DISABLE_TELEMETRY": "1", "ORT_TELEMETRY_DISABLED": "1", "PYTHONUTF8": "1",
             "PYTHONDONTWRITEBYTECODE": "1"}


def child_env() -> dict[str, str]:
    return {**CHILD_ENV, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}


def convert_with_markitdown(data: bytes, extension: str, name: str) -> tuple[str, str | None]:
    """(markdown, title) of one file, converted by markitdown in a child process."""
    try:
        done = subprocess.run([sys.executable, str(CHILD), extension, name], input=data, capture_output=True,
                              env=child_env(), timeout=TIMEOUT, check=False)
    except subprocess.TimeoutExpired:
        raise Unprocessable("convert_timeout", f"{name} took over {TIMEOUT:.0f} s to convert") from None
    try:
        answer = json.loads(done.stdout)
    except ValueError:
        why = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise Unprocessable("corrupt_file", f"{name} could not be converted "
                                            f"({why[-1][:200] if why else f'exit {done.returncode}'}).") from None
    if "error" in answer:
        raise Unprocessable("corrupt_file", f"{name} could not be converted ({answer['error']}).")
    return answer["markdown"], answer.get("title")
