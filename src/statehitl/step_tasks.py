"""A step's tasks run at once, stopped together: LangGraph's rule that a task that fails stops its step.

``run_tasks`` starts every task of a step, and as soon as one fails it cancels those still running and
waits for them to settle (a sync node in a worker thread is waited for to its end, as it cannot be
stopped), unless ``cancel_rest()`` says no (a run acting on answers: a task cut short may have acted,
and would run again on the retry, so its siblings finish first). Cancelled from outside (a stream closed
early), it does the same before it is cancelled itself: no task of a step outlives the step unseen. As
``observe.gather_in_order`` does, each task's transitions are held and released in the tasks' order, so
observers see the same sequence every run.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, TypeVar

from statehitl import observe
from statehitl.transitions import Transition

Item = TypeVar("Item")
T = TypeVar("T")

CANCELLED: Any = object()
"""What ``run_tasks`` gives for a task cancelled because another one failed."""


async def run_tasks(items: Sequence[Item], call: Callable[[Item, bool], Awaitable[T]], *,
                    failed: Callable[[T], bool], cancel_rest: Callable[[], bool]) -> list[T]:
    """``call(item, alone)`` for every item at once; the results in ``items`` order. Once a result is
    ``failed`` (and ``cancel_rest()``), the calls still running are cancelled (their result is
    ``CANCELLED``). A lone item runs inline (``alone=True``), without a task."""
    if len(items) <= 1:
        return [await call(item, True) for item in items]
    held: list[list[Transition]] = [[] for _ in items]

    async def one(item: Item, into: list[Transition]) -> T:
        if observe.observers:
            observe.hold(into)  # each call runs as its own task: the hold ends with it
        return await call(item, False)

    tasks = [asyncio.ensure_future(one(i, h)) for i, h in zip(items, held, strict=True)]
    try:
        await _until_all_or_a_failure(tasks, failed, cancel_rest)
    finally:
        for task in tasks:
            if not task.done():
                task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)  # every task settles before the step ends
        for transitions in held:
            observe.release(transitions)
    return [CANCELLED if task.cancelled() else _result(task) for task in tasks]


async def _until_all_or_a_failure(tasks: Sequence[asyncio.Future[T]], failed: Callable[[T], bool],
                                  cancel_rest: Callable[[], bool]) -> None:
    pending = set(tasks)
    while pending:
        done, pending = await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
        for task in done:
            if (task.cancelled() or task.exception() is not None or failed(task.result())) and cancel_rest():
                return


def _result(task: asyncio.Future[T]) -> T:
    error = task.exception()
    if error is not None:
        raise error
    return task.result()
