"""Per-client rate limits: wrong passwords, refused tokens, POST /api/embed/*, and sign-in link
requests (per client, and per address asked for from that client: a stranger's requests never
spend a reader's own budget; server/services/sharing.py).

Budgets come from Settings ("10/minute" in the `limits` notation) and are counted per client
address (behind a proxy, the forwarded address the trusted proxies give) in a moving window
kept in the database (store/ratelimits.py), so N servers on one database give a client one
budget, and two servers racing on its last unit let one attempt through, not two. The
statements run on the database's side pool, apart from the request's own transaction, so a
failure counted is kept when the request's work is rolled back.

Passwords and tokens count only failures, so a client that keeps using the right credential
is never slowed; once a client has spent its failures, every further attempt is refused
*before* it is checked (a guess cannot be tested, and an argon2 hash costs nothing) until
the window frees up. Explicit re-embedding counts every request: each one costs embedder calls.
A refusal raises RateLimited, which the error model answers as 429 `rate_limited` with
Retry-After (server/web/errors.py); the request changes nothing.
"""

from __future__ import annotations

import math

from limits import RateLimitItem, parse
from starlette.requests import Request

from ..config import Settings
from ..store import ratelimits
from ..store.db import Database

PRUNE_EVERY = 500  # attempts counted between two sweeps of the rows every window has left

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
    def __init__(self, settings: Settings, db: Database):
        self._db = db
        self._hits = 0
        self._items: dict[str, RateLimitItem] = {
            "password": parse(settings.rate_password),
            "token": parse(settings.rate_token_failures),
            "embed": parse(settings.rate_embed),
            "link_client": parse(settings.rate_link_client),
            "link_address": parse(settings.rate_link_address),
            "invite": parse(settings.rate_invite),
        }

    @property
    def longest_window(self) -> float:
        return float(max(item.get_expiry() for item in self._items.values()))

    def _refusal(self, kind: str, frees_in: float) -> RateLimited:
        item = self._items[kind]
        retry_after = max(1, math.ceil(frees_in))
        return RateLimited(
            f"too many {WHAT[kind]} from this client (limit {item.amount} per {item.multiples} "
            f"{item.GRANULARITY.name}); try again in {retry_after} s",
            retry_after,
        )

    async def _hit(self, client: str, kind: str) -> tuple[bool, float]:
        item = self._items[kind]
        self._hits += 1
        async with self._db.side.connection() as conn:
            if self._hits % PRUNE_EVERY == 0:  # keys never hit again keep their rows only this long
                await ratelimits.prune(conn, self.longest_window)
            async with conn.transaction():
                return await ratelimits.hit(conn, kind, client, float(item.get_expiry()), item.amount)

    async def check(self, client: str, kind: str) -> None:
        """Before an attempt: 429 when this client has no budget left (counts nothing)."""
        item = self._items[kind]
        async with self._db.side.connection() as conn:
            used, frees_in = await ratelimits.used(conn, kind, client, float(item.get_expiry()))
        if used >= item.amount:
            raise self._refusal(kind, frees_in)

    async def failed(self, client: str, kind: str) -> None:
        """After a failed attempt: spend one from the budget."""
        await self._hit(client, kind)

    async def allow(self, client: str, kind: str) -> bool:
        """Spend one from the budget if it has room; whether it had (never raises)."""
        ok, _ = await self._hit(client, kind)
        return ok

    async def spend(self, client: str, kind: str) -> None:
        """Count this request; 429 when it is one over the budget."""
        ok, frees_in = await self._hit(client, kind)
        if not ok:
            raise self._refusal(kind, frees_in)
