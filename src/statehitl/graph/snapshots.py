"""A thread's checkpoints as LangGraph shows them: ``StateSnapshot``, its tasks, and the configs that name them.

One reader per compiled graph turns stored records into what ``get_state``, ``get_state_history`` and the
``"checkpoints"`` stream show: the values (with the writes of the nodes that finished in a step that stopped
on interrupts already applied, as LangGraph shows them), the tasks still to run, and for a subgraph stopped
inside a task its own snapshot, read from what the task keeps of it (``nesting.kept_run``).
"""

from __future__ import annotations

import functools
import weakref
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Generic, NamedTuple, Protocol, TypeVar, cast

from statehitl.checkpoint.checkpoint_ids import tagged
from statehitl.checkpoint.record_parts import FailureRecord
from statehitl.checkpoint.records import CheckpointRecord, StoredAnswer
from statehitl.commands import GOTO
from statehitl.graph.graph_state import StateGraphSchema
from statehitl.graph.history import View, view_metadata
from statehitl.graph.node_calls import task_key
from statehitl.graph.state_kinds import ROOT
from statehitl.graph.task_paths import task_path
from statehitl.interrupt import Interrupt
from statehitl.machine import START, Machine
from statehitl.status import Status

if TYPE_CHECKING:  # a graph with subgraphs loads their levels with its first snapshot
    from statehitl.graph.subgraph_levels import Level, LevelGraph

    class Subgraph(LevelGraph, Protocol):
        """What a snapshot reads of a graph that runs inside another: its run's levels, and its own reader."""

        snapshots: SnapshotReader


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

    def __new__(  # noqa: PLR0917 - LangGraph's StateSnapshot is a NamedTuple, built from its 8 fields in order
                cls, values: Any, next: tuple[str, ...], config: dict[str, Any], metadata: dict[str, Any] | None,
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
    its error (as LangGraph shows a stored one: the exception's repr, ``"RuntimeError('down')"``), or its
    result when it finished before the others stopped."""

    id: str
    name: str
    path: tuple[str, ...]
    error: str | None = None
    interrupts: tuple[Interrupt, ...] = ()
    state: Any = None
    result: Any = None


PregelTask = GraphTask
"""LangGraph's name for a checkpoint's task (``langgraph.types.PregelTask``): the same 7-field named tuple."""


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
                 subgraphs: Mapping[str, Subgraph], graph: LevelGraph | None = None) -> None:
        self.machine = machine
        self.schema = schema
        self.subgraphs = subgraphs
        self._graph = None if graph is None else weakref.ref(graph)
        """The compiled graph read (its subgraphs' runs are read through it), when there is one: a weak
        reference, as the graph holds this reader (a cycle would leave every compiled graph to the collector)."""
        self._plain = graph is None
        """Its snapshots hold no subgraph runs (no node is a graph, and none's code reaches one): told on the
        first snapshot, then a plain graph's snapshots pay nothing for subgraphs."""

    @property
    def graph(self) -> LevelGraph | None:
        return None if self._graph is None else self._graph()

    def _level_graph(self) -> LevelGraph | None:
        """The graph read, when its snapshots may hold subgraph runs; None for a plain graph."""
        if self._plain:
            return None
        graph = self.graph
        if graph is not None and not (graph.subgraphs or graph.invoked):
            self._plain = True
            return None
        return graph

    def values(self, record: CheckpointRecord, state: Any, only: Any = None) -> Any:
        """The state's values as LangGraph shows them: with the writes of the nodes that finished in a step
        that stopped on interrupts already applied (``only``: an output schema's channels)."""
        return self.shown_values(state, record.pending, record.completed, only)

    def _writes(self, writes: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
        """A step's writes as the nodes wrote them (a datetime, not its tag)."""
        if not self.schema.tagged:
            return writes
        return {node: self.schema.decoded(update) for node, update in writes.items()}

    def _result(self, completed: dict[str, dict[str, Any]], task: str) -> Any:
        """What ``task`` wrote, if it finished, as it wrote it (where a ``Command`` sent it, LangGraph's result
        does not say); a root-value state's task, the value it wrote (None: none)."""
        update = completed.get(task)
        if update is None:
            return None
        if GOTO in update:
            update = {key: value for key, value in update.items() if key != GOTO}
        if self.schema.tagged:
            update = self.schema.decoded(update)
        return update.get(ROOT) if self.schema.kind.kind == "root" else update

    def shown_values(self, state: Any, pending: list[str], completed: dict[str, dict[str, Any]],
                     only: Any = None) -> Any:
        if completed:
            done = [(n, self.schema.load_update(n, completed[n])) for n in pending if n in completed]
            state = self.schema.apply(state, done)  # in the order the step would have applied them
        return self.schema.kind.values(state, only)

    def next(self, pending: list[str], completed: Mapping[str, Any]) -> tuple[str, ...]:
        """The nodes still to run, as LangGraph lists them (``ordered``), less those that finished in a step
        that stopped (on an interrupt or a failure)."""
        return tuple(t if t == START else self.machine.task_node(t) for t in self.ordered(pending)
                     if t not in completed)

    def ordered(self, pending: list[str]) -> list[str]:
        """A step's tasks in LangGraph's order: the ``Send``s first, as they were made, then the nodes in the
        order the graph defines them."""
        order = self._order
        return sorted(pending, key=lambda t: order.get(t, -1))

    @functools.cached_property
    def _order(self) -> dict[str, int]:
        return {name: index for index, name in enumerate(self.machine.nodes)}

    def snapshot(self, view: View, state: Any, subgraphs: bool = False, *,
                 results: dict[str, dict[str, Any]] | None = None, applied: bool = True) -> StateSnapshot[Any]:
        """``view`` as a snapshot, its state being ``state``; ``subgraphs``: a task holding a subgraph's run
        has that run's snapshot as its ``state`` (else a config naming its namespace). ``results``: what its
        tasks wrote, by task, when a later checkpoint says (its step ran). ``applied``: the writes of the tasks
        that finished in its step are shown applied, and those tasks left out of ``next`` (LangGraph's
        ``get_state`` of a thread's current checkpoint; its history and a checkpoint named by id show the
        checkpoint as it was written)."""
        record = view.record
        interrupts = tuple(i.to_interrupt() for i in view.interrupts)
        parent = None if view.parent is None else str(view.parent)
        shown, own = view.id, view.own
        graph = self._level_graph()
        top = ids = None
        if graph is not None:
            from statehitl.graph.subgraph_levels import top_level

            top = top_level(graph, state, view.step, pending=view.pending, completed=view.completed,
                            progress=record.progress if own else {}, schedule=view.schedule)
            ids = CheckpointIds(record.thread_id, shown, record.checkpoint_id if own else shown, view.created_at)
        failed = record.error if own else None
        completed = view.completed if applied else {}
        return StateSnapshot(
            state if self.schema.native else self.shown_values(state, view.pending, completed),
            self.next(view.pending, completed),
            graph_config(record.thread_id, shown),
            view_metadata(view),
            _when(view.created_at),
            None if parent is None else graph_config(record.thread_id, parent),
            self.tasks(top, view, interrupts, ids, subgraphs=subgraphs, failed=failed, results=results),
            interrupts,
            status=Status(view.status),
            step=view.step,
            checkpoint_id=shown,
            parent_checkpoint_id=parent,
            writes=self._writes(record.writes) if own else {},
            cancelled=record.cancelled if own else {},
            error=failed,
        )

    def tasks(self, level: Level | None, at: View | Level, interrupts: tuple[Interrupt, ...],
              ids: CheckpointIds | None, *, subgraphs: bool, failed: FailureRecord | None = None,
              results: dict[str, dict[str, Any]] | None = None) -> tuple[GraphTask, ...]:
        """The tasks of the step ``at`` stands at (a checkpoint's, or a subgraph run's ``level``): each with the
        interrupts it waits on (those raised inside its subgraphs too), its error, its result if it finished,
        and for a subgraph its run's snapshot (``subgraphs``) or a config naming its namespace (``ids``: the
        checkpoint's, None for a plain graph's). ``results``: what each task of a step that ran wrote (``{}``:
        nothing)."""
        tasks = []
        graph = None if ids is None else self.graph
        for task in self.ordered(at.pending):
            node = task if task == START else self.machine.task_node(task)
            path = task_path(node, task)
            error = None
            if failed is not None and task in failed.nodes:
                error = f"{failed.type}({failed.message!r})"
            asked = tuple(i for i in interrupts if i.node == task)
            state: Any = None
            if ids is not None and (node in self.subgraphs or (graph is not None and node in graph.invoked)):
                from statehitl.graph.subgraph_levels import level_below, waiting_nodes

                below = None if level is None else level_below(level, task)
                if below is not None:
                    inside = waiting_nodes(below)
                    asked = tuple(i for i in interrupts if i.node == task or i.node in inside)
                own = f"{node}:{task_key(at.step, task)}"
                namespace = f"{level.namespace}|{own}" if level is not None and level.namespace else own
                state = self._task_state(below, namespace, ids, asked, subgraphs)
            result = self._result(at.completed, task)
            if result is None and results is not None and task in results:
                result = self._result(results, task)
            elif result is None and results is not None and self.schema.kind.kind != "root":
                result = {}
            tasks.append(GraphTask(task_key(at.step, task), node, path, error, asked, state, result))
        return tuple(tasks)

    @staticmethod
    def _task_state(below: Level | None, namespace: str, ids: CheckpointIds, interrupts: tuple[Interrupt, ...],
                    subgraphs: bool) -> Any:
        """A subgraph task's ``state``: a config naming the namespace it runs in, or (``subgraphs``) the
        snapshot of the run it holds, or of no run (LangGraph's empty snapshot) when it holds none."""
        config = {"configurable": {"thread_id": ids.thread, "checkpoint_ns": namespace}}
        if not subgraphs:
            return config
        if below is None:
            return StateSnapshot({}, (), config, None, None, None, (), ())
        return cast("Subgraph", below.graph).snapshots.level_snapshot(below, ids, interrupts, subgraphs=True)

    def level_snapshot(self, level: Level, ids: CheckpointIds, interrupts: tuple[Interrupt, ...], *,
                       subgraphs: bool) -> StateSnapshot[Any]:
        """The snapshot of a run of this graph inside the checkpoint ``ids`` names (``level``): stopped inside
        (waiting on the ``interrupts`` raised by its nodes and under them), or the state a graph compiled with
        ``checkpointer=True`` ended its last run with. Its config names it (LangGraph's ``checkpoint_ns``,
        ``checkpoint_id`` and ``checkpoint_map``: statehitl's subgraph checkpoint is its parent's record)."""
        record = tagged(ids.thread, ids.record)  # as a config carries a checkpoint id: saying its thread
        parents = {"": tagged(ids.thread, ids.view), **dict.fromkeys(level.outer, record)}
        config = {"configurable": {"thread_id": ids.thread, "checkpoint_ns": level.namespace,
                                   "checkpoint_id": record, "checkpoint_map": {**parents, level.namespace: record}}}
        from statehitl.graph.subgraph_levels import waiting_nodes

        inside = waiting_nodes(level)
        asked = tuple(i for i in interrupts if i.node in inside)
        state = level.state
        edited = (level.kept or {}).get("edited_from")  # update_state wrote it: LangGraph's "update" checkpoint
        before = None if not edited else {"configurable": {
            **config["configurable"], "checkpoint_id": tagged(ids.thread, edited),
            "checkpoint_map": {**parents, level.namespace: tagged(ids.thread, edited)}}}
        return StateSnapshot(
            state if self.schema.native else self.shown_values(state, level.pending, level.completed),
            self.next(level.pending, level.completed), config,
            {"source": "update" if edited else "loop", "step": level.step, "parents": parents},
            _when(ids.created_at), before,
            self.tasks(level, level, asked, ids, subgraphs=subgraphs), asked,
            status=Status.INTERRUPTED if level.stopped else Status.COMPLETED, step=level.step,
            checkpoint_id=ids.record,
        )


class CheckpointIds:
    """Which checkpoint a snapshot shows: its thread, the parent checkpoint shown (``view``: its view id)
    and the record that holds its subgraphs' runs (``record``), and when it was written. (A plain class: a
    dataclass costs every import of statehitl.graph its generated methods.)"""

    __slots__ = ("created_at", "record", "thread", "view")

    def __init__(self, thread: str, view: str, record: str, created_at: float) -> None:
        self.thread = thread
        self.view = view
        self.record = record
        self.created_at = created_at
