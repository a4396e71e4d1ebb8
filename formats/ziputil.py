"""Zip archive checks: bombs, path tricks, corrupt archives."""

from __future__ import annotations

import io
import zipfile
from dataclasses import dataclass
from typing import IO

from .model import FormatError


@dataclass(frozen=True)
class ZipLimits:
    max_entries: int = 200_000
    max_entry_bytes: int = 4 * 1024**3  # one entry we read, uncompressed
    max_total_bytes: int = 8 * 1024**3  # all entries we read, uncompressed
    max_ratio: float = 200.0  # uncompressed / compressed, per entry we read


EXPORT_LIMITS = ZipLimits()
OOXML_LIMITS = ZipLimits(max_entries=10_000, max_entry_bytes=256 * 1024**2, max_total_bytes=512 * 1024**2, max_ratio=200.0)


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


def check_entries(infos: list[zipfile.ZipInfo], limits: ZipLimits) -> None:
    """Size and compression-ratio checks for the entries we are about to read."""
    total = 0
    for info in infos:
        if info.flag_bits & 0x1:
            raise _bad(f"{info.filename} is encrypted.")
        if info.file_size > limits.max_entry_bytes:
            raise _bad(f"{info.filename} is {info.file_size:,} bytes uncompressed (limit {limits.max_entry_bytes:,}).")
        ratio = info.file_size / max(info.compress_size, 1)
        if info.file_size > 1_000_000 and ratio > limits.max_ratio:
            raise _bad(f"{info.filename} expands {ratio:,.0f}x (limit {limits.max_ratio:,.0f}x): a zip bomb?")
        total += info.file_size
    if total > limits.max_total_bytes:
        raise _bad(f"The entries to read total {total:,} bytes uncompressed (limit {limits.max_total_bytes:,}).")


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
