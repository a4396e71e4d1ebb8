"""ChatGPT / Claude share pages (and the JSON they load) -> Captured."""

from __future__ import annotations

import json
import re
from pathlib import PurePosixPath
from typing import Any
from urllib.parse import urlsplit

from memorywiki.formats import chatgpt as _chatgpt
from memorywiki.formats import claude as _claude
from memorywiki.formats.model import Captured

from ..errors import BadRequest, Unprocessable
from .turbostream import TurboStreamError, decode_html

CHATGPT_HOSTS = {"chatgpt.com", "www.chatgpt.com", "chat.openai.com"}
CLAUDE_HOSTS = {"claude.ai", "www.claude.ai"}
_UUID_RE = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
_NEXT_DATA_RE = re.compile(r'<script[^>]*id="__NEXT_DATA__"[^>]*>(.*?)</script>', re.S | re.I)
_NEXT_F_RE = re.compile(r'self\.__next_f\.push\(\[\s*1\s*,\s*("(?:[^"\\]|\\.)*")\s*\]\)', re.S)
_JSON_SCRIPT_RE = re.compile(r'<script[^>]*type="application/json"[^>]*>(.*?)</script>', re.S | re.I)


def share_kind(url: str) -> str | None:
    """ "chatgpt" / "claude" for share links recognised by host and path, else None."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return None
    host = (parts.hostname or "").lower()
    path = parts.path or "/"
    if host in CHATGPT_HOSTS and path.startswith(("/share/", "/s/")):
        return "chatgpt"
    if host in CLAUDE_HOSTS and path.startswith("/share/"):
        return "claude"
    return None


def claude_snapshot_api_url(url: str) -> str:
    """``https://claude.ai/share/<uuid>`` -> the JSON snapshot endpoint the page reads."""
    m = _UUID_RE.search(urlsplit(url).path)
    if not m:
        raise BadRequest("bad_url", "This claude.ai share link has no share id.")
    return f"https://claude.ai/api/chat_snapshots/{m.group(0)}?rendering_mode=messages&render_all_tools=true"


# ---------------------------------------------------------------- ChatGPT share pages


def looks_like_chatgpt_share(html: str) -> bool:
    return ("streamController.enqueue(" in html and "serverResponse" in html) or (
        "__NEXT_DATA__" in html and '"mapping"' in html
    )


def find_conversation(obj: Any, depth: int = 0) -> tuple[dict[str, Any], dict[str, Any]] | None:
    """Find a dict with a ``mapping`` (the conversation) inside decoded loader data."""
    if depth > 12:
        return None
    if isinstance(obj, dict):
        resp = obj.get("serverResponse")
        if isinstance(resp, dict) and isinstance(resp.get("data"), dict) and "mapping" in resp["data"]:
            return resp["data"], obj
        if isinstance(obj.get("mapping"), dict) and ("current_node" in obj or "linear_conversation" in obj):
            return obj, {}
        for v in obj.values():
            found = find_conversation(v, depth + 1)
            if found:
                return found
    elif isinstance(obj, list):
        for v in obj[:50]:
            found = find_conversation(v, depth + 1)
            if found:
                return found
    return None


def parse_chatgpt_share(html: str, url: str) -> Captured:
    """A chatgpt.com / chat.openai.com share page (React Router turbo-stream, or the older
    ``__NEXT_DATA__`` page) -> Captured with ``## User`` / ``## Assistant`` turns."""
    found = None
    if "streamController.enqueue(" in html:
        try:
            found = find_conversation(decode_html(html))
        except (TurboStreamError, RecursionError):
            found = None
    if not found:
        m = _NEXT_DATA_RE.search(html)
        if m:
            try:
                found = find_conversation(json.loads(m.group(1)))
            except json.JSONDecodeError:
                found = None
    if not found:
        raise Unprocessable(
            "unrecognised_page",
            "This ChatGPT share page has no conversation data (it may be private, deleted, or blocked).",
        )
    conv, wrapper = found
    title, markdown, meta = _chatgpt.render_conversation(conv)
    if not markdown.strip():
        raise Unprocessable("empty", "This shared conversation has no visible messages.")
    share_id = (wrapper or {}).get("sharedConversationId") or _share_id_from_url(url)
    if url:
        meta["url"] = url
    if share_id:
        meta["share_id"] = share_id
    ext = meta.get("conversation_id") or share_id
    return Captured(title, markdown, "chatgpt-share", meta, f"chatgpt-share:{ext}" if ext else None)


