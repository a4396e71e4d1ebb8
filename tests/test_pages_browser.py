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
            *args,
        ],
        capture_output=True,
        text=True,
        timeout=60,
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
    doc = httpx.post(
        f"{live_server.url}/api/docs",
        json={"title": "Secret plan", "markdown": "The plan is **bold**.", "password": "hunter2"},
    ).json()
    dom = _chromium(chromium, tmp_path, "--dump-dom", doc["url"])
    assert 'type="password"' in dom and "The plan is" not in dom


def test_unknown_pages_are_a_friendly_page_in_a_real_browser(chromium, live_server, tmp_path):
    for path in ("/hub/nohub", "/zzzzzzzzzz", "/no/such/page"):
        dom = _chromium(chromium, tmp_path, "--dump-dom", f"{live_server.url}{path}")
        assert "<h1>Page not found</h1>" in dom, path
        assert '<a href="/">Back to Memory.Wiki home</a>' in dom and '"error"' not in dom


def _console(chromium: str, tmp_path: Path, url: str) -> str:
    """Chromium's console (where CSP violations are reported) while it loads `url`."""
    result = subprocess.run(
        [
            chromium,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            f"--user-data-dir={tmp_path / 'console-profile'}",
            "--enable-logging=stderr",
            "--v=0",
            "--virtual-time-budget=2000",
            "--dump-dom",
            url,
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    return result.stderr


def _inline_style_page() -> tuple[str, object]:
    """A page that breaks our CSP on purpose: proof that a violation shows in the console."""
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    from memorywiki.server.web.middleware import CSP

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Security-Policy", CSP)
            self.end_headers()
            self.wfile.write(b"<html><head><style>p{color:red}</style></head><body><p>x</p></body></html>")

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return f"http://127.0.0.1:{server.server_address[1]}/", server


def test_no_page_breaks_its_content_security_policy(chromium, live_server, tmp_path):
    base = live_server.url
    hub = httpx.post(f"{base}/api/hubs", json={"slug": "csp"}).json()
    owner = {"Authorization": f"Bearer {hub['owner_token']}"}
    doc = httpx.post(
        f"{base}/api/docs", json={"title": "Field notes", "markdown": HOSTILE, "hub": "csp"}, headers=owner
    ).json()
    locked = httpx.post(f"{base}/api/docs", json={"title": "Vault", "markdown": "x", "password": "pw"}).json()
    bundle = httpx.post(
        f"{base}/api/bundles", json={"hub": "csp", "title": "B", "doc_ids": [doc["id"]]}, headers=owner
    ).json()
    control, server = _inline_style_page()
    try:
        assert "Content Security Policy" in _console(chromium, tmp_path, control)  # the check can see one
    finally:
        server.shutdown()
    for path in ("/", f"/{doc['id']}", f"/{locked['id']}", "/hub/csp", f"/b/{bundle['id']}", "/hub/nohub"):
        console = _console(chromium, tmp_path, f"{base}{path}")
        assert "Content Security Policy" not in console, (path, console[-2000:])
