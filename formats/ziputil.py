"""Zip archives: checks before reading one (bombs, path tricks, corrupt archives), and one
written as a stream of bytes."""

from __future__ import annotations

import io
import zipfile
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import IO

from .model import FormatError


@dataclass(frozen=True)
class ZipLimits:
    max_entries: int = 200_000
    max_entry_bytes: int = 4 * 1024**3  # one entry we read, uncompressed
    max_total_bytes: int = 8 * 1024**3  # all entries we read, uncompressed
    max_ratio: float = 200.0  # uncompressed / compressed, per entry we read


EXPORT_LIMITS = ZipLimits()
OOXML_LIMITS = ZipLimits(
    max_entries=10_000, max_entry_bytes=256 * 1024**2, max_total_bytes=512 * 1024**2, max_ratio=200.0
)


def _bad(message: str) -> FormatError:
    return FormatError("bad_archive", message)


def unsafe_name(name: str) -> bool:
    n = name.replace("\\", "/")
    if n.startswith("/") or (len(n) > 1 and n[1] == ":"):
        return True
    return any(part == ".." for part in n.split("/"))


def open_zip(src, limits: ZipLimits) -> zipfile.ZipFile:
    """Open a zip (path, file object or bytes) and check its directory.

    Refuses: a corrupt archive, more than ``max_entries`` entries, any entry name that is
    absolute or climbs out with ``..``.
    """
    if isinstance(src, (bytes, bytearray)):
        src = io.BytesIO(src)
    try:
        zf = zipfile.ZipFile(src)
    except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, ValueError, EOFError) as exc:
        raise _bad(f"This is not a readable zip archive ({exc}).") from exc
    infos = zf.infolist()
    if len(infos) > limits.max_entries:
        zf.close()
        raise _bad(f"The archive has {len(infos):,} entries (limit {limits.max_entries:,}).")
    for info in infos:
        if unsafe_name(info.filename):
            zf.close()
            raise _bad(f"The archive has an unsafe entry name: {info.filename!r}.")
    return zf


# What any entry may expand by beyond its ratio: a small file of one repeated character
# compresses past any ratio, and refusing a whole archive over it would help nobody. Small
# enough that the total stays bounded by the archive's size (each entry costs ~80 bytes of
# headers), so many small entries cannot add up to a bomb either.
RATIO_SLACK = 1024


def check_entries(infos: list[zipfile.ZipInfo], limits: ZipLimits) -> None:
    """Size and compression-ratio checks for the entries we are about to read: every entry,
    whatever its size, expands at most ``max_ratio`` times (plus RATIO_SLACK bytes), and so
    do all of them together; no entry is over ``max_entry_bytes``, nor all over ``max_total_bytes``."""
    total = packed = 0
    for info in infos:
        if info.flag_bits & 0x1:
            raise _bad(f"{info.filename} is encrypted.")
        if info.file_size > limits.max_entry_bytes:
            raise _bad(f"{info.filename} is {info.file_size:,} bytes uncompressed (limit {limits.max_entry_bytes:,}).")
        if info.file_size > limits.max_ratio * info.compress_size + RATIO_SLACK:
            ratio = info.file_size / max(info.compress_size, 1)
            raise _bad(f"{info.filename} expands {ratio:,.0f}x (limit {limits.max_ratio:,.0f}x): a zip bomb?")
        total += info.file_size
        packed += info.compress_size
    if total > limits.max_total_bytes:
        raise _bad(f"The entries to read total {total:,} bytes uncompressed (limit {limits.max_total_bytes:,}).")
    if total > limits.max_ratio * packed + RATIO_SLACK * 16:
        raise _bad(
            f"The entries to read expand {total / max(packed, 1):,.0f}x together "
            f"(limit {limits.max_ratio:,.0f}x): a zip bomb?"
        )


class LimitedReader(io.RawIOBase):
    """A read-only stream that fails once more than ``limit`` bytes came out of ``raw``
    (a zip entry that lies about its size)."""

    def __init__(self, raw: IO[bytes], limit: int, name: str):
        self.raw, self.limit, self.name, self.count = raw, limit, name, 0

    def readable(self) -> bool:
        return True

    def readinto(self, b) -> int:
        data = self.read(len(b))
        n = len(data)
        b[:n] = data
        return n

    def read(self, size: int = -1) -> bytes:
        if size is None or size < 0:
            size = self.limit + 1 - self.count
        try:
            data = self.raw.read(size)
        except (zipfile.BadZipFile, EOFError, OSError, ValueError) as exc:
            raise _bad(f"{self.name} is corrupt ({exc}).") from exc
        except Exception as exc:  # zlib.error and friends
            raise _bad(f"{self.name} is corrupt ({exc}).") from exc
        self.count += len(data)
        if self.count > self.limit:
            raise _bad(f"{self.name} is larger than it claims: a zip bomb?")
        return data

    def close(self) -> None:
        try:
            self.raw.close()
        finally:
            super().close()


def check_ooxml(data: bytes) -> None:
    """Bomb and path checks for a .docx / .pptx before a converter opens it."""
    zf = open_zip(data, OOXML_LIMITS)
    try:
        check_entries(zf.infolist(), OOXML_LIMITS)
    finally:
        zf.close()


def extract(zf: zipfile.ZipFile, infos: list[zipfile.ZipInfo], dest: Path, limits: ZipLimits, strip: str = "") -> int:
    """Write these entries (checked with `check_entries` first) under `dest`, each name
    without the prefix `strip`; the number of files written. Names were checked by
    `open_zip`; each path is checked again after joining, so nothing lands outside `dest`."""
    check_entries(infos, limits)
    root = dest.resolve()
    written = 0
    for info in infos:
        name = info.filename.replace("\\", "/")
        if strip and name.startswith(strip):
            name = name[len(strip) :]
        if not name or name.endswith("/"):
            continue
        target = (root / name).resolve()
        if root != target and root not in target.parents:
            raise _bad(f"The archive has an unsafe entry name: {info.filename!r}.")
        target.parent.mkdir(parents=True, exist_ok=True)
        with zf.open(info) as raw, LimitedReader(raw, info.file_size, info.filename) as src, target.open("wb") as out:
            while chunk := src.read(1 << 20):
                out.write(chunk)
        written += 1
    return written


class _Sink(io.RawIOBase):
    """Where the zip writer writes: bytes wait here until the stream takes them."""

    def __init__(self) -> None:
        self.parts: list[bytes] = []

    def writable(self) -> bool:
        return True

    def write(self, b) -> int:
        self.parts.append(bytes(b))
        return len(b)

    def take(self) -> bytes:
        data, self.parts = b"".join(self.parts), []
        return data


class ZipStream:
    """A zip written an entry at a time, each entry's bytes handed back at once (for a
    response streamed to a client). The sink cannot seek, so zipfile writes each entry's
    sizes after its data, as streamed zips do; every unzip tool reads that."""

    def __init__(self) -> None:
        self._sink = _Sink()
        self._zip = zipfile.ZipFile(self._sink, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=6)

    def add(self, name: str, text: str, when: datetime | None = None) -> bytes:
        stamp = (when or datetime(1980, 1, 1)).timetuple()[:6]
        info = zipfile.ZipInfo(name, date_time=max(stamp, (1980, 1, 1, 0, 0, 0)))
        info.compress_type = zipfile.ZIP_DEFLATED
        info.external_attr = 0o644 << 16
        self._zip.writestr(info, text.encode("utf-8"))
        return self._sink.take()

    def close(self) -> bytes:
        self._zip.close()
        return self._sink.take()
