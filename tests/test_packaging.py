"""The wheel carries every package and data file, and works without the source tree."""

from __future__ import annotations

import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation",
                    "-w", str(out), str(ROOT)], check=True, capture_output=True)
    [built] = out.glob("memorywiki-*.whl")
    return built


def test_wheel_holds_every_package_and_data_file(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    for folder in ("server", "cli", "skill", "adapters", "tests", "bench"):
        for init in (ROOT / folder).rglob("__init__.py"):
            if "__pycache__" not in init.parts:
                assert f"memorywiki/{init.relative_to(ROOT).as_posix()}" in names, init
    for folder in ("migrations", "functions"):
        for sql in (ROOT / "server/store" / folder).glob("*.sql"):
            assert f"memorywiki/server/store/{folder}/{sql.name}" in names
    for html in (ROOT / "server/templates").glob("*.html"):
        assert f"memorywiki/server/templates/{html.name}" in names
    assert "memorywiki/skill/SKILL.md" in names
    assert not any(name.startswith(("server/", "cli/")) for name in names), "nothing generic in site-packages"
    entry_points = next(n for n in names if n.endswith("entry_points.txt"))
    assert "memorywiki = memorywiki.cli.main:app" in zipfile.ZipFile(wheel).read(entry_points).decode()


def test_wheel_imports_and_finds_its_files_outside_the_source_tree(wheel, tmp_path):
    target = tmp_path / "site"
    zipfile.ZipFile(wheel).extractall(target)
    deps = sysconfig.get_paths()["purelib"]
    # -S: no site module, so the editable install's import hook is not loaded; only the
    # unpacked wheel (first) and the dependencies are importable.
    code = (
        "import memorywiki.server.app as app, memorywiki.cli.main, memorywiki.adapters.mcp;"
        "from memorywiki.server.store.migrate import function_files, migration_files;"
        "from memorywiki.server.templating import templates;"
        "assert app.__file__.startswith(%r), app.__file__;"
        "assert [m.name for m in migration_files()][:3] == ['0001_core.sql', '0002_bm25.sql', '0003_core_tables.sql'];"
        "assert function_files()[0][0] == '10_privacy.sql';"
        "templates.get_template('doc.html');"
        "print('ok')" % str(target)
    )
    result = subprocess.run([sys.executable, "-S", "-c", code], cwd=tmp_path, capture_output=True, text=True,
                            env={"PYTHONPATH": f"{target}:{deps}", "PATH": "/usr/bin:/bin"})
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "ok"
