"""A thread's checkpoints as LangGraph shows them: ``StateSnapshot``, its tasks, and the configs that name them.

One reader per compiled graph turns stored records into what ``get_state``, ``get_state_history`` and the
``"checkpoints"`` stream show: the values (with the writes of the nodes that finished in a step that stopped
on interrupts already applied, as LangGraph shows them), the tasks still to run, and for a subgraph stopped
inside a task its own snapshot, read from what the task keeps of it (``nesting.kept_run``).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Generic, NamedTuple, Protocol, TypeVar

from statehitl.checkpoint.checkpoint_ids import tagged
from statehitl.checkpoint.records import CheckpointRecord, FailureRecord, StoredAnswer
from statehitl.graph.graph_state import GraphState
from statehitl.graph.node_calls import task_key
from statehitl.interrupt import Interrupt
from statehitl.machine import Machine
from statehitl.status import Status

__all__ = ["GraphTask", "SnapshotReader", "StateSnapshot", "graph_config"]

M = TypeVar("M")

_SOURCES = {"update": "update", "input": "input"}
"""LangGraph's ``metadata["source"]`` for a record's ``source``; every other step is a ``"loop"``."""


@dataclass
class StateSnapshot(Generic[M]):
    """One checkpoint of a thread: what ``get_state`` and ``get_state_history`` return, LangGraph's fields
    first (``values``, ``next``, ``config``, ``metadata``, ``created_at``, ``parent_config``, ``tasks``,
    ``interrupts``), then statehitl's. ``values`` is a dict for a TypedDict or dataclass state, the model
    itself for a pydantic state."""

    values: Any
    next: tuple[str, ...]
    config: dict[str, Any]
    metadata: dict[str, Any]
    created_at: str
    parent_config: dict[str, Any] | None
    tasks: tuple[GraphTask, ...]
    interrupts: list[Interrupt]
    status: Status
    step: int
    checkpoint_id: str
    parent_checkpoint_id: str | None
    writes: dict[str, dict[str, Any]] = field(default_factory=dict)
    cancelled: dict[str, str] = field(default_factory=dict)
    error: FailureRecord | None = None
    """Why the run failed, when a node raised: ``invoke(None, config)`` retries that step."""
    answers: dict[str, StoredAnswer] = field(default_factory=dict)
    """Answers stored for ``interrupts`` and not yet applied, by interrupt id (the inbox, the page or an
    expiry answered; ``invoke(None, config)`` or a worker applies them)."""


class GraphTask(NamedTuple):
    """A task of a checkpoint's step (LangGraph's ``PregelTask``): its node, and the interrupts it waits on,
    its error, or its result when it finished before the others stopped."""

    id: str
    name: str
    path: tuple[str, ...]
    error: Exception | None = None
    interrupts: tuple[Interrupt, ...] = ()
    state: Any = None
    result: Any = None


class Subgraph(Protocol):
    """What a snapshot reads of a node that is a compiled graph: its nodes, and its own reader."""

    machine: Machine
    snapshots: SnapshotReader


def graph_config(thread: str, checkpoint_id: str | None) -> dict[str, Any]:
    """LangGraph's config naming a thread (and one of its checkpoints, by an id that says its thread: used
    with another thread, it is refused rather than taken for that thread's checkpoint of the same number)."""
    configurable = {"thread_id": thread, "checkpoint_ns": ""}
    if checkpoint_id is not None:
        configurable["checkpoint_id"] = tagged(thread, checkpoint_id)
    return {"configurable": configurable}


def _when(epoch: float) -> str:
    return datetime.fromtimestamp(epoch, UTC).isoformat()


