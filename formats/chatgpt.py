"""Render a ChatGPT conversation object (export or share page) to markdown turns."""

from __future__ import annotations

import datetime as _dt
from typing import Any

from .mdutil import render_turns, strip_citations

# content types that carry what the user saw; everything else (thoughts, reasoning_recap,
# code sent to tools, execution_output, browsing displays, editable context...) is noise
_VISIBLE_TYPES = {"text", "multimodal_text"}
_ROLE_NAMES = {"user": "User", "assistant": "Assistant"}


def iso_time(ts: Any) -> str | None:
    if isinstance(ts, (int, float)) and ts > 0:
        try:
            return _dt.datetime.fromtimestamp(ts, _dt.UTC).isoformat()
        except (OverflowError, OSError, ValueError):
            return None
    if isinstance(ts, str) and ts:
        return ts
    return None


def active_path(conv: dict[str, Any]) -> list[dict[str, Any]]:
    """Nodes of the branch the user saw last: ``current_node`` up to the root, reversed.

    Falls back to ``linear_conversation`` (share pages), then to following the last child
    from the root.
    """
    mapping = conv.get("mapping") or {}
    if not isinstance(mapping, dict):
        mapping = {}
    current = conv.get("current_node")
    if current and current in mapping:
        path, seen = [], set()
        node_id = current
        while node_id and node_id in mapping and node_id not in seen:
            seen.add(node_id)
            node = mapping[node_id]
            path.append(node)
            node_id = node.get("parent")
        path.reverse()
        return path
    linear = conv.get("linear_conversation")
    if isinstance(linear, list) and linear:
        out = []
        for item in linear:
            if isinstance(item, dict):
                node = mapping.get(item.get("id")) or item
                out.append(node)
        return out
    roots = [n for n in mapping.values() if isinstance(n, dict) and not n.get("parent")]
    if not roots:
        return []
    path, seen = [], set()
    node = roots[0]
    while isinstance(node, dict) and node.get("id") not in seen:
        seen.add(node.get("id"))
        path.append(node)
        children = node.get("children") or []
        node = mapping.get(children[-1]) if children else None
    return path


def _part_text(part: Any) -> str:
    if isinstance(part, str):
        return part
    if isinstance(part, dict):
        ctype = part.get("content_type")
        if ctype == "image_asset_pointer":
            return "*[image]*"
        if ctype == "audio_transcription":
            return part.get("text") or ""
        text = part.get("text")
        if isinstance(text, str):
            return text
    return ""


def message_turn(msg: Any) -> tuple[str, str] | None:
    """(role, markdown) for a message the user saw, or None for noise."""
    if not isinstance(msg, dict):
        return None
    author = msg.get("author") or {}
    role = author.get("role")
    meta = msg.get("metadata") or {}
    content = msg.get("content") or {}
    ctype = content.get("content_type")
    if meta.get("is_visually_hidden_from_conversation") or meta.get("is_redacted"):
        return None
    if meta.get("is_user_system_message") or meta.get("reasoning_status"):
        return None
    if role == "tool":
        # a generated image is the visible answer to "make me a picture"
        parts = content.get("parts") or []
        if any(isinstance(p, dict) and p.get("content_type") == "image_asset_pointer" for p in parts):
            return ("Assistant", "*[image]*")
        return None
    if role not in _ROLE_NAMES:
        return None
    if msg.get("recipient") not in (None, "all"):
        return None  # a call to a tool
    if msg.get("channel") not in (None, "final"):
        return None  # analysis / commentary channels
    if ctype not in _VISIBLE_TYPES:
        return None
    parts = content.get("parts") or []
    texts = [t for t in (_part_text(p).strip() for p in parts) if t]
    text = strip_citations("\n\n".join(texts)).strip()
    attachments = [str(a["name"]) for a in meta.get("attachments") or [] if isinstance(a, dict) and a.get("name")]
    if attachments and role == "user":
        text = (text + "\n\n" if text else "") + "*Attachments: " + ", ".join(attachments) + "*"
    if not text:
        return None
    return (_ROLE_NAMES[role], text)


def message_time(msg: Any) -> _dt.datetime | None:
    """When a message was written (UTC), if the conversation says."""
    ts = msg.get("create_time") if isinstance(msg, dict) else None
    if isinstance(ts, (int, float)) and ts > 0:
        try:
            return _dt.datetime.fromtimestamp(ts, _dt.UTC)
        except (OverflowError, OSError, ValueError):
            return None
    return None


def render_conversation(conv: dict[str, Any]) -> tuple[str, str, dict[str, Any]]:
    """(title, markdown, meta) for a ChatGPT conversation dict."""
    turns = []
    for node in active_path(conv):
        msg = node.get("message") if isinstance(node, dict) else None
        turn = message_turn(msg)
        if turn:
            turns.append((*turn, message_time(msg)))
    markdown = render_turns(turns)
    title = (conv.get("title") or "").strip() or _title_from_turns(turns) or "Untitled conversation"
    meta = {
        "conversation_id": conv.get("conversation_id") or conv.get("id"),
        "created_at": iso_time(conv.get("create_time")),
        "updated_at": iso_time(conv.get("update_time")),
        "model": conv.get("default_model_slug"),
        "turns": len(turns),
    }
    return title, markdown, {k: v for k, v in meta.items() if v is not None}


def _title_from_turns(turns: list[tuple[str, str, _dt.datetime | None]]) -> str:
    for role, text, *_ in turns:
        if role == "User":
            line = text.strip().splitlines()[0] if text.strip() else ""
            return (line[:77] + "...") if len(line) > 80 else line
    return ""
