"""The transition recorder: a stable, snapshot-testable log of everything a run did.

Each line is one transition in words, with ids and times replaced by stable names, so
``assert recorder.log == snapshot`` (syrupy) pins a machine's behaviour: node entries and exits,
hook events, interrupts raised and answered, state updates, checkpoints.
"""

from __future__ import annotations

import json
from typing import Any

from statehitl import observe

__all__ = ["TransitionRecorder"]


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

    def on_event(self, kind: str, fields: dict[str, Any]) -> None:
        """Format one transition (called by the runner through ``statehitl.observe``)."""
        if kind == "node.enter":
            line = f"enter {fields['node']} (step {fields['step']})"
        elif kind == "node.exit":
            line = f"exit {fields['node']}: {fields['outcome']}"
        elif kind == "node.cancelled":
            line = f"cancel {fields['node']}: {fields['message']}"
        elif kind == "hook":
            raised = f" -> interrupts {fields['interrupts']}" if fields["interrupts"] else ""
            line = f"hook {fields['event']}{raised}"
        elif kind == "interrupt.raised":
            line = (
                f"interrupt {fields['name']} {self._stable_id(fields['id'])} from {fields['source']} "
                f"{fields['node']}: {_compact(fields['reason'])}"
            )
        elif kind == "interrupt.answered":
            line = f"answer {fields['name']} at {fields['node']}: {_compact(fields['response'])}"
        elif kind == "tool":
            line = f"tool {fields['name']} {fields['id']}: {fields['outcome']}"
        elif kind == "step":
            line = f"step {fields['step']} writes {_compact(fields['writes'])} next {fields['next']}"
        elif kind == "checkpoint":
            waiting = f" waiting {fields['interrupts']}" if fields["interrupts"] else ""
            line = (
                f"checkpoint #{fields['seq']} {fields['status']} step {fields['step']} next {fields['next']}{waiting}"
            )
        else:
            line = f"{kind} {_compact(fields)}"
        self.log.append(line)

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
