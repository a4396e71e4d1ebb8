"""Reading a file the user names, with a one-line error for each way it can fail."""

from __future__ import annotations

from pathlib import Path

from .errors import InputError


def _read(path: Path, text: bool) -> str | bytes:
    try:
        return path.read_text(encoding="utf-8-sig") if text else path.read_bytes()
    except FileNotFoundError:
        raise InputError(f"no such file: {path}") from None
    except IsADirectoryError:
        raise InputError(f"{path} is a directory") from None
    except UnicodeDecodeError:
        raise InputError(f"{path} is not UTF-8 text") from None
    except OSError as exc:
        raise InputError(f"cannot read {path}: {exc.strerror or exc}") from None


def read_text_file(path: Path) -> str:
    return _read(path, text=True)  # type: ignore[return-value]


def read_bytes_file(path: Path) -> bytes:
    content = _read(path, text=False)
    if not content:
        raise InputError(f"{path} is empty")
    return content  # type: ignore[return-value]
