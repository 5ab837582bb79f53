"""A subgraph's checkpoints addressed by config, as LangGraph's: ``get_state``, ``get_state_history``,
``update_state`` and ``invoke`` given a config whose ``checkpoint_ns`` names a subgraph.

A subgraph's checkpoint is a view over its parent's records (``graph.subgraph_levels``): its
``checkpoint_id`` names the parent's record that holds it (where the subgraph stopped inside, or what a
graph compiled with ``checkpointer=True`` ended its run with), its ``checkpoint_map[""]`` the parent's
checkpoint whose step runs it. So reading one reads that record; running from one (a replay) begins a
branch at that parent checkpoint whose task goes on inside the subgraph from where the record had it
(its finished nodes not run again, its interrupts asked afresh); an edit writes that branch's first
record, with the subgraph's edited state in its task's progress: the one write LangGraph's fork makes.
"""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any, Protocol, cast

from pydantic import BaseModel

from statehitl.checkpoint.reading import Head
from statehitl.checkpoint.records import CheckpointRecord
from statehitl.errors import CheckpointNotFoundError, UnknownNodeError
from statehitl.graph.history import MAIN, View, ViewKey, checkpoint_order, parse_view
from statehitl.graph.snapshots import CheckpointIds, SnapshotReader, StateSnapshot
from statehitl.graph.state_channels import kept_state_channel
from statehitl.graph.subgraph_levels import INVOKED, Level, LevelGraph, level_path, top_level
from statehitl.graph.time_travel import ThreadViews
from statehitl.position import Position
from statehitl.supersteps import awaited_routes, plan_step, schedule_of


class TravelGraph(LevelGraph, Protocol):
    """What addressing a subgraph's checkpoints needs of the top graph: its levels and its reader."""

    snapshots: SnapshotReader


@dataclass
class SubgraphCheckpoint:
    """A subgraph checkpoint a config names: the parent checkpoint whose step runs it (``view``), the record
    that holds it, and the runs from the parent's down to the one named (``path``, empty if the record holds
    no run under that namespace)."""

    namespace: str
    view: View
    record: CheckpointRecord
    path: list[Level]

    @property
    def level(self) -> Level | None:
        return self.path[-1] if self.path else None

    @property
    def ids(self) -> CheckpointIds:
        return CheckpointIds(self.record.thread_id, self.view.id, self.record.checkpoint_id, self.record.created_at)


def _known_namespace(graph: LevelGraph, namespace: str) -> None:
    """Refuse a namespace that names no subgraph of ``graph`` (LangGraph's "Subgraph ... not found")."""
    graphs = [graph]
    for part in namespace.split("|"):
        if part.isdigit():
            continue
        name = part.partition(":")[0]
        below = [g.subgraphs[name] for g in graphs if name in g.subgraphs]
        below += [sub for g in graphs for sub in g.invoked.get(name, ())]
        if not below:
            raise ValueError(f"Subgraph {namespace!r} not found: no node {name!r} of {graphs[0].machine.name!r} "
                             "runs a subgraph (checkpoint_ns names one, e.g. from get_state(config, "
                             "subgraphs=True).tasks[i].state.config)")
        graphs = below


async def locate(graph: LevelGraph, views: ThreadViews, head: Head, configurable: dict[str, Any]
                 ) -> SubgraphCheckpoint:
    """The subgraph checkpoint ``configurable`` names (its ``checkpoint_ns``, ``checkpoint_id`` and
    ``checkpoint_map``); without a ``checkpoint_id``, the subgraph as the thread's current checkpoint holds
    it."""
    namespace = str(configurable.get("checkpoint_ns") or "")
    _known_namespace(graph, namespace)
    thread = views.thread
    named = configurable.get("checkpoint_id")
    if named is None:
        record: CheckpointRecord = head.record
        key = parse_view(thread, record.seq)
    else:
        key = parse_view(thread, named)
        if key.part != MAIN:  # a run's beginning: no subgraph stopped in it
            view = await views.at(key, head)
            state = await views.state(view)
            return SubgraphCheckpoint(namespace, view, view.record, _path(graph, namespace, view, state))
        found = await views.read(key.seq)
        if found is None:
            raise CheckpointNotFoundError(f"thread {thread!r} has no checkpoint {named} (checkpoint_ns {namespace!r})")
        record = found
    parent = (configurable.get("checkpoint_map") or {}).get("")
    view = await views.at(parse_view(thread, parent) if parent is not None else ViewKey(key.seq), head)
    top = top_level(graph, graph.schema.load(record.values), record.step, pending=record.pending,
                    completed=record.completed, progress=record.progress, schedule=record.schedule)
    return SubgraphCheckpoint(namespace, view, record, level_path(top, namespace))


