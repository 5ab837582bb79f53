"""What observers see: one typed value per transition of a run.

An observer (the test recorder, the CLI's printer, a user's own) matches on these classes instead of
on strings, so a renamed field or a new kind of transition is a type error in the observer, not a
silently skipped ``elif``. They are plain frozen data; the runner builds one only when an observer
is attached.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

__all__ = [
    "CheckpointWritten",
    "ClaimTaken",
    "HookFired",
    "InterruptAnswered",
    "InterruptRaisedTransition",
    "NodeCancelled",
    "NodeEntered",
    "NodeExited",
    "StepApplied",
    "ToolFinished",
    "Transition",
]


@dataclass(frozen=True, slots=True)
class NodeEntered:
    """A node's handler is about to run (its ``BeforeNodeCallEvent`` hooks let it)."""

    node: str
    step: int


@dataclass(frozen=True, slots=True)
class NodeExited:
    """A node's handler returned (``done``) or stopped on an interrupt (``interrupted``)."""

    node: str
    outcome: Literal["done", "interrupted"]


@dataclass(frozen=True, slots=True)
class NodeCancelled:
    """A ``BeforeNodeCallEvent`` hook cancelled the node; it did not run."""

    node: str
    message: str


@dataclass(frozen=True, slots=True)
class HookFired:
    """The callbacks of one hook event ran; ``interrupts`` names the interrupts they raised."""

    event: str
    interrupts: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class InterruptRaisedTransition:
    """A node, hook or tool asked a human; ``id`` is what the answer must quote."""

    id: str
    name: str
    node: str
    source: str
    reason: Any


@dataclass(frozen=True, slots=True)
class InterruptAnswered:
    """A resume brought the human's answer to an interrupt."""

    name: str
    node: str
    response: Any


@dataclass(frozen=True, slots=True)
class ToolFinished:
    """An agent's tool call ended: ``success``, ``error`` or ``interrupted``."""

    name: str
    tool_use_id: str
    outcome: str


@dataclass(frozen=True, slots=True)
class StepApplied:
    """A step's updates were merged into the state; ``next`` is where the machine goes."""

    step: int
    writes: dict[str, dict[str, Any]]
    next: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class CheckpointWritten:
    """A checkpoint was committed to the store."""

    seq: int
    step: int
    status: str
    next: tuple[str, ...]
    interrupts: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class ClaimTaken:
    """A resume claimed the stopped checkpoint ``parent`` before anything ran, so no other process resumes it.

    The claim is a record of the thread with a number of its own, ``seq``: the next checkpoint written
    gets the number after it, so the checkpoint numbers a thread shows skip the claim's.
    """

    seq: int
    parent: int


Transition = (
    NodeEntered
    | NodeExited
    | NodeCancelled
    | HookFired
    | InterruptRaisedTransition
    | InterruptAnswered
    | ToolFinished
    | StepApplied
    | CheckpointWritten
    | ClaimTaken
)
"""Every kind of transition an observer can receive."""
