"""A web page's main text as markdown (trafilatura)."""

from __future__ import annotations

from pathlib import PurePosixPath
from urllib.parse import urlsplit

from memorywiki.formats.mdutil import split_title, tidy_blocks
from memorywiki.formats.model import Captured

from ..errors import Unprocessable


def extract_article(html: str, url: str, title: str | None = None) -> Captured:
    """Main text of a web page as markdown (trafilatura), with its title."""
    import trafilatura

    md = trafilatura.extract(
        html,
        url=url or None,
        output_format="markdown",
        include_tables=True,
        include_links=True,
        include_formatting=True,
        include_images=False,
        include_comments=False,
        favor_recall=True,
        with_metadata=False,
    )
    if not md or len(md.strip()) < 25:
        raise Unprocessable(
            "empty", "No readable article text was found on this page (it may need JavaScript to show)."
        )
    meta_obj = trafilatura.extract_metadata(html, default_url=url or None)
    doc_title = title or (meta_obj.title if meta_obj and meta_obj.title else None)
    meta = {"url": url} if url else {}
    if meta_obj:
        for k in ("author", "date", "sitename", "description"):
            v = getattr(meta_obj, k, None)
            if v:
                meta[k] = v
    md = tidy_blocks(md).strip()
    doc_title, md = split_title(doc_title, md)
    return Captured(doc_title or _title_from_url(url), md + "\n", "article", meta)


def _title_from_url(url: str) -> str:
    parts = urlsplit(url)
    name = PurePosixPath(parts.path).name
    return name.replace("-", " ").replace("_", " ").strip() or parts.hostname or "Untitled page"
