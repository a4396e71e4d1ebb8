"""Take a hub out as files: the server's export zip, downloaded and unpacked into a folder.

There is one export format, the server's (formats/hubfolder.py): this downloads the same zip
the hub page offers its owner and unpacks it. A folder that holds an earlier export gets the
new one in place of its index.md, pages/ and bundles/ (anything else there stays, such as an
.obsidian/ or .git/ folder); any other folder must be new or empty, so nothing of the user's
is overwritten.
"""

from __future__ import annotations

import shutil
import tempfile
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from memorywiki.formats import FormatError, hubfolder
from memorywiki.formats.frontmatter import read_front_matter
from memorywiki.formats.vault import export_index
from memorywiki.formats.ziputil import EXPORT_LIMITS, extract, open_zip

from ..auth import explain_hub_refusal, hub_token_hint
from ..errors import UNAUTHORIZED, ApiError, InputError, MemoryWikiError
from .wiki import Wiki

OWNED = (hubfolder.INDEX, hubfolder.PAGES, hubfolder.BUNDLES)  # what an export writes in its folder


@dataclass(frozen=True)
class ExportedHub:
    hub: str
    folder: Path
    pages: int
    bundles: int
    files: int
    replaced: bool  # an earlier export in the folder was replaced


def _zip_root(zf: zipfile.ZipFile, what: str) -> str:
    """The folder inside the zip that holds the export's index.md ("" or "<slug>/")."""
    for info in zf.infolist():
        name = info.filename.replace("\\", "/")
        root, _, leaf = name.rpartition("/")
        if leaf == hubfolder.INDEX and root.count("/") == 0 and info.file_size < 16 << 20:
            try:
                fields = read_front_matter(zf.read(info).decode("utf-8")).fields
            except (UnicodeDecodeError, FormatError, zipfile.BadZipFile, OSError, ValueError):
                continue
            if hubfolder.is_index(fields):
                return f"{root}/" if root else ""
    raise InputError(
        f"{what} is not a Memory.Wiki export: it holds no index.md that says "
        f"`{hubfolder.MARKER}: {hubfolder.FORMAT}` (to import markdown files, unzip them "
        "and import the folder)"
    )


def unpack_export(archive: Path, dest: Path) -> int:
    """Unpack an export zip (checked for bombs and path tricks) into the empty folder `dest`,
    the zip's top folder left out; the number of files. InputError for a zip that is no export."""
    try:
        zf = open_zip(archive, EXPORT_LIMITS)
    except FormatError as exc:
        raise InputError(f"{archive.name}: {exc.message}") from None
    with zf:
        root = _zip_root(zf, archive.name)
        infos = [i for i in zf.infolist() if i.filename.replace("\\", "/").startswith(root)]
        try:
            return extract(zf, infos, dest, EXPORT_LIMITS, strip=root)
        except FormatError as exc:
            raise InputError(f"{archive.name}: {exc.message}") from None


def _check_target(folder: Path) -> bool:
    """Whether the folder holds an earlier export (True), is new or empty (False), or
    must not be written into (InputError)."""
    if not folder.exists():
        return False
    if not folder.is_dir():
        raise InputError(f"{folder} is a file, not a folder")
    if export_index(folder) is not None:
        return True
    if any(folder.iterdir()):
        raise InputError(f"{folder} is not empty and holds no earlier export: export into a new or empty folder")
    return False


def _move_in(unpacked: Path, folder: Path, replacing: bool) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    if replacing:
        for name in OWNED:
            old = folder / name
            if old.is_dir() and not old.is_symlink():
                shutil.rmtree(old)
            elif old.exists() or old.is_symlink():
                old.unlink()
    for item in unpacked.iterdir():
        shutil.move(str(item), str(folder / item.name))


def export_hub(
    wiki: Wiki,
    folder: Path,
    *,
    hub: str | None = None,
    versions: bool = False,
    progress: Callable[[int], None] = lambda done: None,
) -> ExportedHub:
    """Download the hub's export (owner token) and unpack it into `folder`; `progress(bytes)`
    as it arrives. The folder is only touched once the whole zip is in and checked."""
    slug = wiki.require_hub(hub)
    folder = folder.expanduser().resolve()
    replacing = _check_target(folder)
    cred = wiki.config.hub_credential(slug)
    if not cred.token:
        raise MemoryWikiError(
            f"no owner token for hub {slug!r} is configured: only its owner can export it; {hub_token_hint(slug)}",
            UNAUTHORIZED,
        )
    folder.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=".memorywiki-export-", dir=folder.parent) as tmp:
        archive = Path(tmp) / "export.zip"
        try:
            with archive.open("wb") as out:
                wiki.client.export_hub(slug, out, cred.token, versions=versions, progress=progress)
        except ApiError as exc:
            raise explain_hub_refusal(exc, cred, slug) from None
        except OSError as exc:
            raise MemoryWikiError(f"cannot write the export next to {folder}: {exc.strerror or exc}") from None
        unpacked = Path(tmp) / "unpacked"
        unpacked.mkdir()
        files = unpack_export(archive, unpacked)
        index = export_index(unpacked) or {}
        try:
            _move_in(unpacked, folder, replacing)
        except OSError as exc:
            raise MemoryWikiError(f"cannot write into {folder}: {exc.strerror or exc}") from None
    return ExportedHub(slug, folder, int(index.get("pages") or 0), int(index.get("bundles") or 0), files, replacing)
