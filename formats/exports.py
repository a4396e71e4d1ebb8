"""Full chat-history exports (ChatGPT, claude.ai) -> one Captured per conversation, streamed.

The conversations file is never loaded whole: ``ijson.items(f, "item")`` yields one
conversation object at a time from the file (or from the entry inside the zip, read as a
stream), so memory stays at one conversation plus parser buffers.
"""

from __future__ import annotations

import re
import zipfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Protocol

import ijson

from . import chatgpt as _chatgpt
from . import claude as _claude
from .model import Captured, FormatError
from .ziputil import EXPORT_LIMITS, LimitedReader, ZipLimits, check_entries, open_zip

_CHATGPT_ENTRY = re.compile(r"^(?:[^/]+/)?conversations(?:-(\d+))?\.json$", re.I)
_CLAUDE_ENTRY = re.compile(r"^(?:[^/]+/)?conversations\.json$", re.I)


class Stream(Protocol):
    """A conversations file as bytes: a file, or an entry of a zip read within its limits."""

    def read(self, n: int = -1, /) -> bytes: ...

    def close(self) -> None: ...


Opener = Callable[[], Stream]


def _entry_key(name: str) -> tuple[int, str]:
    m = _CHATGPT_ENTRY.match(name)
    return (int(m.group(1)) if m and m.group(1) else -1, name)


@contextmanager
def _conversation_streams(
    path: Path, pattern: re.Pattern[str], limits: ZipLimits
) -> Iterator[list[tuple[str, Opener]]]:
    """Yield a list of (name, opener) for the conversation files in ``path`` (zip or JSON)."""
    path = Path(path)
    if not path.exists():
        raise FormatError("not_found", f"{path} does not exist.")
    if path.stat().st_size == 0:
        raise FormatError("empty", f"{path.name} is empty.")
    with open(path, "rb") as fh:
        head = fh.read(4)
    if head.startswith(b"PK"):
        zf = open_zip(path, limits)
        try:
            wanted = sorted(
                (i for i in zf.infolist() if not i.is_dir() and pattern.match(i.filename)),
                key=lambda i: _entry_key(i.filename),
            )
            # prefer root-level files when both root and one folder level have them
            if any("/" not in i.filename for i in wanted):
                wanted = [i for i in wanted if "/" not in i.filename]
            if not wanted:
                raise FormatError("bad_archive", "No conversations.json found in this archive: is it a chat export?")
            check_entries(wanted, limits)

            def opener(info: zipfile.ZipInfo) -> Opener:
                def _open() -> Stream:
                    try:
                        raw = zf.open(info)
                    except (zipfile.BadZipFile, RuntimeError, NotImplementedError, OSError) as exc:
                        raise FormatError("bad_archive", f"Cannot read {info.filename} ({exc}).") from exc
                    return LimitedReader(raw, info.file_size, info.filename)

                return _open

            yield [(i.filename, opener(i)) for i in wanted]
        finally:
            zf.close()
    else:
        yield [(path.name, lambda: open(path, "rb"))]


def _iter_objects(name: str, open_fn: Opener) -> Iterator[dict[str, Any]]:
    """Stream conversation objects from one JSON file: an array of them, or one object.

    The C parser is fast but cannot decode a lone low surrogate (`"\\udc00"`, a broken emoji
    in a chat); on one it stops, and the file is read again by ijson's Python parser, which
    can, from the object it stopped at (what it yields is then cleaned before saving)."""
    done = 0
    try:
        for obj in _iter_with(ijson, name, open_fn):
            done += 1
            yield obj
        return
    except UnicodeDecodeError:
        pass
    for i, obj in enumerate(_iter_with(ijson.get_backend("python"), name, open_fn)):
        if i >= done:
            yield obj


def _iter_with(backend: Any, name: str, open_fn: Opener) -> Iterator[dict[str, Any]]:
    f = open_fn()
    try:
        first = b""
        while True:
            ch = f.read(1)
            if not ch:
                break
            if ch not in b" \t\r\n\xef\xbb\xbf":
                first = ch
                break
        if not first:
            raise FormatError("empty", f"{name} is empty.")
        if first not in (b"[", b"{"):
            raise FormatError("bad_json", f"{name} is not JSON.")
        prefix = "item" if first == b"[" else ""

        class _Rejoin:
            """Put the peeked character back in front of the stream."""

            def __init__(self, head: bytes, rest: Stream):
                self.head, self.rest = head, rest

            def read(self, n: int = -1) -> bytes:
                if n == 0:
                    return b""
                if self.head:
                    h, self.head = self.head, b""
                    if n is None or n < 0:
                        return h + self.rest.read()
                    return h + self.rest.read(max(0, n - len(h)))
                return self.rest.read(n)

        try:
            for obj in backend.items(_Rejoin(first, f), prefix, use_float=True):
                if isinstance(obj, dict):
                    yield obj
        except ijson.common.IncompleteJSONError as exc:
            raise FormatError("bad_json", f"{name} is truncated or not valid JSON ({exc}).") from exc
        except ijson.common.JSONError as exc:
            raise FormatError("bad_json", f"{name} is not valid JSON ({exc}).") from exc
    finally:
        f.close()


