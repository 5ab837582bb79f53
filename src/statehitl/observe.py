"""Run observers: a zero-cost-when-unused tap on every transition, for the test recorder and telemetry.

Observers are process-global because the thing that wants to watch (a pytest fixture, a tracer) is
usually not the code that builds the graph. The runner checks ``observers`` once per event; an empty
list costs a truth test.

Nodes of one step run concurrently and finish in whatever order the scheduler picks; the runner holds
each one's transitions and releases them in node order when the step's nodes are done, so observers
(and the recorder's snapshots) see the same sequence on every run.
"""

from __future__ import annotations

from contextvars import ContextVar
from typing import Any, Protocol

__all__ = ["RunObserver", "emit", "hold", "observers", "release"]

Transition = tuple[str, dict[str, Any]]


class RunObserver(Protocol):
    """Receives ``(kind, fields)`` for each transition: node enter/exit, hooks, interrupts, commits."""

    def on_event(self, kind: str, fields: dict[str, Any]) -> None: ...


observers: list[RunObserver] = []


_held: ContextVar[list[Transition] | None] = ContextVar("statehitl_held_transitions", default=None)


def emit(kind: str, **fields: Any) -> None:
    """Send one transition to every observer (or keep it in the list ``hold`` set for this context)."""
    held = _held.get()
    if held is not None:
        held.append((kind, fields))
        return
    for observer in observers:
        observer.on_event(kind, fields)


def hold(into: list[Transition]) -> None:
    """Collect the transitions emitted in the current context (an asyncio task) in ``into``."""
    _held.set(into)


def release(held: list[Transition]) -> None:
    """Send transitions collected by ``hold``, in the order they were emitted."""
    for kind, fields in held:
        emit(kind, **fields)
