"""A console observer: each transition of a run printed as it happens, for any machine.

Attach it around anything that runs (``with TransitionPrinter(Console.detect()).attached(): ...``):
it is a ``statehitl.observe`` observer, so it needs nothing from the machine it watches. The demo
uses it; so can a user watching their own graph or agent in a terminal.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from statehitl import observe
from statehitl.cli._console import Console, compact_json
from statehitl.transitions import (
    CheckpointWritten,
    ClaimTaken,
    HookFired,
    InterruptAnswered,
    InterruptRaisedTransition,
    NodeCancelled,
    NodeEntered,
    StepApplied,
    ToolFinished,
    Transition,
)

__all__ = ["TransitionPrinter"]


class TransitionPrinter:
    """A ``statehitl.observe`` observer that prints each transition as it happens.

    Subclasses change how a written value reads (``write_lines``); the agent demo summarizes messages
    instead of dumping them.
    """

    def __init__(self, console: Console, reducers: frozenset[str] = frozenset()) -> None:
        self.console = console
        self.reducers = reducers
        self.pad = " " * 10

    @contextlib.contextmanager
    def attached(self) -> Iterator[TransitionPrinter]:
        observe.observers.append(self)
        try:
            yield self
        finally:
            if self in observe.observers:
                observe.observers.remove(self)

    def write_lines(self, name: str, value: Any) -> list[str]:
        """How ``name = value`` (or ``+=`` for a reducer channel) reads in a step's writes."""
        op = "+=" if name in self.reducers else "="
        return [f"{name} {op} {compact_json(value)}"]

    def _write_lines(self, writes: dict[str, dict[str, Any]]) -> list[str]:
        lines: list[str] = []
        for node, update in writes.items():
            who = f"{node}: " if len(writes) > 1 else ""
            for name, value in update.items():
                lines.extend(f"{who}{line}" for line in self.write_lines(name, value))
        return lines

    def on_event(self, t: Transition) -> None:
        c, pad = self.console, self.pad
        match t:
            case NodeEntered():
                step = f"step {t.step}".ljust(8)
                c.print(f"  {c.style(step, 'dim')}{c.g('enter')} {c.style(t.node, 'bold')}")
            case NodeCancelled():
                c.print(f"{pad}{c.style(c.g('cancel') + ' cancelled ' + t.node, 'red')}: {t.message}")
            case StepApplied():
                for line in self._write_lines(t.writes):
                    c.print(f"{pad}{line}")
                nxt = ", ".join(t.next) or "END"
                c.print(f"{pad}{c.style(c.g('arrow') + ' ' + nxt, 'cyan')}")
            case HookFired():  # only fired when a hook is registered: the graph demo has none
                note = f": interrupt {', '.join(repr(n) for n in t.interrupts)}" if t.interrupts else ""
                c.print(f"{pad}{c.style('hook ' + t.event + note, 'dim')}")
            case ToolFinished():  # agents only
                style = "green" if t.outcome == "success" else "red"
                c.print(f"{pad}tool {c.style(t.name, 'bold')}: {c.style(t.outcome, style)}")
            case InterruptRaisedTransition():
                head = f"{c.g('pause')} interrupt {t.name!r} from {t.source} {t.node}"
                c.print(f"{pad}{c.style(head, 'yellow', 'bold')}")
                c.print(f"{pad}  reason: {compact_json(t.reason)}")
            case InterruptAnswered():
                answer = f"{c.g('answer')} answer to {t.name!r} at {t.node}: {compact_json(t.response)}"
                c.print(f"  {c.style(answer, 'green')}")
            case CheckpointWritten():
                note = f"{c.g('dot')} checkpoint {t.seq} saved ({t.status})"
                c.print(f"{pad}{c.style(note, 'dim')}")
            case ClaimTaken():
                note = (f"{c.g('dot')} claim {t.seq} taken: this process alone resumes checkpoint {t.parent} "
                        "(a claim took the number)")
                c.print(f"{pad}{c.style(note, 'dim')}")
