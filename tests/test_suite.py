"""The test suite itself: it runs from the repository alone, waits for exactly what it names,
and cannot quietly skip its browser tests in CI."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.polling import wait_indexed

ROOT = Path(__file__).resolve().parents[1]
TESTS = ROOT / "tests"


def test_tests_never_read_the_workspace_folder():
    """A clone holds no sibling folder with data; the fixtures live in tests/data/."""
    folder = "sha" + "red"  # spelled in two parts so this file does not match itself
    pattern = re.compile(rf"""\.\./{folder}\b|/work/{folder}\b|["']{folder}["']""")
    offenders = []
    for path in sorted(TESTS.rglob("*")):
        if not path.is_file() or "__pycache__" in path.parts:
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:  # binary fixtures (PDF, DOCX, ...)
            continue
        offenders += [
            f"{path.relative_to(ROOT)}:{n}: {line.strip()}"
            for n, line in enumerate(text.splitlines(), 1)
            if pattern.search(line)
        ]
    assert not offenders, "tests must not read the workspace folder next to the repo:\n" + "\n".join(offenders)


def test_every_fixture_file_keeps_its_license_entry():
    """Files copied from public repositories stay listed (source, license) in their README."""
    folder = TESTS / "data" / "fixtures"
    readme = (folder / "README.md").read_text()
    for path in folder.rglob("*"):
        if path.is_file() and path.name not in ("README.md", "LICENSES.md"):
            assert f"`{path.relative_to(folder).as_posix()}`" in readme, path


def test_wait_indexed_waits_for_the_ids_it_is_given(make_client, settings):
    """Given ids, it waits for those docs only, and an id it does not know is an error (it once
    waited for the whole server instead, so a wrong id passed and an unrelated doc blocked)."""
    manual = make_client(in_process_worker=False)  # nothing is indexed unless asked
    token = manual.post("/api/hubs", json={"slug": "wait"}).json()["owner_token"]
    auth = {"Authorization": f"Bearer {token}"}
    ready, owed = (
        manual.post(
            "/api/docs", json={"hub": "wait", "title": title, "markdown": f"{title} text"}, headers=auth
        ).json()["id"]
        for title in ("Ready", "Owed")
    )
    assert manual.post(f"/api/embed/{ready}").status_code == 200
    assert manual.get("/healthz").json()["owed"] == 1  # the other doc is still owed

    wait_indexed(manual, [ready], timeout=5)  # returns: this doc is indexed
    with pytest.raises(AssertionError, match=owed):
        wait_indexed(manual, [owed], timeout=0.2)
    with pytest.raises(AssertionError, match="no such doc"):
        wait_indexed(manual, [ready, "no-such-doc"], timeout=5)
    with pytest.raises(AssertionError, match="no indexing work"):
        wait_indexed(manual, timeout=0.2)  # no ids: the whole server, which still owes one doc


def _browser_tests(ci: bool) -> subprocess.CompletedProcess:
    """Run the browser tests in a child pytest where no chromium is on PATH."""
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    env["PATH"] = "/nonexistent"
    if ci:
        env["CI"] = "1"
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rs", "tests/test_pages_browser.py"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.mark.slow
def test_browser_tests_skip_without_chromium_but_fail_in_ci():
    local = _browser_tests(ci=False)
    assert local.returncode == 0, local.stdout[-3000:]
    summary = local.stdout.strip().splitlines()[-1]
    assert " skipped" in summary and "passed" not in summary and "failed" not in summary, summary
    assert "chromium is not installed (Debian: apt-get install chromium)" in local.stdout
    ci = _browser_tests(ci=True)
    assert ci.returncode == 1, ci.stdout[-3000:]
    summary = ci.stdout.strip().splitlines()[-1]
    assert " error" in summary and "passed" not in summary and "skipped" not in summary, summary
    assert "CI must run the browser tests" in ci.stdout
