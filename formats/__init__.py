"""Pure converters shared by the server and the CLI: chat exports, transcripts, markdown tidy.

Importable without the server's dependencies (no Starlette, no database); errors are
`FormatError`, which the server maps to an HTTP status in one place (server/errors.py).
Names load on first use, so a hook that needs one small module (`formats.storable`) does not
pay for markdown-it and the export readers.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

_WHERE = {
    "Captured": ".model",
    "FormatError": ".model",
    "count_conversations": ".exports",
    "export_kind": ".exports",
    "iter_chatgpt_export": ".exports",
    "iter_claude_export": ".exports",
    "transcript_markdown": ".transcript",
}

__all__ = sorted(_WHERE)


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(_WHERE[name], __name__), name)
