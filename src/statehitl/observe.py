"""Run observers: a zero-cost-when-unused tap on every transition, for the test recorder and telemetry.

Observers are process-global because the thing that wants to watch (a pytest fixture, a tracer) is
usually not the code that builds the graph. The runner checks ``observers`` once per event; an empty
list costs a truth test.

Nodes of one step (and tools of one batch) run concurrently and finish in whatever order the
scheduler picks; ``gather_in_order`` holds each one's transitions and releases them in their given
order when all are done, so observers (and the recorder's snapshots) see the same sequence on every run.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from contextvars import ContextVar
from typing import Protocol, TypeVar

from statehitl.transitions import Transition

__all__ = ["RunObserver", "emit", "gather_in_order", "hold", "observers", "release"]

Item = TypeVar("Item")
T = TypeVar("T")


class RunObserver(Protocol):
    """Receives each transition (``statehitl.transitions``): node enter/exit, hooks, interrupts, commits."""

    def on_event(self, transition: Transition) -> None: ...


observers: list[RunObserver] = []


_held: ContextVar[list[Transition] | None] = ContextVar("statehitl_held_transitions", default=None)


def emit(transition: Transition) -> None:
    """Send one transition to every observer (or keep it in the list ``hold`` set for this context)."""
    held = _held.get()
    if held is not None:
        held.append(transition)
        return
    for observer in observers:
        observer.on_event(transition)


def hold(into: list[Transition]) -> None:
    """Collect the transitions emitted in the current context (an asyncio task) in ``into``."""
    _held.set(into)


def release(held: list[Transition]) -> None:
    """Send transitions collected by ``hold``, in the order they were emitted."""
    for transition in held:
        emit(transition)


async def gather_in_order(items: Sequence[Item], call: Callable[[Item, bool], Awaitable[T]]) -> list[T]:
    """``call(item, alone)`` for every item at once; the results, and the transitions, in ``items`` order.

    A lone item runs inline (``alone=True``: it may use the loop's thread), without a task or a hold.
    Every call runs to its end even when another fails, so none loses its work; the first failure in
    ``items`` order is then raised.
    """
    if len(items) <= 1:
        return [await call(item, True) for item in items]
    held: list[list[Transition]] = [[] for _ in items]

    async def one(item: Item, into: list[Transition]) -> T:
        if observers:
            hold(into)  # each call runs as its own task: the hold ends with it
        return await call(item, False)

    outcomes = await asyncio.gather(*(one(i, h) for i, h in zip(items, held, strict=True)), return_exceptions=True)
    for transitions in held:
        release(transitions)
    results: list[T] = []
    for outcome in outcomes:
        if isinstance(outcome, BaseException):
            raise outcome
        results.append(outcome)
    return results
