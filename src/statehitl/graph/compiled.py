"""``CompiledStateGraph``: a validated machine bound to hooks and a checkpointer, ready to invoke.

``invoke`` decides what the caller's input means for the thread (start, continue, or resume with
interrupt responses), checks it before anything is written, and hands the position to the runner.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from pydantic import BaseModel

from statehitl import observe
from statehitl._sync import run_sync
from statehitl.checkpoint.engine import Checkpointer
from statehitl.checkpoint.memory import MemoryStorage
from statehitl.checkpoint.records import CheckpointRecord
from statehitl.checkpoint.storage import validate_thread_id
from statehitl.errors import NotInterruptedError, ResumeInputError
from statehitl.graph.channels import StateSchema
from statehitl.hooks.registry import HookRegistry
from statehitl.interrupt import Interrupt
from statehitl.machine import START, Machine
from statehitl.resume import is_response_list, parse_responses
from statehitl.runner import Durability, Position, Runner
from statehitl.status import Status

__all__ = ["CompiledStateGraph", "GraphRunResult", "StateSnapshot"]

M = TypeVar("M", bound=BaseModel)

_STATUS = {
    "running": Status.EXECUTING,
    "interrupted": Status.INTERRUPTED,
    "completed": Status.COMPLETED,
    "cancelled": Status.FAILED,
}
_STOP_REASON = {"interrupted": "interrupt", "completed": "end", "cancelled": "cancelled", "running": "running"}


@dataclass
class StateSnapshot(Generic[M]):
    """One checkpoint of a thread as the app's types: what ``get_state`` and ``history`` return."""

    values: M
    next: tuple[str, ...]
    status: Status
    step: int
    interrupts: list[Interrupt]
    checkpoint_id: str
    parent_checkpoint_id: str | None
    created_at: float
    writes: dict[str, dict[str, Any]] = field(default_factory=dict)
    cancelled: dict[str, str] = field(default_factory=dict)


@dataclass
class GraphRunResult(Generic[M]):
    """What ``invoke`` returns. Loop while ``stop_reason == "interrupt"``, answering ``interrupts``."""

    thread_id: str
    state: M
    status: Status
    stop_reason: str
    interrupts: list[Interrupt]
    checkpoint_id: str
    step: int
    cancelled: dict[str, str] = field(default_factory=dict)


