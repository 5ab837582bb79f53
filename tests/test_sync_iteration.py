"""Sync iteration over async iterators (``app.stream()``), outside and inside a running loop."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator

from statehitl._sync import iterate_sync


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
