"""The transition recorder: a stable, snapshot-testable log of everything a run did.

Each line is one transition in words, with ids replaced by stable names, so ``assert recorder.log ==
snapshot`` (syrupy) pins a machine's behaviour: node entries and exits, hook events, interrupts raised
and answered, state updates, checkpoints. Interrupt ids and tool-use ids (which a real model or a
direct tool call makes up afresh on every run) read ``<id1>``, ``<id2>``..., in order of appearance,
wherever they occur: a tool line, or a ``toolUseId`` inside the messages a step wrote. Measured
durations in what a step wrote (a node result's ``execution_time``) read ``<time>``.

Values read as JSON wherever they appear (names, node lists, reasons, answers: double quotes), so a line
never mixes Python's quotes with JSON's; an interrupt's name is quoted, which keeps LangGraph's default
name apart from the word that starts the line (``interrupt "interrupt" <id1> ...``). A resume's claim has
a line of its own, as it takes a checkpoint number: the checkpoints after it skip that number.
"""

from __future__ import annotations

import json
from typing import Any

from statehitl import observe
from statehitl.transitions import (
    CheckpointWritten,
    ClaimTaken,
    HookFired,
    InterruptAnswered,
    InterruptRaisedTransition,
    NodeCancelled,
    NodeEntered,
    NodeExited,
    StepApplied,
    ToolFinished,
    Transition,
)

_DURATIONS = frozenset({"execution_time", "latencyMs"})
"""Keys of measured times in what nodes write (an orchestration's node results)."""


def _compact(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), default=repr)


class TransitionRecorder:
    """Collects transitions while attached (``with recorder:`` or the ``transition_recorder`` fixture)."""

    def __init__(self) -> None:
        self.log: list[str] = []
        self._ids: dict[str, str] = {}

    def _stable_id(self, raw: str) -> str:
        if raw not in self._ids:
            self._ids[raw] = f"<id{len(self._ids) + 1}>"
        return self._ids[raw]

    def _stable(self, value: Any) -> Any:
        """``value`` with every ``toolUseId`` inside it replaced by its stable name, and durations (which
        differ on every run) by ``<time>``."""
        if isinstance(value, dict):
            return {k: self._stable_id(v) if k == "toolUseId" and isinstance(v, str) else
                    "<time>" if k in _DURATIONS else self._stable(v)
                    for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [self._stable(v) for v in value]
        return value

    def on_event(self, transition: Transition) -> None:
        """Format one transition (called by the runner through ``statehitl.observe``)."""
        self.log.append(self._line(transition))

    def _line(self, t: Transition) -> str:
        match t:
            case NodeEntered():
                return f"enter {t.node} (step {t.step})"
            case NodeExited():
                return f"exit {t.node}: {t.outcome}"
            case NodeCancelled():
                return f"cancel {t.node}: {_compact(t.message)}"
            case HookFired():
                raised = f" -> interrupts {_compact(list(t.interrupts))}" if t.interrupts else ""
                return f"hook {t.event}{raised}"
            case InterruptRaisedTransition():
                return (f"interrupt {_compact(t.name)} {self._stable_id(t.id)} from {t.source} {t.node}: "
                        f"{_compact(self._stable(t.reason))}")
            case InterruptAnswered():
                return f"answer {_compact(t.name)} at {t.node}: {_compact(t.response)}"
            case ToolFinished():
                return f"tool {t.name} {self._stable_id(t.tool_use_id)}: {t.outcome}"
            case StepApplied():
                return f"step {t.step} writes {_compact(self._stable(t.writes))} next {_compact(list(t.next))}"
            case CheckpointWritten():
                waiting = f" waiting {_compact(list(t.interrupts))}" if t.interrupts else ""
                return f"checkpoint #{t.seq} {t.status} step {t.step} next {_compact(list(t.next))}{waiting}"
            case ClaimTaken():
                return f"claim #{t.seq} on #{t.parent}: this resume alone goes on (a claim took the number)"

    def attach(self) -> TransitionRecorder:
        observe.observers.append(self)
        return self

    def detach(self) -> None:
        if self in observe.observers:
            observe.observers.remove(self)

    def clear(self) -> None:
        """Forget what was recorded so far (ids keep their names)."""
        self.log.clear()

    def __enter__(self) -> TransitionRecorder:
        return self.attach()

    def __exit__(self, *exc: object) -> None:
        self.detach()