class CompiledStateGraph(Generic[M]):
    """A runnable StateGraph. Sync methods wrap the async ones (``ainvoke``, ``aget_state``, ...)."""

    def __init__(
        self,
        machine: Machine,
        schema: StateSchema[M],
        hooks: HookRegistry,
        checkpointer: Checkpointer | None,
        *,
        step_limit: int,
        durability: Durability,
    ) -> None:
        self.machine = machine
        self.schema = schema
        self.hooks = hooks
        self.checkpointer = checkpointer or Checkpointer(MemoryStorage())
        self.step_limit = _check_step_limit(step_limit)
        self.durability: Durability = durability if checkpointer is not None else "exit"
        self._runner = Runner(machine, schema, hooks, self.checkpointer, source=self)

    # -- running ----------------------------------------------------------------------------------

    def invoke(
        self,
        input: Any,
        thread_id: str | None = None,
        *,
        step_limit: int | None = None,
        durability: Durability | None = None,
        invocation_state: dict[str, Any] | None = None,
    ) -> GraphRunResult[M]:
        """Run the thread: start or continue it with ``input``, or resume it with interrupt responses.

        - a dict / state model: a new run from START (on the thread's current state, merged through
          the reducers, if the thread exists and is not waiting on a human);
        - a list of ``{"interruptResponse": {...}}``: answers to the pending interrupts;
        - None: continue a run that stopped mid-way (a crash, or the step limit).
        """
        return run_sync(self.ainvoke(input, thread_id, step_limit=step_limit, durability=durability,
                                     invocation_state=invocation_state))

    async def ainvoke(
        self,
        input: Any,
        thread_id: str | None = None,
        *,
        step_limit: int | None = None,
        durability: Durability | None = None,
        invocation_state: dict[str, Any] | None = None,
    ) -> GraphRunResult[M]:
        """Async ``invoke``."""
        thread = validate_thread_id(thread_id) if thread_id is not None else uuid.uuid4().hex
        head = await self.checkpointer.latest(thread)
        at = self._position(input, thread, head)
        record = await self._runner.run(
            thread,
            at,
            step_limit=_check_step_limit(step_limit) if step_limit is not None else self.step_limit,
            durability=durability or self.durability,
            invocation_state=invocation_state if invocation_state is not None else {},
        )
        return GraphRunResult(
            thread_id=thread,
            state=self.schema.load(record.values),
            status=_STATUS[record.status],
            stop_reason=_STOP_REASON[record.status],
            interrupts=[i.to_interrupt() for i in record.interrupts],
            checkpoint_id=record.checkpoint_id,
            step=record.step,
            cancelled=record.cancelled,
        )

    def _position(self, input: Any, thread: str, head: CheckpointRecord | None) -> Position:
        """Turn the caller's input into where the runner starts; reject misfits before any write."""
        label = f"thread {thread!r}"
        if head is not None and head.status == "interrupted":
            pending = [i.to_interrupt() for i in head.interrupts]
            answers = parse_responses(input, pending, thread=label)
            if observe.observers:
                for i in pending:
                    if i.id in answers:
                        observe.emit("interrupt.answered", name=i.name, node=i.node, response=answers[i.id])
            return Position(
                state=self.schema.load(head.values),
                pending=head.pending,
                step=head.step,
                parent_seq=head.seq,
                completed=head.completed,
                responses={**head.responses, **answers},
            )
        if is_response_list(input):
            raise NotInterruptedError(
                f"{label} is not waiting on any interrupt "
                f"({'it has no checkpoint' if head is None else f'its status is {head.status}'}); "
                "interrupt responses can only answer a thread whose last result was an interrupt"
            )
        if input is None:
            if head is None or head.status != "running":
                where = "has no checkpoint" if head is None else f"is {head.status}"
                raise ResumeInputError(f"{label} {where}; there is no stopped run to continue, pass input")
            return Position(self.schema.load(head.values), head.pending, head.step, head.seq)
        if isinstance(input, list):
            raise ResumeInputError(
                f"{label}: input is a list but not of interruptResponse blocks; pass a dict or a "
                f"{self.schema.model.__name__} to start a run"
            )
        if head is None:
            state = self.schema.initial(input)
            step, parent = 0, None
        else:
            current = self.schema.load(head.values)
            update = self.schema.normalize_update("input", input.model_dump(exclude_unset=True)
                                                  if isinstance(input, BaseModel) else input)
            state = self.schema.apply(current, [("input", update)])
            step, parent = head.step, head.seq
        return Position(state, self.machine.next_nodes(START, state), step, parent)

    # -- inspecting -------------------------------------------------------------------------------

    def _snapshot(self, record: CheckpointRecord) -> StateSnapshot[M]:
        return StateSnapshot(
            values=self.schema.load(record.values),
            next=tuple(record.pending),
            status=_STATUS[record.status],
            step=record.step,
            interrupts=[i.to_interrupt() for i in record.interrupts],
            checkpoint_id=record.checkpoint_id,
            parent_checkpoint_id=None if record.parent_seq is None else f"{record.parent_seq:012d}",
            created_at=record.created_at,
            writes=record.writes,
            cancelled=record.cancelled,
        )

    async def aget_state(self, thread_id: str) -> StateSnapshot[M] | None:
        """The thread's latest checkpoint, or None if it was never run."""
        record = await self.checkpointer.latest(validate_thread_id(thread_id))
        return None if record is None else self._snapshot(record)

    def get_state(self, thread_id: str) -> StateSnapshot[M] | None:
        """The thread's latest checkpoint, or None if it was never run."""
        return run_sync(self.aget_state(thread_id))

    async def ahistory(self, thread_id: str) -> list[StateSnapshot[M]]:
        """Every checkpoint of the thread, newest first."""
        return [self._snapshot(r) for r in await self.checkpointer.history(validate_thread_id(thread_id))]

    def history(self, thread_id: str) -> list[StateSnapshot[M]]:
        """Every checkpoint of the thread, newest first."""
        return run_sync(self.ahistory(thread_id))

    def draw_mermaid(self) -> str:
        """The machine as a Mermaid flowchart."""
        return self.machine.draw_mermaid()

    def __repr__(self) -> str:
        return f"CompiledStateGraph({self.machine.name!r}, nodes={list(self.machine.nodes)})"


def _check_step_limit(limit: int) -> int:
    if not isinstance(limit, int) or isinstance(limit, bool) or limit < 1:
        raise ValueError(f"step_limit must be a positive int, got {limit!r}")
    return limit