def _path(graph: LevelGraph, namespace: str, view: View, state: Any) -> list[Level]:
    top = top_level(graph, state, view.step, pending=view.pending, completed=view.completed, progress={},
                    schedule=view.schedule)
    return level_path(top, namespace)


def subgraph_snapshot(found: SubgraphCheckpoint, config: dict[str, Any], *, subgraphs: bool) -> StateSnapshot[Any]:
    """The snapshot of the subgraph checkpoint ``found``; a namespace with no run there reads as LangGraph's
    empty snapshot (the subgraph has not run, or ran and kept nothing)."""
    level = found.level
    if level is None:
        return StateSnapshot({}, (), config, None, None, None, (), ())
    interrupts = tuple(i.to_interrupt() for i in found.record.interrupts)
    reader = cast(TravelGraph, level.graph).snapshots
    return reader.level_snapshot(level, found.ids, interrupts, subgraphs=subgraphs)


def _ended_here(found: SubgraphCheckpoint) -> bool:
    """Whether the record ``found`` holds is where the subgraph's run ended (it wrote the state a graph
    compiled with ``checkpointer=True`` keeps): a checkpoint of the subgraph's history."""
    top_task = found.path[1].task if len(found.path) > 1 else None
    if top_task is None:
        return False
    node = found.path[0].graph.machine.task_node(top_task)
    return kept_state_channel(node) in (found.record.writes.get(top_task) or found.record.writes.get(node) or {})


async def subgraph_history(graph: LevelGraph, views: ThreadViews, head: Head, configurable: dict[str, Any], *,
                           filter: dict[str, Any] | None, before: dict[str, Any] | None, limit: int | None
                           ) -> AsyncIterator[StateSnapshot[Any]]:
    """The checkpoints of the subgraph ``configurable`` names, newest first: each parent record where it
    stopped inside, and where one compiled with ``checkpointer=True`` ended a run (statehitl keeps no
    checkpoint of a subgraph's steps between). With a ``checkpoint_id``, that checkpoint alone (LangGraph's
    saver lists the checkpoint a config names)."""
    namespace = str(configurable.get("checkpoint_ns") or "")
    _known_namespace(graph, namespace)
    thread = views.thread
    ceiling = None if before is None else (before.get("configurable") or {}).get("checkpoint_id")
    below = None if ceiling is None else checkpoint_order(parse_view(thread, ceiling))
    named = configurable.get("checkpoint_id")
    only = None if named is None else parse_view(thread, named)
    count = 0
    for record in sorted(await views.records(), key=lambda r: r.seq, reverse=True):
        if only is not None and (record.seq != only.seq or only.part != MAIN):  # (a run's beginning holds none)
            continue
        if below is not None and checkpoint_order(ViewKey(record.seq)) >= below:
            continue
        found = await locate(graph, views, head, {**configurable, "checkpoint_id": record.checkpoint_id,
                                                  "checkpoint_map": {}})
        level = found.level
        if level is None or not (level.stopped or _ended_here(found)):
            continue
        snapshot = subgraph_snapshot(found, {}, subgraphs=False)
        metadata = snapshot.metadata or {}
        if filter and any(metadata.get(k) != v for k, v in filter.items()):
            continue
        if limit is not None and count >= limit:
            return
        count += 1
        yield snapshot


