"""The outbox drainer: a background task of the server that delivers queued mails.

A request never waits for SMTP: it queues the mail (a row of mail_outbox) and wakes this
task. A failed delivery is tried again after a back-off that doubles (MEMORYWIKI_MAIL_RETRY,
at most MEMORYWIKI_MAIL_RETRIES tries), then given up; a 5xx refusal is given up at once; /healthz shows the counts and the last
error, never an address or a link.
"""

from __future__ import annotations

import asyncio
import logging

import aiosmtplib

from ..config import Settings
from ..store import outbox
from ..store.db import Database
from .smtp import SmtpSender, permanent, safe_error

log = logging.getLogger("memorywiki.mail")

BATCH = 20
POLL_SECONDS = 30.0  # a mail queued by another server on this database waits at most this long
LEASE_SECONDS = 120.0
MAX_BACKOFF = 3600.0


class Outbox:
    def __init__(self, settings: Settings, db: Database, sender: SmtpSender):
        self.db = db
        self.sender = sender
        self.retries = settings.mail_retries
        self.first_wait = settings.mail_retry_seconds
        self.wake = asyncio.Event()
        self._stop = False

    def backoff(self, attempts: int) -> float | None:
        """Seconds until the next try after `attempts` failed ones, or None to give up."""
        if attempts >= self.retries:
            return None
        return float(min(MAX_BACKOFF, self.first_wait * 2 ** (attempts - 1)))

    async def deliver_due(self) -> int:
        """Try every mail that is due once; how many were delivered."""
        async with self.db.owner.connection() as conn:
            mails = await outbox.take_due(conn, BATCH, LEASE_SECONDS)
        delivered = 0
        for mail in mails:
            try:
                await self.sender.send(mail["recipient"], mail["subject"], mail["body"])
            except (aiosmtplib.SMTPException, OSError, TimeoutError, ValueError) as exc:
                error = safe_error(exc)
                retry_in = None if permanent(exc) else self.backoff(mail["attempts"] + 1)
                log.warning(
                    "mail %s not delivered (%s); %s",
                    mail["id"],
                    error,
                    f"next try in {retry_in:g} s" if retry_in is not None else "given up",
                )
                async with self.db.owner.connection() as conn:
                    await outbox.failed(conn, mail["id"], error, retry_in=retry_in)
                continue
            async with self.db.owner.connection() as conn:
                await outbox.sent(conn, mail["id"])
            delivered += 1
        return delivered

    async def run(self) -> None:
        while not self._stop:
            try:
                await self.deliver_due()
            except Exception as exc:  # the database is down: try again after the poll
                log.warning("the outbox could not be read (%s)", type(exc).__name__)
            self.wake.clear()
            try:
                await asyncio.wait_for(self.wake.wait(), timeout=self._next_wait())
            except TimeoutError:
                pass

    def _next_wait(self) -> float:
        # often enough that a retry goes out about when it is due
        return min(POLL_SECONDS, max(0.05, self.first_wait))

    def stop(self) -> None:
        self._stop = True
        self.wake.set()
