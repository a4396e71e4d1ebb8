"""Where a request's time went, as a `Server-Timing` header (W3C Server Timing). A use case
measures its phases; the route puts them in the header.

Browsers' developer tools show it next to the request, and a client (the bench, curl -i)
reads it, so a slow recall says by itself whether it waited on the database, on the model or
on neither: what is left of the client's latency is HTTP and Python.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager


class Phases:
    """Milliseconds spent in named phases of one request, and the whole since it was made."""

    def __init__(self) -> None:
        self._start = time.perf_counter()
        self._spans: dict[str, tuple[float, str]] = {}

    @contextmanager
    def span(self, name: str, description: str) -> Iterator[None]:
        """Adds the time of the block to phase `name` (a token: letters, digits, "_" or "-");
        `description` is shown beside it (no commas or quotes: clients split the header on commas)."""
        started = time.perf_counter()
        try:
            yield
        finally:
            spent, _ = self._spans.get(name, (0.0, description))
            self._spans[name] = (spent + (time.perf_counter() - started) * 1000, description)

    def header(self, total: str = "app", description: str = "the request in the application") -> str:
        """The header's value: each phase, then `total` up to now."""
        spans = [*self._spans.items(), (total, ((time.perf_counter() - self._start) * 1000, description))]
        return ", ".join(f'{name};dur={spent:.2f};desc="{text}"' for name, (spent, text) in spans)
