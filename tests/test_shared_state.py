"""Two servers on one database share every piece of state a client meets: a rate limit reached
on one is reached on the other, a sign-out on one ends the session on both, and two servers
racing on one limit let exactly its budget through (rate_hits, migrations/0170)."""

from __future__ import annotations

import threading

import pytest

from tests.test_owner_view import COOKIE, csrf, sign_in, use_cookie


@pytest.fixture
def two(make_client):
    """Two apps (each its own pools, limits and event loop) on the test's one database."""
    return make_client(rate_token_failures="4/minute", rate_embed="6/minute"), make_client(
        rate_token_failures="4/minute", rate_embed="6/minute"
    )


def test_a_limit_reached_on_one_server_is_reached_on_the_other(two):
    a, b = two
    assert a.post("/api/hubs", json={"slug": "mine"}).status_code == 201
    wrong = {"Authorization": "Bearer mwo_wrong"}
    body = {"hub": "mine", "title": "T", "markdown": "# T\n\nx\n"}
    statuses = [(a if i % 2 else b).post("/api/docs", json=body, headers=wrong).status_code for i in range(4)]
    assert statuses == [403] * 4
    for server in (a, b):  # the budget is spent on both
        r = server.post("/api/docs", json=body, headers=wrong)
        assert r.status_code == 429 and r.json()["error"]["code"] == "rate_limited", r.text
        assert int(r.headers["Retry-After"]) >= 1


def test_two_servers_racing_on_one_limit_let_exactly_its_budget_through(two):
    a, b = two
    owner = {"Authorization": f"Bearer {a.post('/api/hubs', json={'slug': 'mine'}).json()['owner_token']}"}
    doc = a.post("/api/docs", json={"hub": "mine", "title": "T", "markdown": "# T\n\nx\n"}, headers=owner).json()["id"]
    statuses: list[int] = []

    def spend(server) -> None:
        for _ in range(5):
            statuses.append(server.post(f"/api/embed/{doc}", headers=owner).status_code)

    threads = [threading.Thread(target=spend, args=(server,)) for server in (a, b, a, b)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert len(statuses) == 20
    assert sum(s != 429 for s in statuses) == 6, statuses  # "6/minute", over both servers


def test_a_sign_out_on_one_server_ends_the_session_on_both(two):
    a, b = two
    token = a.post("/api/hubs", json={"slug": "mine"}).json()["owner_token"]
    assert sign_in(a, token).status_code == 200
    cookie = a.cookies[COOKIE]
    use_cookie(b, cookie)  # the same browser, its next request sent to the other server
    assert b.get("/api/hub/mine").json()["view"] == "owner"
    r = a.delete("/api/hub/mine/session", headers={"X-CSRF-Token": csrf(a)})
    assert r.status_code == 200 and r.json()["signed_out"] is True
    use_cookie(b, cookie)
    assert b.get("/api/hub/mine").json()["view"] == "public"
    assert b.get("/api/hub/mine/session").json()["ended"] == "signed_out"
