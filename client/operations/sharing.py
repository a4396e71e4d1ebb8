"""Share a page with people by address: add or remove addresses. Each address newly added is
mailed its one-time sign-in link by the server (when it sends mail); the answer says who was."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..auth import explain_doc_refusal
from ..errors import VERSION_CONFLICT, ApiError, InputError, MemoryWikiError
from ..refs import doc_id_from
from .wiki import Wiki

ATTEMPTS = 3  # a page saved by someone else meanwhile: read it again and retry


@dataclass(frozen=True)
class Shared:
    doc_id: str
    url: str | None
    allowed_emails: list[str]
    sharing: dict[str, Any] = field(default_factory=dict)  # the server's note: mail, mailed, not_mailed, message


def _clean(addresses: list[str]) -> list[str]:
    cleaned = [a.strip().lower() for a in addresses if a.strip()]
    bad = [a for a in cleaned if "@" not in a or any(c.isspace() for c in a)]
    if bad:
        raise InputError(f"not an email address: {bad[0]}")
    return cleaned


def share(wiki: Wiki, ref: str, add: list[str] = (), remove: list[str] = ()) -> Shared:  # type: ignore[assignment]
    """The doc shared with `add` as well and no longer with `remove` (with its edit token or
    its hub's owner token); with neither, who it is shared with now. The list is read and
    written back with the version read, so an address added meanwhile by someone else is kept."""
    doc_id = doc_id_from(ref)
    added, removed = _clean(list(add)), _clean(list(remove))
    cred = wiki.config.doc_credential(doc_id)
    try:
        for attempt in range(ATTEMPTS):
            current = wiki.client.get_doc(doc_id, token=cred.token)
            if "allowed_emails" not in current:
                raise MemoryWikiError(
                    f"the token sent for doc {doc_id} cannot edit it, so it cannot share it "
                    "(its edit token or its hub's owner token can)"
                )
            listed = list(current["allowed_emails"] or [])
            if not added and not removed:
                return Shared(doc_id, current.get("url"), listed)
            wanted = [e for e in listed if e.lower() not in removed]
            wanted += [e for e in added if e not in {w.lower() for w in wanted}]
            try:
                data = wiki.client.patch_doc(
                    doc_id, {"allowed_emails": wanted}, token=cred.token, if_match=str(current["version"])
                )
            except ApiError as exc:
                if exc.code == VERSION_CONFLICT and attempt + 1 < ATTEMPTS:
                    continue
                raise
            return Shared(doc_id, data.get("url"), list(data.get("allowed_emails") or []), data.get("sharing") or {})
    except ApiError as exc:
        raise explain_doc_refusal(exc, cred, doc_id) from None
    raise AssertionError("unreachable")  # pragma: no cover
