"""A thread's checkpoints as LangGraph shows them: ``StateSnapshot``, its tasks, and the configs that name them.

One reader per compiled graph turns stored records into what ``get_state``, ``get_state_history`` and the
``"checkpoints"`` stream show: the values (with the writes of the nodes that finished in a step that stopped
on interrupts already applied, as LangGraph shows them), the tasks still to run, and for a subgraph stopped
inside a task its own snapshot, read from what the task keeps of it (``nesting.kept_run``).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any, Generic, NamedTuple, Protocol, TypeVar

from statehitl.checkpoint.checkpoint_ids import tagged
from statehitl.checkpoint.records import CheckpointRecord, FailureRecord, StoredAnswer
from statehitl.graph.graph_state import StateGraphSchema
from statehitl.graph.history import View
from statehitl.graph.node_calls import task_key
from statehitl.interrupt import Interrupt
from statehitl.machine import START, Machine
from statehitl.status import Status

__all__ = ["GraphTask", "SnapshotReader", "StateSnapshot", "empty_snapshot", "graph_config"]

M = TypeVar("M")



class _Checkpoint(NamedTuple):
    values: Any
    next: tuple[str, ...]
    config: dict[str, Any]
    metadata: dict[str, Any] | None
    created_at: str | None
    parent_config: dict[str, Any] | None
    tasks: tuple[GraphTask, ...]
    interrupts: tuple[Interrupt, ...]


class StateSnapshot(_Checkpoint, Generic[M]):
    """One checkpoint of a thread: what ``get_state`` and ``get_state_history`` return. It is LangGraph's
    8-field named tuple (``values``, ``next``, ``config``, ``metadata``, ``created_at``, ``parent_config``,
    ``tasks``, ``interrupts``: it unpacks, indexes and compares as LangGraph's does), with statehitl's own
    fields as attributes besides. ``values`` is a dict for a TypedDict or dataclass state, the model itself
    for a pydantic state."""

    status: Status
    step: int
    checkpoint_id: str | None
    parent_checkpoint_id: str | None
    writes: dict[str, dict[str, Any]]
    cancelled: dict[str, str]
    error: FailureRecord | None
    """Why the run failed, when a node raised: ``invoke(None, config)`` retries that step."""
    answers: dict[str, StoredAnswer]
    """Answers stored for ``interrupts`` and not yet applied, by interrupt id (the inbox, the page or an
    expiry answered; ``invoke(None, config)`` or a worker applies them)."""

    def __new__(cls, values: Any, next: tuple[str, ...], config: dict[str, Any], metadata: dict[str, Any] | None,
                created_at: str | None, parent_config: dict[str, Any] | None, tasks: tuple[GraphTask, ...],
                interrupts: tuple[Interrupt, ...], *, status: Status = Status.COMPLETED, step: int = 0,
                checkpoint_id: str | None = None, parent_checkpoint_id: str | None = None,
                writes: dict[str, dict[str, Any]] | None = None, cancelled: dict[str, str] | None = None,
                error: FailureRecord | None = None) -> StateSnapshot[M]:
        snapshot = super().__new__(cls, values, next, config, metadata, created_at, parent_config, tasks,
                                   tuple(interrupts))
        snapshot.status, snapshot.step = status, step
        snapshot.checkpoint_id, snapshot.parent_checkpoint_id = checkpoint_id, parent_checkpoint_id
        snapshot.writes, snapshot.cancelled, snapshot.error = writes or {}, cancelled or {}, error
        snapshot.answers = {}
        return snapshot

    def __repr__(self) -> str:
        fields = ", ".join(f"{name}={value!r}" for name, value in zip(self._fields, self, strict=True))
        return f"StateSnapshot({fields})"


def empty_snapshot(thread: str) -> StateSnapshot[Any]:
    """What ``get_state`` shows of a thread that has no checkpoint: no values, nothing next (LangGraph's)."""
    return StateSnapshot({}, (), {"configurable": {"thread_id": thread}}, None, None, None, (), (),
                         status=Status.COMPLETED)


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


class SubgraphSnapshots(Protocol):
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
    """Reads one compiled graph's checkpoints (``graph.history.View``) as snapshots; ``subgraphs`` are its
    nodes that are compiled graphs."""

    def __init__(self, machine: Machine, schema: StateGraphSchema,
                 subgraphs: Mapping[str, SubgraphSnapshots]) -> None:
        self.machine = machine
        self.schema = schema
        self.subgraphs = subgraphs

    def values(self, record: CheckpointRecord, state: Any, only: Any = None) -> Any:
        """The state's values as LangGraph shows them: with the writes of the nodes that finished in a step
        that stopped on interrupts already applied (``only``: an output schema's channels)."""
        return self.shown_values(state, record.pending, record.completed, only)

    def _writes(self, writes: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
        """A step's writes as the nodes wrote them (a datetime, not its tag)."""
        if not self.schema.tagged:
            return writes
        return {node: self.schema.decoded(update) for node, update in writes.items()}

    def _result(self, completed: dict[str, dict[str, Any]], task: str) -> dict[str, Any] | None:
        """What ``task`` wrote, if it finished, as it wrote it."""
        update = completed.get(task)
        return update if update is None or not self.schema.tagged else self.schema.decoded(update)

    def shown_values(self, state: Any, pending: list[str], completed: dict[str, dict[str, Any]],
                     only: Any = None) -> Any:
        if completed:
            done = [(n, self.schema.load_update(n, completed[n])) for n in pending if n in completed]
            state = self.schema.apply(state, done)  # in the order the step would have applied them
        return self.schema.kind.values(state, only)

    def next(self, pending: list[str], completed: Mapping[str, Any]) -> tuple[str, ...]:
        """The nodes still to run, as LangGraph lists them: in the order the graph defines its nodes (then
        Sends), less those that finished in a step that stopped (on an interrupt or a failure)."""
        order = self._order
        tasks = [t for t in pending if t not in completed]
        tasks.sort(key=lambda t: order.get(t, len(order)))
        return tuple(t if t == START else self.machine.task_node(t) for t in tasks)

    @functools.cached_property
    def _order(self) -> dict[str, int]:
        return {name: index for index, name in enumerate(self.machine.nodes)}

    def snapshot(self, view: View, state: Any, subgraphs: bool = False) -> StateSnapshot[Any]:
        """``view`` as a snapshot, its state being ``state``."""
        record = view.record
        interrupts = tuple(i.to_interrupt() for i in view.interrupts)
        parent = None if view.parent is None else str(view.parent)
        return StateSnapshot(
            state if self.schema.native else self.shown_values(state, view.pending, view.completed),
            self.next(view.pending, view.completed),
            graph_config(record.thread_id, view.id),
            {"source": view.source, "step": view.step, "parents": {}},
            _when(view.created_at),
            None if parent is None else graph_config(record.thread_id, parent),
            self.tasks(view, interrupts, subgraphs),
            interrupts,
            status=Status(view.status),
            step=view.step,
            checkpoint_id=view.id,
            parent_checkpoint_id=parent,
            writes=self._writes(record.writes) if view.own else {},
            cancelled=record.cancelled if view.own else {},
            error=record.error if view.own else None,
        )

    def tasks(self, view: View, interrupts: tuple[Interrupt, ...], subgraphs: bool) -> tuple[GraphTask, ...]:
        record = view.record
        tasks = []
        for task in view.pending:
            node = task if task == START else self.machine.task_node(task)
            path = ("__pregel_push", task) if task != node else ("__pregel_pull", node)
            error = None
            if view.own and record.error is not None and task in record.error.nodes:
                error = RuntimeError(f"{record.error.type}: {record.error.message}")
            sub = self.subgraphs.get(node)
            inside = sub.machine.nodes if sub is not None else ()
            asked = tuple(i for i in interrupts if i.node == task or i.node in inside)
            state: Any = None
            if sub is not None:  # LangGraph's task state: the subgraph's config, or with subgraphs=True its snapshot
                config = graph_config(record.thread_id, None)
                config["configurable"]["checkpoint_ns"] = f"{node}:{view.step}"
                kept = record.progress.get(task) if view.own else None
                state = sub.snapshots.kept(kept, config, record, asked) if subgraphs and kept is not None else config
            tasks.append(GraphTask(task_key(view.step, task), node, path, error, asked, state,
                                   self._result(view.completed, task)))
        return tuple(tasks)

    def kept(self, stored: dict[str, Any], config: dict[str, Any], parent: CheckpointRecord,
             interrupts: tuple[Interrupt, ...]) -> StateSnapshot[Any]:
        """This graph's snapshot where it stopped running as a node of ``parent``'s graph (``stored``: the
        ``KeptRun`` the node keeps of it in ``parent``'s checkpoint)."""
        from statehitl.progress import KeptRun  # only a snapshot of a stopped subgraph reads one

        kept = KeptRun.load(stored, f"what checkpoint {parent.checkpoint_id} of thread {parent.thread_id!r} kept "
                                    "of a subgraph")
        state = self.schema.load({**kept.values, **kept.appended})
        pending = [t for t in kept.pending if t not in kept.completed]
        return StateSnapshot(
            self.schema.shown(state),
            tuple(self.machine.task_node(t) for t in pending),
            config, {"source": "loop", "step": kept.step, "parents": {}},
            _when(parent.created_at), None,
            tuple(GraphTask(task_key(kept.step, t), self.machine.task_node(t), ("__pregel_pull", t),
                            None, tuple(i for i in interrupts if i.node == t)) for t in pending),
            interrupts, status=Status.INTERRUPTED, step=kept.step, checkpoint_id=parent.checkpoint_id,
        )
