"""Capture: turn share links, web pages, files and chat exports into markdown docs.

Public interface (the HTTP routes and the CLI call these):

    from memorywiki.server.capture import (
        Captured, CaptureError,                      # model
        fetch_url, FetchedPage,                      # SSRF-safe fetch
        capture_url, parse_chatgpt_share, parse_claude_share,
        convert_file,
        iter_chatgpt_export, iter_claude_export, count_conversations, export_kind,
    )
"""

from .exports import count_conversations, export_kind, iter_chatgpt_export, iter_claude_export
from .fetch import FetchedPage, fetch_url, loopback_allowed_from_env
from .files import convert_file
from .model import Captured, CaptureError
from .share import capture_url, extract_article, parse_chatgpt_share, parse_claude_share, share_kind

__all__ = [
    "Captured",
    "CaptureError",
    "FetchedPage",
    "fetch_url",
    "loopback_allowed_from_env",
    "capture_url",
    "extract_article",
    "parse_chatgpt_share",
    "parse_claude_share",
    "share_kind",
    "convert_file",
    "iter_chatgpt_export",
    "iter_claude_export",
    "count_conversations",
    "export_kind",
]
