"""Pure converters shared by the server and the CLI: chat exports, transcripts, markdown tidy.

Importable without the server's dependencies (no Starlette, no database); errors are
`FormatError`, which the server maps to an HTTP status in one place (server/errors.py).
"""

from .exports import count_conversations, export_kind, iter_chatgpt_export, iter_claude_export
from .model import Captured, FormatError
from .transcript import transcript_markdown

__all__ = [
    "Captured",
    "FormatError",
    "count_conversations",
    "export_kind",
    "iter_chatgpt_export",
    "iter_claude_export",
    "transcript_markdown",
]
