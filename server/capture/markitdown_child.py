"""Convert files with markitdown in a long-lived child process (started by isolated.py, by path).

Protocol on stdin/stdout, one file at a time: a JSON line {"extension", "name", "size"} and
`size` bytes of the file in; one JSON line {"markdown", "title"} or {"error"} out. Exits when
stdin closes (the server went away). Imports nothing of memorywiki, so it starts as fast as
markitdown loads, once.
"""

from __future__ import annotations

import io
import json
import os
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from markitdown import MarkItDown


def convert(converter: MarkItDown, data: bytes, extension: str, name: str) -> dict[str, Any]:
    from markitdown import StreamInfo

    try:
        result = converter.convert_stream(io.BytesIO(data), stream_info=StreamInfo(extension=extension, filename=name))
        return {"markdown": result.markdown or "", "title": result.title}
    except Exception as exc:  # the parent reports it as a corrupt file
        lines = [line for line in str(exc).strip().splitlines() if line.strip()]
        return {"error": (lines[-1] if lines else type(exc).__name__).strip(" -")[:200]}


def main() -> None:
    from markitdown import MarkItDown

    # answers go to the real stdout; anything a library prints goes to stderr instead of into them
    stdout = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    converter = MarkItDown(enable_plugins=False)
    stdin = sys.stdin.buffer
    while True:
        header = stdin.readline()
        if not header:
            return
        job = json.loads(header)
        data = stdin.read(job["size"])
        stdout.write(json.dumps(convert(converter, data, job["extension"], job["name"])) + "\n")
        stdout.flush()


if __name__ == "__main__":
    main()
