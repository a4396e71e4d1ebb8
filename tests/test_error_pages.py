"""An unknown hub, doc or bundle answers in the asker's format: an HTML page
for a browser (it names text/html), markdown for an AI fetcher (`Accept: text/markdown` or
/raw/...), JSON for the API and for scripts. Unknown routes (Starlette's own 404) negotiate the
same way.
"""

from __future__ import annotations

from html import unescape

BROWSER = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"
UNKNOWN_PAGES = ["/hub/nohub", "/zzzzzzzzzz", "/b/zzzzzzzzzz", "/not-an-id", "/no/such/page/here"]


def test_a_browser_gets_a_friendly_html_404(client):
    for path in UNKNOWN_PAGES:
        for accept in (BROWSER, "text/html"):
            r = client.get(path, headers={"Accept": accept})
            assert r.status_code == 404, (path, accept)
            assert r.headers["content-type"].startswith("text/html"), (path, accept)
            html = r.text
            assert "<h1>Page not found</h1>" in html and '<a href="/">' in html  # extends base.html, links home
            assert "{" not in html.split("<body", 1)[1].split("</header>", 1)[1]  # no JSON in the page


def test_an_ai_fetcher_gets_markdown(client):
    for path in UNKNOWN_PAGES:
        r = client.get(path, headers={"Accept": "text/markdown"})
        assert r.status_code == 404 and r.headers["content-type"].startswith("text/markdown"), path
        assert r.text.startswith("# Page not found\n\n") and "http://testserver/" in r.text


def test_raw_urls_get_markdown_whatever_they_accept(client):
    for path in ("/raw/hub/nohub", "/raw/zzzzzzzzzz", "/raw/b/zzzzzzzzzz", "/raw/whatever"):
        for accept in (BROWSER, "*/*", "application/json"):
            r = client.get(path, headers={"Accept": accept})
            assert r.status_code == 404 and r.headers["content-type"].startswith("text/markdown"), (path, accept)


def test_messages_say_what_was_missing(client):
    assert "hub 'nohub' does not exist" in unescape(client.get("/hub/nohub", headers={"Accept": BROWSER}).text)
    assert "doc not found" in client.get("/raw/zzzzzzzzzz").text
    assert "Nothing lives at /no/such/page/here." in client.get("/no/such/page/here", headers={"Accept": BROWSER}).text


def test_the_api_always_answers_json(client):
    for path in ("/api/hub/nohub", "/api/docs/zzzzzzzzzz", "/api/nothing/here"):
        for accept in (BROWSER, "text/markdown", "*/*"):
            r = client.get(path, headers={"Accept": accept})
            assert r.status_code == 404 and r.headers["content-type"] == "application/json", (path, accept)
            assert set(r.json()["error"]) == {"code", "message"}


def test_scripts_get_json_on_page_urls(client):
    for accept in ("application/json", "*/*", ""):
        r = client.get("/hub/nohub", headers={"Accept": accept})
        assert r.status_code == 404 and r.json()["error"]["code"] == "unknown_hub", accept
        r = client.get("/no/such/page/here", headers={"Accept": accept})
        assert r.status_code == 404 and r.json()["error"]["code"] == "not_found", accept


def test_other_page_errors_negotiate_too(client):
    r = client.delete("/hub/anything", headers={"Accept": BROWSER})
    assert r.status_code == 405 and r.headers["content-type"].startswith("text/html")
    assert "<h1>Not something this page can do</h1>" in r.text
    r = client.delete("/api/hub/anything", headers={"Accept": BROWSER})
    assert r.status_code == 405 and r.json()["error"]["code"] == "method_not_allowed"
