"""The owed-work loop the indexer and the curator share: back-off on outages, idle waits, stop."""

from __future__ import annotations

import asyncio
import itertools
import logging
import time

import psycopg
from memorywiki.server.indexing.loop import OwedWork


class Scripted(OwedWork):
    """A loop whose rounds play a script: an exception to raise or a count of items claimed."""

    job = "scripted"

    def __init__(self, script: list, **kw) -> None:
        super().__init__(None, **kw)  # type: ignore[arg-type]  # its rounds never touch a database
        self.script = list(script)
        self.rounds: list[float] = []

    async def run_once(self) -> int:
        self.rounds.append(time.monotonic())
        step = self.script.pop(0) if self.script else 0
        if isinstance(step, Exception):
            raise step
        return step


async def test_outages_back_off_doubling_and_a_wake_up_does_not_cut_the_wait(caplog):
    down = psycopg.OperationalError("connection refused")
    loop = Scripted([down, down, down, 1], idle_seconds=5.0, retry_seconds=0.1, max_backoff=0.25)
    caplog.set_level(logging.INFO, logger="memorywiki.worker")
    task = asyncio.create_task(loop.run())
    while len(loop.rounds) < 2:
        loop.wake.set()  # saves keep waking it: the back-off holds
        await asyncio.sleep(0.01)
    while len(loop.rounds) < 5:
        await asyncio.sleep(0.01)
    gaps = [b - a for a, b in itertools.pairwise(loop.rounds)]
    assert gaps[0] >= 0.09 and gaps[1] >= 0.19 and 0.24 <= gaps[2] < 0.39  # 0.1, 0.2, then the cap (not 0.4)
    assert loop.failures == 0 and loop.backoff() == 0.0  # the round that did work ended the outage
    loop.stop()
    await asyncio.wait_for(task, 1)
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 2  # the 1st and 2nd failure in a row; the 3rd is not logged
    assert warnings[0] == (
        "database unavailable (failed try 1 in a row), work stays owed; next try in 0 s: connection refused"
    )
    assert any(r.getMessage() == "scripted resumed after 3 failed tries" for r in caplog.records)


async def test_an_idle_loop_wakes_at_once_and_stops_at_once():
    loop = Scripted([], idle_seconds=30.0, retry_seconds=30.0, max_backoff=30.0)
    task = asyncio.create_task(loop.run())
    await asyncio.sleep(0.05)
    assert len(loop.rounds) == 1  # nothing owed: it waits
    loop.wake.set()
    await asyncio.sleep(0.05)
    assert len(loop.rounds) == 2  # woken: another round at once
    loop.script = [psycopg.OperationalError("down")]
    loop.wake.set()
    await asyncio.sleep(0.05)
    assert loop.failures == 1  # now in a back-off of 30 s
    started = time.monotonic()
    loop.stop()
    await asyncio.wait_for(task, 1)
    assert time.monotonic() - started < 0.5


async def test_a_failed_round_is_logged_and_retried_and_the_lease_is_the_next_wait():
    loop = Scripted([RuntimeError("bug"), 2, 0], idle_seconds=30.0, retry_seconds=0.05, max_backoff=1.0)
    assert (loop.lease(), loop.backoff(3), loop.backoff(6)) == (0.05, 0.2, 1.0)
    task = asyncio.create_task(loop.run())
    while len(loop.rounds) < 3:
        await asyncio.sleep(0.01)
    assert loop.failures == 0  # a bug is not an outage: no back-off grows
    loop.stop()
    await asyncio.wait_for(task, 1)
