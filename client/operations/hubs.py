"""Hubs: claim one, choose one, list or describe it, its docs and the URLs to share."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..auth import hub_token_hint
from ..config import Config
from ..errors import FORBIDDEN, HUB_TAKEN, UNAUTHORIZED, UNKNOWN_HUB, ApiError, InputError, MemoryWikiError
from ..refs import seg
from .types import HubListing, NewHub
from .wiki import Wiki


@dataclass(frozen=True)
class CreatedHub:
    data: NewHub  # holds the owner token, shown once
    slug: str
    became_default: bool
    config_warning: str | None  # set when the owner token could not be saved in the config


@dataclass(frozen=True)
class HubUrls:
    hub: str
    url: str  # the hub page: HTML for people, markdown for AI fetchers
    raw_url: str  # the markdown index
    docs: int
    bundles: int


def _unknown_hub(exc: ApiError, wiki: Wiki, slug: str) -> MemoryWikiError:
    if exc.code == UNKNOWN_HUB:
        return MemoryWikiError(f"no hub {slug!r} on {wiki.base_url}: {exc.message}", UNKNOWN_HUB)
    return exc


def _listing(wiki: Wiki, slug: str, token: str | None) -> HubListing:
    try:
        return wiki.client.get_hub(slug, token=token)
    except ApiError as exc:
        raise _unknown_hub(exc, wiki, slug) from None


def hub_info(wiki: Wiki, hub: str | None = None, *, owner: bool = False) -> HubListing:
    """The hub's listing with all of its docs and bundles, as strangers see it; with ``owner``
    and the hub's owner token configured, the owner's view (every live doc with its
    ``visibility``, drafts and private ones included)."""
    slug = wiki.require_hub(hub)
    return _listing(wiki, slug, wiki.config.hub_token(slug) if owner else None)


def _owner_needed(wiki: Wiki, slug: str, what: str) -> MemoryWikiError:
    cred = wiki.config.hub_credential(slug)
    sent = f" ({cred.origin} does not own it)" if cred.token else ""
    return MemoryWikiError(f"{what} of hub {slug!r} needs its owner token{sent}; {hub_token_hint(slug)}", FORBIDDEN)


def all_pages(wiki: Wiki, hub: str | None = None) -> HubListing:
    """Every live doc of the hub, drafts and private ones included, each with its
    ``visibility``: the owner's view, refused without the owner token."""
    slug = wiki.require_hub(hub)
    token = wiki.config.hub_token(slug)
    data = _listing(wiki, slug, token) if token else None
    if data is None or data.get("view") != "owner":
        raise _owner_needed(wiki, slug, "listing every page")
    return data


def trash(wiki: Wiki, hub: str | None = None) -> dict[str, Any]:
    """The hub's deleted docs, newest deletion first (the owner's)."""
    slug = wiki.require_hub(hub)
    cred = wiki.config.hub_credential(slug)
    try:
        return wiki.client.get_trash(slug, cred.token)
    except ApiError as exc:
        if exc.code in (UNAUTHORIZED, FORBIDDEN):
            raise _owner_needed(wiki, slug, "the trash") from None
        raise _unknown_hub(exc, wiki, slug) from None


def hub_urls(wiki: Wiki, hub: str | None = None) -> HubUrls:
    """The URL to hand another AI or person, and the markdown index's."""
    slug = wiki.require_hub(hub)
    data = _listing(wiki, slug, None)
    url = data.get("url") or f"{wiki.base_url}/hub/{seg(slug)}"
    root = url.split("/hub/", 1)[0] if "/hub/" in url else wiki.base_url
    return HubUrls(
        slug, url, f"{root}/raw/hub/{seg(slug)}", len(data.get("docs") or []), len(data.get("bundles") or [])
    )


def hub_markdown(wiki: Wiki, hub: str | None = None) -> str:
    """The hub's markdown index (GET /raw/hub/<slug>)."""
    slug = wiki.require_hub(hub)
    return wiki.client.raw_hub(slug, token=wiki.config.hub_token(slug))


