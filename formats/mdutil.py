"""Markdown helpers shared by the conversation renderers."""

from __future__ import annotations

import json
import re

from markdown_it import MarkdownIt

_md = MarkdownIt("commonmark").enable("table")

# ChatGPT private-use markup: U+E200 <kind> (U+E202 <arg>)* U+E201
_PUA_SPAN = re.compile("\ue200([^\ue200\ue201\ue202]*)((?:\ue202[^\ue200\ue201\ue202]*)*)\ue201")
_PUA_ANY = re.compile("[\ue200-\ue2ff]")


def _pua_replace(m: re.Match) -> str:
    kind = m.group(1).strip()
    args = [a for a in m.group(2).split("\ue202") if a]
    if kind == "entity" and args:
        # ["organization", "Display Name", "description"] -> Display Name
        try:
            val = json.loads(args[0])
            if isinstance(val, list) and len(val) >= 2 and isinstance(val[1], str):
                return val[1]
        except (json.JSONDecodeError, TypeError):
            pass
        return ""
    return ""  # cite, navlist, image_group, filecite, ... -> dropped


def strip_citations(text: str) -> str:
    """Remove ChatGPT citation markup (private-use U+E200..U+E2FF spans) cleanly.

    ``\\ue200cite\\ue202turn0search5\\ue201`` disappears; ``\\ue200entity\\ue202["org","Name",...]\\ue201``
    becomes ``Name``; any stray private-use character left is removed; a space that the
    removal leaves before punctuation or at a line end is tidied.
    """
    if not _PUA_ANY.search(text):
        return text
    text = _PUA_SPAN.sub(_pua_replace, text)
    text = _PUA_ANY.sub("", text)
    text = re.sub(r"[ \t]+([.,;:!?。，；：！？）)])", r"\1", text)
    text = re.sub(r"[ \t]+\n", "\n", text)
    return text.rstrip()


def demote_headings(text: str, min_level: int = 3) -> str:
    """Shift ATX headings inside a turn so the shallowest becomes ``min_level``.

    A conversation doc uses ``## User`` / ``## Assistant``; a ``# Title`` inside an answer
    would otherwise break the doc's heading structure (and its chunk breadcrumbs). Headings
    inside code fences are not touched (markdown-it finds real headings only).
    """
    if "#" not in text:
        return text
    tokens = _md.parse(text)
    heads = [
        (t.map[0], int(t.tag[1]))
        for t in tokens
        if t.type == "heading_open" and t.markup.startswith("#") and t.map
    ]
    if not heads:
        return text
    shallowest = min(level for _, level in heads)
    shift = max(0, min_level - shallowest)
    if not shift:
        return text
    lines = text.split("\n")
    for line_no, level in heads:
        line = lines[line_no]
        stripped = line.lstrip()
        indent = line[: len(line) - len(stripped)]
        new_level = min(6, level + shift)
        lines[line_no] = indent + "#" * new_level + stripped[level:]
    return "\n".join(lines)


def render_turns(turns: list[tuple[str, str]]) -> str:
    """``[("User", text), ("Assistant", text), ...]`` -> markdown with ``## Role`` headings.

    Consecutive turns of the same role are merged into one section.
    """
    merged: list[list] = []
    for role, text in turns:
        text = text.strip()
        if not text:
            continue
        if merged and merged[-1][0] == role:
            merged[-1][1].append(text)
        else:
            merged.append([role, [text]])
    parts = []
    for role, texts in merged:
        body = "\n\n".join(demote_headings(t) for t in texts)
        parts.append(f"## {role}\n\n{body}")
    return "\n\n".join(parts) + ("\n" if parts else "")


_FENCE_RE = re.compile(r"^\s{0,3}(`{3,}|~{3,})")


def tidy_blocks(md: str) -> str:
    """Blank line before headings and around code fences (outside fences); trailing spaces
    and runs of blank lines trimmed. Converters sometimes glue a heading to a fence."""
    out: list[str] = []
    fence: str | None = None
    for line in md.replace("\r\n", "\n").split("\n"):
        line = line.rstrip()
        m = _FENCE_RE.match(line)
        if fence is None:
            if m:
                if out and out[-1].strip():
                    out.append("")
                fence = m.group(1)[0] * len(m.group(1))
                out.append(line)
                continue
            if line.lstrip().startswith("#") and re.match(r"^\s{0,3}#{1,6}\s", line) and out and out[-1].strip():
                out.append("")
            if out and out[-1] == "\x00close":
                out[-1] = ""
                if not line.strip():
                    continue
            out.append(line)
            if re.match(r"^\s{0,3}#{1,6}\s", line):
                out.append("\x00close")
        else:
            out.append(line)
            if m and line.strip().startswith(fence[0] * len(fence)) and not line.strip().strip(fence[0]):
                fence = None
                out.append("\x00close")
    text = "\n".join(x for x in out if x != "\x00close" or False)
    text = re.sub(r"\n{3,}", "\n\n", text)
    return text.strip() + "\n"
