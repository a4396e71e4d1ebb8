"""Pages in a real browser (headless Chromium): hostile markdown renders as text, never runs.

Skipped where Chromium is not installed, except in CI (CI=1), where that fails; .ci/run installs it.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import httpx
import pytest

pytestmark = pytest.mark.slow

HOSTILE = """# Field notes

<script>document.title = "PWNED"; document.body.setAttribute("data-pwned", "1")</script>

<img src="x" onerror="document.body.setAttribute('data-pwned', '2')">

[click me](javascript:document.body.setAttribute('data-pwned','3'))

## Code

```html
<script>alert(1)</script>
```

| a | b |
|---|---|
| 1 | 2 |
"""


def _chromium(chromium: str, tmp_path: Path, *args: str) -> str:
    result = subprocess.run(
        [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         f"--user-data-dir={tmp_path / 'profile'}", "--virtual-time-budget=2000", *args],
        capture_output=True, text=True, timeout=60,
    )
    return result.stdout


def test_hostile_markdown_is_inert_in_a_real_browser(chromium, live_server, tmp_path):
    doc = httpx.post(f"{live_server.url}/api/docs", json={"title": "Field notes", "markdown": HOSTILE}).json()
    dom = _chromium(chromium, tmp_path, "--dump-dom", doc["url"])
    assert "<title>Field notes · Memory.Wiki</title>" in dom
    assert "data-pwned" not in dom.split("<body", 1)[1].split(">", 1)[0]
    assert "PWNED" not in dom.split("<h1>", 1)[0]
    assert "&lt;script&gt;" in dom  # shown as text, in the page and in the code block
    assert 'href="javascript:' not in dom
    assert "<table>" in dom

    shot = tmp_path / "page.png"
    _chromium(chromium, tmp_path, f"--screenshot={shot}", "--window-size=1000,900", doc["url"])
    assert shot.exists() and shot.stat().st_size > 5000


def test_password_form_in_a_real_browser(chromium, live_server, tmp_path):
    doc = httpx.post(f"{live_server.url}/api/docs",
                     json={"title": "Secret plan", "markdown": "The plan is **bold**.", "password": "hunter2"}).json()
    dom = _chromium(chromium, tmp_path, "--dump-dom", doc["url"])
    assert 'type="password"' in dom and "The plan is" not in dom


def test_unknown_pages_are_a_friendly_page_in_a_real_browser(chromium, live_server, tmp_path):
    for path in ("/hub/nohub", "/zzzzzzzzzz", "/no/such/page"):
        dom = _chromium(chromium, tmp_path, "--dump-dom", f"{live_server.url}{path}")
        assert "<h1>Page not found</h1>" in dom, path
        assert '<a href="/">Back to Memory.Wiki home</a>' in dom and '"error"' not in dom
