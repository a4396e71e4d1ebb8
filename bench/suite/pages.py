"""Pages: how long hostile markdown takes to render, and what each page weighs.

    python -m bench pages                        # results in bench/results/pages.md
    python -m bench pages --screenshots docs/screenshots   # also the README's screenshots
    python -m bench pages --smoke --out DIR     # quick run (tests/test_bench_sections.py)

Weights are the bytes a browser loads for a page of the demo hub (bench/suite/demo.py): the HTML plus
the stylesheet and scripts it links (no images or fonts are used), raw and gzip-compressed.
The demo embeds with the test suite's word-hash embedder (tests/embedding_server.py), so it
runs without torch; screenshots need Debian's chromium and Playwright (`.[dev]`).
PostgreSQL: DATABASE_URL if set (database bench_pages is created and dropped), else an
embedded PostgreSQL under bench/.cache/pg-pages (or --pg-dir).
"""

from __future__ import annotations

import argparse
import gzip
import re
import shutil
import socket
import threading
import time
from dataclasses import replace
from html.parser import HTMLParser
from pathlib import Path

import httpx

from ..common import CACHE, RESULTS, Postgres, machine_line, md_table
from . import demo


def hostile(scale: int = 1) -> dict[str, str]:
    """Markdown an attacker (or an unlucky import) might save; `scale` divides the sizes."""
    rows, depth, tags, links, lines = 10_000 // scale, 500, 5_000 // scale, 2_000 // scale, 20_000 // scale
    return {
        f"{rows:,}-row table": "| a | b |\n|---|---|\n" + "".join(f"| {i} | **{i}** |\n" for i in range(rows)),
        f"{depth}-deep nested list": "".join("  " * i + "- item\n" for i in range(depth)),
        f"{depth}-deep blockquote": ">" * depth + " deep\n",
        f"{tags:,} script tags and handlers": "".join(
            f"<script>alert({i})</script> <img src=x onerror=alert({i})>\n\n" for i in range(tags)
        ),
        f"{links:,} javascript: links": "".join(f"[x{i}](javascript:alert({i})) " for i in range(links)),
        f"code block of {lines:,} lines": "```python\n" + "".join(f"x_{i} = {i} * 2\n" for i in range(lines)) + "```\n",
    }


def render_times(repeat: int, scale: int = 1) -> list[list]:
    from memorywiki.server.web.render import render_page

    rows = []
    for name, text in hostile(scale).items():
        best = float("inf")
        for _ in range(repeat):
            render_page.cache_clear()
            t0 = time.perf_counter()
            html = render_page(text).html
            best = min(best, time.perf_counter() - t0)
        rows.append([name, f"{len(text):,}", f"{best * 1000:,.0f} ms", f"{len(html):,}"])
    return rows


class _Assets(HTMLParser):
    def __init__(self, html: str):
        super().__init__()
        self.urls: list[str] = []
        self.feed(html)

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "link" and a.get("rel") == "stylesheet":
            self.urls.append(a["href"])
        if tag == "script" and a.get("src"):
            self.urls.append(a["src"])


def weigh(http: httpx.Client, path: str) -> list:
    html = http.get(path, headers={"Accept": "text/html"})
    html.raise_for_status()
    assets = [http.get(url).content for url in _Assets(html.text).urls]
    total = len(html.content) + sum(len(a) for a in assets)
    zipped = len(gzip.compress(html.content)) + sum(len(gzip.compress(a)) for a in assets)
    return [path, f"{len(html.content):,}", f"{sum(len(a) for a in assets):,}", f"{total:,}", f"{zipped:,}"]


def seed(base: str) -> dict:
    """The demo hub, listed, with links between pages and a bundle; returns ids and tokens."""
    with httpx.Client(base_url=base, timeout=60) as http:
        owner = {"Authorization": f"Bearer {http.post('/api/hubs', json={'slug': demo.HUB}).json()['owner_token']}"}
        http.patch(f"/api/hub/{demo.HUB}", json={"listed": True, "description": demo.DESCRIPTION}, headers=owner)
        made = [
            http.post("/api/docs", headers=owner, json={"hub": demo.HUB, "title": t, "markdown": m}).json()
            for t, m in demo.DOCS
        ]
        ids = [d["id"] for d in made]
        for (_title, markdown), doc in zip(demo.DOCS, made, strict=False):
            if "/DOC" in markdown:
                linked = re.sub(r"/DOC(\d+)", lambda m: "/" + ids[int(m.group(1))], markdown)
                http.patch(f"/api/docs/{doc['id']}", json={"markdown": linked}, headers=owner)
        title, description, order = demo.BUNDLE
        bundle = http.post(
            "/api/bundles",
            headers=owner,
            json={"hub": demo.HUB, "title": title, "description": description, "doc_ids": [ids[i] for i in order]},
        ).json()
        for _ in range(600):
            if http.get("/healthz").json()["owed"] == 0:
                break
            time.sleep(0.1)
    return {"ids": ids, "bundle": bundle["id"], "edit_token": made[0]["edit_token"]}


