"""What the tests import is declared: every third-party module a test file imports comes from a
distribution pyproject.toml names, in the dependencies or the `dev` extras, not one that only
happens to be installed as something else's dependency."""

from __future__ import annotations

import ast
import re
import sys
import tomllib
from importlib.metadata import packages_distributions
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OURS = {"memorywiki", "tests", "bench"}


def _name(requirement: str) -> str:
    return re.split(r"[\s\[<>=!~;]", requirement, maxsplit=1)[0].lower().replace("_", "-")


def declared() -> set[str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    return {_name(r) for r in project["dependencies"] + project["optional-dependencies"]["dev"]}


def imported_by_tests() -> dict[str, str]:
    """top-level module -> the first test file that imports it (tests/data holds fixtures and
    the scripts that made them, not tests)."""
    found: dict[str, str] = {}
    for path in sorted((ROOT / "tests").rglob("*.py")):
        if "data" in path.relative_to(ROOT / "tests").parts:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
                names = [node.module]
            else:
                continue
            for name in names:
                found.setdefault(name.split(".")[0], str(path.relative_to(ROOT)))
    return found


def test_every_module_the_tests_import_is_declared():
    distributions = packages_distributions()
    wanted = declared()
    missing = []
    for module, where in sorted(imported_by_tests().items()):
        if module in OURS or module in sys.stdlib_module_names:
            continue
        names = {_name(d) for d in distributions.get(module, [])}
        if not names & wanted:
            missing.append(f"{module} ({where}; from {sorted(names) or 'no installed distribution'})")
    assert not missing, "declare these in pyproject.toml's dev extras:\n" + "\n".join(missing)