async def edited_progress(found: SubgraphCheckpoint, values: Any, as_node: str | None) -> dict[str, Any]:
    """The progress of the parent task that holds ``found``'s subgraph, with that subgraph's state edited as
    ``update_state`` edits a checkpoint: ``values`` applied as ``as_node`` wrote them (then it moves on along
    that node's transitions), or as an edit (it keeps its tasks, and asks its questions afresh)."""
    level = found.level
    if level is None or not level.stopped or level.kept is None:
        raise CheckpointNotFoundError(
            f"no run of subgraph {found.namespace!r} is stopped in checkpoint {found.record.checkpoint_id} of "
            f"thread {found.record.thread_id!r}: a subgraph's state can be edited where it stopped inside"
        )
    graph = level.graph
    if as_node is not None and as_node not in graph.machine.nodes:
        raise UnknownNodeError(f"as_node {as_node!r} is not a node of {graph.machine.name!r} "
                               f"(its nodes: {sorted(graph.machine.nodes)})")
    writer = as_node or "update_state"
    schema = graph.schema
    update = schema.normalize_update(writer, values.model_dump(exclude_unset=True)  # a root value: as it is
                                     if isinstance(values, BaseModel) and schema.kind.kind != "root" else values)
    state = schema.apply(level.state, [(writer, update)])
    kept = {**level.kept, "values": schema.dump_values(state), "step": level.step + 1,
            "appended": {c: schema.dump_items(state, c, len(level.base.get(c, ()))) for c in schema.append_channels},
            "edited_from": found.record.checkpoint_id}
    if as_node is not None:
        done = [(as_node, update)]
        where = f"the schedule of subgraph {found.namespace!r} in checkpoint {found.record.checkpoint_id}"
        routes = await awaited_routes(graph.machine, schema.apply, state, done)
        pending, schedule = plan_step(graph.machine, schema.apply, state, done, schedule_of(level.schedule, where),
                                      routes=routes)
        kept.update(pending=pending, completed={}, progress={})
        kept.pop("schedule", None)
        if schedule is not None:
            kept["schedule"] = schedule.stored()
    return _rebuilt(found.path, kept)


def restating(record: CheckpointRecord, progress: dict[str, Any]) -> dict[str, Any]:
    """The position of a record that restates ``record`` (the parent's current checkpoint) with its tasks'
    ``progress`` edited: the same step, tasks, interrupts and answers gathered (``history.restates``), so the
    parent's checkpoint is shown as it was, its subgraph's state as edited."""
    return {"status": record.status, "pending": record.pending, "interrupts": record.interrupts,
            "completed": record.completed, "responses": record.responses, "progress": progress,
            "error": record.error, "schedule": record.schedule}


def _rebuilt(path: list[Level], kept: dict[str, Any]) -> dict[str, Any]:
    """The top level's progress with the run at the end of ``path`` replaced by ``kept``, up through every
    run that holds it (its sibling tasks' runs kept: they go on from where they stopped, as LangGraph's
    subgraph checkpoints in their own namespaces do)."""
    for parent, child in zip(reversed(path[:-1]), reversed(path[1:]), strict=True):
        assert child.task is not None
        held = parent.progress.get(child.task)
        if isinstance(held, dict) and held.get("kind") == INVOKED:
            kept = {**held, "calls": {**held["calls"], str(child.call): kept}}
        if parent is path[0]:
            return {**parent.progress, child.task: kept}
        assert parent.kept is not None
        kept = {**parent.kept, "progress": {**parent.progress, child.task: kept}}
    raise AssertionError("a subgraph's path runs from its parent's checkpoint down")


def carried(found: SubgraphCheckpoint) -> dict[str, Any]:
    """What a replay from the subgraph checkpoint ``found`` carries into its first step: the progress of the
    task that holds it (the subgraph goes on from where the record had it)."""
    if len(found.path) < 2 or not found.path[1].stopped:
        return {}
    task = found.path[1].task
    assert task is not None
    return {task: found.record.progress[task]}


async def replay_from(views: ThreadViews, found: SubgraphCheckpoint) -> Position:
    """Where ``invoke(None, config)`` with a subgraph checkpoint's config begins: a branch at the parent
    checkpoint that runs it (LangGraph's fork), whose task goes on inside the subgraph from where the record
    had it: its finished nodes not run again, its interrupts asked afresh."""
    position = await views.fork(found.view, await views.state(found.view))
    progress = carried(found)
    return dataclasses.replace(position, progress=progress) if progress else position
