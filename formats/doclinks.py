"""Which docs a doc's markdown links to: `/{id}` URLs, relative or absolute.

A link counts when markdown renders it as a link (inline, reference or `<autolink>`), not when
a URL merely appears in a code block. Accepted paths: `/{id}`, `/{id}.md`, `/raw/{id}` (with
any query or fragment); a relative path is resolved as from a doc page, which lives at the
root. The host is kept ('' for a relative link) so a read can tell this server's links from
another site's; the ids are checked against the docs table only when read.
"""

from __future__ import annotations

import posixpath
import re
from functools import lru_cache
from urllib.parse import urlsplit

from markdown_it import MarkdownIt

from .model import ID_ALPHABET, ID_LENGTH

_ID = f"[{ID_ALPHABET}]{{{ID_LENGTH}}}"
_DOC_PATH = re.compile(rf"^/(?:raw/)?({_ID})(?:\.md)?/?$")
# Cheap test before parsing: most docs hold no such link, and parsing a long one costs.
_CANDIDATE = re.compile(rf"(?<![{ID_ALPHABET}])({_ID})(?![{ID_ALPHABET}])")


@lru_cache(maxsize=1)
def _parser() -> MarkdownIt:
    return MarkdownIt("commonmark", {"html": False}).enable(["table", "strikethrough"])


def link_target(href: str) -> tuple[str, str] | None:
    """(doc id, host) when `href` points at a doc page of some Memory.Wiki, else None."""
    try:
        parts = urlsplit(href.strip())
    except ValueError:
        return None
    if parts.scheme and parts.scheme not in ("http", "https"):
        return None
    if parts.scheme or parts.netloc:
        host, path = parts.netloc.lower(), parts.path or "/"
    else:
        host, path = "", posixpath.normpath("/" + parts.path.lstrip("/")) if parts.path else ""
    match = _DOC_PATH.match(path)
    return (match.group(1), host) if match else None


def _may_link(markdown: str) -> bool:
    """Whether the markdown holds any link syntax: an inline link's `](`, a reference
    definition's `]:` or an autolink's `<`. A substring test is far cheaper than the id scan
    on a long page, and with none of them markdown makes no link."""
    return "](" in markdown or "]:" in markdown or "<" in markdown


def doc_links(markdown: str) -> set[tuple[str, str]]:
    """The (doc id, host) pairs the markdown links to."""
    if not _may_link(markdown) or not _CANDIDATE.search(markdown):
        return set()
    found: set[tuple[str, str]] = set()
    stack = list(_parser().parse(markdown))
    while stack:
        token = stack.pop()
        if token.children:
            stack.extend(token.children)
        if token.type == "link_open":
            target = link_target(str(token.attrGet("href") or ""))
            if target:
                found.add(target)
    return found


def markdown_twin(url: str) -> str:
    """The markdown address of a page, hub or bundle URL: an AI that follows a link from a
    markdown surface sends no `Accept: text/markdown`, so it is given the `.md` twin."""
    return url if url.endswith(".md") else f"{url}.md"
