"""Bundles: a topic with a reading order; the ones the hub suggests, accepted or dismissed."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..auth import explain_hub_refusal
from ..errors import ApiError, InputError
from ..refs import doc_id_from
from .types import Bundle, Suggestions, TopicPages
from .wiki import Wiki


@dataclass(frozen=True)
class CreatedBundle:
    data: Bundle
    hub: str
    doc_ids: list[str]


def _as_owner(wiki: Wiki, slug: str, call: Callable[[str | None], Any]) -> Any:
    """A write with the hub's owner token; a refusal says which token was tried."""
    cred = wiki.config.hub_credential(slug)
    try:
        return call(cred.token)
    except ApiError as exc:
        raise explain_hub_refusal(exc, cred, slug) from None


def create_bundle(
    wiki: Wiki, title: str, docs: list[str], *, description: str | None = None, hub: str | None = None
) -> CreatedBundle:
    """A bundle of the hub's docs (ids or URLs), in this reading order."""
    if not title.strip():
        raise InputError("the title is empty")
    slug = wiki.require_hub(hub)
    ids = [doc_id_from(d) for d in docs]
    body = {"hub": slug, "title": title.strip(), "description": description or "", "doc_ids": ids}
    data = _as_owner(wiki, slug, lambda token: wiki.client.create_bundle(body, token))
    return CreatedBundle(data, slug, ids)


@dataclass(frozen=True)
class DeletedBundle:
    bundle_id: str
    hub: str


def delete_bundle(wiki: Wiki, ref: str, *, hub: str | None = None) -> DeletedBundle:
    """Delete a bundle (id or URL) of the hub with its owner token; its pages stay as they are."""
    slug = wiki.require_hub(hub)
    bundle_id = doc_id_from(ref)
    _as_owner(wiki, slug, lambda token: wiki.client.delete_bundle(bundle_id, token))
    return DeletedBundle(bundle_id, slug)


def suggestions(wiki: Wiki, hub: str | None = None) -> Suggestions:
    """Groups of related pages the hub suggests as bundles (not bundled yet)."""
    slug = wiki.require_hub(hub)
    return wiki.client.suggestions(slug, token=wiki.config.hub_token(slug))


def pages_on_topic(wiki: Wiki, intent: str, *, k: int = 8, hub: str | None = None) -> TopicPages:
    """The hub's pages on a topic, in a reading order, each with why it belongs."""
    if not intent.strip():
        raise InputError("the topic is empty")
    slug = wiki.require_hub(hub)
    return wiki.client.suggest_topic(slug, intent.strip(), k, token=wiki.config.hub_token(slug))


def accept_suggestion(wiki: Wiki, suggestion_id: str, *, title: str | None = None, hub: str | None = None) -> Bundle:
    """Make a suggested bundle real (under ``title`` instead of the suggested one, if given)."""
    slug = wiki.require_hub(hub)
    body = {"title": title} if title else {}
    return _as_owner(wiki, slug, lambda token: wiki.client.accept_suggestion(slug, suggestion_id, body, token))


def dismiss_suggestion(wiki: Wiki, suggestion_id: str, *, hub: str | None = None) -> dict[str, Any]:
    """Never offer that suggestion again."""
    slug = wiki.require_hub(hub)
    return _as_owner(wiki, slug, lambda token: wiki.client.dismiss_suggestion(slug, suggestion_id, token))
