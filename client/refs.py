"""Doc references as people paste them: an id, a doc URL, a shared URL with ``?access=``."""

from __future__ import annotations

from urllib.parse import parse_qs, quote, urlsplit

from .errors import MemoryWikiError


def seg(value: str) -> str:
    """Quote one path segment (ids and slugs come from the user)."""
    return quote(str(value), safe="")


def doc_id_from(ref: str) -> str:
    """A doc id from an id or a doc URL (its last path segment, without a ``.md`` suffix)."""
    ref = ref.strip()
    if "://" in ref or ref.startswith("/"):
        path = urlsplit(ref).path if "://" in ref else ref.split("?", 1)[0].split("#", 1)[0]
        parts = [p for p in path.split("/") if p]
        if not parts:
            raise MemoryWikiError(f"cannot find a doc id in {ref!r}")
        ref = parts[-1]
    if ref.endswith(".md"):
        ref = ref[: -len(".md")]
    if not ref:
        raise MemoryWikiError("empty doc id")
    return ref


def access_from(ref: str) -> str | None:
    """The ``?access=`` token of a shared doc URL, if any."""
    if "?" not in ref:
        return None
    values = parse_qs(urlsplit(ref.strip()).query).get("access")
    return values[0] if values else None
