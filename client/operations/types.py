"""What the server answers, as the operations hand it on: the HTTP contract's JSON objects
(see /openapi.json), typed for readers and checkers. ``total=False``: a server may send more
or, when older, fewer keys, and every surface prints what it has."""

from __future__ import annotations

from typing import Any, TypedDict


class SavedDoc(TypedDict, total=False):
    id: str
    url: str
    version: int
    status: str  # created, exists, updated, unchanged, deleted
    edit_token: str | None
    message: str
    redacted: dict[str, Any]  # what the server took out before storing it: secrets by kind, private spans


class Doc(TypedDict, total=False):
    id: str
    url: str
    title: str
    markdown: str
    hub: str | None
    source: str | None
    meta: dict[str, Any]
    version: int
    created_at: str
    updated_at: str
    is_draft: bool


class VersionEntry(TypedDict, total=False):
    version: int
    saved_at: str
    size: int
    title: str
    via: str | None
    action: str | None
    restored_from: int | None
    deleted: bool
    current: bool


class Versions(TypedDict, total=False):
    id: str
    url: str
    version: int
    deleted: bool
    versions: list[VersionEntry]


class DocVersion(VersionEntry, total=False):
    id: str
    markdown: str
    meta: dict[str, Any]
    source: str | None


class RestoredDoc(Doc, total=False):
    restored_from: int
    changed: bool


class RecallAnswer(TypedDict, total=False):
    hub: str
    level: str
    mode: str
    fusion: str
    space: dict[str, Any] | None  # the embedding space searched: {"model", "dim"}
    vector_note: str | None
    results: list[dict[str, Any]]
    tokens: int
    max_tokens: int


class HubListing(TypedDict, total=False):
    slug: str
    url: str
    description: str | None
    listed: bool
    docs: list[dict[str, Any]]
    bundles: list[dict[str, Any]]


class NewHub(TypedDict, total=False):
    slug: str
    url: str
    owner_token: str


class Bundle(TypedDict, total=False):
    id: str
    url: str
    title: str
    description: str


class Related(TypedDict, total=False):
    results: list[dict[str, Any]]


class Suggestions(TypedDict, total=False):
    suggestions: list[dict[str, Any]]


class TopicPages(TypedDict, total=False):
    docs: list[dict[str, Any]]


def add_redacted(total: dict[str, Any] | None, one: dict[str, Any] | None) -> dict[str, Any] | None:
    """The sum of two saves' "redacted" answers (an import's total over its pages)."""
    if not one:
        return total
    if not total:
        return {**one, "kinds": dict(one.get("kinds") or {})}
    kinds = dict(total.get("kinds") or {})
    for kind, n in (one.get("kinds") or {}).items():
        kinds[kind] = kinds.get(kind, 0) + n
    return {
        "secrets": int(total.get("secrets") or 0) + int(one.get("secrets") or 0),
        "kinds": dict(sorted(kinds.items())),
        "private": int(total.get("private") or 0) + int(one.get("private") or 0),
        "scanned": bool(total.get("scanned", True)) and bool(one.get("scanned", True)),
    }


def redaction_line(redacted: dict[str, Any] | None) -> str | None:
    """What the server took out of a write before storing it, in one line (None: nothing):
    "redacted 2 secrets: 1 aws-access-token, 1 github-pat; dropped 1 private span"."""
    if not redacted:
        return None
    parts = []
    secrets = int(redacted.get("secrets") or 0)
    if secrets:
        kinds = ", ".join(f"{n} {kind}" for kind, n in sorted((redacted.get("kinds") or {}).items()))
        parts.append(f"redacted {secrets} secret{'s' if secrets != 1 else ''}: {kinds}")
    private = int(redacted.get("private") or 0)
    if private:
        parts.append(f"dropped {private} private span{'s' if private != 1 else ''}")
    return "; ".join(parts) or None
