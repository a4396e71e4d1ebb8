"""Links from a trusted origin only, tried as an attacker would against real servers: a forged
Host is refused before any route (so no mail, answer or sign-in link is ever built from it),
forwarded headers count only from the proxies the settings trust, and `memorywiki serve` on
every interface says how to add a host name."""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import time
from dataclasses import replace

import httpx
import pytest
from memorywiki.server.config import Settings, SettingsError

from tests.conftest import serving

ANN = "ann@example.com"
EVIL = "evil.example.net"


def shared_page(http: httpx.Client, slug: str = "vault") -> tuple[dict, str]:
    token = http.post("/api/hubs", json={"slug": slug}).json()["owner_token"]
    owner = {"Authorization": f"Bearer {token}"}
    doc = http.post(
        "/api/docs",
        json={"hub": slug, "title": "Ann's page", "markdown": "For Ann only.", "allowed_emails": [ANN]},
        headers=owner,
    )
    assert doc.status_code == 201, doc.text
    return owner, doc.json()["id"]


@pytest.fixture
def loopback(settings, smtp_server):
    """A live server on loopback with no public URL (the default), mailing through the test SMTP
    server: links follow the Host, which must be trusted."""
    with serving(replace(settings, public_url=None, smtp_url=smtp_server.url), public_url=False) as live:
        yield live


@pytest.mark.parametrize(
    "host",
    [EVIL, f"{EVIL}:8000", "127.0.0.1.evil.example.net", "localhost.evil.example.net", "[::2]:80", "", "a b", "x/y"],
)
def test_a_forged_host_is_refused_before_any_route_and_mails_nobody(loopback, smtp_server, host):
    with httpx.Client(base_url=loopback.url, timeout=30) as http:
        _, doc_id = shared_page(http)
        invitation = smtp_server.wait_for(ANN)  # sharing the page mailed ann, from a trusted Host
        before = http.get("/api/hub/vault").json()
        r = http.post(f"/api/docs/{doc_id}/access/request", json={"email": ANN}, headers={"Host": host})
        assert r.status_code == 400 and r.json()["error"]["code"] == "untrusted_host", r.text
        assert "MEMORYWIKI_TRUSTED_HOSTS" in r.json()["error"]["message"]
        assert r.headers["x-content-type-options"] == "nosniff"  # the security headers, as on every answer
        # nothing else answers it either: not a page, not a write
        assert http.get(f"/{doc_id}", headers={"Host": host, "Accept": "text/html"}).status_code == 400
        made = http.post("/api/hubs", json={"slug": "other"}, headers={"Host": host})
        assert made.status_code == 400 and http.get("/api/hub/other").status_code == 404
        assert http.get("/api/hub/vault").json() == before
    time.sleep(0.3)  # time for the outbox to send anything it was handed
    assert len(smtp_server.all()) == len(invitation) == 1
    assert EVIL not in invitation[0].get_content()


def test_the_mailed_link_names_the_trusted_host_the_reader_asked_on(loopback, smtp_server):
    port = loopback.url.rsplit(":", 1)[1]
    with httpx.Client(base_url=loopback.url, timeout=30) as http:
        _, doc_id = shared_page(http)
        asked = http.post(
            f"/api/docs/{doc_id}/access/request", json={"email": ANN}, headers={"Host": f"localhost:{port}"}
        )
        assert asked.status_code == 202
    link = rf"http://localhost:{port}/{doc_id}/signin#mwl_"
    bodies = [m.get_content() for m in smtp_server.wait_for(ANN, 2)]  # the invitation, then the asked link
    assert any(re.search(link, b) for b in bodies), bodies
    assert not any(EVIL in b for b in bodies)


def test_the_public_url_wins_for_every_link_and_its_host_is_trusted(settings, smtp_server):
    public = replace(settings, public_url="https://wiki.example.org", smtp_url=smtp_server.url)
    with serving(public, public_url=False) as live, httpx.Client(base_url=live.url, timeout=30) as http:
        owner, doc_id = shared_page(http)
        # the loopback name the CLI uses still answers, and its links name the public URL
        assert http.get(f"/api/docs/{doc_id}", headers=owner).json()["url"] == f"https://wiki.example.org/{doc_id}"
        # so does the public host (a proxy in front keeps the Host), and a forged one does not
        named = http.get(f"/api/docs/{doc_id}", headers={**owner, "Host": "wiki.example.org"})
        assert named.status_code == 200 and named.json()["url"] == f"https://wiki.example.org/{doc_id}"
        assert http.get(f"/api/docs/{doc_id}", headers={**owner, "Host": EVIL}).status_code == 400
        # X-Forwarded-Host is never read: links keep the public URL
        forwarded = http.get(f"/api/docs/{doc_id}", headers={**owner, "X-Forwarded-Host": EVIL})
        assert forwarded.json()["url"] == f"https://wiki.example.org/{doc_id}"
        http.post(f"/api/docs/{doc_id}/access/request", json={"email": ANN}, headers={"X-Forwarded-Host": EVIL})
    bodies = [m.get_content() for m in smtp_server.wait_for(ANN, 2)]  # the invitation, then the asked link
    assert all(f"https://wiki.example.org/{doc_id}/signin#mwl_" in b and EVIL not in b for b in bodies)


