"""The fast tier (`./scripts/test.sh --fast`): the tests that need no PostgreSQL, server or
browser and are not marked slow, chosen by the fixtures each test asks for (tests/conftest.py)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def collected(*args: str) -> list[str]:
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    return [line for line in result.stdout.splitlines() if "::" in line]


def test_the_fast_tier_keeps_the_unit_tests_and_drops_what_needs_postgresql_or_is_slow():
    files = ("tests/test_chunker.py", "tests/test_api_docs.py", "tests/test_embedded_postgres.py")
    everything = collected(*files)
    fast = collected("--fast", *files)
    assert any(t.startswith("tests/test_chunker.py::") for t in fast)
    assert not any(t.startswith("tests/test_api_docs.py::") for t in fast)  # the app on a database
    assert "tests/test_embedded_postgres.py::test_a_cluster_another_process_uses_is_not_restarted_under_it" not in fast
    assert any(t.startswith("tests/test_embedded_postgres.py::test_the_setting_takes") for t in fast)
    assert set(fast) < set(everything)