def serve(database_url: str, embedding_url: str):
    import uvicorn
    from memorywiki.server.app import create_app
    from memorywiki.server.config import Settings

    sock = socket.socket()
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sock.bind(("127.0.0.1", 0))
    url = f"http://127.0.0.1:{sock.getsockname()[1]}"
    settings = Settings(
        database_url=database_url,
        embedder="openai",
        openai_model="test-embed",
        openai_api_key="bench",
        openai_base_url=embedding_url,
        public_url=url,
        graph_max_distance=demo.MAX_DISTANCE,
    )
    server = uvicorn.Server(uvicorn.Config(create_app(replace(settings)), log_level="warning", lifespan="on"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    for _ in range(600):
        try:
            if httpx.get(f"{url}/healthz", timeout=1).status_code == 200:
                break
        except httpx.HTTPError:
            time.sleep(0.1)
    return url, server, thread


def screenshots(base: str, world: dict, out: Path) -> list[Path]:
    from playwright.sync_api import sync_playwright

    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        raise SystemExit("screenshots need Debian's chromium (apt-get install chromium)")
    out.mkdir(parents=True, exist_ok=True)
    doc = world["ids"][0]
    shots = [
        ("home.png", "/", None),
        ("hub-search.png", f"/hub/{demo.HUB}?q={demo.SEARCH.replace(' ', '+')}", None),
        ("doc.png", f"/{doc}", None),
        ("editor.png", f"/{doc}/edit#token={world['edit_token']}", "[data-mw=status][data-state=saved]"),
        ("graph.png", f"/hub/{demo.HUB}/graph", None),
        ("hub-phone.png", f"/hub/{demo.HUB}", None),
    ]
    written = []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(
            executable_path=chromium,
            args=[
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-background-networking",
                "--disable-component-update",
                "--no-first-run",
            ],
        )
        for name, path, ready in shots:
            phone = "phone" in name
            context = browser.new_context(
                base_url=base,
                color_scheme="light",
                device_scale_factor=1,
                viewport={"width": 390, "height": 844} if phone else {"width": 1280, "height": 900},
            )
            page = context.new_page()
            page.goto(path)
            if ready:
                page.wait_for_selector(ready)
            target = out / name
            page.screenshot(path=str(target), full_page=False)
            written.append(target)
            context.close()
        browser.close()
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench pages", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--out", type=Path, default=RESULTS, help="where pages.md goes")
    parser.add_argument("--screenshots", type=Path, default=None, help="write the README's screenshots here")
    parser.add_argument("--pg-dir", type=Path, default=CACHE / "pg-pages")
    parser.add_argument("--smoke", action="store_true", help="one render each, no screenshots")
    args = parser.parse_args(argv)

    from tests.embedding_server import start_embedding_server

    timings = render_times(1, 10) if args.smoke else render_times(3)
    pg = Postgres(args.pg_dir)
    embedder = start_embedding_server()
    try:
        url, server, thread = serve(pg.fresh("bench_pages"), embedder.base_url)
        try:
            world = seed(url)
            paths = [
                "/",
                f"/hub/{demo.HUB}",
                f"/hub/{demo.HUB}?q={demo.SEARCH.replace(' ', '+')}",
                f"/{world['ids'][0]}",
                f"/b/{world['bundle']}",
                f"/{world['ids'][0]}/edit",
                "/new",
                f"/hub/{demo.HUB}/graph",
                f"/{world['ids'][0]}/history",
            ]
            with httpx.Client(base_url=url, timeout=60) as http:
                weights = [weigh(http, p) for p in paths]
            shots = screenshots(url, world, args.screenshots) if args.screenshots else []
        finally:
            server.should_exit = True
            thread.join(timeout=15)
        pg.drop("bench_pages")
    finally:
        embedder.stop()
        pg.close()

    def shorten(p: str) -> str:
        return p.replace(world["ids"][0], "{doc}").replace(world["bundle"], "{bundle}")

    text = "\n\n".join(
        [
            "# Pages: render time and weight",
            machine_line(),
            "## Hostile markdown, rendered once (best of runs; a page's HTML is then cached by its text)",
            md_table(["input", "chars", "render", "HTML chars"], timings),
            f"## Page weight of the demo hub ({len(demo.DOCS)} pages, bench/suite/demo.py)",
            "HTML plus the stylesheet and scripts the page links; no images or web fonts.",
            md_table(
                ["page", "HTML bytes", "CSS + JS bytes", "total bytes", "total gzip"],
                [[shorten(w[0]), *w[1:]] for w in weights],
            ),
            "Command: `python -m bench pages" + (" --smoke" if args.smoke else "") + "`",
        ]
    )
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "pages.md").write_text(text + "\n", encoding="utf-8")
    print(text)
    for shot in shots:
        print(f"screenshot: {shot}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
