"""Run status shared by StateGraph, Graph and Swarm results (Strands' ``Status`` values).

Strands' ``Status`` is a plain ``Enum``, so a Strands program that prints ``result.status`` sees
``Status.INTERRUPTED``; ours prints the same (``str``, ``format`` and f-strings, and ``repr`` as
``<Status.INTERRUPTED: 'interrupted'>``). It stays a ``str`` underneath, equal to its value, so code
that compares a status with ``"interrupted"``, or stores it as JSON, keeps working; ``.value`` is the
bare word.
"""

from __future__ import annotations

from enum import StrEnum

__all__ = ["Status"]


class Status(StrEnum):
    """Where a run stands. ``INTERRUPTED`` means a human's answer is needed to go on."""

    PENDING = "pending"
    DISPATCHED = "dispatched"
    """Strands' name for a node scheduled and not yet running. statehitl never reports it (a node goes from
    pending to executing in one step of the runner); it is here so Strands code that names it runs."""
    EXECUTING = "executing"
    COMPLETED = "completed"
    FAILED = "failed"
    INTERRUPTED = "interrupted"

    def __str__(self) -> str:
        return f"{type(self).__name__}.{self.name}"

    def __format__(self, format_spec: str) -> str:
        return format(str(self), format_spec)