def create_hub(wiki: Wiki, slug: str) -> CreatedHub:
    """Claim a new hub and keep its owner token (it becomes the default hub if there is none)."""
    try:
        data = wiki.client.create_hub(slug)
    except ApiError as exc:
        if exc.code == HUB_TAKEN:
            raise MemoryWikiError(
                f"hub taken: {slug!r} already exists; if it is yours, "
                f"`memorywiki hub use {slug} --token TOKEN` stores the owner token you hold",
                HUB_TAKEN,
            ) from None
        raise
    token, hub_slug = data.get("owner_token"), data.get("slug") or slug
    became_default = False
    warning = None
    if token:
        became_default = not wiki.config.data.get("hub")

        def keep(cfg: Config) -> None:
            cfg.remember_hub(hub_slug, token, data.get("url"))
            cfg.remember_server(wiki.base_url)

        warning = wiki.update_config(keep)
    return CreatedHub(data, hub_slug, became_default, warning)


def use_hub(wiki: Wiki, slug: str, token: str | None = None) -> HubListing:
    """Make an existing hub (checked on the server) the default, keeping its owner token if given."""
    data = _listing(wiki, slug, None)
    if token is not None and not token.strip():
        raise InputError("the token is empty")

    def choose(cfg: Config) -> None:
        cfg.remember_hub(slug, token.strip() if token else None, data.get("url"))
        cfg.set_default_hub(slug)
        cfg.remember_server(wiki.base_url)

    warning = wiki.update_config(choose)
    if warning:
        raise MemoryWikiError(warning)
    return data


def set_hub(
    wiki: Wiki,
    hub: str | None = None,
    *,
    listed: bool | None = None,
    description: str | None = None,
    redact_secrets: bool | None = None,
) -> dict[str, Any]:
    """List or unlist the hub (home page, /llms.txt), describe it, or say whether secrets are
    redacted from its pages."""
    if listed is None and description is None and redact_secrets is None:
        raise InputError("nothing to set: give --listed, --unlisted, --description, --redact-secrets or --keep-secrets")
    slug = wiki.require_hub(hub)
    fields = (("listed", listed), ("description", description), ("redact_secrets", redact_secrets))
    body = {k: v for k, v in fields if v is not None}
    return wiki.client.set_hub(slug, body, token=wiki.config.hub_token(slug))


def _as_owner(wiki: Wiki, slug: str, what: str, call):
    """Run `call(token)` with the hub's owner token, turning a refusal into the owner-token hint."""
    try:
        return call(wiki.config.hub_token(slug))
    except ApiError as exc:
        if exc.code in (UNAUTHORIZED, FORBIDDEN):
            raise _owner_needed(wiki, slug, what) from None
        raise _unknown_hub(exc, wiki, slug) if exc.code == UNKNOWN_HUB else exc from None


def add_member(wiki: Wiki, name: str, hub: str | None = None) -> dict[str, Any]:
    """Add a co-author to the hub; the answer holds their token, shown once (the owner's)."""
    if not name.strip():
        raise InputError("the member's name is empty")
    slug = wiki.require_hub(hub)
    return _as_owner(wiki, slug, "adding a member", lambda token: wiki.client.add_member(slug, name.strip(), token))


def members(wiki: Wiki, hub: str | None = None) -> dict[str, Any]:
    """The hub's members, oldest first (the owner's)."""
    slug = wiki.require_hub(hub)
    return _as_owner(wiki, slug, "listing the members", lambda token: wiki.client.list_members(slug, token))


def remove_member(wiki: Wiki, name: str, hub: str | None = None) -> dict[str, Any]:
    """Remove a member: their token stops working at once (the owner's)."""
    slug = wiki.require_hub(hub)
    return _as_owner(
        wiki, slug, "removing a member", lambda token: wiki.client.remove_member(slug, name.strip(), token)
    )
