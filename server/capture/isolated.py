"""markitdown runs in a child process, started with ONNX Runtime's telemetry switched off.

markitdown imports magika, which loads onnxruntime, which writes a device id under ~/.cache
unless its environment says not to (server/children.py), and the server never writes its own
environment, so conversions run in a child given that environment explicitly. The child also
gets nothing else of the server's environment (no DATABASE_URL, no API keys) while it parses
untrusted files, is killed when a file takes too long, and the server process never loads
onnxruntime at all.

One child per server process, started on first use and kept (loading markitdown takes
seconds, converting a page a fraction of one); conversions take turns; a child that dies or
times out is replaced on the next file.
"""

from __future__ import annotations

import json
import select
import subprocess
import sys
import threading
from pathlib import Path

from ..children import child_env
from ..errors import Unprocessable

CHILD = Path(__file__).with_name("markitdown_child.py")
TIMEOUT = 120.0  # seconds for one file; a converter stuck on a hostile file is killed


class Converter:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._proc: subprocess.Popen[bytes] | None = None

    def _child(self) -> subprocess.Popen[bytes]:
        if self._proc is None or self._proc.poll() is not None:
            self._proc = subprocess.Popen(
                [sys.executable, str(CHILD)],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                env=child_env(),
            )
        return self._proc

    def _stop(self) -> None:
        if self._proc is not None:
            self._proc.kill()
            self._proc.wait()
            self._proc = None

    def convert(self, data: bytes, extension: str, name: str) -> tuple[str, str | None]:
        """(markdown, title) of one file."""
        with self._lock:
            proc = self._child()
            try:
                job = json.dumps({"extension": extension, "name": name, "size": len(data)})
                stdin, stdout = proc.stdin, proc.stdout
                assert stdin is not None and stdout is not None  # both are pipes (_child)
                stdin.write(job.encode() + b"\n" + data)
                stdin.flush()
                ready, _, _ = select.select([stdout], [], [], TIMEOUT)
                line = stdout.readline() if ready else None
            except OSError:  # the child died under us
                line = b""
            if line is None:
                self._stop()
                raise Unprocessable("convert_timeout", f"{name} took over {TIMEOUT:.0f} s to convert")
            if not line:
                self._stop()
                raise Unprocessable("corrupt_file", f"{name} could not be converted (the converter stopped).")
        answer = json.loads(line)
        if "error" in answer:
            raise Unprocessable("corrupt_file", f"{name} could not be converted ({answer['error']}).")
        return answer["markdown"], answer.get("title")


_converter = Converter()


def convert_with_markitdown(data: bytes, extension: str, name: str) -> tuple[str, str | None]:
    """(markdown, title) of one file, converted by markitdown in the child process."""
    return _converter.convert(data, extension, name)