def _share_id_from_url(url: str) -> str | None:
    if not url:
        return None
    path = urlsplit(url).path.rstrip("/")
    return PurePosixPath(path).name or None


# ---------------------------------------------------------------- Claude share pages


def _snapshot_from_html(html: str) -> dict[str, Any] | None:
    """Find a JSON object with ``chat_messages`` embedded in an HTML page."""
    texts = []
    m = _NEXT_DATA_RE.search(html)
    if m:
        texts.append(m.group(1))
    texts.extend(s for s in _JSON_SCRIPT_RE.findall(html))
    flight = []
    for lit in _NEXT_F_RE.findall(html):
        try:
            flight.append(json.loads(lit))
        except json.JSONDecodeError:
            continue
    if flight:
        texts.append("".join(flight))
    texts.append(html)
    for text in texts:
        snap = _find_object_with(text, '"chat_messages"')
        if snap is not None:
            return snap
    return None


def _find_object_with(text: str, key: str, max_tries: int = 200) -> dict[str, Any] | None:
    dec = json.JSONDecoder()
    pos = text.find(key)
    while pos != -1:
        start = pos
        tries = 0
        while tries < max_tries:
            start = text.rfind("{", 0, start)
            if start == -1:
                break
            tries += 1
            try:
                obj, _end = dec.raw_decode(text, start)
            except json.JSONDecodeError:
                continue
            found = _dig(obj)
            if found is not None:
                return found
        pos = text.find(key, pos + len(key))
    return None


def _dig(obj: Any, depth: int = 0) -> dict[str, Any] | None:
    if depth > 8:
        return None
    if isinstance(obj, dict):
        if isinstance(obj.get("chat_messages"), list):
            return obj
        for v in obj.values():
            r = _dig(v, depth + 1)
            if r is not None:
                return r
    elif isinstance(obj, list):
        for v in obj[:50]:
            r = _dig(v, depth + 1)
            if r is not None:
                return r
    return None


def parse_claude_share(html_or_json: str, url: str) -> Captured:
    """A claude.ai share: the ``chat_snapshots`` JSON (``chat_messages`` like the export
    format) or a page that embeds it -> Captured."""
    text = html_or_json.lstrip("\ufeff").strip()
    snap = None
    if text.startswith(("{", "[")):
        try:
            snap = _dig(json.loads(text))
        except json.JSONDecodeError:
            snap = None
    if snap is None:
        snap = _snapshot_from_html(text)
    if snap is None:
        raise Unprocessable(
            "unrecognised_page",
            "No shared Claude conversation found at this link (it may be private, deleted, or blocked).",
        )
    title, markdown, meta = _claude.render_conversation(snap)
    if not markdown.strip():
        raise Unprocessable("empty", "This shared conversation has no visible messages.")
    if snap.get("snapshot_name") and not snap.get("name"):
        title = snap["snapshot_name"]
    creator = snap.get("creator")
    if isinstance(creator, dict) and creator.get("full_name"):
        meta["author"] = creator["full_name"]
    share_id = snap.get("uuid") or _share_id_from_url(url)
    if url:
        meta["url"] = url
    if share_id:
        meta["share_id"] = share_id
    return Captured(title, markdown, "claude-share", meta, f"claude-share:{share_id}" if share_id else None)
