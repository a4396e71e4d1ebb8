"""Capture from anywhere: share links and web pages, uploaded files, chat-history exports.

The conversion lives in server/capture/ and memorywiki.formats; these use cases save the
result like any other doc. Converter refusals are API errors already (server/errors.py maps
the converters' FormatError).
"""

from __future__ import annotations

import asyncio
import itertools
import tempfile
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memorywiki.formats import Captured, FormatError, count_conversations, iter_chatgpt_export, iter_claude_export

from ..capture import capture_url, convert_file
from ..store import docs as doc_store
from ..tokens import hash_token, new_token
from . import redaction
from .access import Access, Credentials
from .context import Context
from .docs import MAX_TITLE, already_captured, page_content
from .urls import Urls

IMPORT_BATCH = 50
MAX_SOURCE = 200
EXPORTERS = {"chatgpt": iter_chatgpt_export, "claude": iter_claude_export}


@dataclass(frozen=True)
class Options:
    """How a capture is saved: into which hub, under which title, as a draft, deduplicated."""

    hub: str | None = None
    title: str | None = None
    source: str | None = None  # the caller's word for where it came from, over the converter's
    is_draft: bool = False
    dedupe: bool = False


async def save(
    ctx: Context, credentials: Credentials, urls: Urls, captured: Captured, options: Options
) -> dict[str, Any]:
    """Store one capture (upserting by its external id inside a hub, or with `dedupe`
    returning the hub's page that already holds this content); return the API answer."""
    access = Access(ctx.limits, credentials)
    edit_token = new_token("mwe")
    captured = captured.storable()  # a converted file's NUL is dropped; what the caller typed was refused
    title, markdown = page_content(
        (options.title or captured.title or "").strip()[:MAX_TITLE],
        captured.markdown,
        max_title=MAX_TITLE,
        default_title="Untitled",
    )
    prepared = await redaction.prepare(
        redaction.Page(title=title, markdown=markdown, source=captured.source, meta=captured.meta)
    )

    async def store(conn):
        hub, via = await access.hub_writer(conn, options.hub) if options.hub else (None, "anonymous")
        chosen = await redaction.choose(conn, prepared, hub["id"] if hub else None)
        page = chosen.page
        row, status = await doc_store.save_doc(
            conn,
            hub_id=hub["id"] if hub else None,
            external_id=captured.external_id,
            title=page.title if page.title is not None else title,
            markdown=page.markdown if page.markdown is not None else markdown,
            source=page.source,
            meta=page.meta if page.meta is not None else captured.meta,
            is_draft=options.is_draft,
            password_hash=None,
            allowed_emails=[],
            edit_token_hash=hash_token(edit_token),
            via=via,
            dedupe=options.dedupe,
        )
        return row, status, chosen.report

    row, status, redacted = await ctx.db.write(store)
    ctx.wake_worker()
    body = {
        "id": row["id"],
        "url": urls.doc(row["id"]),
        "title": row["title"],
        "source": row["source"],
        "status": status,
        "edit_token": edit_token if status == "created" else None,
        "redacted": redacted,
    }
    if status == "exists":
        body["message"] = already_captured(urls, row["id"])
    return body


async def from_url(ctx: Context, credentials: Credentials, urls: Urls, url: str, options: Options) -> dict[str, Any]:
    """Fetch a web page or a chat share link (SSRF-safe) and save it as a page."""
    settings = ctx.settings
    captured = await capture_url(
        url,
        title=options.title,
        allow_loopback=settings.fetch_allow_loopback,
        max_bytes=settings.fetch_max_bytes,
        timeout=settings.fetch_timeout,
    )
    if options.source and options.source.strip():
        captured.source = options.source.strip()  # the caller knows better (e.g. `capture --url --source`)
    return await save(ctx, credentials, urls, captured, options)


async def from_file(
    ctx: Context,
    credentials: Credentials,
    urls: Urls,
    data: bytes,
    filename: str,
    content_type: str | None,
    options: Options,
) -> dict[str, Any]:
    """Convert an uploaded file (PDF, DOCX, PPTX, HTML, text, a transcript) and save it."""
    captured = await asyncio.to_thread(
        convert_file, data, filename, content_type, options.title, max_bytes=ctx.settings.max_upload_bytes
    )
    if options.source:
        captured.source = options.source[:MAX_SOURCE]  # the caller knows better (e.g. `capture FILE --source`)
    return await save(ctx, credentials, urls, captured, options)


def _next_batch(conversations: Iterator[Captured]) -> list[Captured]:
    return list(itertools.islice(conversations, IMPORT_BATCH))


Progress = Callable[[dict[str, Any]], Awaitable[None]]


async def _no_progress(event: dict[str, Any]) -> None:
    return None


async def import_export(
    ctx: Context,
    credentials: Credentials,
    urls: Urls,
    kind: str,
    hub: str,
    filename: str,
    read: Callable[[int], Awaitable[bytes]],
    progress: Progress = _no_progress,
) -> dict[str, Any]:
    """Import a ChatGPT or Claude export into a hub (the owner's): each conversation a doc,
    known by its id, so importing again updates the same docs. `read(n)`: the upload's next
    bytes, b"" at its end. `progress` hears {"total": N} once the conversations are counted
    (None when they cannot be), then {"done": n, "created": ...} after each one is saved."""
    async with ctx.db.owner.connection() as conn:
        await Access(ctx.limits, credentials).hub_owner(conn, hub)
    suffix = Path(filename or "export.json").suffix.lower()
    with tempfile.TemporaryDirectory(prefix="mw-import-") as tmp:
        path = Path(tmp) / f"export{suffix if suffix in ('.zip', '.json') else '.json'}"
        with path.open("wb") as out:
            while chunk := await read(1 << 20):
                out.write(chunk)
        skipped: list = []
        conversations = EXPORTERS[kind](path, skipped=skipped)
        counts = {"created": 0, "updated": 0, "unchanged": 0, "deleted": 0}
        docs: list[dict[str, Any]] = []
        redacted: dict[str, Any] | None = None
        try:
            batch = await asyncio.to_thread(_next_batch, conversations)  # a file that is no export fails here
            await progress({"total": await asyncio.to_thread(count_conversations, path)})
            while batch:
                for captured in batch:
                    saved = await save(ctx, credentials, urls, captured, Options(hub=hub))
                    counts[saved["status"]] += 1
                    redacted = redaction.add(redacted, saved["redacted"])
                    docs.append({k: saved[k] for k in ("id", "url", "title", "status", "redacted")})
                    await progress({"done": sum(counts.values()), **counts})
                batch = await asyncio.to_thread(_next_batch, conversations)
        except FormatError as exc:
            raise FormatError(
                exc.code, f"{exc.message} ({sum(counts.values())} conversations were saved before this)"
            ) from None
    redacted = redacted or redaction.report(redaction.Redaction(), redaction.Redaction())
    return {"hub": hub, "kind": kind, **counts, "skipped": skipped, "docs": docs, "redacted": redacted}
