"""Helpers for the storage conformance kit: contention drivers and the compare-and-set retry loop.

Kept apart from ``conformance.py`` so the suite itself reads as a list of guarantees. Everything here
is generic over the ``Storage`` protocol and never assumes the store is empty, local or fast.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable, Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

from statehitl.checkpoint.storage import Storage
from statehitl.errors import CheckpointConflict

T = TypeVar("T")

MAX_CAS_ATTEMPTS = 10_000
"""A CAS loop that has not won after this many tries is stuck (a backend that never lets one win)."""


async def cas_increment(storage: Storage, key: str, *, pause: float | None = None) -> int:
    """Add one to the decimal counter at ``key`` with read / write(expect=token) / retry on conflict.

    Returns how many conflicts were retried. ``pause`` sleeps between the read and the write so even a
    store whose calls never block (memory) sees interleaved writers and has to resolve real conflicts:
    ``0`` lets other tasks on the loop run, a few hundred microseconds lets other threads run.
    """
    for attempt in range(MAX_CAS_ATTEMPTS):
        found = await storage.read(key)
        if found is None:
            raise AssertionError(f"counter key {key!r} vanished during the CAS loop")
        value, token = found
        if pause is not None:
            await asyncio.sleep(pause)
        try:
            await storage.write(key, str(int(value) + 1).encode(), expect=token)
        except CheckpointConflict:
            await asyncio.sleep(0)
            continue
        return attempt
    raise AssertionError(f"no CAS write on {key!r} succeeded in {MAX_CAS_ATTEMPTS} attempts")


async def race_tasks(count: int, make: Callable[[int], Awaitable[T]], *, timeout: float) -> list[T | BaseException]:
    """Start ``count`` tasks that all wait on one event, release them together, collect outcomes.

    The shared start line maximises overlap; outcomes (result or exception) come back in task order
    so a test can count winners and losers.
    """
    start = asyncio.Event()

    async def contender(i: int) -> T:
        await start.wait()
        return await make(i)

    tasks = [asyncio.ensure_future(contender(i)) for i in range(count)]
    await asyncio.sleep(0)
    start.set()
    async with asyncio.timeout(timeout):
        return await asyncio.gather(*tasks, return_exceptions=True)


def in_threads(count: int, work: Callable[[int], T], *, timeout: float) -> list[T | BaseException]:
    """Run ``work(i)`` on ``count`` OS threads released together by a barrier; collect outcomes.

    This catches what asyncio tasks cannot: a backend whose safety relies on the single event-loop
    thread (an unlocked check-then-set) rather than on the store's own compare-and-set.
    """
    barrier = threading.Barrier(count)

    def contender(i: int) -> T:
        barrier.wait(timeout)
        return work(i)

    outcomes: list[T | BaseException] = []
    with ThreadPoolExecutor(max_workers=count, thread_name_prefix="conformance") as pool:
        futures = [pool.submit(contender, i) for i in range(count)]
        for future in futures:
            error = future.exception(timeout)
            outcomes.append(error if error is not None else future.result())
    return outcomes


async def gather_bounded(awaitables: Iterable[Awaitable[T]], *, limit: int = 32) -> list[T]:
    """Await many operations with at most ``limit`` in flight (bulk setup on a remote store)."""
    semaphore = asyncio.Semaphore(limit)

    async def one(awaitable: Awaitable[T]) -> T:
        async with semaphore:
            return await awaitable

    return await asyncio.gather(*(one(a) for a in awaitables))
