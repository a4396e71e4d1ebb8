"""What an import of a folder asks a hub before it saves: which of its files are pages already.

A folder's pages link to each other; knowing up front which importer ids (formats/hubfolder.py,
import_key) already name a page lets the import write every link to its final URL in one
save, and knowing what each holds lets it skip the files saved as they are, so importing
the same folder again changes nothing and sends nothing but these lookups.
"""

from __future__ import annotations

from typing import Any

from ..store import docs as doc_store
from .access import Access, Credentials
from .context import Context
from .urls import Urls

MAX_LOOKUP = 1000


async def lookup(ctx: Context, credentials: Credentials, urls: Urls, slug: str, keys: list[str]) -> dict[str, Any]:
    """{"docs": [...]} for each key that names a page of the hub, live or deleted (owner token):
    its id and URL, and what an import would set, so an importer can leave a file that is
    saved as it is alone."""
    async with ctx.db.owner.connection() as conn:
        hub = await Access(ctx.limits, credentials).hub_owner(conn, slug)
        found = await doc_store.lookup_external(conn, hub["id"], sorted(set(keys)))
    return {
        "docs": [{**row, "url": urls.doc(row["id"]), "allowed_emails": list(row["allowed_emails"])} for row in found]
    }
