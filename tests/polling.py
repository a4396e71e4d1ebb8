"""One way for tests to wait: poll a condition until it holds or a deadline passes.

Indexing runs in the background, so a test that saves docs and then asks about them has to
wait. `wait_indexed` waits for exactly the docs and bundles it is given (an id it does not
know is an error, not a pass); with no ids it waits until the server owes no work at all.
The timeouts are generous on purpose: they only bound a hang on a loaded machine, they never
measure speed (benchmarks in bench/ do that).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from typing import Any, TypeVar

import httpx
import psycopg

T = TypeVar("T")

DEFAULT_TIMEOUT = 60.0


def wait_until(check: Callable[[], T], what: str, timeout: float = DEFAULT_TIMEOUT, interval: float = 0.05) -> T:
    """Call `check` until it returns something truthy and return that; fail naming `what`."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() >= deadline:
            raise AssertionError(f"timed out after {timeout:.0f}s waiting for {what} (last: {value!r})")
        time.sleep(interval)


def _database_url(target: Any) -> str:
    """The database of the app behind a TestClient or a live server (conftest.live_server)."""
    app = getattr(target, "app", None)
    try:
        return app.state.mw.settings.database_url
    except AttributeError:
        raise TypeError(f"wait_indexed needs a TestClient or live server with an app, got {target!r}") from None


# Owed = what the worker would claim (server/indexing/indexer.py CLAIM): live and not yet embedded at
# its current source hash. A deleted doc or bundle is never indexed, so it is not owed.
OWED = {
    "doc": "SELECT id, deleted_at IS NULL AND source_hash IS DISTINCT FROM embedded_hash, index_error"
    " FROM docs WHERE id = ANY(%s)",
    "bundle": "SELECT id, deleted_at IS NULL AND source_hash IS DISTINCT FROM embedded_hash, NULL"
    " FROM bundles WHERE id = ANY(%s)",
}


def _owed(url: str, kind: str, ids: list[str]) -> list[tuple[str, str | None]]:
    """(id, last index error) of the `kind` rows among `ids` still owed; unknown ids fail at once."""
    if not ids:
        return []
    with psycopg.connect(url, autocommit=True) as conn:
        rows = conn.execute(OWED[kind], (ids,)).fetchall()
    unknown = set(ids) - {row[0] for row in rows}
    assert not unknown, f"wait_indexed: no such {kind}: {sorted(unknown)}"
    return [(row[0], row[2]) for row in rows if row[1]]


def wait_indexed(
    target: Any, doc_ids: Iterable = (), bundle_ids: Iterable = (), timeout: float = DEFAULT_TIMEOUT
) -> None:
    """Wait until these docs and bundles are indexed; with no ids, until nothing is owed.

    `target` is a Starlette TestClient or the live_server fixture; without ids it may also be
    a server's base URL."""
    doc_ids, bundle_ids = [str(i) for i in doc_ids], [str(i) for i in bundle_ids]
    if not doc_ids and not bundle_ids:

        def nothing_owed() -> bool:
            if isinstance(target, str):
                return httpx.get(f"{target}/healthz", timeout=10).json()["owed"] == 0
            if hasattr(target, "get"):
                return target.get("/healthz").json()["owed"] == 0
            return httpx.get(f"{target.url}/healthz", timeout=10).json()["owed"] == 0

        wait_until(nothing_owed, "the server to owe no indexing work", timeout)
        return
    url = _database_url(target)
    owed: list = []

    def all_indexed() -> bool:
        owed[:] = _owed(url, "doc", doc_ids) + _owed(url, "bundle", bundle_ids)
        return not owed

    try:
        wait_until(all_indexed, f"{len(doc_ids)} doc(s) and {len(bundle_ids)} bundle(s) to be indexed", timeout)
    except AssertionError as error:
        raise AssertionError(f"{error}; still owed (id, last index error): {owed}") from None


def _curated(health: dict) -> bool:
    c = health["curation"]
    indexed = health["owed"] == 0 or health["embedder"] is None  # with no embedder nothing gets indexed
    return indexed and not (c["owed_enrichments"] or c["owed_suggestions"] or c["owed_analyses"])


def wait_curated(target: Any, timeout: float = DEFAULT_TIMEOUT) -> dict:
    """Wait until the server owes nothing: indexing, enrichment, bundle analyses, suggestions
    (server/curation/). `target`: a TestClient, a live server or a base URL. Returns /healthz."""

    def health() -> dict:
        if isinstance(target, str):
            return httpx.get(f"{target}/healthz", timeout=10).json()
        if hasattr(target, "get"):
            return target.get("/healthz").json()
        return httpx.get(f"{target.url}/healthz", timeout=10).json()

    return wait_until(
        lambda: (lambda h: h if _curated(h) else None)(health()), "the server to owe no curation work", timeout
    )
