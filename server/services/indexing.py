"""Index refresh on request: one doc or bundle now, idempotent, counted against the client's budget."""

from __future__ import annotations

from typing import Any

from ..embedding.base import Embedder, EmbedderError
from ..errors import Conflict, Unavailable, not_found
from ..indexing.indexer import index_bundle, index_docs
from ..tokens import looks_like_id
from . import docs
from .access import Credentials
from .context import Context


def _embedder(ctx: Context) -> Embedder:
    if ctx.embedder is None:
        raise Conflict(
            "embedder_unavailable", "no embedder is configured (MEMORYWIKI_EMBEDDER); full-text recall still works"
        )
    return ctx.embedder


async def reindex_doc(ctx: Context, credentials: Credentials, doc_id: str) -> dict[str, Any]:
    """What was embedded for the doc (an unchanged doc costs no embedding call). A doc these
    credentials may not read answers exactly as an unknown id does."""
    await ctx.limits.spend(credentials.client, "embed")
    if not looks_like_id(doc_id):
        raise not_found("doc")
    await docs.readable(ctx, credentials, doc_id)  # 404 for a doc the caller may not see
    try:
        reports = await index_docs(ctx.db, _embedder(ctx), [doc_id], ctx.settings.edge_rule)
    except EmbedderError as exc:
        raise Unavailable("embedder_failed", f"the embedder failed; the doc stays owed: {exc}") from None
    if reports.get(doc_id) is None:
        raise not_found("doc")
    report: dict[str, Any] = reports[doc_id]
    return report


async def reindex_bundle(ctx: Context, client: str, bundle_id: str) -> dict[str, Any]:
    await ctx.limits.spend(client, "embed")
    if not looks_like_id(bundle_id):
        raise not_found("bundle")
    try:
        report = await index_bundle(ctx.db, _embedder(ctx), bundle_id)
    except EmbedderError as exc:
        raise Unavailable("embedder_failed", f"the embedder failed; the bundle stays owed: {exc}") from None
    if report is None:
        raise not_found("bundle")
    return report
