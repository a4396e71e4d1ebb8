"""Render a claude.ai conversation (data export or share snapshot) to markdown turns."""

from __future__ import annotations

import html as _html
import re
from datetime import UTC, datetime
from typing import Any

from .mdutil import render_turns

_ROLE_NAMES = {"human": "User", "user": "User", "assistant": "Assistant"}

_ARTIFACT_RE = re.compile(r"<antArtifact\b([^>]*)>(.*?)</antArtifact>", re.S)
_ATTR_RE = re.compile(r'(\w+)\s*=\s*"([^"]*)"')


def _artifact_to_md(m: re.Match[str]) -> str:
    attrs = {k: _html.unescape(v) for k, v in _ATTR_RE.findall(m.group(1))}
    body = m.group(2).strip("\n")
    title = attrs.get("title") or attrs.get("identifier") or "Artifact"
    kind = attrs.get("type", "")
    if kind == "text/markdown":
        return f"**{title}**\n\n{body}"
    lang = attrs.get("language") or {
        "text/html": "html",
        "image/svg+xml": "svg",
        "application/vnd.ant.mermaid": "mermaid",
        "application/vnd.ant.react": "jsx",
    }.get(kind, "")
    fence = "````" if "```" in body else "```"
    return f"**{title}**\n\n{fence}{lang}\n{body}\n{fence}"


def convert_artifacts(text: str) -> str:
    """``<antArtifact ... language="py" title="T">code</antArtifact>`` -> a titled code fence."""
    if "<antArtifact" not in text:
        return text
    return _ARTIFACT_RE.sub(_artifact_to_md, text)


def _block_text(block: Any) -> str:
    if not isinstance(block, dict):
        return block if isinstance(block, str) else ""
    btype = block.get("type")
    if btype == "text":
        return block.get("text") or ""
    if btype == "tool_use":
        name = block.get("name") or "tool"
        return f"*[used tool: {name}]*"
    # thinking, redacted_thinking, tool_result, token_budget, image, unknown -> dropped
    return ""


def message_text(msg: dict[str, Any]) -> str:
    content = msg.get("content")
    text = ""
    if isinstance(content, list) and content:
        pieces = [p.strip() for p in (_block_text(b) for b in content) if p and p.strip()]
        text = "\n\n".join(pieces)
        if not any(isinstance(b, dict) and b.get("type") == "text" for b in content):
            # no text blocks: fall back on the flattened legacy field when it has more
            legacy = (msg.get("text") or "").strip()
            if legacy and _only_tool_noise(content):
                text = ""
            elif legacy:
                text = legacy
    elif isinstance(msg.get("text"), str):
        text = msg["text"]
    text = convert_artifacts(text).strip()
    names = []
    for key in ("attachments", "files", "files_v2"):
        for item in msg.get(key) or []:
            if isinstance(item, dict):
                name = item.get("file_name") or item.get("name")
                if name and name not in names:
                    names.append(name)
    if names:
        text = (text + "\n\n" if text else "") + "*Attachments: " + ", ".join(names) + "*"
    return text


def _only_tool_noise(content: list[Any]) -> bool:
    return all(
        isinstance(b, dict) and b.get("type") in ("tool_result", "thinking", "redacted_thinking", "token_budget")
        for b in content
    )


def ordered_messages(conv: dict[str, Any]) -> list[dict[str, Any]]:
    msgs = [m for m in conv.get("chat_messages") or [] if isinstance(m, dict)]
    leaf = conv.get("current_leaf_message_uuid")
    by_id = {m.get("uuid"): m for m in msgs if m.get("uuid")}
    if leaf and leaf in by_id and any(m.get("parent_message_uuid") for m in msgs):
        path, seen = [], set()
        node = by_id.get(leaf)
        while node is not None and node.get("uuid") not in seen:
            seen.add(node.get("uuid"))
            path.append(node)
            node = by_id.get(node.get("parent_message_uuid"))
        path.reverse()
        return path
    if msgs and all(isinstance(m.get("index"), int) for m in msgs):
        return sorted(msgs, key=lambda m: m["index"])
    return msgs  # exports are already in order


def message_time(msg: dict[str, Any]) -> datetime | None:
    """When a message was written (UTC), from its ISO `created_at`, if it has one."""
    value = msg.get("created_at")
    if not isinstance(value, str) or not value:
        return None
    try:
        when = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return when.astimezone(UTC) if when.tzinfo else when


def render_conversation(conv: dict[str, Any]) -> tuple[str, str, dict[str, Any]]:
    turns = []
    for msg in ordered_messages(conv):
        role = _ROLE_NAMES.get(str(msg.get("sender") or msg.get("role")))
        if not role:
            continue
        text = message_text(msg)
        if text:
            turns.append((role, text, message_time(msg)))
    markdown = render_turns(turns)
    title = (conv.get("name") or conv.get("snapshot_name") or "").strip()
    if not title:
        first = next((t for r, t, _ in turns if r == "User"), "")
        line = first.strip().splitlines()[0] if first.strip() else ""
        title = (line[:77] + "...") if len(line) > 80 else (line or "Untitled conversation")
    meta = {
        "conversation_id": conv.get("uuid"),
        "created_at": conv.get("created_at"),
        "updated_at": conv.get("updated_at"),
        "summary": conv.get("summary") or None,
        "turns": len(turns),
    }
    return title, markdown, {k: v for k, v in meta.items() if v is not None}