class SnapshotReader:
    """Reads one compiled graph's records as snapshots; ``subgraphs`` are its nodes that are compiled graphs."""

    def __init__(self, machine: Machine, schema: GraphState,
                 subgraphs: Mapping[str, Subgraph]) -> None:
        self.machine = machine
        self.schema = schema
        self.subgraphs = subgraphs

    def values(self, record: CheckpointRecord, state: Any, only: Any = None) -> Any:
        """The state's values as LangGraph shows them: with the writes of the nodes that finished in a step
        that stopped on interrupts already applied (``only``: an output schema's channels)."""
        if record.completed:
            done = [(n, self.schema.load_update(n, record.completed[n])) for n in record.pending
                    if n in record.completed]
            state = self.schema.apply(state, done)  # in the order the step would have applied them
        return self.schema.kind.values(state, only)

    def metadata(self, record: CheckpointRecord) -> dict[str, Any]:
        return {"source": _SOURCES.get(record.source, "loop"), "step": record.step, "parents": {}}

    def next(self, record: CheckpointRecord) -> tuple[str, ...]:
        """The nodes still to run from ``record``, as LangGraph lists them: in the order the graph defines its
        nodes (then Sends), less those that finished in a step that stopped (on an interrupt or a failure)."""
        order = self._order
        tasks = [t for t in record.pending if t not in record.completed]
        tasks.sort(key=lambda t: order.get(t, len(order)))
        return tuple(self.machine.task_node(t) for t in tasks)

    @functools.cached_property
    def _order(self) -> dict[str, int]:
        return {name: index for index, name in enumerate(self.machine.nodes)}

    def snapshot(self, record: CheckpointRecord, subgraphs: bool = False, state: Any = None) -> StateSnapshot[Any]:
        """``record`` as a snapshot; ``state``: its state when the caller has it (a record as written stores
        its growing channels as deltas), else read from the record."""
        state = self.schema.load(record.values) if state is None else state
        interrupts = tuple(i.to_interrupt() for i in record.interrupts)
        parent = None if record.parent_seq is None else f"{record.parent_seq:012d}"
        return StateSnapshot(
            values=state if self.schema.native else self.values(record, state),
            next=self.next(record),
            config=graph_config(record.thread_id, record.checkpoint_id),
            metadata=self.metadata(record),
            created_at=_when(record.created_at),
            parent_config=None if parent is None else graph_config(record.thread_id, parent),
            tasks=self.tasks(record, interrupts, subgraphs),
            interrupts=list(interrupts),
            status=Status(record.status),
            step=record.step,
            checkpoint_id=record.checkpoint_id,
            parent_checkpoint_id=parent,
            writes={node: self.schema.decoded(update) for node, update in record.writes.items()}
            if self.schema.tagged else record.writes,  # values as the nodes wrote them (a datetime, not its tag)
            cancelled=record.cancelled,
            error=record.error,
        )

    def tasks(self, record: CheckpointRecord, interrupts: tuple[Interrupt, ...], subgraphs: bool
              ) -> tuple[GraphTask, ...]:
        tasks = []
        for task in record.pending:
            node = self.machine.task_node(task)
            path = ("__pregel_push", task) if task != node else ("__pregel_pull", node)
            error = None
            if record.error is not None and task in record.error.node.split(", "):
                error = RuntimeError(f"{record.error.type}: {record.error.message}")
            sub = self.subgraphs.get(node)
            inside = sub.machine.nodes if sub is not None else ()
            asked = tuple(i for i in interrupts if i.node == task or i.node in inside)
            state: Any = None
            if sub is not None:  # LangGraph's task state: the subgraph's config, or with subgraphs=True its snapshot
                config = graph_config(record.thread_id, None)
                config["configurable"]["checkpoint_ns"] = f"{node}:{record.step}"
                kept = record.progress.get(task)
                state = sub.snapshots.kept(kept, config, record, asked) if subgraphs and kept is not None else config
            tasks.append(GraphTask(task_key(record.step, task), node, path, error, asked, state,
                                   record.completed.get(task)))
        return tuple(tasks)

    def kept(self, kept: dict[str, Any], config: dict[str, Any], parent: CheckpointRecord,
             interrupts: tuple[Interrupt, ...]) -> StateSnapshot[Any]:
        """This graph's snapshot where it stopped running as a node of ``parent``'s graph (``kept``: what the
        node keeps of it in ``parent``'s checkpoint)."""
        state = self.schema.load({**kept["values"], **kept["appended"]})
        pending = [t for t in kept["pending"] if t not in kept["completed"]]
        return StateSnapshot(
            values=self.schema.shown(state),
            next=tuple(self.machine.task_node(t) for t in pending),
            config=config, metadata={"source": "loop", "step": kept["step"], "parents": {}},
            created_at=_when(parent.created_at), parent_config=None,
            tasks=tuple(GraphTask(task_key(kept["step"], t), self.machine.task_node(t), ("__pregel_pull", t),
                                  None, tuple(i for i in interrupts if i.node == t)) for t in pending),
            interrupts=list(interrupts), status=Status.INTERRUPTED, step=kept["step"],
            checkpoint_id=parent.checkpoint_id, parent_checkpoint_id=None,
        )
