"""Capture on the server: share links and web pages (fetched SSRF-safe) and uploaded files.

The pure converters (chat exports, transcripts, markdown tidy, `Captured`) live in
`memorywiki.formats`, which the CLI uses too. Refusals are ApiErrors (server/errors.py).

    capture_url      fetch a URL and convert it (url.py)
    convert_file     an uploaded file -> markdown (files.py: markitdown, transcripts)
    extract_article  a web page's main text (article.py: trafilatura)
    parse_chatgpt_share, parse_claude_share, share_kind   share pages (share.py)
    fetch_url        the SSRF-safe fetch (fetch.py)
"""

from .article import extract_article
from .fetch import FetchedPage, fetch_url
from .files import convert_file
from .share import parse_chatgpt_share, parse_claude_share, share_kind
from .url import capture_url

__all__ = [
    "FetchedPage",
    "capture_url",
    "convert_file",
    "extract_article",
    "fetch_url",
    "parse_chatgpt_share",
    "parse_claude_share",
    "share_kind",
]
