"""What a hub's curation knows: the pages related to a page, and the hub's concept digest."""

from __future__ import annotations

from typing import Any, cast

from .docs import with_doc_token
from .types import Related
from .wiki import Wiki


def related(wiki: Wiki, ref: str, *, k: int = 5) -> Related:
    """Public pages of the doc's hub nearest to it in meaning, else sharing most of its concepts."""
    return cast(Related, with_doc_token(wiki, ref, lambda doc_id, token: wiki.client.related(doc_id, k, token=token)))


def digest(wiki: Wiki, hub: str | None = None) -> dict[str, Any]:
    """The hub's concepts as JSON: each concept, its kind, what it is, the pages about it."""
    slug = wiki.require_hub(hub)
    return wiki.client.digest(slug, token=wiki.config.hub_token(slug))


def digest_markdown(wiki: Wiki, hub: str | None = None, *, compact: bool = False) -> str:
    """The digest as markdown; ``compact``: the form that fits 2,000 tokens."""
    slug = wiki.require_hub(hub)
    return wiki.client.digest_markdown(slug, compact=compact, token=wiki.config.hub_token(slug))
