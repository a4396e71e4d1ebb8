"""Import a ChatGPT or Claude data export: read here, streaming, one page per conversation."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from memorywiki.formats import FormatError, count_conversations, iter_chatgpt_export, iter_claude_export

from ..auth import explain_hub_refusal
from ..errors import ApiError, InputError, MemoryWikiError
from .types import add_redacted
from .wiki import Wiki

READERS = {"chatgpt": iter_chatgpt_export, "claude": iter_claude_export}  # the export parsers, shared with the server


def import_export(
    wiki: Wiki,
    kind: str,
    path: Path,
    *,
    hub: str | None = None,
    progress: Callable[[int, int], None] = lambda done, total: None,
) -> dict[str, Any]:
    """Upsert one page per conversation; ``progress(done, total)`` is called once the
    conversations are counted and after each one is saved. Only conversation
    text crosses the wire (an export's images stay home), and each page is keyed by the
    conversation's id, so a re-import updates instead of duplicating.

    Returns the count of each status (created, updated, unchanged, deleted), under
    ``skipped`` the conversations with nothing to keep, and under ``redacted`` what the
    server took out of them before storing them (secrets by kind, private spans)."""
    slug = wiki.require_hub(hub)
    path = path.expanduser()
    if not path.is_file():
        raise InputError(f"no such file: {path}")
    cred = wiki.config.hub_credential(slug)
    skipped: list = []
    counts: dict[str, Any] = {"created": 0, "updated": 0, "unchanged": 0, "deleted": 0}
    redacted: dict[str, Any] | None = None
    try:
        total = count_conversations(path)
        progress(0, total)
        for captured in READERS[kind](path, skipped=skipped):
            body = {
                "hub": slug,
                "title": (captured.title or "Untitled")[:500],
                "markdown": captured.markdown,
                "source": captured.source,
                "meta": captured.meta,
                "external_id": captured.external_id,
            }
            try:
                data = wiki.client.create_doc(body, cred.token)
            except ApiError as exc:
                raise explain_hub_refusal(exc, cred, slug) from None
            status = data.get("status") or "created"
            counts[status] = counts.get(status, 0) + 1
            redacted = add_redacted(redacted, data.get("redacted"))
            progress(sum(counts.values()), total)
    except FormatError as exc:
        done = sum(counts.values())
        raise MemoryWikiError(
            f"{exc.message} ({done} conversation{'s' if done != 1 else ''} were saved before this)"
        ) from None
    counts["skipped"] = skipped
    counts["redacted"] = redacted
    return counts


def wait_indexed(
    wiki: Wiki,
    progress: Callable[[int, int], None] = lambda done, total: None,
    *,
    poll: float = 1.0,
    stall: float = 120.0,
) -> int | None:
    """Until the server owes no page its indexing (all searchable by meaning), calling
    ``progress(done, total)`` after each look; gives up once nothing has moved for ``stall``
    seconds (no worker running, say). Returns how many pages are still owed (0 when done), or
    None at once when the server has no embedder (full text only: nothing to wait for)."""
    health = wiki.client.health()
    if not health.get("embedder"):
        return None
    total = owed = health.get("owed_docs", 0)
    moved = time.monotonic()
    while owed:
        progress(total - owed, total)
        time.sleep(poll)
        now = wiki.client.health().get("owed_docs", 0)
        if now < owed:
            moved = time.monotonic()
        elif time.monotonic() - moved > stall:
            return now
        total = max(total, now)  # saves by others meanwhile
        owed = now
    progress(total, total)
    return 0