def iter_chatgpt_export(
    path: Path,
    *,
    skipped: list[dict[str, Any]] | None = None,
    limits: ZipLimits = EXPORT_LIMITS,
) -> Iterator[Captured]:
    """One Captured per conversation of a ChatGPT export (zip with ``conversations.json``
    or ``conversations-000.json``…, or a bare JSON file), in file order.

    Conversations with no visible turn are not yielded; they are appended to ``skipped``
    (``{"id", "title", "reason"}``) when a list is given. A corrupt archive raises
    FormatError("bad_archive"); malformed JSON raises FormatError("bad_json") at the point
    it is met (conversations already yielded stay valid).
    """
    with _conversation_streams(path, _CHATGPT_ENTRY, limits) as streams:
        for name, open_fn in streams:
            for conv in _iter_objects(name, open_fn):
                if "mapping" not in conv:
                    _skip(skipped, conv.get("id"), conv.get("title"), "not a ChatGPT conversation")
                    continue
                title, markdown, meta = _chatgpt.render_conversation(conv)
                cid = meta.get("conversation_id")
                if not markdown.strip():
                    _skip(skipped, cid, title, "no visible messages")
                    continue
                meta["file_name"] = name
                yield Captured(title, markdown, "chatgpt-export", meta, f"chatgpt:{cid}" if cid else None).storable()


def iter_claude_export(
    path: Path,
    *,
    skipped: list[dict[str, Any]] | None = None,
    limits: ZipLimits = EXPORT_LIMITS,
) -> Iterator[Captured]:
    """One Captured per conversation of a claude.ai export (zip with ``conversations.json``
    or the bare file)."""
    with _conversation_streams(path, _CLAUDE_ENTRY, limits) as streams:
        for name, open_fn in streams:
            for conv in _iter_objects(name, open_fn):
                if "chat_messages" not in conv:
                    _skip(skipped, conv.get("uuid"), conv.get("name"), "not a Claude conversation")
                    continue
                title, markdown, meta = _claude.render_conversation(conv)
                uuid = meta.get("conversation_id")
                if not markdown.strip():
                    _skip(skipped, uuid, title, "no visible messages")
                    continue
                meta["file_name"] = name
                yield Captured(title, markdown, "claude-export", meta, f"claude:{uuid}" if uuid else None).storable()


def _skip(skipped: list[dict[str, Any]] | None, cid: Any, title: Any, reason: str) -> None:
    if skipped is not None:
        skipped.append({"id": cid, "title": title, "reason": reason})


def count_conversations(path: str | Path, *, limits: ZipLimits = EXPORT_LIMITS) -> int | None:
    """Number of conversations in an export (ChatGPT or Claude), for a progress bar.

    A streaming pass with the C parser's event API (no objects built): about a second per
    100 MB; the Python parser counts a file the C one cannot decode (see `_iter_objects`).
    Returns None when the file cannot be counted (the import itself then reports the problem).
    """
    try:
        try:
            return _count(ijson, path, limits)
        except UnicodeDecodeError:
            return _count(ijson.get_backend("python"), path, limits)
    except (FormatError, ijson.common.JSONError, OSError, zipfile.BadZipFile):
        return None


def _count(backend: Any, path: str | Path, limits: ZipLimits) -> int:
    total = 0
    with _conversation_streams(Path(path), _CHATGPT_ENTRY, limits) as streams:
        for _name, open_fn in streams:
            f = open_fn()
            try:
                depth = 0
                top_is_array = None
                for event, _value in backend.basic_parse(f):
                    if event in ("start_map", "start_array"):
                        if depth == 0:
                            top_is_array = event == "start_array"
                            if not top_is_array:
                                total += 1
                        elif depth == 1 and top_is_array and event == "start_map":
                            total += 1
                        depth += 1
                    elif event in ("end_map", "end_array"):
                        depth -= 1
            finally:
                f.close()
    return total


def export_kind(path: str | Path) -> str | None:
    """ "chatgpt" / "claude" by peeking at the first conversation, or None."""
    try:
        with _conversation_streams(Path(path), _CHATGPT_ENTRY, EXPORT_LIMITS) as streams:
            for name, open_fn in streams:
                for conv in _iter_objects(name, open_fn):
                    if "mapping" in conv:
                        return "chatgpt"
                    if "chat_messages" in conv:
                        return "claude"
                    return None
    except FormatError:
        return None
    return None
