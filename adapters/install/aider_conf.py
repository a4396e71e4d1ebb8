"""The `read:` entry that loads the /memory.wiki conventions into Aider (.aider.conf.yml).

The file is edited in place as text and re-parsed to check the result, so the user's comments
and other keys survive; when a minimal edit cannot be proven right the file is left alone.
Uninstall restores the user's original bytes when the file is untouched since.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import yaml
from memorywiki.skill.render import AIDER_CONVENTIONS

from .files import prune_dirs, read, sha, write
from .manifest import Action, InstallError, Manifest

_OUR_COMMENT = "# added by memorywiki install (read-only conventions for /memory.wiki)"


def _yaml_load(text: str) -> dict[str, Any]:
    data = yaml.safe_load(text) if text.strip() else {}
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise InstallError("not a YAML mapping")
    return data


def _as_list(value: Any) -> list[Any]:
    if value is None:
        return []
    return list(value) if isinstance(value, list) else [value]


def _read_block_span(text: str) -> tuple[int, int] | None:
    """[start, end) character span of the top-level `read:` key and its value lines."""
    lines = text.splitlines(keepends=True)
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line))
    start_idx = next((i for i, line in enumerate(lines) if re.match(r"read[ \t]*:", line)), None)
    if start_idx is None:
        return None
    last = start_idx
    j = start_idx + 1
    while j < len(lines):
        line = lines[j]
        stripped = line.strip()
        if not stripped:
            j += 1
            continue
        if line[0] in " \t" or stripped.startswith("-"):
            last = j
            j += 1
            continue
        break
    return offsets[start_idx], offsets[last + 1]


def _render_read(items: list[Any]) -> str:
    return "read:\n" + "".join(f"  - {_yaml_item(str(i))}\n" for i in items)


def _set_read(text: str, items: list[Any]) -> str:
    """`text` with the top-level read: key set to `items` (removed when empty)."""
    span = _read_block_span(text)
    if span is None:
        if not items:
            return text
        sep = "" if not text or text.endswith("\n") else "\n"
        return f"{text}{sep}{_OUR_COMMENT}\n{_render_read(items)}"
    start, end = span
    new = _render_read(items) if items else ""
    before = text[:start]
    if not items and before.endswith(_OUR_COMMENT + "\n"):
        before = before[: -len(_OUR_COMMENT) - 1]
    return before + new + text[end:]


def _yaml_item(entry: str) -> str:
    if re.fullmatch(r"[A-Za-z0-9_./~][A-Za-z0-9_./~-]*|[A-Za-z0-9_.]", entry) and ": " not in entry:
        return entry
    return json.dumps(entry, ensure_ascii=False)


def _minimal_read_edit(text: str, entry: str, add: bool) -> str | None:
    """Insert or delete just the one `- entry` line of a block-style read: list."""
    span = _read_block_span(text)
    if span is None:
        return None
    block = text[span[0] : span[1]].splitlines(keepends=True)
    key_line, rest = block[0], block[1:]
    if key_line.split(":", 1)[1].split("#", 1)[0].strip():
        return None  # inline value: not a block list
    item_idx = [i for i, line in enumerate(rest) if re.match(r"\s*-(\s|$)", line)]
    if not item_idx:
        return None
    if add:
        first = rest[item_idx[0]]
        indent = first[: len(first) - len(first.lstrip())]  # what stands before its "-"
        last = rest[item_idx[-1]]
        if not last.endswith("\n"):
            rest[item_idx[-1]] = last + "\n"
        rest.insert(item_idx[-1] + 1, f"{indent}- {_yaml_item(entry)}\n")
    else:
        pattern = re.compile(r"\s*-\s*(['\"]?)" + re.escape(entry) + r"\1\s*(#.*)?$")
        hits = [i for i in item_idx if pattern.match(rest[i].rstrip("\r\n"))]
        if not hits or len(item_idx) == 1:
            return None
        del rest[hits[0]]
    return text[: span[0]] + key_line + "".join(rest) + text[span[1] :]


def _edit_read(text: str, entry: str, add: bool) -> str:
    data = _yaml_load(text)
    items = _as_list(data.get("read"))
    if add:
        if entry in items:
            return text
        new_items = [*items, entry]
    else:
        if entry not in items:
            return text
        new_items = [i for i in items if i != entry]
    expected = dict(data)
    if new_items:
        expected["read"] = new_items
    else:
        expected.pop("read", None)
    for candidate in (_minimal_read_edit(text, entry, add), _set_read(text, new_items)):
        if candidate is None:
            continue
        try:
            if _yaml_load(candidate) == expected:
                return candidate
        except Exception:
            continue
    raise InstallError("could not edit read: in place without changing other settings")


def _yaml_dump(data: dict[str, Any]) -> str:
    return yaml.safe_dump(data, sort_keys=False, allow_unicode=True) if data else ""


def install_aider_conf(
    conf: Path, entry: str, rec_base: dict[str, Any], manifest: Manifest, dry_run: bool, force: bool
) -> Action:
    current = read(conf)
    created = current is None
    text = current or ""
    try:
        new_text = _edit_read(text, entry, add=True)
    except InstallError as exc:
        if not force:
            return Action("conflict", conf, f"{exc}; add `read: {entry}` by hand or use --force", applied=False)
        data = _yaml_load(text) if _safe_parses(text) else {}
        data["read"] = [*_as_list(data.get("read")), entry]
        new_text = _yaml_dump(data)
    except Exception as exc:
        return Action("conflict", conf, f"cannot parse ({exc.__class__.__name__}); left alone", applied=False)
    rec = manifest.get(conf)
    if new_text == text and not created:
        if not dry_run and rec is None:
            manifest.put(conf, **rec_base, kind="aider-read", entry=entry, created=False, sha256=sha(text))
        return Action("unchanged", conf, f"read: already lists {entry}", applied=False)
    if dry_run:
        return Action("create" if created else "update", conf, f"read: + {entry}", applied=False)
    dirs = write(conf, new_text)
    was_created = created or bool(rec and rec.get("created"))
    original = (rec or {}).get("original") if rec else (None if created else text)
    manifest.put(
        conf,
        **rec_base,
        kind="aider-read",
        entry=entry,
        created=was_created,
        sha256=sha(new_text),
        dirs=dirs,
        original=original,
    )
    return Action("create" if created else "update", conf, f"read: + {entry}")


def _safe_parses(text: str) -> bool:
    try:
        _yaml_load(text)
        return True
    except Exception:
        return False


def remove_aider_conf(conf: Path, rec: dict[str, Any], manifest: Manifest, dry_run: bool, force: bool) -> Action:
    current = read(conf)
    if current is None:
        if not dry_run:
            manifest.drop(conf)
        return Action("missing", conf, "already gone", applied=False)
    entry = rec.get("entry", AIDER_CONVENTIONS)
    if rec.get("created") and sha(current) == rec.get("sha256"):
        if dry_run:
            return Action("remove", conf, applied=False)
        conf.unlink()
        manifest.drop(conf)
        prune_dirs(rec.get("dirs", []))
        return Action("remove", conf)
    if isinstance(rec.get("original"), str) and sha(current) == rec.get("sha256"):
        # untouched since we edited it: put back the user's file byte for byte
        if dry_run:
            return Action("update", conf, f"read: - {entry}", applied=False)
        write(conf, rec["original"])
        manifest.drop(conf)
        return Action("update", conf, f"read: - {entry}")
    try:
        new_text = _edit_read(current, entry, add=False)
    except Exception as exc:
        if not force or not _safe_parses(current):
            return Action("keep", conf, f"could not remove read: {entry} ({exc}); edit by hand", applied=False)
        data = _yaml_load(current)
        items = [i for i in _as_list(data.get("read")) if i != entry]
        if items:
            data["read"] = items
        else:
            data.pop("read", None)
        new_text = _yaml_dump(data)
    if dry_run:
        return Action("update", conf, f"read: - {entry}", applied=False)
    if rec.get("created") and not new_text.strip():
        conf.unlink()
        manifest.drop(conf)
        return Action("remove", conf)
    if new_text != current:
        write(conf, new_text)
    manifest.drop(conf)
    return Action("update", conf, f"read: - {entry}")
