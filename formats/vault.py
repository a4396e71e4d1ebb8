"""A folder of markdown files read as pages: an export of a hub (formats/hubfolder.py) or any
other folder, such as an Obsidian vault.

`scan` walks the folder once and keeps a few fields per file (its path, the importer id it is
saved under, its title and aliases), never the text, so a folder of 10,000 notes costs little
memory; a file that cannot be a page (not UTF-8, binary, broken front matter, empty, too
large) is named with the reason. `read_page` reads one file again when it is saved, and
`Links` turns its wiki links (`[[Note]]`, `[[Note#Heading|alias]]`, `![[Note]]`) and relative
links (`[x](Other.md)`) into links to the pages' URLs on the server.

Hidden folders and files (`.obsidian/`, `.git/`, `.trash/`) are left out, and so are symbolic
links, which could lead out of the folder.
"""

from __future__ import annotations

import os
import posixpath
import re
import unicodedata
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from mdit_py_plugins.anchors.index import slugify

from . import hubfolder
from .frontmatter import read_front_matter
from .mdlinks import WikiLink, destinations_in, href_path, link_text, outside_code, rewrite_destinations, wiki_links_in
from .mdutil import split_title
from .model import FormatError

MAX_FILE_BYTES = 16 * 1024 * 1024
MARKDOWN = (".md", ".markdown")
MAX_TITLE = 500
# front matter a foreign file may carry that must never become the page's (public) meta
PRIVATE_FIELDS = ("visibility", "allowed_emails", "password_hash", "password")
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")


@dataclass(frozen=True)
class Problem:
    path: str
    reason: str


@dataclass
class PageFile:
    path: str  # from the folder's root, "/"-separated
    key: str  # the importer id it is saved under
    title: str
    aliases: tuple[str, ...] = ()
    created: str = ""  # an export's page: when it was made on its server (the import keeps that order)
    targets: tuple[tuple[str, str], ...] = ()  # its links as written: ("wiki", target) or ("relative", destination)

    @property
    def folder(self) -> str:
        return posixpath.dirname(self.path)


@dataclass
class Folder:
    root: Path
    exported: bool  # an export of a hub (its index.md says so)
    index: dict[str, Any]
    pages: list[PageFile] = field(default_factory=list)
    bundles: list[str] = field(default_factory=list)  # paths of an export's bundle files
    skipped: list[Problem] = field(default_factory=list)
    notes: list[Problem] = field(default_factory=list)  # imported, with something the owner should know
    bad_dates: list[Problem] = field(default_factory=list)  # an export's files whose dates stop the import


@dataclass(frozen=True)
class PageText:
    title: str
    markdown: str  # links not yet rewritten
    source: str | None
    meta: dict[str, Any]
    privacy: hubfolder.Privacy
    password: str | None = None  # a foreign file's `password:`, sent for the server to hash
    dates: dict[str, str] = field(default_factory=dict)  # an export's page: its created_at, updated_at


def read_text(path: Path) -> str:
    """A file's text, or FormatError saying why it is no page."""
    try:
        size = path.stat().st_size
        if size > MAX_FILE_BYTES:
            raise FormatError(
                "too_large", f"{size / 1024 / 1024:.1f} MB, over the {MAX_FILE_BYTES >> 20} MB a page may be"
            )
        data = path.read_bytes()
    except OSError as exc:
        raise FormatError("unreadable", f"cannot be read ({exc.strerror or exc})") from None
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise FormatError(
            "not_utf8",
            f"is not UTF-8 text (byte 0x{data[exc.start]:02x} at offset {exc.start}); "
            "convert it to UTF-8 and import again",
        ) from None
    if "\x00" in text:
        raise FormatError("binary", "holds NUL bytes: not a text file")
    return text


