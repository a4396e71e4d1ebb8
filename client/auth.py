"""Why the server refused a write, in words that say which token was tried and how to set one.

The server answers ``unauthorized`` when no token was sent and ``forbidden`` when the token
does not cover the hub or doc; neither knows what the user has configured, so the client adds it.
An explained refusal keeps the server's code.
"""

from __future__ import annotations

from .config import Credential
from .errors import FORBIDDEN, NOT_FOUND, UNAUTHORIZED, ApiError, MemoryWikiError


def _explained(exc: ApiError, message: str) -> MemoryWikiError:
    return MemoryWikiError(message, exc.code)


def hub_token_hint(slug: str | None) -> str:
    hub = slug or "SLUG"
    return f"store its owner token with `memorywiki hub use {hub} --token TOKEN` (or set MEMORYWIKI_TOKEN)"


def doc_token_hint(doc_id: str) -> str:
    return (
        f"store the doc's edit token with `memorywiki config --set-token TOKEN --doc {doc_id}`, "
        "or its hub's owner token with `memorywiki hub use SLUG --token TOKEN` (or set MEMORYWIKI_TOKEN)"
    )


def explain_hub_refusal(exc: ApiError, cred: Credential, slug: str | None) -> MemoryWikiError:
    """A refused write to hub ``slug``: no token configured, or which token did not own it."""
    if exc.code == UNAUTHORIZED and not cred.token:
        return _explained(exc, f"no owner token for hub {slug!r} is configured; {hub_token_hint(slug)}")
    if exc.code == FORBIDDEN and cred.origin:
        return _explained(exc, f"{exc.message} (sent {cred.origin}); {hub_token_hint(slug)}")
    return exc


def explain_doc_refusal(exc: ApiError, cred: Credential, doc_id: str) -> MemoryWikiError:
    """A refused read or write of doc ``doc_id``: no token configured for it, or which token failed."""
    if exc.code == UNAUTHORIZED and not cred.token:
        return _explained(exc, f"no token for doc {doc_id} is configured; {doc_token_hint(doc_id)}")
    if exc.code == FORBIDDEN and cred.guess:
        return _explained(
            exc, f"no token for doc {doc_id} is configured ({cred.origin} does not cover it); {doc_token_hint(doc_id)}"
        )
    if exc.code == FORBIDDEN and cred.origin:
        return _explained(exc, f"{exc.message} (sent {cred.origin})")
    if exc.code == NOT_FOUND and not cred.token:
        # a private doc looks missing to a reader without a token
        return _explained(
            exc, f"{exc.message} (no token for doc {doc_id} is configured; if it is private, {doc_token_hint(doc_id)})"
        )
    return exc
