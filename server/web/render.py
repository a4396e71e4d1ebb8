"""Markdown out: safe HTML for people, markdown with front matter for AI fetchers."""

from __future__ import annotations

import asyncio
import itertools
import json
from dataclasses import dataclass
from functools import lru_cache
from html import escape
from typing import Any

from markdown_it import MarkdownIt
from markupsafe import Markup
from mdit_py_plugins.anchors import anchors_plugin
from mdit_py_plugins.anchors.index import slugify as anchor_slugify
from memorywiki.formats.mdutil import inline_text, shift_headings, split_title
from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import get_lexer_by_name
from pygments.util import ClassNotFound

from ..store.recall import MARK_END, MARK_START

# Ids the page's own parts use; a heading that slugs to one of them gets a suffix instead.
RESERVED_IDS = frozenset({"main", "toc", "content", "search", "results"})
TOC_LEVELS = (1, 2, 3)
# A page's rendered HTML is kept by its text: a huge table costs its parse once.
RENDER_CACHE = 256
# Past this a code block stays plain text: colouring that much is slow and helps nobody.
HIGHLIGHT_MAX_CHARS = 50_000


def _highlight(code: str, lang: str, _attrs: str) -> str:
    """Pygments, server-side, with CSS classes (the stylesheet holds the colours; no inline
    styles). An unknown or missing language stays plain, escaped text."""
    if not lang or len(code) > HIGHLIGHT_MAX_CHARS:
        return ""
    try:
        lexer = get_lexer_by_name(lang.strip().lower())
    except ClassNotFound:
        return ""
    body = highlight(code, lexer, _FORMATTER)
    return f'<pre class="hl"><code class="language-{escape(lang)}">{body}</code></pre>'


_FORMATTER = HtmlFormatter(nowrap=True)


def _slug(text: str) -> str:
    slug = anchor_slugify(text) or "section"
    return f"{slug}-" if slug in RESERVED_IDS else slug


def _new_md(anchors: bool) -> MarkdownIt:
    # html=False escapes raw HTML (scripts included); markdown-it's validateLink already
    # refuses javascript:, vbscript:, file: and non-image data: URLs. The commonmark preset
    # caps how deep blocks nest, so a pathologically deep list renders flat instead of hanging.
    md = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False, "highlight": _highlight})
    md.enable("table").enable("strikethrough")
    if anchors:
        md.use(anchors_plugin, min_level=TOC_LEVELS[0], max_level=TOC_LEVELS[-1], slug_func=_slug)
    return md


@lru_cache(maxsize=2)
def _md(anchors: bool = False) -> MarkdownIt:
    return _new_md(anchors)


@dataclass(frozen=True)
class Rendered:
    html: str
    toc: tuple[tuple[int, str, str], ...]  # (level, id, text) of each heading, in order


@lru_cache(maxsize=RENDER_CACHE)
def render_page(markdown: str) -> Rendered:
    """A page body as safe HTML, its headings anchored, with their table of contents."""
    md = _md(True)
    env: dict[str, Any] = {}
    tokens = md.parse(markdown, env)
    toc = []
    for opening, inline in itertools.pairwise(tokens):
        if opening.type == "heading_open" and opening.attrGet("id"):
            text = inline_text(inline.children or []).strip()
            toc.append((int(opening.tag[1]), str(opening.attrGet("id")), text))
    return Rendered(md.renderer.render(tokens, md.options, env), tuple(toc))


# Longer texts render in a worker thread, so a huge table never stalls other requests.
OFF_LOOP_CHARS = 20_000


async def render(markdown: str) -> Rendered:
    """render_page, off the event loop for a long text."""
    if len(markdown) > OFF_LOOP_CHARS:
        return await asyncio.to_thread(render_page, markdown)
    return render_page(markdown)


@lru_cache(maxsize=RENDER_CACHE)
def markdown_to_html(markdown: str) -> str:
    """Safe HTML without heading ids (bundle members: many bodies on one page)."""
    html: str = _md(False).render(markdown)
    return html


def highlighted(snippet: str) -> Markup:
    """A search headline as HTML: the text escaped, then its match marks turned into <mark>."""
    return Markup(escape(snippet).replace(MARK_START, "<mark>").replace(MARK_END, "</mark>"))


def page_body(doc: dict[str, Any]) -> str:
    """The body as a page shows it: under its title, which it never repeats (pages saved
    before the title rule may still open with their `# Title`)."""
    return split_title(doc["title"], doc["markdown"])[1]


def member_body(doc: dict[str, Any]) -> str:
    """A bundle member's body under its own `## Title`: its headings one level down, so
    its `#` sections sit beside the member's title, never above the bundle's."""
    return shift_headings(page_body(doc), 1)


def front_matter(fields: dict[str, Any]) -> str:
    """YAML front matter; JSON scalars are valid YAML, so quoting is always right."""
    lines = ["---"]
    for key, value in fields.items():
        if value is None:
            continue
        lines.append(f"{key}: {json.dumps(value, ensure_ascii=False, default=str)}")
    lines.append("---")
    return "\n".join(lines) + "\n\n"


def doc_markdown(doc: dict[str, Any], url: str, extra: dict[str, Any] | None = None, appendix: str = "") -> str:
    """Front matter (plus `extra` fields), the body, then `appendix` (the curation block)."""
    fields = {
        "title": doc["title"],
        "url": url,
        "updated": doc["updated_at"].isoformat(),
        "hub": doc.get("hub_slug"),
        "source": doc.get("source"),
    }
    meta = doc.get("meta") or {}
    for key in ("tool", "session_id", "cwd", "git_branch", "file_name", "url"):
        if meta.get(key) and key not in fields:
            fields[key] = meta[key]
    if meta.get("url"):
        fields["source_url"] = meta["url"]
    fields.update(extra or {})
    return front_matter(fields) + page_body(doc).rstrip() + "\n" + appendix
