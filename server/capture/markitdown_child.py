"""Convert one file with markitdown in a child process (run by path: see isolated.py).

Reads the file's bytes on stdin; argv: the extension (".pdf", ".docx", ".pptx", ".html") and
the file name. Writes one JSON object on stdout: {"markdown", "title"} or {"error"}. Imports
nothing of memorywiki, so it starts as fast as markitdown loads.
"""

import io
import json
import sys


def main() -> None:
    extension, name = sys.argv[1], sys.argv[2]
    data = sys.stdin.buffer.read()
    try:
        from markitdown import MarkItDown, StreamInfo

        result = MarkItDown(enable_plugins=False).convert_stream(
            io.BytesIO(data), stream_info=StreamInfo(extension=extension, filename=name))
        answer = {"markdown": result.markdown or "", "title": result.title}
    except Exception as exc:  # the parent reports it as a corrupt file
        lines = [line for line in str(exc).strip().splitlines() if line.strip()]
        answer = {"error": (lines[-1] if lines else type(exc).__name__).strip(" -")[:200]}
    sys.stdout.write(json.dumps(answer))


if __name__ == "__main__":
    main()
