"""One doc, by id or URL: read it, change it (whole or one section), its versions, restore,
delete, index."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar, cast

from ..auth import explain_doc_refusal
from ..errors import EMBEDDER_UNAVAILABLE, VERSION_CONFLICT, ApiError, InputError, VersionConflict
from ..refs import access_from, doc_id_from
from ..sections import replace_section, strip_pulled_front_matter
from .types import Doc, DocVersion, RestoredDoc, Versions
from .wiki import Wiki

T = TypeVar("T")


@dataclass(frozen=True)
class Updated:
    doc_id: str
    data: Doc  # the doc as the server saved it
    url: str | None  # the server's, else one known before the update
    section: str | None
    changed: tuple[str, ...]  # the fields sent: markdown and/or title

    @property
    def what(self) -> str:
        """What changed, in words: "section 'X'", "page" or "title"."""
        if self.section is not None:
            return f"section {self.section!r}"
        return "page" if "markdown" in self.changed else "title"


@dataclass(frozen=True)
class Restored:
    doc_id: str
    number: int  # the version brought back
    data: RestoredDoc


@dataclass(frozen=True)
class Deleted:
    doc_id: str
    config_warning: str | None  # set when the doc's entry could not be dropped from the config


def with_doc_token(wiki: Wiki, ref: str, call: Callable[[str, str | None], T], *, restoring: bool = False) -> T:
    """``call(doc_id, token)`` with the token the config holds for the doc (for a restore, its
    hub's owner token first); a refusal says which token was tried and how to store one."""
    doc_id = doc_id_from(ref)
    cred = (wiki.config.restore_credential if restoring else wiki.config.doc_credential)(doc_id)
    try:
        return call(doc_id, cred.token)
    except ApiError as exc:
        raise explain_doc_refusal(exc, cred, doc_id) from None


def read_doc(wiki: Wiki, ref: str) -> Doc:
    """The doc as JSON (markdown as saved, version, url...); a shared URL's ``?access=`` is used."""
    access = access_from(ref)
    return cast(
        Doc, with_doc_token(wiki, ref, lambda doc_id, token: wiki.client.get_doc(doc_id, token=token, access=access))
    )


def doc_markdown(wiki: Wiki, ref: str, *, curation: bool = False) -> str:
    """The doc as markdown with its front matter (GET /raw/<id>); with ``curation``, the
    enrichment appended as readers see it."""
    access = access_from(ref)
    return with_doc_token(
        wiki, ref, lambda doc_id, token: wiki.client.raw(doc_id, token=token, access=access, curation=curation)
    )


def update_doc(
    wiki: Wiki,
    ref: str,
    *,
    markdown: str | None = None,
    section: str | None = None,
    title: str | None = None,
    expected_version: int | None = None,
) -> Updated:
    """Replace the doc's body, or only its ``section`` (the rest stays byte for byte), and/or
    its title. With ``expected_version``, refuse (:class:`VersionConflict`) if the doc moved on;
    a section edit always sends the version it was made on, so it never overwrites a newer text.
    A whole body that starts with the front matter ``doc_markdown`` gave is taken without it
    (its title too, unless ``title`` is given), so a read doc can be edited and sent back."""
    doc_id = doc_id_from(ref)
    if section is not None and markdown is None:
        raise InputError("a section update needs the section's new text")
    if markdown is None and title is None:
        raise InputError("nothing to update: give new markdown (or one section's new text) and/or a title")
    if markdown is not None and not markdown.strip():
        raise InputError("empty body: nothing to update (give only a title to rename)")
    if title is not None and not title.strip():
        raise InputError("the title is empty")
    if markdown is not None and section is None:
        markdown, pulled_title = strip_pulled_front_matter(markdown, doc_id)
        if not markdown.strip():
            raise InputError("the markdown is empty after its front matter")
        if title is None:
            title = pulled_title

    cred = wiki.config.doc_credential(doc_id)
    body: dict[str, Any] = {}
    if_match = str(expected_version) if expected_version is not None else None
    url = wiki.config.doc_entry(doc_id).get("url")
    try:
        if section is not None:
            current = wiki.client.get_doc(doc_id, token=cred.token)
            version = current.get("version")
            if expected_version is not None and version != expected_version:
                raise VersionConflict(doc_id, version, expected_version)
            body["markdown"] = replace_section(current.get("markdown") or "", section, markdown or "")
            if if_match is None and version is not None:
                if_match = str(version)
            url = current.get("url") or url
        elif markdown is not None:
            body["markdown"] = markdown
        if title is not None:
            body["title"] = title.strip()
        data = wiki.client.patch_doc(doc_id, body, token=cred.token, if_match=if_match)
    except ApiError as exc:
        if exc.code == VERSION_CONFLICT:
            raise _conflict(exc, doc_id, expected_version) from None
        raise explain_doc_refusal(exc, cred, doc_id) from None
    return Updated(doc_id, cast(Doc, data), data.get("url") or url, section, tuple(body))


def _conflict(exc: ApiError, doc_id: str, expected: int | None) -> VersionConflict:
    current = exc.details.get("current")
    return VersionConflict(
        doc_id, current.get("version") if isinstance(current, dict) else None, exc.details.get("expected", expected)
    )


def history(wiki: Wiki, ref: str) -> Versions:
    """The doc's versions, newest first."""
    access = access_from(ref)
    return cast(
        Versions,
        with_doc_token(
            wiki, ref, lambda doc_id, token: wiki.client.versions(doc_id, token=token, access=access), restoring=True
        ),
    )


def version(wiki: Wiki, ref: str, number: int) -> DocVersion:
    """One version of the doc, with its markdown."""
    access = access_from(ref)
    return cast(
        DocVersion,
        with_doc_token(
            wiki,
            ref,
            lambda doc_id, token: wiki.client.version(doc_id, number, token=token, access=access),
            restoring=True,
        ),
    )


def restore(wiki: Wiki, ref: str, number: int, *, expected_version: int | None = None) -> Restored:
    """Make version ``number`` the doc's text again, as a new version (a deleted doc comes back)."""
    doc_id = doc_id_from(ref)
    cred = wiki.config.restore_credential(doc_id)
    if_match = str(expected_version) if expected_version is not None else None
    try:
        data = wiki.client.restore(doc_id, number, token=cred.token, if_match=if_match)
    except ApiError as exc:
        if exc.code == VERSION_CONFLICT:
            raise _conflict(exc, doc_id, expected_version) from None
        raise explain_doc_refusal(exc, cred, doc_id) from None
    return Restored(doc_id, number, cast(RestoredDoc, data))


def undelete(wiki: Wiki, ref: str) -> Restored:
    """Bring a deleted doc back from its hub's trash (a new version with the text it had)."""
    doc_id = doc_id_from(ref)
    cred = wiki.config.restore_credential(doc_id)
    try:
        data = wiki.client.undelete(doc_id, token=cred.token)
    except ApiError as exc:
        raise explain_doc_refusal(exc, cred, doc_id) from None
    return Restored(doc_id, data.get("restored_from") or 0, cast(RestoredDoc, data))


def delete_doc(wiki: Wiki, ref: str) -> Deleted:
    """Delete the doc and drop it from the config."""
    doc_id = doc_id_from(ref)
    with_doc_token(wiki, doc_id, lambda doc_id, token: wiki.client.delete_doc(doc_id, token=token))
    warning = None
    if doc_id in wiki.config.docs:
        warning = wiki.update_config(lambda cfg: cfg.forget_doc(doc_id))
    return Deleted(doc_id, warning)


def set_draft(wiki: Wiki, ref: str, draft: bool) -> Doc:
    """Make the doc a draft (private to its editors) or publish it (readable by whoever its other
    gates let in); the doc as saved."""
    return cast(
        Doc,
        with_doc_token(
            wiki, ref, lambda doc_id, token: wiki.client.patch_doc(doc_id, {"is_draft": draft}, token=token)
        ),
    )


def index_doc(wiki: Wiki, ref: str) -> dict[str, Any]:
    """Index the doc now (skipped when its text has not changed)."""
    doc_id = doc_id_from(ref)
    cred = wiki.config.doc_credential(doc_id)
    try:
        return wiki.client.embed(doc_id, token=cred.token)
    except ApiError as exc:
        if exc.code == EMBEDDER_UNAVAILABLE:  # the server's own state, not the token's
            raise
        raise explain_doc_refusal(exc, cred, doc_id) from None


def index_bundle(wiki: Wiki, ref: str) -> dict[str, Any]:
    """Refresh a bundle's vector now."""
    return wiki.client.embed_bundle(doc_id_from(ref))
