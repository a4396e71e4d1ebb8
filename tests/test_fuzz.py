"""Schema-driven fuzzing of every route against a live server.

Schemathesis reads /openapi.json and sends generated requests, valid and invalid, to a real
uvicorn server: 0 answers may be 5xx, and every answer must fit the documented status codes,
content types, headers and schemas. Docs saved before the run, in a hub whose token the fuzzer
does not hold, must be exactly as they were afterwards (count and content).

Left out: POST /api/capture, which fetches the URL it is given: generated URLs would send the
server to addresses off this machine. Its validation is covered by tests/test_capture_*.py.
Bounded: one pass of each phase (examples, coverage, fuzzing, stateful) with at most
FUZZ_EXAMPLES cases per operation, and every selected operation must have been tested. No
--max-time: with one, Schemathesis repeats its phases until the time is spent, so the test took
its whole budget for cases of the same kind; or, on a slow machine, stopped before it reached
every operation.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import httpx
import psycopg
import pytest

pytestmark = pytest.mark.slow

FUZZ_EXAMPLES = 25
SCHEMATHESIS = str(Path(sys.executable).parent / "schemathesis")
CHECKS = (
    "not_a_server_error,status_code_conformance,content_type_conformance,"
    "response_headers_conformance,response_schema_conformance"
)

SNAPSHOT = """
SELECT d.id, d.title, d.markdown, d.version, d.source_hash, d.is_draft, d.deleted_at, d.password_hash,
       d.allowed_emails, d.meta, (SELECT array_agg(c.hash ORDER BY c.ordinal) FROM chunks c WHERE c.doc_id = d.id)
FROM docs d JOIN hubs h ON h.id = d.hub_id WHERE h.slug = 'archive' ORDER BY d.id
"""
BUNDLES = """SELECT b.id, b.title, b.description, array_agg(bd.doc_id ORDER BY bd.position)
FROM bundles b JOIN hubs h ON h.id = b.hub_id LEFT JOIN bundle_docs bd ON bd.bundle_id = b.id
WHERE h.slug = 'archive' GROUP BY b.id ORDER BY b.id"""


@pytest.fixture
def settings(settings):
    """The live server without rate limits: the fuzzer sends one token to every route, and a
    spent budget would answer most requests with 429 before they reach validation (the 429s
    themselves are checked against the spec in tests/test_openapi.py)."""
    from dataclasses import replace

    unlimited = "1000000/minute"
    return replace(settings, rate_password=unlimited, rate_token_failures=unlimited, rate_embed=unlimited)


def _snapshot(url: str) -> tuple[list, list]:
    with psycopg.connect(url) as conn:
        return conn.execute(SNAPSHOT).fetchall(), conn.execute(BUNDLES).fetchall()


def test_fuzzing_every_route_finds_no_5xx_and_no_schema_break_and_loses_nothing(live_server, settings, tmp_path):
    base = live_server.url
    archive = httpx.post(f"{base}/api/hubs", json={"slug": "archive"}).json()["owner_token"]
    keep = {"Authorization": f"Bearer {archive}"}
    ids = []
    for i, extra in enumerate([{}, {"is_draft": True}, {"password": "pw"}, {"allowed_emails": ["a@b.co"]}, {}]):
        r = httpx.post(
            f"{base}/api/docs",
            headers=keep,
            json={
                "hub": "archive",
                "title": f"Kept {i}",
                "markdown": f"## Part\n\nkept text {i}\n\n## More\n\nmore {i}\n",
                **extra,
            },
        )
        assert r.status_code == 201
        ids.append(r.json()["id"])
    assert (
        httpx.post(
            f"{base}/api/bundles", headers=keep, json={"hub": "archive", "title": "Kept bundle", "doc_ids": ids[:2]}
        ).status_code
        == 201
    )
    notes = httpx.post(f"{base}/api/hubs", json={"slug": "notes"}).json()["owner_token"]
    before = _snapshot(settings.database_url)
    assert len(before[0]) == 5

    har = tmp_path / "fuzz.har"
    # Schemathesis keeps a crash cache under ./.schemathesis: off, and run in tmp_path, so the
    # checkout gets no files and one run cannot replay another's cases.
    config = tmp_path / "schemathesis.toml"
    config.write_text("[cache]\nenabled = false\n")
    proc = subprocess.run(
        [
            SCHEMATHESIS,
            "--config-file",
            str(config),
            "run",
            f"{base}/openapi.json",
            "--checks",
            CHECKS,
            "--max-examples",
            str(FUZZ_EXAMPLES),
            "--seed",
            "10",
            "--generation-database",
            "none",
            "--exclude-path",
            "/api/capture",
            "--header",
            f"Authorization: Bearer {notes}",
            "--request-timeout",
            "60",
            "--report",
            "har",
            "--report-har-path",
            str(har),
            "--no-color",
        ],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stdout[-6000:] + proc.stderr[-2000:]
    operations = re.search(r"Selected: (\d+)/\d+\s+Tested: (\d+)", proc.stdout)
    assert operations and operations[1] == operations[2], proc.stdout[-3000:]  # no operation left out

    entries = json.loads(har.read_text())["log"]["entries"]
    statuses = Counter(entry["response"]["status"] for entry in entries)
    print(f"fuzzed requests: {len(entries)}; by status: {dict(sorted(statuses.items()))}")
    assert len(entries) >= 200
    assert not [status for status in statuses if status >= 500]
    assert statuses[429] == 0  # every request reached its route
    assert sum(n for status, n in statuses.items() if status < 300) > 0  # it got past validation too

    assert _snapshot(settings.database_url) == before  # the archive is exactly as it was
    for doc_id in ids[:1] + ids[4:]:
        assert httpx.get(f"{base}/api/docs/{doc_id}").json()["title"].startswith("Kept")
