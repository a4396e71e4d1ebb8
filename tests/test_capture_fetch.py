"""SSRF-safe fetching: real requests to a local server, hostile addresses refused."""

from __future__ import annotations

import ipaddress

import pytest
from memorywiki.server.capture import fetch_url
from memorywiki.server.capture.fetch import address_problem
from memorywiki.server.errors import ApiError

from tests.test_capture_support import LocalServer, gzip_bomb, slow_body, streaming_body


@pytest.fixture(scope="module")
def srv():
    with LocalServer() as s:
        s.routes["/page"] = (200, "text/html; charset=utf-8", "<html><body><p>héllo</p></body></html>".encode())
        s.routes["/host"] = lambda h: h._send(200, "text/plain", h.headers["Host"].encode())
        s.routes["/image"] = (200, "image/png", b"\x89PNG\r\n\x1a\n" + b"\0" * 100)
        s.routes["/script.js"] = (200, "application/javascript", b"alert(1)")
        s.routes["/file.pdf"] = (200, "application/octet-stream", b"%PDF-1.4 ...")
        s.routes["/blob"] = (200, "application/octet-stream", b"\0\1\2")
        s.routes["/big-declared"] = (200, "text/html", b"x" * 300_000)
        s.routes["/big-streamed"] = streaming_body("text/html", b"y" * 65536, 40)  # 2.6 MB, no length
        s.routes["/gzip-bomb"] = gzip_bomb("text/html", 20_000_000)
        s.routes["/slow"] = slow_body("text/html", 3.0)
        s.routes["/to-page"] = (302, "text/plain", b"", {"Location": "/page"})
        s.routes["/to-private"] = (302, "text/plain", b"", {"Location": "http://10.1.2.3/admin"})
        s.routes["/to-metadata"] = (301, "text/plain", b"", {"Location": "http://169.254.169.254/latest/meta-data/"})
        s.routes["/to-file"] = (302, "text/plain", b"", {"Location": "file:///etc/passwd"})
        s.routes["/loop"] = (302, "text/plain", b"", {"Location": "/loop"})
        s.routes["/missing"] = (404, "text/html", b"nope")
        yield s


async def test_fetch_loopback_with_opt_in(srv):
    page = await fetch_url(srv.url("/page"), allow_loopback=True)
    assert page.status == 200
    assert page.content_type == "text/html"
    assert page.charset == "utf-8"
    assert "héllo" in page.text()
    assert page.final_url == srv.url("/page")


async def test_connection_is_pinned_but_host_header_kept(srv):
    # the request goes to the checked IP; the Host header still names the original host
    page = await fetch_url(srv.url("/host", host="localhost"), allow_loopback=True)
    assert page.body.decode() == f"localhost:{srv.port}"


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1/",
        "http://localhost/",
        "http://127.1/",
        "http://2130706433/",  # 127.0.0.1 as one decimal number
        "http://0.0.0.0/",
        "http://[::1]/",
        "http://[::ffff:127.0.0.1]/",
    ],
)
async def test_loopback_refused_without_opt_in(url):
    with pytest.raises(ApiError) as err:
        await fetch_url(url)
    assert err.value.code == "blocked_address"
    assert err.value.status == 403


@pytest.mark.parametrize(
    "url",
    [
        "http://10.0.0.1/",
        "http://172.16.5.4/",
        "http://192.168.1.1/",
        "http://169.254.169.254/latest/meta-data/",
        "http://[fd00:ec2::254]/",
        "http://169.254.1.1/",
        "http://[fe80::1]/",
        "http://224.0.0.1/",
        "http://240.0.0.1/",
        "http://100.64.0.1/",
        "http://[fc00::1]/",
        "http://[2002:a00:1::]/",  # 6to4 wrapping 10.0.0.1
    ],
)
async def test_private_and_metadata_refused_even_with_opt_in(url):
    with pytest.raises(ApiError) as err:
        await fetch_url(url, allow_loopback=True)
    assert err.value.code == "blocked_address"


@pytest.mark.parametrize(
    "url",
    ["file:///etc/passwd", "ftp://example.org/x", "gopher://x/", "http://", "http://user:pw@example.org/", "not a url"],
)
async def test_bad_urls(url):
    with pytest.raises(ApiError) as err:
        await fetch_url(url, allow_loopback=True)
    assert err.value.code == "bad_url"
    assert 400 <= err.value.status < 500


def test_address_classifier():
    ok = ipaddress.ip_address
    assert address_problem(ok("93.184.216.34")) is None
    assert address_problem(ok("2606:4700::1111")) is None
    assert address_problem(ok("127.0.0.1"), allow_loopback=True) is None
    assert address_problem(ok("169.254.169.254"), allow_loopback=True) == "a cloud metadata address"
    assert address_problem(ok("::ffff:10.0.0.1"), allow_loopback=True) == "a private address"
    assert address_problem(ok("64:ff9b::a9fe:a9fe")) == "a cloud metadata address"  # NAT64 of 169.254.169.254


async def test_redirect_followed_and_rechecked(srv):
    page = await fetch_url(srv.url("/to-page"), allow_loopback=True)
    assert page.final_url == srv.url("/page")
    assert page.redirects == [srv.url("/to-page")]


@pytest.mark.parametrize("path", ["/to-private", "/to-metadata"])
async def test_redirect_to_private_address_refused(srv, path):
    with pytest.raises(ApiError) as err:
        await fetch_url(srv.url(path), allow_loopback=True)
    assert err.value.code == "blocked_address"


async def test_redirect_to_other_scheme_refused(srv):
    with pytest.raises(ApiError) as err:
        await fetch_url(srv.url("/to-file"), allow_loopback=True)
    assert err.value.code == "bad_url"


async def test_redirect_loop_capped(srv):
    before = len(srv.hits)
    with pytest.raises(ApiError) as err:
        await fetch_url(srv.url("/loop"), allow_loopback=True)
    assert err.value.code == "fetch_failed"
    assert "redirects" in str(err.value)
    assert len(srv.hits) - before == 6  # the first request and 5 redirects


@pytest.mark.parametrize("path", ["/big-declared", "/big-streamed", "/gzip-bomb"])
async def test_oversized_body_refused(srv, path):
    with pytest.raises(ApiError) as err:
        await fetch_url(srv.url(path), allow_loopback=True, max_bytes=200_000)
    assert err.value.code == "too_large"
    assert err.value.status == 413


@pytest.mark.parametrize("path", ["/image", "/script.js", "/blob"])
async def test_wrong_content_type_refused(srv, path):
    with pytest.raises(ApiError) as err:
        await fetch_url(srv.url(path), allow_loopback=True)
    assert err.value.code == "unsupported_type"
    assert err.value.status == 415


async def test_octet_stream_accepted_for_document_path(srv):
    page = await fetch_url(srv.url("/file.pdf"), allow_loopback=True)
    assert page.body.startswith(b"%PDF")


async def test_timeout(srv):
    with pytest.raises(ApiError) as err:
        await fetch_url(srv.url("/slow"), allow_loopback=True, timeout=0.5)
    assert err.value.code == "fetch_timeout"


async def test_http_error_status(srv):
    with pytest.raises(ApiError) as err:
        await fetch_url(srv.url("/missing"), allow_loopback=True)
    assert err.value.code == "fetch_failed"
    assert "404" in str(err.value)


async def test_unresolvable_host():
    with pytest.raises(ApiError) as err:
        await fetch_url("http://does-not-exist.invalid/", timeout=5)
    assert err.value.code in ("fetch_failed", "fetch_timeout")
