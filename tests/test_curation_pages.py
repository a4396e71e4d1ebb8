"""Curation on the pages, in a real browser (headless Chromium): the enrichment folded under
the doc's body, related pages, and the hub's concepts and suggested bundles.

Skipped where Chromium is not installed; .ci/run installs it.
"""

from __future__ import annotations

import shutil
import subprocess
import time
from pathlib import Path

import httpx
import pytest

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed")

NOTES = {
    "Vacuum tuning": "PostgreSQL vacuum reclaims dead tuples. Autovacuum thresholds decide when vacuum runs.",
    "Index bloat": "Dead tuples bloat PostgreSQL indexes. Vacuum and reindex shrink bloated indexes.",
    "HOT updates": "HOT updates leave fewer dead tuples. Fewer dead tuples mean less vacuum work in PostgreSQL.",
}


def _dom(tmp_path: Path, url: str) -> str:
    result = subprocess.run(
        [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         f"--user-data-dir={tmp_path / 'profile'}", "--virtual-time-budget=2000", "--dump-dom", url],
        capture_output=True, text=True, timeout=60,
    )
    return result.stdout


def _wait_curated(url: str, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        h = httpx.get(f"{url}/healthz").json()
        c = h["curation"]
        if h["owed"] == 0 and not (c["owed_enrichments"] or c["owed_suggestions"] or c["owed_analyses"]):
            return
        time.sleep(0.1)
    raise AssertionError(httpx.get(f"{url}/healthz").json())


def test_doc_and_hub_pages_show_curation(live_server, tmp_path):
    url = live_server.url
    owner = {"Authorization": f"Bearer {httpx.post(f'{url}/api/hubs', json={'slug': 'pg'}).json()['owner_token']}"}
    ids = [httpx.post(f"{url}/api/docs", json={"title": t, "markdown": f"{m}\n\n{m}", "hub": "pg"},
                      headers=owner).json()["id"] for t, m in NOTES.items()]
    _wait_curated(url)

    dom = _dom(tmp_path, f"{url}/{ids[0]}")
    body, _, rest = dom.partition('<section class="enrichment">')
    assert "Autovacuum thresholds" in body, "the body comes first"
    details = rest.split("</details>", 1)[0]
    assert details.startswith("\n<details>") or details.lstrip().startswith("<details>"), "folded (closed)"
    assert "extractive" in details and "<h3>Summary</h3>" in details and "<h3>Concepts in this document</h3>" in details
    assert "PostgreSQL" in details
    related = rest.split('<section class="related">', 1)[1]
    assert "Index bloat" in related and "HOT updates" in related

    hub = _dom(tmp_path, f"{url}/hub/pg")
    concepts = hub.split('<section class="concepts">', 1)[1]
    assert "PostgreSQL" in concepts and all(f'href="{url}/{i}"' in concepts for i in ids)
    suggestions = hub.split('<section class="suggestions">', 1)[1].split("</section>", 1)[0]
    assert all(t in suggestions for t in NOTES), "the three notes are offered as a bundle"
