"""Sync iteration over async iterators (``app.stream()``), outside and inside a running loop."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator, Callable, Coroutine
from typing import Any

from statehitl._sync import iterate_sync, run_sync


def counting(produced: list[int], closed: threading.Event) -> AsyncIterator[int]:
    async def events() -> AsyncIterator[int]:
        try:
            for i in range(5):
                produced.append(i)
                yield i
        finally:
            closed.set()

    return events()


def first_item_then_stop() -> tuple[list[int], list[int], bool]:
    produced: list[int] = []
    closed = threading.Event()
    taken = []
    for item in iterate_sync(counting(produced, closed)):
        taken.append(item)
        break
    return taken, produced, closed.wait(5)


def test_stopping_early_stops_the_source_outside_a_loop() -> None:
    assert first_item_then_stop() == ([0], [0], True)


def test_stopping_early_stops_the_source_inside_a_running_loop() -> None:
    async def main() -> tuple[list[int], list[int], bool]:
        return first_item_then_stop()

    assert asyncio.run(main()) == ([0], [0], True)


def test_every_item_arrives_inside_a_running_loop() -> None:
    async def main() -> list[int]:
        return list(iterate_sync(counting([], threading.Event())))

    assert asyncio.run(main()) == [0, 1, 2, 3, 4]


def test_half_read_iterators_kept_in_a_notebook_never_block_a_later_sync_call() -> None:
    """Each iterator inside a running loop holds a thread until it goes; a later sync call made inside the
    loop gets a thread of its own however many are held (with a pool of four, the fifth waited forever)."""

    async def answer() -> int:
        return 42

    async def main() -> tuple[int, list[int]]:
        kept = [iterate_sync(counting([], threading.Event())) for _ in range(4)]
        firsts = [next(iterator) for iterator in kept]  # a cell looked at the first item and kept the rest
        outcome: list[int] = []
        caller = threading.Thread(target=lambda: outcome.append(run_sync_inside(answer)), daemon=True)
        caller.start()
        caller.join(10)
        answered = outcome[0] if outcome else -1  # before the kept iterators go and free what they hold
        for iterator in kept:
            iterator.close()  # type: ignore[attr-defined]
        return answered, firsts

    assert asyncio.run(main()) == (42, [0] * 4)


def run_sync_inside(make: Callable[[], Coroutine[Any, Any, int]]) -> int:
    """``run_sync`` as a sync function called in a running loop makes it: from that loop's thread."""

    async def inside() -> int:
        return run_sync(make())

    return asyncio.run(inside())