def _walk(root: Path, under: str = "") -> Iterator[str]:
    """Relative paths of the markdown files under `root/under`, in a stable order."""
    start = root / under if under else root
    for here, dirs, files in os.walk(start):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and not (Path(here) / d).is_symlink())
        base = Path(here).relative_to(root).as_posix()
        for name in sorted(files):
            if name.startswith(".") or not name.lower().endswith(MARKDOWN) or (Path(here) / name).is_symlink():
                continue
            yield unicodedata.normalize("NFC", name if base == "." else f"{base}/{name}")


def _page_paths(root: Path, exported: bool) -> Iterator[str]:
    if not exported:
        yield from _walk(root)
        return
    for path in _walk(root, hubfolder.PAGES):
        if not any(part.endswith(hubfolder.VERSIONS) for part in path.split("/")[:-1]):
            yield path


def export_index(root: Path) -> dict[str, Any] | None:
    """The index's front matter when the folder is an export, else None."""
    try:
        fields = read_front_matter(read_text(root / hubfolder.INDEX)).fields
    except FormatError:
        return None
    return fields if hubfolder.is_index(fields) else None


def count_files(root: Path) -> int:
    """How many files `scan` will read (for a progress bar)."""
    return sum(1 for _ in _page_paths(root, export_index(root) is not None))


def _stem(path: str) -> str:
    return posixpath.splitext(posixpath.basename(path))[0]


def _title(fields: dict[str, Any], path: str) -> str:
    title = fields.get("title")
    title = " ".join(title.split()) if isinstance(title, str) else ""
    return (title or _stem(path))[:MAX_TITLE]


def _aliases(fields: dict[str, Any]) -> tuple[str, ...]:
    found = []
    for key in ("aliases", "alias"):
        value = fields.get(key)
        found += (
            [value]
            if isinstance(value, str)
            else [v for v in value if isinstance(v, str)]
            if isinstance(value, list)
            else []
        )
    return tuple(a.strip() for a in found if a.strip())


def export_dates(fields: dict[str, Any]) -> dict[str, str]:
    """An export's page or bundle: the created_at and updated_at it had on its server (ISO
    8601), those it names; FormatError for a date that is none."""
    made, changed = hubfolder.parse_dates(fields.get("created"), fields.get("updated"))
    return {key: when.isoformat() for key, when in (("created_at", made), ("updated_at", changed)) if when}


def _page_text(root: Path, path: str, exported: bool, all_drafts: bool = False) -> tuple[PageText, dict[str, Any]]:
    parsed = read_front_matter(read_text(root / path))
    fields = parsed.fields
    privacy = hubfolder.page_privacy(fields, exported=exported, all_drafts=all_drafts)
    if exported:
        given_meta, given_source = fields.get("meta"), fields.get("source")
        meta = given_meta if isinstance(given_meta, dict) else {}
        source = given_source if isinstance(given_source, str) else None
        password = None
    else:
        meta = {k: v for k, v in fields.items() if k not in PRIVATE_FIELDS and k != "title"}
        meta.setdefault("file_name", path)
        source = "markdown"
        password = fields.get("password") if isinstance(fields.get("password"), str) and fields["password"] else None
    return PageText(_title(fields, path), parsed.body, source, meta, privacy, password), fields


def read_page(folder: Folder, page: PageFile, *, all_drafts: bool = False) -> PageText:
    """What to save for one page file, read again now (FormatError if it no longer can be);
    an export's page with the dates it had (scan has checked them)."""
    text, fields = _page_text(folder.root, page.path, folder.exported, all_drafts)
    return replace(text, dates=export_dates(fields)) if folder.exported else text


