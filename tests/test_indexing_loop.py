"""Two loops of owed work in one process: the one that yields starts no round while the other has work in hand."""

from __future__ import annotations

import asyncio

from memorywiki.server.indexing.loop import OwedWork


class Rounds(OwedWork):
    """Claims `work[i]` items in its i-th round (then none), writing each round into `log`."""

    def __init__(self, name: str, work: list[int], log: list[tuple[str, int]]) -> None:
        super().__init__(None, idle_seconds=0.01)  # no database: the rounds are scripted
        self.name, self.work, self.log_ = name, list(work), log

    async def run_once(self) -> int:
        claimed = self.work.pop(0) if self.work else 0
        self.log_.append((self.name, claimed))
        await asyncio.sleep(0.01)  # the round's work: the other loop may run meanwhile
        return claimed


def test_the_curator_starts_no_round_while_the_indexer_has_work_in_hand():
    log: list[tuple[str, int]] = []
    indexer = Rounds("indexer", [2, 2, 2, 2], log)
    curator = Rounds("curator", [1] * 100, log)
    curator.yields_to = indexer

    async def both() -> None:
        runs = [asyncio.ensure_future(indexer.run()), asyncio.ensure_future(curator.run())]
        while sum(1 for name, n in log if name == "curator" and n) < 5:
            await asyncio.sleep(0.01)
        indexer.stop()
        curator.stop()
        await asyncio.gather(*runs)

    asyncio.run(both())
    busy_from = log.index(("indexer", 2))
    idle_at = log.index(("indexer", 0))
    during = [entry for entry in log[busy_from + 1 : idle_at] if entry[0] == "curator"]
    # at most the round it had started before the indexer found work
    assert len(during) <= 1, log
    assert [n for name, n in log if name == "indexer"][:5] == [2, 2, 2, 2, 0]
    assert sum(1 for name, n in log[idle_at:] if name == "curator") >= 4  # it goes on once the indexer is idle
