"""Capture a URL: fetch it (SSRF-safe) and hand it to the converter its content calls for."""

from __future__ import annotations

import asyncio
import functools
import json
from pathlib import PurePosixPath
from urllib.parse import urlsplit

from memorywiki.formats import chatgpt as _chatgpt
from memorywiki.formats.model import Captured

from ..config import Settings
from ..errors import ApiError, UnsupportedType
from .article import extract_article
from .fetch import FetchedPage, fetch_url
from .files import convert_file
from .share import (
    claude_snapshot_api_url,
    find_conversation,
    looks_like_chatgpt_share,
    parse_chatgpt_share,
    parse_claude_share,
    share_kind,
)


def _is_claude_snapshot_json(page: FetchedPage) -> bool:
    return page.content_type in ("application/json", "text/json") or page.content_type.endswith("+json")


async def capture_url(
    url: str,
    *,
    title: str | None = None,
    allow_loopback: bool = False,
    max_bytes: int = Settings.fetch_max_bytes,
    timeout: float = Settings.fetch_timeout,
) -> Captured:
    """Fetch ``url`` (SSRF-safe) and convert it.

    * chatgpt.com / chat.openai.com ``/share/...`` -> ``parse_chatgpt_share``
    * claude.ai ``/share/<uuid>`` -> the ``chat_snapshots`` JSON -> ``parse_claude_share``
    * any other page is sniffed: a ChatGPT share page or a Claude snapshot JSON (mirrors,
      saved copies) is parsed as such; a PDF/DOCX/PPTX/text body goes through
      ``convert_file``; HTML goes through article extraction.
    """
    url = (url or "").strip()
    fetch = functools.partial(fetch_url, allow_loopback=allow_loopback, max_bytes=max_bytes, timeout=timeout)
    kind = share_kind(url)
    if kind == "claude":
        api = claude_snapshot_api_url(url)
        try:
            page = await fetch(api, accept="application/json")
            cap = parse_claude_share(page.text(), url)
        except ApiError as exc:
            if exc.code in ("bad_url", "blocked_address"):
                raise
            page = await fetch(url)
            cap = parse_claude_share(page.text(), url)
        return _with_title(cap, title)

    page = await fetch(url)
    final = page.final_url
    if kind == "chatgpt":
        cap = parse_chatgpt_share(page.text(), url)
        return _with_title(cap, title)

    ctype = page.content_type
    if ctype in ("text/html", "application/xhtml+xml") or (not ctype and page.body.lstrip()[:1] == b"<"):
        html = page.text()
        if looks_like_chatgpt_share(html):
            try:
                return _with_title(parse_chatgpt_share(html, url), title)
            except ApiError:
                pass
        if "chat_messages" in html:
            try:
                return _with_title(parse_claude_share(html, url), title)
            except ApiError:
                pass
        cap = await asyncio.to_thread(extract_article, html, final, title)
        cap.meta["url"] = url
        if final != url:
            cap.meta["final_url"] = final
        return cap
    if _is_claude_snapshot_json(page):
        text = page.text()
        if '"chat_messages"' in text:
            return _with_title(parse_claude_share(text, url), title)
        if '"mapping"' in text:
            try:
                conv = json.loads(text)
            except json.JSONDecodeError:
                conv = None
            found = find_conversation(conv) if conv is not None else None
            if found:
                t, md, meta = _chatgpt.render_conversation(found[0])
                meta["url"] = url
                return _with_title(Captured(t, md, "chatgpt-share", meta), title)
        raise UnsupportedType("unsupported_type", f"{url} is JSON that is not a shared conversation.")

    name = PurePosixPath(urlsplit(final).path).name or "download"
    cap = await asyncio.to_thread(convert_file, page.body, name, ctype, title)
    cap.meta["url"] = url
    if final != url:
        cap.meta["final_url"] = final
    return cap


def _with_title(cap: Captured, title: str | None) -> Captured:
    if title and title.strip():
        cap.title = title.strip()
    return cap
