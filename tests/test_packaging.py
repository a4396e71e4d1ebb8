"""The wheel: built without warnings, every package and data file in it, no tests or
benchmarks, and it works without the source tree.

Builds run on a copy of the checkout's files, so a stale build/ folder (setuptools copies
from it into the wheel) or a concurrent build cannot change what is checked.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # two builds and a fresh interpreter

ROOT = Path(__file__).resolve().parents[1]
SHIPPED = ("server", "client", "formats", "cli", "skill", "adapters")  # client/, formats/ once they exist
NOT_SHIPPED = ("tests", "bench")
NOT_SOURCE = {"build", "dist", "__pycache__"}  # and hidden folders: .git, .venv, caches, temp dirs


def checkout_files() -> list[str]:
    """The checkout's files: what git tracks, or (in a copy without .git, as in CI) all of them."""
    git = subprocess.run(["git", "-C", str(ROOT), "ls-files", "-z"], capture_output=True, text=True)
    if git.returncode == 0 and git.stdout:
        return [name for name in git.stdout.split("\0") if name and (ROOT / name).is_file()]
    return [
        p.relative_to(ROOT).as_posix()
        for p in ROOT.rglob("*")
        if p.is_file()
        and not any(
            part in NOT_SOURCE or part.startswith(".") or part.endswith(".egg-info")
            for part in p.relative_to(ROOT).parts[:-1]
        )
    ]


@pytest.fixture(scope="module")
def source(tmp_path_factory) -> tuple[Path, list[str]]:
    copy = tmp_path_factory.mktemp("source")
    files = checkout_files()
    for name in files:
        (copy / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, copy / name)
    return copy, files


@pytest.fixture(scope="module")
def build(source, tmp_path_factory) -> tuple[Path, str]:
    copy, _ = source
    out = tmp_path_factory.mktemp("dist")
    result = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-w", str(out), str(copy)],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    [built] = out.glob("memorywiki-*.whl")
    return built, result.stdout + result.stderr


@pytest.fixture(scope="module")
def wheel(build) -> Path:
    return build[0]


def test_wheel_build_is_quiet(build):
    """No setuptools warnings (there were ~250 lines: "Package 'memorywiki.server.templates' is
    absent from the `packages` configuration", once per data folder)."""
    _, output = build
    assert "absent from the `packages` configuration" not in output, output
    assert "Warning" not in output, output


def test_editable_build_is_quiet(source, tmp_path):
    """What scripts/test.sh and serve.sh run: the editable build lists the same packages."""
    copy, _ = source
    code = f"from setuptools import build_meta; print(build_meta.build_editable({str(tmp_path)!r}))"
    result = subprocess.run([sys.executable, "-c", code], cwd=copy, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert "absent from the `packages` configuration" not in result.stdout + result.stderr


def test_wheel_holds_every_package_and_data_file(wheel, source):
    _, files = source
    names = set(zipfile.ZipFile(wheel).namelist())
    shipped = [name for name in files if name.split("/", 1)[0] in SHIPPED]
    assert shipped, "no package folders found"
    missing = [name for name in shipped if f"memorywiki/{name}" not in names]
    assert not missing, f"not in the wheel (a data file needs its suffix in pyproject's package-data): {missing}"
    # the data the server needs at run time, by name
    for folder, suffix in (
        ("server/store/migrations", ".sql"),
        ("server/store/functions", ".sql"),
        ("server/templates", ".html"),
        ("server/static", ""),
    ):
        expected = [name for name in files if name.startswith(folder + "/") and name.endswith(suffix)]
        assert all(f"memorywiki/{name}" in names for name in expected), folder
    assert any(name.startswith("memorywiki/server/store/migrations/") for name in names)
    assert any(name.startswith("memorywiki/server/templates/") for name in names)
    assert "memorywiki/skill/SKILL.md" in names
    entry_points = next(n for n in names if n.endswith("entry_points.txt"))
    assert "memorywiki = memorywiki.cli.main:app" in zipfile.ZipFile(wheel).read(entry_points).decode()


def test_wheel_ships_no_tests_no_benchmarks_nothing_generic(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    top = {name.split("/", 1)[0] for name in names}
    assert top == {"memorywiki", next(t for t in top if t.endswith(".dist-info"))}, top
    inside = {name.split("/")[1] for name in names if name.startswith("memorywiki/")}
    assert not inside & set(NOT_SHIPPED), sorted(inside)
    assert inside <= set(SHIPPED), sorted(inside)


def test_wheel_imports_and_finds_its_files_outside_the_source_tree(wheel, tmp_path):
    target = tmp_path / "site"
    zipfile.ZipFile(wheel).extractall(target)
    deps = sysconfig.get_paths()["purelib"]
    # -S: no site module, so the editable install's import hook is not loaded; only the
    # unpacked wheel (first) and the dependencies are importable.
    code = (
        "import memorywiki.server.app as app, memorywiki.cli.main, memorywiki.adapters.mcp;"
        "from memorywiki.server.store.migrate import function_files, migration_files;"
        "from memorywiki.server.web.templating import templates;"
        f"assert app.__file__.startswith({str(target)!r}), app.__file__;"
        "assert [m.name for m in migration_files()][:3] == ['0001_core.sql', '0002_bm25.sql', '0003_core_tables.sql'];"
        "assert function_files()[0][0] == '10_privacy.sql';"
        "templates.get_template('doc.html');"
        "print('ok')"
    )
    result = subprocess.run(
        [sys.executable, "-S", "-c", code],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env={"PYTHONPATH": f"{target}:{deps}", "PATH": "/usr/bin:/bin"},
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "ok"
