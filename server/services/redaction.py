"""Secrets never reach storage: what every write path does to a page before it is saved.

Each use case that stores a page's text (a new page, an edit, a capture, an import, a
restore) calls `prepare` before its transaction, then `choose` inside it, where the hub is
known: `<private>…</private>` spans are always dropped; secrets are replaced by a marker
naming their kind (server/redaction/) unless the hub's owner turned that off. Detection
runs in a thread, off the event loop and outside the transaction, so a 5 MB page holds no
row lock while it is read.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

from ..errors import BadRequest
from ..redaction import DETECTOR, Redaction, drop_private, redact_secrets, redact_value
from ..store import hubs as hub_store
from ..store.connection import Conn


@dataclass(frozen=True)
class Page:
    """The parts of a write that hold text (None: not part of this write)."""

    title: str | None = None
    markdown: str | None = None
    source: str | None = None
    meta: dict[str, Any] | None = None


@dataclass(frozen=True)
class Prepared:
    """A write both ways: `kept` with only its private spans dropped (for a hub that keeps
    raw text), `clean` with its secrets redacted too, and what each had taken out."""

    kept: Page
    clean: Page
    private: Redaction
    secrets: Redaction


@dataclass(frozen=True)
class Chosen:
    page: Page
    report: dict[str, Any]  # the answer's "redacted" field


def _prepare(page: Page) -> Prepared:
    private, secrets = Redaction(), Redaction()

    def text(value: str | None) -> tuple[str | None, str | None]:
        if value is None:
            return None, None
        kept, dropped = drop_private(value)
        private.private += dropped
        clean, kinds = redact_secrets(kept, DETECTOR)
        secrets.kinds.update(kinds)
        return kept, clean

    title = text(page.title)
    markdown = text(page.markdown)
    source = text(page.source)
    meta_kept = meta_clean = None
    if page.meta is not None:
        meta_kept = redact_value(page.meta, private, DETECTOR, secrets=False)
        meta_clean = redact_value(meta_kept, secrets, DETECTOR)
    kept = Page(title=title[0], markdown=markdown[0], source=source[0], meta=meta_kept)
    clean = Page(title=title[1], markdown=markdown[1], source=source[1], meta=meta_clean)
    _check_left(page, kept)
    return Prepared(kept=kept, clean=clean, private=private, secrets=secrets)


def _check_left(sent: Page, kept: Page) -> None:
    """A page that was nothing but private spans has nothing left to save."""
    if sent.markdown is not None and sent.markdown.strip() and not (kept.markdown or "").strip():
        raise BadRequest("empty_markdown", "'markdown' holds nothing but <private> spans: a page needs some text")
    if sent.title is not None and sent.title.strip() and not (kept.title or "").strip():
        raise BadRequest("missing_field", "'title' holds nothing but a <private> span")


async def prepare(page: Page) -> Prepared:
    """Both readings of a write (`Prepared`), computed in a thread."""
    return await asyncio.to_thread(_prepare, page)


def report(private: Redaction, secrets: Redaction | None) -> dict[str, Any]:
    """What a write answers under "redacted": the secrets taken out by kind (never their
    values), the private spans dropped, and whether the text was scanned for secrets at all."""
    kinds = dict(sorted(secrets.kinds.items())) if secrets else {}
    return {"secrets": sum(kinds.values()), "kinds": kinds, "private": private.private, "scanned": secrets is not None}


async def choose(conn: Conn, prepared: Prepared, hub_id: int | None) -> Chosen:
    """The text to store in this hub (in the write's transaction: the hub's setting as it is
    when the page is saved)."""
    if await hub_store.redacts_secrets(conn, hub_id):
        return Chosen(prepared.clean, report(prepared.private, prepared.secrets))
    return Chosen(prepared.kept, report(prepared.private, None))


def add(total: dict[str, Any] | None, one: dict[str, Any] | None) -> dict[str, Any] | None:
    """The sum of two "redacted" answers (an import's total over its pages)."""
    if one is None:
        return total
    if total is None:
        return {**one, "kinds": dict(one["kinds"])}
    kinds = dict(total["kinds"])
    for kind, n in one["kinds"].items():
        kinds[kind] = kinds.get(kind, 0) + n
    return {
        "secrets": total["secrets"] + one["secrets"],
        "kinds": dict(sorted(kinds.items())),
        "private": total["private"] + one["private"],
        "scanned": total["scanned"] and one["scanned"],
    }


async def redact_in(conn: Conn, page: Page, hub_id: int | None) -> Chosen:
    """`prepare` and `choose` at once, inside a transaction: for text only known there (an
    old version being restored)."""
    return await choose(conn, await prepare(page), hub_id)


def merged(page: Page, into: dict[str, Any]) -> dict[str, Any]:
    """`into` (doc columns) with the page's parts that are set put in."""
    out = dict(into)
    for name in ("title", "markdown", "source", "meta"):
        value = getattr(page, name)
        if value is not None:
            out[name] = value
    return out


@dataclass(frozen=True)
class Fields:
    """The short texts of a write that is no page (a bundle's title and description, a hub's
    description), both ways as `Prepared` holds a page's."""

    kept: dict[str, str]
    clean: dict[str, str]
    private: Redaction
    secrets: Redaction


def _prepare_fields(fields: dict[str, str | None]) -> Fields:
    private, secrets = Redaction(), Redaction()
    kept: dict[str, str] = {}
    clean: dict[str, str] = {}
    for name, value in fields.items():
        if value is None:
            continue
        kept[name], dropped = drop_private(value)
        private.private += dropped
        clean[name], kinds = redact_secrets(kept[name], DETECTOR)
        secrets.kinds.update(kinds)
    return Fields(kept=kept, clean=clean, private=private, secrets=secrets)


async def prepare_fields(fields: dict[str, str | None]) -> Fields:
    """Both readings of each text that is set (None: not part of this write), in a thread."""
    return await asyncio.to_thread(_prepare_fields, fields)


async def choose_fields(
    conn: Conn, prepared: Fields, hub_id: int | None, *, redacts: bool | None = None
) -> tuple[dict[str, str], dict[str, Any]]:
    """The texts to store in this hub, and the answer's "redacted" field; `redacts` is the
    hub's setting when this very write changes it (None: as it is stored)."""
    if redacts is None:
        redacts = await hub_store.redacts_secrets(conn, hub_id)
    if redacts:
        return prepared.clean, report(prepared.private, prepared.secrets)
    return prepared.kept, report(prepared.private, None)
