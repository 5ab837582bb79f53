"""Run observers: a zero-cost-when-unused tap on every transition, for the test recorder and telemetry.

Observers are process-global because the thing that wants to watch (a pytest fixture, a tracer) is
usually not the code that builds the graph. The runner checks ``observers`` once per event; an empty
list costs a truth test.
"""

from __future__ import annotations

from typing import Any, Protocol

__all__ = ["RunObserver", "emit", "observers"]


class RunObserver(Protocol):
    """Receives ``(kind, fields)`` for each transition: node enter/exit, hooks, interrupts, commits."""

    def on_event(self, kind: str, fields: dict[str, Any]) -> None: ...


observers: list[RunObserver] = []


def emit(kind: str, **fields: Any) -> None:
    """Send one transition to every observer."""
    for observer in observers:
        observer.on_event(kind, fields)
