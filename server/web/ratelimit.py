"""Per-client rate limits: wrong passwords, refused tokens, POST /api/embed/*, and sign-in link
requests (per client and per address asked for, so one address cannot be flooded with mail
from many clients).

Budgets come from Settings ("10/minute" in the `limits` notation) and are counted per client
address (behind a proxy, uvicorn's --proxy-headers makes that the forwarded address) in a
moving window, in this process's memory: N server processes give a client N budgets.

Passwords and tokens count only failures, so a client that keeps using the right credential
is never slowed; once a client has spent its failures, every further attempt is refused
*before* it is checked (a guess cannot be tested, and an argon2 hash costs nothing) until
the window frees up. Explicit re-embedding counts every request: each one costs embedder calls.
A refusal raises RateLimited, which the error model answers as 429 `rate_limited` with
Retry-After (server/errors.py); the request changes nothing.
"""

from __future__ import annotations

import math
import time

from limits import RateLimitItem, parse
from limits.storage import MemoryStorage
from limits.strategies import MovingWindowRateLimiter
from starlette.requests import Request

from ..config import Settings

WHAT = {
    "password": "wrong passwords",
    "token": "refused tokens",
    "embed": "re-index requests",
    "link_client": "sign-in link requests",
    "link_address": "sign-in link requests for this address",
    "invite": "sign-in mails to people pages were shared with",
}


class RateLimited(Exception):
    """Over a budget: `retry_after` seconds until the window has room again."""

    def __init__(self, message: str, retry_after: int):
        super().__init__(message)
        self.message = message
        self.retry_after = retry_after


def client_key(request: Request) -> str:
    """The key a request's client is counted under: its address."""
    return request.client.host if request.client else "unknown"


class RateLimits:
    def __init__(self, settings: Settings):
        self._limiter = MovingWindowRateLimiter(MemoryStorage())
        self._items: dict[str, RateLimitItem] = {
            "password": parse(settings.rate_password),
            "token": parse(settings.rate_token_failures),
            "embed": parse(settings.rate_embed),
            "link_client": parse(settings.rate_link_client),
            "link_address": parse(settings.rate_link_address),
            "invite": parse(settings.rate_invite),
        }

    def _refusal(self, kind: str, key: str) -> RateLimited:
        item = self._items[kind]
        reset, _ = self._limiter.get_window_stats(item, kind, key)
        retry_after = max(1, math.ceil(reset - time.time()))
        return RateLimited(
            f"too many {WHAT[kind]}{'' if kind == 'link_address' else ' from this client'} (limit {item.amount} per {item.multiples} "
            f"{item.GRANULARITY.name}); try again in {retry_after} s",
            retry_after,
        )

    def check(self, client: str, kind: str) -> None:
        """Before an attempt: 429 when this client has no budget left (counts nothing)."""
        if not self._limiter.test(self._items[kind], kind, client):
            raise self._refusal(kind, client)

    def failed(self, client: str, kind: str) -> None:
        """After a failed attempt: spend one from the budget."""
        self._limiter.hit(self._items[kind], kind, client)

    def allow(self, client: str, kind: str) -> bool:
        """Spend one from the budget if it has room; whether it had (never raises)."""
        return self._limiter.hit(self._items[kind], kind, client)

    def spend(self, client: str, kind: str) -> None:
        """Count this request; 429 when it is one over the budget."""
        if not self._limiter.hit(self._items[kind], kind, client):
            raise self._refusal(kind, client)
