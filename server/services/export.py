"""Take a hub out: every live page (drafts and private ones too), its bundles and, when asked,
every earlier version, as the folder of formats/hubfolder.py in one zip streamed to its owner.

Only the owner's credential opens it (the same check as any write to the hub). Pages are read
a batch at a time and each file is handed to the client as soon as it is zipped, so a large
hub never sits in memory. A link from one page of the hub to another becomes a relative link
between their files, so the folder reads on its own and an import turns it back into links
between the new pages; a link to a page outside the hub becomes absolute.
"""

from __future__ import annotations

import asyncio
import posixpath
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlsplit

from memorywiki.formats import hubfolder
from memorywiki.formats.doclinks import link_target
from memorywiki.formats.filenames import Namer
from memorywiki.formats.mdlinks import href, rewrite_destinations
from memorywiki.formats.ziputil import ZipStream

from ..store import bundles as bundle_store
from ..store import docs as doc_store
from ..store import versions as version_store
from .access import Access, Credentials
from .context import Context
from .urls import Urls

BATCH = 100


@dataclass(frozen=True)
class HubExport:
    filename: str
    chunks: AsyncIterator[bytes]  # the zip, an entry at a time


File = tuple[str, str, datetime]  # a zip entry: its name, its text, when it was saved


class _Layout:
    """Where each page and bundle of the hub goes, named once, oldest first."""

    def __init__(self, root: str, titles: list[dict[str, Any]], bundles: list[dict[str, Any]], urls: Urls):
        self.root, self.urls = root, urls
        pages, named = Namer(), Namer()
        self.pages = {t["id"]: pages.name(t["title"]) for t in titles}
        self.titles = {t["id"]: t["title"] for t in titles}
        self.bundles = {b["id"]: named.name(b["title"]) for b in bundles}

    def _relative(self, destination: str, up: str) -> str | None:
        """The file a link to one of the hub's pages points to, from a page's folder (`up`
        climbs out of a versions folder); an absolute URL for a relative link to a page
        elsewhere; None to keep the link as it is."""
        url = destination[1:-1] if destination.startswith("<") and destination.endswith(">") else destination
        target = link_target(url)
        if target is None or target[1] not in self.urls.hosts:
            return None
        doc_id, host = target
        if doc_id in self.pages:
            fragment = urlsplit(url).fragment
            return href(up + self.pages[doc_id]) + (f"#{fragment}" if fragment else "")
        if not host and url.startswith("/"):
            return self.urls.base + url
        return None

    def body(self, markdown: str, up: str = "") -> str:
        return rewrite_destinations(markdown, lambda d: self._relative(d, up))

    def path(self, inside: str) -> str:
        return f"{self.root}/{inside}"


def _page_files(layout: _Layout, doc: dict[str, Any], versions: list[dict[str, Any]]) -> list[File]:
    """(zip name, text, time) of one page's file and of its versions' files."""
    name = layout.pages[doc["id"]]
    files = [
        (
            layout.path(hubfolder.page_path(name)),
            hubfolder.page_file(doc, layout.body(doc["markdown"])),
            doc["updated_at"],
        )
    ]
    folder = hubfolder.versions_dir(name)
    for v in versions:
        text = hubfolder.version_file(v, layout.body(v["markdown"], up="../"))
        files.append((layout.path(f"{folder}/{v['version']}.md"), text, v["saved_at"]))
    return files


def _zip_batch(stream: ZipStream, files: list[File]) -> bytes:
    return b"".join(stream.add(name, text, when) for name, text, when in files)


def _index(
    layout: _Layout, hub: dict[str, Any], titles: list[dict[str, Any]], bundles: list[dict[str, Any]], versions: bool
) -> str:
    pages = [
        hubfolder.IndexEntry(
            t["title"],
            hubfolder.page_path(layout.pages[t["id"]]),
            hubfolder.visibility(t["is_draft"], t["has_password"], t["has_people"]),
        )
        for t in titles
    ]
    named = [hubfolder.IndexEntry(b["title"], hubfolder.bundle_path(layout.bundles[b["id"]])) for b in bundles]
    listing = {**hub, "url": layout.urls.hub(hub["slug"])}
    return hubfolder.index_file(listing, datetime.now(UTC), pages, named, versions=versions)


def _bundle_file(layout: _Layout, bundle: dict[str, Any]) -> File:
    members = [
        (layout.titles[doc_id], posixpath.join("..", hubfolder.page_path(layout.pages[doc_id])))
        for doc_id in bundle["doc_ids"]
        if doc_id in layout.pages
    ]
    return (
        layout.path(hubfolder.bundle_path(layout.bundles[bundle["id"]])),
        hubfolder.bundle_file(bundle, members),
        bundle["updated_at"],
    )


async def export_hub(
    ctx: Context, credentials: Credentials, urls: Urls, slug: str, *, versions: bool = False
) -> HubExport:
    """The hub as a zip for its owner (401/403 for anyone else, before a byte is sent)."""
    access = Access(ctx.limits, credentials)
    async with ctx.db.owner.connection() as conn:
        hub = await access.hub_owner(conn, slug)
        titles = await doc_store.export_titles(conn, hub["id"])
        bundles = await bundle_store.hub_bundles(conn, hub["id"])
    layout = _Layout(hub["slug"], titles, bundles, urls)

    async def chunks() -> AsyncIterator[bytes]:
        stream = ZipStream()
        yield stream.add(layout.path(hubfolder.INDEX), _index(layout, hub, titles, bundles, versions))
        after = None
        while True:
            async with ctx.db.owner.connection() as conn:
                batch = await doc_store.export_batch(conn, hub["id"], after, BATCH)
                history = await version_store.all_versions(conn, [d["id"] for d in batch]) if versions and batch else []
            by_doc: dict[str, list[dict[str, Any]]] = {}
            for v in history:
                by_doc.setdefault(v["doc_id"], []).append(v)
            # a page saved since the export began is not in its index: it waits for the next one
            files = [
                f
                for doc in batch
                if doc["id"] in layout.pages
                for f in _page_files(layout, doc, by_doc.get(doc["id"], []))
            ]
            yield await asyncio.to_thread(_zip_batch, stream, files)
            if len(batch) < BATCH:
                break
            after = (batch[-1]["created_at"], batch[-1]["id"])
        yield await asyncio.to_thread(_zip_batch, stream, [_bundle_file(layout, b) for b in bundles])
        yield stream.close()

    stamp = datetime.now(UTC).strftime("%Y-%m-%d")
    return HubExport(f"{hub['slug']}-{stamp}.zip", chunks())
