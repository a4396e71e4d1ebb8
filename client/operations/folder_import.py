"""Import a folder of markdown files into a hub: an export of a hub (or its zip), or any folder
of notes such as an Obsidian vault (formats/vault.py reads it).

It goes in steps, and this is what "half imported" can mean:

1. Every file is read once and nothing is sent: a file that cannot be a page is named with
   why (not UTF-8, binary, broken front matter, empty); with `strict` any such file stops
   the import here, before anything is saved.
2. The hub is asked which files are pages already (this also proves the owner token).
3. Each page is saved (POST /api/docs, keyed by its importer id): a page is saved whole or
   not at all, and its links point at the URLs of the pages the hub holds.
4. A page that linked to a page not saved yet (a link between two new pages) is saved once
   more, with that link in place.
5. An export's bundles and its hub's description and listing.

A failure midway (the server stops, the network goes) leaves the pages saved so far; running
the same import again finds them unchanged and finishes the rest, because every save is
keyed by the file's importer id.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from memorywiki.formats import FormatError
from memorywiki.formats.mdutil import page_hash, split_title
from memorywiki.formats.vault import (
    BundleText,
    Folder,
    Links,
    PageFile,
    Problem,
    count_files,
    read_bundle,
    read_page,
    scan,
)

from ..auth import explain_hub_refusal, hub_token_hint
from ..config import Credential
from ..errors import FORBIDDEN, UNAUTHORIZED, UNKNOWN_HUB, ApiError, InputError, MemoryWikiError
from .export import unpack_export
from .types import add_redacted
from .wiki import Wiki

LOOKUP_BATCH = 1000
SHOWN_PROBLEMS = 10
STATUSES = ("created", "updated", "unchanged", "deleted")

# (step, done, total, counts so far): steps "reading", "saving", "linking", "bundles"
Progress = Callable[[str, int, int, dict[str, int]], None]


@dataclass
class FolderImport:
    hub: str
    folder: str
    exported: bool  # the folder was an export of a hub
    pages: dict[str, int] = field(default_factory=lambda: dict.fromkeys(STATUSES, 0))
    bundles: dict[str, int] = field(default_factory=lambda: dict.fromkeys(STATUSES[:3], 0))
    skipped: list[Problem] = field(default_factory=list)
    notes: list[Problem] = field(default_factory=list)
    unresolved: int = 0  # wiki links to no page of the folder, left as written
    redacted: dict[str, Any] | None = None  # what the server took out of the pages (secrets, private spans)

    def as_json(self) -> dict[str, Any]:
        return asdict(self)


class _Stopped(MemoryWikiError):
    pass


def _stopped(exc: MemoryWikiError, done: FolderImport) -> MemoryWikiError:
    saved = sum(done.pages.values())
    return _Stopped(
        f"{exc.message} ({saved} page{'s' if saved != 1 else ''} were saved before this: run the same "
        "import again to finish, pages already saved are left as they are)",
        exc.code,
    )


def _as_held(body: dict[str, Any], held: dict[str, Any]) -> bool:
    """Whether saving `body` would leave the page the server holds as it is (a deleted page
    stays deleted whatever is sent), so the save can be left out."""
    if held["deleted"]:
        return True
    title, markdown = split_title(body["title"], body["markdown"])
    if page_hash(title or "", markdown) != held["source_hash"] or "password" in body:
        return False
    return all(
        body[k] == held[k] for k in ("source", "meta", "is_draft", "password_hash", "allowed_emails") if k in body
    )


def _fatal(exc: ApiError) -> bool:
    """A refusal that is about the import, not about one file: stop rather than skip."""
    return exc.status in (401, 403, 429) or exc.status >= 500 or exc.code in (UNKNOWN_HUB, UNAUTHORIZED, FORBIDDEN)


class _Importer:
    def __init__(
        self, wiki: Wiki, slug: str, cred: Credential, folder: Folder, *, strict: bool, drafts: bool, progress: Progress
    ):
        self.wiki, self.slug, self.cred, self.folder = wiki, slug, cred, folder
        self.strict, self.drafts, self.progress = strict, drafts, progress
        self.links = Links(folder.pages)
        self.urls: dict[str, str] = {}  # importer id -> URL ("" for a page deleted on the server)
        self.ids: dict[str, str] = {}  # importer id -> doc id
        self.held: dict[str, dict[str, Any]] = {}  # importer id -> what the server holds (the lookup's answer)
        self.done = FolderImport(
            slug, str(folder.root), folder.exported, skipped=list(folder.skipped), notes=list(folder.notes)
        )

    def _call(self, call: Callable[[], dict], path: str) -> dict | None:
        """One request for one file: its answer, or None when the server refused that file
        alone (named in `skipped`; with `strict`, the import stops)."""
        try:
            return call()
        except ApiError as exc:
            if exc.status in (401, 403) and exc.code in (UNAUTHORIZED, FORBIDDEN):
                raise _stopped(explain_hub_refusal(exc, self.cred, self.slug), self.done) from None
            if _fatal(exc) or self.strict:
                raise _stopped(exc, self.done) from None
            self.done.skipped.append(Problem(path, exc.message))
            return None
        except MemoryWikiError as exc:
            raise _stopped(exc, self.done) from None

    def lookup(self) -> None:
        keys = [p.key for p in self.folder.pages]
        for start in range(0, len(keys), LOOKUP_BATCH):
            try:
                found = self.wiki.client.lookup(self.slug, keys[start : start + LOOKUP_BATCH], self.cred.token)
            except ApiError as exc:
                raise explain_hub_refusal(exc, self.cred, self.slug) from None
            for doc in found.get("docs") or []:
                self.urls[doc["external_id"]] = "" if doc["deleted"] else doc["url"]
                self.ids[doc["external_id"]] = doc["id"]
                self.held[doc["external_id"]] = doc

    def save(self, page: PageFile, *, count: bool) -> bool:
        """Save one page file; whether one of its links still waits for a page not saved yet."""
        try:
            text = read_page(self.folder, page, all_drafts=self.drafts)
        except FormatError as exc:
            if self.strict:
                raise _stopped(MemoryWikiError(f"{page.path} {exc.message}"), self.done) from None
            self.done.skipped.append(Problem(page.path, exc.message))
            return False
        linked = self.links.rewrite(text.markdown, page, self.urls)
        body: dict[str, Any] = {
            "hub": self.slug,
            "title": text.title,
            "markdown": linked.markdown,
            "source": text.source,
            "meta": text.meta,
            "external_id": page.key,
            **text.privacy.fields(),
            **text.dates,
        }
        if text.password and "password_hash" not in body:
            body["password"] = text.password
        held = self.held.pop(page.key, None)
        if held is not None and _as_held(body, held):
            status = "deleted" if held["deleted"] else "unchanged"
            data = {"id": held["id"], "url": held["url"]}
        else:
            data = self._call(lambda: self.wiki.client.create_doc(body, self.cred.token), page.path)
            if data is None:
                return False
            status = data.get("status") or "created"
            if count:
                self.done.redacted = add_redacted(self.done.redacted, data.get("redacted"))
        self.urls[page.key] = "" if status == "deleted" else data["url"]
        self.ids[page.key] = data["id"]
        if count:
            self.done.pages[status] = self.done.pages.get(status, 0) + 1
            self.done.unresolved += linked.unresolved
        return linked.pending and status != "deleted"

    def bundle(self, bundle: BundleText) -> None:
        members = [self.ids[p.key] for p in bundle.members if self.urls.get(p.key)]
        body = {
            "hub": self.slug,
            "title": bundle.title,
            "description": bundle.description,
            "doc_ids": members,
            "external_id": bundle.key,
            **bundle.dates,
        }
        data = self._call(lambda: self.wiki.client.create_bundle(body, self.cred.token), bundle.path)
        if data is not None:
            status = data.get("status") or "created"
            self.done.bundles[status] = self.done.bundles.get(status, 0) + 1

    def listing(self) -> None:
        """An export's hub description and listing, set on this hub."""
        index = self.folder.index
        body = {
            k: index[k]
            for k in ("description", "listed")
            if k in index and isinstance(index[k], str if k == "description" else bool)
        }
        if body:
            self._call(lambda: self.wiki.client.set_hub(self.slug, body, self.cred.token), "index.md")

    def run(self) -> FolderImport:
        self.lookup()
        pages = self.folder.pages
        again = []
        for n, page in enumerate(pages, 1):
            if self.save(page, count=True):
                again.append(page)
            self.progress("saving", n, len(pages), self.done.pages)
        for n, page in enumerate(again, 1):
            self.save(page, count=False)
            self.progress("linking", n, len(again), self.done.pages)
        if self.folder.exported:
            for n, path in enumerate(self.folder.bundles, 1):
                try:
                    self.bundle(read_bundle(self.folder, path, self.links))
                except FormatError as exc:
                    self.done.skipped.append(Problem(path, exc.message))
                self.progress("bundles", n, len(self.folder.bundles), self.done.bundles)
            self.listing()
        return self.done


