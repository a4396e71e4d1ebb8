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