def scan(root: Path, progress: Callable[[int], None] = lambda done: None) -> Folder:
    """Every page file of the folder (in the order to save them) and every file skipped, with why."""
    index = export_index(root)
    folder = Folder(root, index is not None, index or {})
    seen: dict[str, str] = {}
    for n, path in enumerate(_page_paths(root, folder.exported), 1):
        progress(n)
        try:
            text, fields = _page_text(root, path, folder.exported)
        except FormatError as exc:
            folder.skipped.append(Problem(path, exc.message))
            continue
        _, body = split_title(text.title, text.markdown)
        if not body.strip():
            folder.skipped.append(Problem(path, "is empty: a page needs some text"))
            continue
        key = hubfolder.import_key(fields, path, exported=folder.exported)
        if key in seen:
            folder.notes.append(Problem(path, f"has the same id as {seen[key]}: imported as a page of its own"))
            key = hubfolder.import_key({}, path, exported=False)
        seen[key] = path
        folder.notes += [Problem(path, note) for note in text.privacy.notes]
        if folder.exported:
            _check_dates(folder, path, fields)
        given_created = fields.get("created")
        created = given_created if folder.exported and isinstance(given_created, str) else ""
        folder.pages.append(PageFile(path, key, text.title, _aliases(fields), created, _targets(text.markdown)))
    if folder.exported:
        # the order the pages were made in on their server, so file names come out the same
        folder.pages.sort(key=lambda p: (p.created == "", p.created, p.path))
        folder.bundles = list(_walk(root, hubfolder.BUNDLES))
        for path in folder.bundles:
            try:
                _check_dates(folder, path, read_front_matter(read_text(root / path)).fields)
            except FormatError:
                pass  # a bundle file that cannot be read is skipped when the bundles are saved
    else:
        folder.pages = Links(folder.pages).linked_first(folder.pages)
    return folder


def _check_dates(folder: Folder, path: str, fields: dict[str, Any]) -> None:
    try:
        export_dates(fields)
    except FormatError as exc:
        folder.bad_dates.append(Problem(path, exc.message))


def _targets(markdown: str) -> tuple[tuple[str, str], ...]:
    found: list[tuple[str, str]] = []

    def wiki(link: WikiLink) -> None:
        if link.target:
            found.append(("wiki", link.target))

    def relative(destination: str) -> None:
        found.append(("relative", destination))

    # one parse for both kinds of link: a large folder is read a file at a time, twice
    outside_code(markdown, lambda part: destinations_in(wiki_links_in(part, wiki), relative))
    return tuple(dict.fromkeys(found))


@dataclass(frozen=True)
class BundleText:
    path: str
    key: str
    title: str
    description: str
    members: list[PageFile]
    dates: dict[str, str] = field(default_factory=dict)  # its created_at, updated_at on its server


def read_bundle(folder: Folder, path: str, links: Links) -> BundleText:
    """An export's bundle file: its title, description and the pages it links to, in order."""
    parsed = read_front_matter(read_text(folder.root / path))
    fields = parsed.fields
    members: list[PageFile] = []

    def collect(destination: str) -> None:
        found = links.find_relative(destination, posixpath.dirname(path))
        if found is not None and found[0] not in members:
            members.append(found[0])

    rewrite_destinations(parsed.body, lambda d: collect(d))
    given_description = fields.get("description")
    description = given_description if isinstance(given_description, str) else ""
    return BundleText(
        path,
        hubfolder.import_key(fields, path, exported=True),
        _title(fields, path),
        description,
        members,
        export_dates(fields),
    )


def _fold(text: str) -> str:
    return unicodedata.normalize("NFC", text).casefold()


@dataclass
class Rewritten:
    markdown: str
    pending: bool = False  # a link points at a page of the folder the server does not hold yet
    unresolved: int = 0  # wiki links to no page of the folder, left as written


