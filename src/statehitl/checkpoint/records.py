"""The persisted record of a checkpoint: versioned, kind-tagged, JSON only.

Loading a record validates it with pydantic and never executes code. ``schema_version`` lets a newer
statehitl read older records and lets an older one refuse newer records with a clear message.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from statehitl.interrupt import Interrupt

__all__ = ["SCHEMA_VERSION", "CheckpointRecord", "InterruptRecord", "Status"]

SCHEMA_VERSION = 1

Status = Literal["running", "interrupted", "completed", "cancelled"]


class InterruptRecord(BaseModel):
    """A pending interrupt as stored: enough to show it to a human and to route the answer back."""

    model_config = ConfigDict(frozen=True)

    id: str
    name: str
    reason: Any = None
    source: str = "node"
    node: str = ""

    def to_interrupt(self) -> Interrupt:
        return Interrupt(self.id, self.name, self.reason, source=self.source, node=self.node)

    @classmethod
    def of(cls, interrupt: Interrupt) -> InterruptRecord:
        return cls(
            id=interrupt.id,
            name=interrupt.name,
            reason=interrupt.reason,
            source=interrupt.source,
            node=interrupt.node,
        )


class CheckpointRecord(BaseModel):
    """The full state of one thread after a transition.

    ``pending`` is the position: the nodes to (re-)enter next. For an interrupted step, ``completed``
    holds the updates of the nodes that finished (kept, not re-run) and ``responses`` the answers
    gathered so far in this step (so a handler that interrupts again still sees its earlier answers).
    ``writes`` is what the step that produced this checkpoint applied, for history and debugging.
    """

    model_config = ConfigDict(extra="forbid")

    kind: Literal["checkpoint"] = "checkpoint"
    schema_version: int = SCHEMA_VERSION
    thread_id: str
    seq: int = Field(ge=0)
    parent_seq: int | None = None
    created_at: float
    machine: str
    fingerprint: str
    status: Status
    step: int = Field(ge=0)
    source: Literal["input", "step", "interrupt", "cancel", "update"] = "step"
    pending: list[str] = Field(default_factory=list)
    values: dict[str, Any]
    completed: dict[str, dict[str, Any]] = Field(default_factory=dict)
    responses: dict[str, Any] = Field(default_factory=dict)
    interrupts: list[InterruptRecord] = Field(default_factory=list)
    cancelled: dict[str, str] = Field(default_factory=dict)
    writes: dict[str, dict[str, Any]] = Field(default_factory=dict)

    @property
    def checkpoint_id(self) -> str:
        """The id users see: the thread's sequence number, zero-padded so ids sort in order."""
        return f"{self.seq:012d}"
