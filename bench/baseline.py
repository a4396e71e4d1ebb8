"""Run the server of an earlier commit beside this one, for before/after figures in one run.

`baseline_env(ref)` extracts the packages of that commit (server/, client/, formats/, ...) once
into bench/.cache/baseline-<sha>/memorywiki/ and returns the environment that makes a bench
server subprocess (bench.proc, Proc(..., extra_env=...)) import them instead of this checkout's:
a folder on PYTHONPATH is searched before the editable install's finder. Same database, same
data, same machine, minutes apart: only the code differs.
"""

from __future__ import annotations

import io
import subprocess
import tarfile
from pathlib import Path

from .common import CACHE, ROOT

PACKAGES = ("server", "client", "formats", "cli", "skill", "adapters")


def is_commit(ref: str) -> bool:
    """Whether `ref` names a commit of this checkout's repository."""
    return (
        subprocess.run(
            ["git", "-C", str(ROOT), "rev-parse", "--quiet", "--verify", f"{ref}^{{commit}}"], capture_output=True
        ).returncode
        == 0
    )


def baseline_env(ref: str) -> dict[str, str]:
    sha = subprocess.run(
        ["git", "-C", str(ROOT), "rev-parse", "--verify", f"{ref}^{{commit}}"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    target = CACHE / f"baseline-{sha[:12]}"
    package = target / "memorywiki"
    if not (package / "server" / "app.py").exists():
        listed = subprocess.run(
            ["git", "-C", str(ROOT), "ls-tree", "--name-only", sha], capture_output=True, text=True, check=True
        ).stdout.split()
        archive = subprocess.run(
            ["git", "-C", str(ROOT), "archive", "--format=tar", sha, *[p for p in PACKAGES if p in listed]],
            capture_output=True,
            check=True,
        ).stdout
        package.mkdir(parents=True, exist_ok=True)
        with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
            tar.extractall(package, filter="data")
    return {"PYTHONPATH": str(target), "MEMORYWIKI_BENCH_BASELINE": sha[:12]}


def knows_int8(env: dict[str, str]) -> bool:
    """Whether the baseline's server has the int8 space: then it runs on the same hub
    as this checkout, with no copy."""
    config = Path(env["PYTHONPATH"]) / "memorywiki" / "server" / "config.py"
    return config.is_file() and "local_quantize" in config.read_text()


def lacks_migrations(env: dict[str, str], names: tuple[str, ...]) -> list[str]:
    """Which of the migration files `names` the baseline's server does not have."""
    folder = Path(env["PYTHONPATH"]) / "memorywiki" / "server" / "store" / "migrations"
    return [name for name in names if not (folder / name).is_file()]


def functions_differ(env: dict[str, str]) -> bool:
    """Whether the baseline's SQL function files (server/store/functions) differ from this
    checkout's. Every server re-applies its own at start, so on a shared hub the server started
    last would run its search for the other too: such a baseline needs a copy of the hub."""
    from memorywiki.server.store.migrate import checksum, function_files

    folder = Path(env["PYTHONPATH"]) / "memorywiki" / "server" / "store" / "functions"
    theirs = {path.name: checksum(path.read_text(encoding="utf-8")) for path in sorted(folder.glob("*.sql"))}
    return theirs != {name: checksum(sql) for name, sql in function_files()}


def describe(ref: str) -> str:
    """`v0.3.0 (d3faee3)`: how the tables name the baseline."""
    sha = subprocess.run(
        ["git", "-C", str(ROOT), "rev-parse", "--short", f"{ref}^{{commit}}"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    return ref if ref.startswith(sha) else f"{ref} ({sha})"
