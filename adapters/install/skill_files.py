"""The rendered /memory.wiki files: written unless the user edited them since, removed unless
the user edited them since. "Ours" means the file's sha256 is what the manifest recorded;
anything else is a conflict (install) or kept (uninstall) unless forced."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .files import prune_dirs, read, sha, write
from .manifest import Action, Manifest


def install_file(
    path: Path, content: str, rec_base: dict[str, Any], manifest: Manifest, dry_run: bool, force: bool
) -> Action:
    current = read(path)
    rec = manifest.get(path)
    if current is None:
        if dry_run:
            return Action("create", path, applied=False)
        dirs = write(path, content)
        manifest.put(path, **rec_base, kind="file", sha256=sha(content), dirs=dirs)
        return Action("create", path)
    if current == content:
        if not dry_run and (rec is None or rec.get("sha256") != sha(content)):
            manifest.put(path, **rec_base, kind="file", sha256=sha(content), dirs=(rec or {}).get("dirs", []))
        return Action("unchanged", path, applied=False)
    ours = rec is not None and rec.get("kind") == "file" and rec.get("sha256") == sha(current)
    if not ours and not force:
        why = "edited since install" if rec else "exists and was not written by memorywiki"
        return Action("conflict", path, f"{why}; kept, use --force to overwrite", applied=False)
    if dry_run:
        return Action("update", path, "forced" if not ours else "", applied=False)
    write(path, content)
    manifest.put(path, **rec_base, kind="file", sha256=sha(content), dirs=(rec or {}).get("dirs", []))
    return Action("update", path, "forced: overwrote local edits" if not ours else "")


def remove_file(path: Path, rec: dict[str, Any], manifest: Manifest, dry_run: bool, force: bool) -> Action:
    current = read(path)
    if current is None:
        if not dry_run:
            manifest.drop(path)
            prune_dirs(rec.get("dirs", []))
        return Action("missing", path, "already gone", applied=False)
    if sha(current) != rec.get("sha256") and not force:
        return Action("keep", path, "edited since install; kept, use --force to remove", applied=False)
    if dry_run:
        return Action("remove", path, applied=False)
    path.unlink()
    manifest.drop(path)
    prune_dirs(rec.get("dirs", []))
    return Action("remove", path)
