"""The kit's tests of concurrent writers, as asyncio tasks and as OS threads: compare-and-set alone resolves
them."""

from __future__ import annotations

from statehitl.checkpoint.storage import ABSENT, Storage
from statehitl.errors import CheckpointConflict
from statehitl.testing._storage_support import cas_increment, in_threads, race_tasks
from statehitl.testing.conformance_base import ConformanceBase


class ConcurrencyContract(ConformanceBase):
    """One create-once winner, and no lost compare-and-set increment, however the writers race."""

    # -- concurrency ----------------------------------------------------------------------------

    def _check_one_winner(self, storage: Storage, key: str, outcomes: list[str | BaseException]) -> None:
        winners = [i for i, outcome in enumerate(outcomes) if isinstance(outcome, str)]
        others = [o for o in outcomes if not isinstance(o, str | CheckpointConflict)]
        assert not others, f"writers failed with something other than CheckpointConflict: {others[:3]!r}"
        assert len(winners) == 1, f"{len(winners)} create-once writers won, expected exactly one"
        (winner,) = winners
        assert self.run(storage.read(key)) == (f"writer-{winner}".encode(), outcomes[winner])

    def test_concurrent_create_once_tasks_one_winner(self, storage: Storage, prefix: str) -> None:
        key = f"{prefix}contended"

        async def scenario() -> list[str | BaseException]:
            return await race_tasks(
                self.concurrency,
                lambda i: storage.write(key, f"writer-{i}".encode(), expect=ABSENT),
                timeout=self.timeout,
            )

        self._check_one_winner(storage, key, self.run(scenario()))

    def test_concurrent_create_once_threads_one_winner(self, storage: Storage, prefix: str) -> None:
        key = f"{prefix}contended"
        outcomes = in_threads(
            self.concurrency,
            lambda i: self.run(storage.write(key, f"writer-{i}".encode(), expect=ABSENT)),
            timeout=self.timeout,
        )
        self._check_one_winner(storage, key, outcomes)

    def test_concurrent_cas_increments_tasks_lose_nothing(self, storage: Storage, prefix: str) -> None:
        key = f"{prefix}counter"

        async def writer(_: int) -> None:
            for _step in range(self.increments_per_writer):
                await cas_increment(storage, key, pause=0)

        async def scenario() -> bytes | None:
            await storage.write(key, b"0", expect=ABSENT)
            outcomes = await race_tasks(self.concurrency, writer, timeout=self.timeout)
            failures = [o for o in outcomes if isinstance(o, BaseException)]
            assert not failures, f"CAS writers failed: {failures[:3]!r}"
            found = await storage.read(key)
            return None if found is None else found[0]

        expected = self.concurrency * self.increments_per_writer
        assert self.run(scenario()) == str(expected).encode(), "an increment was lost"

    def test_concurrent_cas_increments_threads_lose_nothing(self, storage: Storage, prefix: str) -> None:
        key = f"{prefix}counter"

        async def increments() -> None:
            for _step in range(self.increments_per_writer):
                await cas_increment(storage, key, pause=0.0002)

        self.run(storage.write(key, b"0", expect=ABSENT))
        outcomes = in_threads(self.concurrency, lambda _: self.run(increments()), timeout=self.timeout)
        failures = [o for o in outcomes if isinstance(o, BaseException)]
        assert not failures, f"CAS writers failed: {failures[:3]!r}"
        found = self.run(storage.read(key))
        expected = self.concurrency * self.increments_per_writer
        assert found is not None
        assert found[0] == str(expected).encode(), f"an increment was lost: {found[0]!r} != {expected}"
