"""Markdown out: safe HTML for people, markdown with front matter for AI fetchers."""

from __future__ import annotations

import json
from functools import lru_cache
from typing import Any

from markdown_it import MarkdownIt


@lru_cache(maxsize=1)
def _md() -> MarkdownIt:
    # html=False escapes raw HTML (scripts included); markdown-it's validateLink already
    # refuses javascript:, vbscript:, file: and non-image data: URLs.
    return MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False}).enable("table").enable("strikethrough")


def markdown_to_html(markdown: str) -> str:
    return _md().render(markdown)


def front_matter(fields: dict[str, Any]) -> str:
    """YAML front matter; JSON scalars are valid YAML, so quoting is always right."""
    lines = ["---"]
    for key, value in fields.items():
        if value is None:
            continue
        lines.append(f"{key}: {json.dumps(value, ensure_ascii=False, default=str)}")
    lines.append("---")
    return "\n".join(lines) + "\n\n"


def doc_markdown(doc: dict[str, Any], url: str) -> str:
    fields = {
        "title": doc["title"], "url": url,
        "updated": doc["updated_at"].isoformat(),
        "hub": doc.get("hub_slug"), "source": doc.get("source"),
    }
    meta = doc.get("meta") or {}
    for key in ("tool", "session_id", "cwd", "git_branch", "file_name", "url"):
        if meta.get(key) and key not in fields:
            fields[key] = meta[key]
    if meta.get("url"):
        fields["source_url"] = meta["url"]
    return front_matter(fields) + doc["markdown"].rstrip() + "\n"
