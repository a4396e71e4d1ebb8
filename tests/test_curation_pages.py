"""Curation on the pages, in a real browser (headless Chromium): the enrichment folded under
the doc's body, related pages, and the hub's concepts and suggested bundles.

The `chromium` fixture skips locally without Chromium and fails in CI (.ci/run installs it).
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import httpx

from tests.polling import wait_curated

NOTES = {
    "Vacuum tuning": "PostgreSQL vacuum reclaims dead tuples. Autovacuum thresholds decide when vacuum runs.",
    "Index bloat": "Dead tuples bloat PostgreSQL indexes. Vacuum and reindex shrink bloated indexes.",
    "HOT updates": "HOT updates leave fewer dead tuples. Fewer dead tuples mean less vacuum work in PostgreSQL.",
}


def _dom(chromium: str, tmp_path: Path, url: str) -> str:
    result = subprocess.run(
        [
            chromium,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            f"--user-data-dir={tmp_path / 'profile'}",
            "--virtual-time-budget=2000",
            "--dump-dom",
            url,
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    return result.stdout


def test_doc_and_hub_pages_show_curation(chromium, live_server, tmp_path):
    url = live_server.url
    owner = {"Authorization": f"Bearer {httpx.post(f'{url}/api/hubs', json={'slug': 'pg'}).json()['owner_token']}"}
    ids = [
        httpx.post(f"{url}/api/docs", json={"title": t, "markdown": f"{m}\n\n{m}", "hub": "pg"}, headers=owner).json()[
            "id"
        ]
        for t, m in NOTES.items()
    ]
    wait_curated(live_server)

    dom = _dom(chromium, tmp_path, f"{url}/{ids[0]}")
    body, _, rest = dom.partition('<section class="enrichment">')
    assert "Autovacuum thresholds" in body, "the body comes first"
    details = rest.split("</details>", 1)[0]
    assert details.startswith("\n<details>") or details.lstrip().startswith("<details>"), "folded (closed)"
    assert "extractive" in details and "<h3>Summary</h3>" in details and "<h3>Concepts in this document</h3>" in details
    assert "PostgreSQL" in details
    related = rest.split('<section class="related">', 1)[1]
    assert "Index bloat" in related and "HOT updates" in related

    hub = _dom(chromium, tmp_path, f"{url}/hub/pg")
    concepts = hub.split('<section class="concepts">', 1)[1]
    assert "PostgreSQL" in concepts and all(f'href="{url}/{i}"' in concepts for i in ids)
    suggestions = hub.split('<section class="suggestions">', 1)[1].split("</section>", 1)[0]
    assert all(t in suggestions for t in NOTES), "the three notes are offered as a bundle"