class Links:
    """The folder's pages by path, by name and by alias, the way Obsidian finds a link's note."""

    def __init__(self, pages: list[PageFile]):
        self.by_path: dict[str, list[PageFile]] = {}
        self.by_name: dict[str, list[PageFile]] = {}
        for page in pages:
            self.by_path.setdefault(_fold(posixpath.splitext(page.path)[0]), []).append(page)
            self.by_name.setdefault(_fold(_stem(page.path)), []).append(page)
            for alias in page.aliases:
                self.by_name.setdefault(_fold(alias), []).append(page)

    @staticmethod
    def _nearest(found: list[PageFile], here: str) -> PageFile | None:
        """Of several notes with one name: the one beside the linking note, else the shortest path."""
        if not found:
            return None
        return min(found, key=lambda p: (p.folder != here, p.path.count("/"), p.path))

    def find_wiki(self, target: str, here: str) -> PageFile | None:
        name = target[:-3] if target.lower().endswith(".md") else target
        if "/" in name:
            wanted = _fold(posixpath.normpath(name.lstrip("/")))
            found = self.by_path.get(wanted) or [
                p
                for paths in self.by_path.values()
                for p in paths
                if _fold(posixpath.splitext(p.path)[0]).endswith("/" + wanted)
            ]
            return self._nearest(found, here)
        return self._nearest(self.by_name.get(_fold(name), []), here)

    def find_relative(self, destination: str, here: str) -> tuple[PageFile, str] | None:
        """The page a relative link names (and its #fragment), from a file in folder `here`."""
        if _SCHEME.match(destination) or destination.startswith(("#", "/", "<#", "</")):
            return None
        path, _, fragment = href_path(destination).partition("#")
        path = path.split("?", 1)[0]
        if not path:
            return None
        joined = posixpath.normpath(posixpath.join(here, path))
        if joined.startswith("../") or joined == "..":
            return None
        stem, ext = posixpath.splitext(joined)
        if ext and ext.lower() not in MARKDOWN:
            return None
        nearest = self._nearest(self.by_path.get(_fold(stem)) or [], here)
        return (nearest, fragment) if nearest is not None else None

    def linked_first(self, pages: list[PageFile]) -> list[PageFile]:
        """The pages in an order that saves each after the pages it links to (a depth-first
        walk's post-order; in a cycle of links one page must wait for another all the same),
        so that most links point at a page the server holds by the time their page is saved."""
        position = {id(p): i for i, p in enumerate(pages)}

        def linked(page: PageFile) -> list[int]:
            out = []
            for kind, value in page.targets:
                found = (
                    self.find_wiki(value, page.folder)
                    if kind == "wiki"
                    else (self.find_relative(value, page.folder) or (None,))[0]
                )
                if found is not None and found is not page:
                    out.append(position[id(found)])
            return out

        order: list[PageFile] = []
        state = [0] * len(pages)  # 0: not seen, 1: on the walk's path, 2: placed
        for start in range(len(pages)):
            if state[start]:
                continue
            stack = [(start, iter(linked(pages[start])))]
            state[start] = 1
            while stack:
                node, rest = stack[-1]
                step = next((j for j in rest if not state[j]), None)
                if step is None:
                    stack.pop()
                    state[node] = 2
                    order.append(pages[node])
                else:
                    state[step] = 1
                    stack.append((step, iter(linked(pages[step]))))
        return order

    def rewrite(self, markdown: str, page: PageFile, known: dict[str, str]) -> Rewritten:
        """The markdown with links to the folder's pages pointing at their URLs. `known`:
        importer id -> URL of the pages the server holds ("" for one deleted there)."""
        out = Rewritten(markdown)

        def url(target: PageFile) -> str | None:
            found = known.get(target.key)
            if found is None:
                out.pending = True
            return found or None

        def wiki(link: WikiLink) -> str | None:
            if not link.target:  # a heading of this same note
                return (
                    f"[{link_text(link.text)}](#{slugify(link.heading)})"
                    if link.heading and not link.heading.startswith("^")
                    else None
                )
            target = self.find_wiki(link.target, page.folder)
            if target is None:
                if not link.embed or not posixpath.splitext(link.target)[1]:
                    out.unresolved += 1
                return None
            address = url(target)
            if address is None:
                return None
            if link.heading and not link.heading.startswith("^"):
                address += f"#{slugify(link.heading)}"
            return f"[{link_text(link.text)}]({address})"

        def relative(destination: str) -> str | None:
            found = self.find_relative(destination, page.folder)
            if found is None:
                return None
            address = url(found[0])
            return None if address is None else address + (f"#{found[1]}" if found[1] else "")

        out.markdown = outside_code(markdown, lambda part: destinations_in(wiki_links_in(part, wiki), relative))
        return out