def test_forwarded_headers_count_only_from_trusted_proxies(settings):
    """From a client the settings do not trust, X-Forwarded-For cannot buy a fresh rate-limit
    budget and X-Forwarded-Proto cannot change a link; from a trusted proxy both are believed."""
    strict = replace(settings, public_url=None, forwarded_allow_ips="192.0.2.1", rate_token_failures="2/minute")
    with serving(strict, public_url=False) as live, httpx.Client(base_url=live.url, timeout=30) as http:
        token = http.post("/api/hubs", json={"slug": "vault"}, headers={"X-Forwarded-Proto": "https"}).json()
        assert token["url"].startswith("http://127.0.0.1:")  # not https: the proto was not believed
        wrong = {"Authorization": "Bearer mwo_wrong"}
        codes = [
            http.patch(
                "/api/hub/vault", json={"listed": True}, headers={**wrong, "X-Forwarded-For": f"203.0.113.{i}"}
            ).status_code
            for i in range(4)
        ]
        assert codes == [403, 403, 429, 429]  # one client, however many addresses it claims
    trusting = replace(settings, public_url=None, rate_token_failures="2/minute")  # loopback is the proxy
    with serving(trusting, public_url=False) as live, httpx.Client(base_url=live.url, timeout=30) as http:
        token = http.post("/api/hubs", json={"slug": "safe"}, headers={"X-Forwarded-Proto": "https"}).json()
        assert token["url"].startswith("https://127.0.0.1:")
        codes = [
            http.patch(
                "/api/hub/safe", json={"listed": True}, headers={"Authorization": "Bearer x", "X-Forwarded-For": ip}
            ).status_code
            for ip in ("203.0.113.1", "203.0.113.1", "203.0.113.1", "203.0.113.2")
        ]
        assert codes == [403, 403, 429, 403]  # the proxy's clients are counted apart


def test_the_test_clients_and_loopback_names_still_work(settings, client):
    assert client.get("/healthz").status_code == 200  # Starlette's TestClient: Host testserver (the public URL's)
    with serving(replace(settings, public_url=None), public_url=False) as live:
        port = live.url.rsplit(":", 1)[1]
        for host in (f"127.0.0.1:{port}", f"localhost:{port}", "localhost", f"[::1]:{port}", "LOCALHOST"):
            r = httpx.get(f"{live.url}/healthz", headers={"Host": host}, timeout=10)
            assert r.status_code == 200, (host, r.text)
        assert httpx.get(f"{live.url}/healthz", headers={"Host": "testserver"}, timeout=10).status_code == 400


def test_trusted_hosts_are_a_setting_with_wildcards():
    from memorywiki.server.web.hosts import host_name, is_trusted, serve_note

    assert Settings.from_env({}).trusted_hosts == ("localhost", "127.0.0.1", "::1")
    s = Settings.from_env({"MEMORYWIKI_TRUSTED_HOSTS": "Wiki.Example.com, *.example.org, [::1]"})
    assert s.trusted_hosts == ("wiki.example.com", "*.example.org", "::1")
    assert is_trusted("a.example.org", s.trusted_hosts) and not is_trusted("example.org.evil.net", s.trusted_hosts)
    assert not is_trusted("badexample.org", s.trusted_hosts)
    for bad in ("https://wiki.example.com", "wiki.example.com:8000", "a/b"):
        with pytest.raises(SettingsError, match="MEMORYWIKI_TRUSTED_HOSTS"):
            Settings.from_env({"MEMORYWIKI_TRUSTED_HOSTS": bad})
    with pytest.raises(SettingsError, match="MEMORYWIKI_PUBLIC_URL"):
        Settings.from_env({"MEMORYWIKI_PUBLIC_URL": "wiki.example.com"})
    assert host_name("[::1]:8000") == "::1" and host_name("Example.COM:80") == "example.com"
    assert host_name("evil.net/x") is None and host_name("a@b") is None and host_name("x:y") is None
    assert serve_note(Settings(), "127.0.0.1") is None
    note = serve_note(Settings(), "0.0.0.0")
    assert "MEMORYWIKI_TRUSTED_HOSTS" in note and "MEMORYWIKI_PUBLIC_URL" in note and "localhost" in note


def test_serve_on_every_interface_says_how_to_add_a_host_name(database_url, tmp_path):
    """`memorywiki serve --host 0.0.0.0` as a user runs it: it tells how to add host names, and
    answers the loopback names only until then."""
    from memorywiki.adapters.install.launch import memorywiki_executable

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("MEMORYWIKI_")},
        "DATABASE_URL": database_url,
        "MEMORYWIKI_EMBEDDER": "none",
        "HOME": str(tmp_path),
    }
    log = tmp_path / "serve.log"
    with log.open("w") as out:
        proc = subprocess.Popen(
            [str(memorywiki_executable()), "serve", "--host", "0.0.0.0", "--port", str(port)],
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    try:
        deadline = time.monotonic() + 60
        while True:
            assert proc.poll() is None, log.read_text()
            try:
                if httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            assert time.monotonic() < deadline, "memorywiki serve did not answer"
            time.sleep(0.1)
        refused = httpx.get(f"http://127.0.0.1:{port}/healthz", headers={"Host": "wiki.example.com"}, timeout=5)
        assert refused.status_code == 400 and refused.json()["error"]["code"] == "untrusted_host"
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=60)
    said = log.read_text()
    assert "listening on 0.0.0.0" in said and "MEMORYWIKI_TRUSTED_HOSTS=" in said, said
