"""The package's version, as pyproject.toml declares it (read from the installed metadata)."""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version


def package_version() -> str:
    try:
        return version("memorywiki")
    except PackageNotFoundError:  # run from a checkout that was never installed
        return "unknown"