def _refuse(
    problems: list[Problem],
    what: str = "cannot be pages",
    fix: str = "fix them, or import without --strict to skip them",
) -> InputError:
    shown = "; ".join(f"{p.path} {p.reason}" for p in problems[:SHOWN_PROBLEMS])
    more = f"; and {len(problems) - SHOWN_PROBLEMS} more" if len(problems) > SHOWN_PROBLEMS else ""
    return InputError(
        f"nothing was imported: {len(problems)} file{'s' if len(problems) != 1 else ''} {what} ({shown}{more}); {fix}"
    )


def _import_dir(
    wiki: Wiki, root: Path, slug: str, cred: Credential, *, strict: bool, drafts: bool, progress: Progress
) -> FolderImport:
    total = count_files(root)
    progress("reading", 0, total, {})
    folder = scan(root, lambda n: progress("reading", n, total, {}))
    if folder.bad_dates:  # dated at a guess, a page would come back other than it left
        raise _refuse(
            folder.bad_dates,
            "name a date that is not one",
            "fix the created and updated fields, or remove them to date the pages now",
        )
    if strict and folder.skipped:
        raise _refuse(folder.skipped)
    if not folder.pages:
        raise InputError(
            f"{root} holds no markdown file that can be a page"
            + (
                f" ({len(folder.skipped)} skipped: {folder.skipped[0].path} {folder.skipped[0].reason})"
                if folder.skipped
                else ""
            )
        )
    return _Importer(wiki, slug, cred, folder, strict=strict, drafts=drafts, progress=progress).run()


def import_folder(
    wiki: Wiki,
    source: Path,
    *,
    hub: str | None = None,
    strict: bool = False,
    drafts: bool = False,
    progress: Progress = lambda step, done, total, counts: None,
) -> FolderImport:
    """Import a folder (or an export's zip) into the hub; see the module's steps."""
    slug = wiki.require_hub(hub)
    source = source.expanduser()
    cred = wiki.config.hub_credential(slug)
    if not cred.token:
        raise MemoryWikiError(
            f"no owner token for hub {slug!r} is configured: importing needs it; {hub_token_hint(slug)}", UNAUTHORIZED
        )
    if source.is_dir():
        return _import_dir(wiki, source.resolve(), slug, cred, strict=strict, drafts=drafts, progress=progress)
    if not source.exists():
        raise InputError(f"no such folder: {source}")
    with tempfile.TemporaryDirectory(prefix="memorywiki-import-") as tmp:
        unpack_export(source, Path(tmp))
        done = _import_dir(wiki, Path(tmp), slug, cred, strict=strict, drafts=drafts, progress=progress)
    done.folder = str(source)
    return done
