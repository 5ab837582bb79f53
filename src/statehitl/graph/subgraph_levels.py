"""Where each subgraph stands inside a checkpoint of its parent: LangGraph's subgraph checkpoints, as views
over the parent's records.

statehitl writes no checkpoint of a subgraph's own. A subgraph stopped inside (an interrupt, a breakpoint)
is kept in its parent's checkpoint as the progress of the task that runs it (``nesting.kept_run``, nested
as deep as the subgraphs are); a subgraph compiled with ``checkpointer=True`` keeps the state its last run
ended with in a private channel of its parent (``graph.subgraphs``). A ``Level`` is one such run, read from
there: which graph, under which namespace, with what state and where it stands. A checkpoint's top level
is its own graph's run; ``child_levels`` reads the runs a task holds, ``find_level`` the run a namespace
names (LangGraph's ``checkpoint_ns``: ``node:<task id>`` parts, ``node`` for a graph that keeps its
state, a call's order after a node's later graph calls, joined by ``|``).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from statehitl.graph.graph_state import StateGraphSchema
from statehitl.graph.node_calls import task_key
from statehitl.graph.state_channels import kept_state_channel
from statehitl.machine import Machine

INVOKED = "invoked graphs"
"""The ``kind`` of a node's progress when graphs it invoked in its own code stopped: ``{"kind": INVOKED,
"calls": {order: what the call kept}, "graphs": {order: the called graph's machine fingerprint}}``."""


class LevelGraph(Protocol):
    """What a level needs of a compiled graph: its nodes, state, the graphs that are its nodes or that its
    nodes' code reaches, and whether it keeps its state between calls."""

    machine: Machine
    schema: StateGraphSchema
    keeps_state: bool

    @property
    def subgraphs(self) -> Mapping[str, LevelGraph]: ...
    @property
    def invoked(self) -> Mapping[str, Sequence[LevelGraph]]: ...


@dataclass(frozen=True)
class Level:
    """One run of a graph inside a checkpoint: the checkpoint's own (``namespace`` ""), a subgraph stopped
    inside it (``stopped``: ``kept`` is what its task keeps of it), or the state a graph compiled with
    ``checkpointer=True`` ended its last run with (not ``stopped``)."""

    graph: LevelGraph
    namespace: str
    state: Any
    step: int
    pending: list[str]
    completed: dict[str, dict[str, Any]] = field(default_factory=dict)
    progress: dict[str, Any] = field(default_factory=dict)
    schedule: dict[str, Any] = field(default_factory=dict)
    stopped: bool = True
    kept: dict[str, Any] | None = None
    base: dict[str, Any] = field(default_factory=dict)
    """The subgraph's sub-state when its call began (what its growing lists are kept beyond)."""
    task: str | None = None
    """The parent's task that runs this level (None for a checkpoint's own)."""
    call: int = 0
    """Which of the task's graph calls this is (0 for a subgraph that is the node)."""
    outer: tuple[str, ...] = ()
    """The namespaces of the subgraph runs this one runs inside, outermost first (the checkpoint's own, "",
    left out)."""


def top_level(graph: LevelGraph, state: Any, step: int, *, pending: list[str], completed: dict[str, dict[str, Any]],
              progress: dict[str, Any], schedule: dict[str, Any]) -> Level:
    """A checkpoint's own level: ``graph``'s run, with ``state`` before the step it stands at."""
    return Level(graph, "", state, step, list(pending), dict(completed), dict(progress), dict(schedule))


def _join(namespace: str, *parts: str) -> str:
    return "|".join(p for p in (namespace, *parts) if p)


def _outer(level: Level) -> tuple[str, ...]:
    return (*level.outer, level.namespace) if level.namespace else level.outer


def _kept_level(parent: Level, graph: LevelGraph, namespace: str, kept: dict[str, Any], *, base: dict[str, Any],
                task: str, call: int) -> Level:
    """The level of a subgraph stopped inside: its state rebuilt from what its task keeps (its growing lists
    kept beyond ``base``)."""
    grown = {c: [*base.get(c, ()), *items] for c, items in (kept.get("appended") or {}).items()}
    state = graph.schema.load({**kept["values"], **grown})
    return Level(graph, namespace, state, kept["step"], list(kept["pending"]), dict(kept.get("completed") or {}),
                 dict(kept.get("progress") or {}), dict(kept.get("schedule") or {}), True, kept, base, task, call,
                 _outer(parent))


def _ended_level(parent: Level, graph: LevelGraph, namespace: str, values: dict[str, Any], *, task: str,
                 call: int) -> Level:
    """The level of a graph compiled with ``checkpointer=True`` that finished: the state it ended with."""
    return Level(graph, namespace, graph.schema.load(values), 0, [], stopped=False, base=values, task=task,
                 call=call, outer=_outer(parent))


def _kept_states(level: Level, node: str) -> dict[str, Any]:
    return getattr(level.state, kept_state_channel(node), None) or {}


def child_levels(level: Level, task: str) -> list[Level]:
    """The runs of subgraphs that ``task`` (pending at ``level``) holds, in call order: a subgraph stopped
    inside, or what one compiled with ``checkpointer=True`` ended its last run with."""
    graph = level.graph
    node = graph.machine.task_node(task)
    sub = graph.subgraphs.get(node)
    progress = level.progress.get(task)
    if sub is not None:
        namespace = _join(level.namespace, node if sub.keeps_state else f"{node}:{task_key(level.step, task)}")
        base = _kept_states(level, node) if sub.keeps_state else {}
        if isinstance(progress, dict) and "values" in progress:
            return [_kept_level(level, sub, namespace, progress, base=base, task=task, call=0)]
        return [_ended_level(level, sub, namespace, base, task=task, call=0)] if base else []
    return _invoked_levels(level, task, node, progress)


def _invoked_levels(level: Level, task: str, node: str, progress: Any) -> list[Level]:
    """The runs of the graphs ``task``'s code invoked: those stopped inside (its progress says which graph
    each call was), and the states the ones compiled with ``checkpointer=True`` ended their last run with."""
    candidates = level.graph.invoked.get(node, ())
    if not candidates:
        return []
    by_print = {g.machine.fingerprint: g for g in candidates}
    stopped = progress if isinstance(progress, dict) and progress.get("kind") == INVOKED else {}
    calls, graphs = stopped.get("calls") or {}, stopped.get("graphs") or {}
    states = _kept_states(level, node)
    levels: dict[int, Level] = {}
    for order in sorted({*calls, *states}, key=int):
        call = int(order)
        keeps = [g for g in candidates if g.keeps_state]
        graph = by_print.get(graphs.get(order, "")) or (keeps[0] if order in states and len(keeps) == 1 else None)
        if graph is None:
            continue
        base_ns = f"{node}" if graph.keeps_state else f"{node}:{task_key(level.step, task)}"
        namespace = _join(level.namespace, base_ns, str(call) if call else "")
        base = states.get(order) or {} if graph.keeps_state else {}
        if order in calls:
            levels[call] = _kept_level(level, graph, namespace, calls[order], base=base, task=task, call=call)
        elif base:
            levels[call] = _ended_level(level, graph, namespace, base, task=task, call=call)
    return [levels[c] for c in sorted(levels)]


def level_below(level: Level, task: str) -> Level | None:
    """The run ``task``'s snapshot shows (LangGraph's ``task.state``): its subgraph's, or of the graphs its
    code invoked, the first call's if it has one, else the last one stopped inside."""
    levels = child_levels(level, task)
    if not levels:
        return None
    first = next((lv for lv in levels if lv.call == 0), None)
    stopped = [lv for lv in levels if lv.stopped]
    return first if first is not None and (first.stopped or not stopped) else (stopped[-1] if stopped else first)


def _levels(level: Level) -> Iterator[Level]:
    """The runs under ``level``: of its waiting tasks, and what each graph compiled with ``checkpointer=True``
    its nodes run ended its last run with, whether that node runs next or not."""
    seen: set[str] = set()
    for task in level.pending:
        if task not in level.completed:
            for child in child_levels(level, task):
                seen.add(child.namespace)
                yield child
    graph = level.graph
    keeping = [n for n, g in graph.subgraphs.items() if g.keeps_state]
    keeping += [n for n, gs in graph.invoked.items() if any(g.keeps_state for g in gs)]
    for node in keeping:
        for child in child_levels(level, node):
            if child.namespace not in seen:
                yield child


def level_path(top: Level, namespace: str) -> list[Level]:
    """The runs from ``top`` down to the one ``namespace`` names (empty: no run there, in this checkpoint)."""
    if not namespace:
        return [top]
    for child in _levels(top):
        if child.namespace == namespace:
            return [top, child]
        if namespace.startswith(child.namespace + "|") and child.stopped:
            below = level_path(child, namespace)
            if below:
                return [top, *below]
    return []


def find_level(top: Level, namespace: str) -> Level | None:
    """The run ``namespace`` names under ``top`` (None: no run there, in this checkpoint)."""
    path = level_path(top, namespace)
    return path[-1] if path else None


def waiting_nodes(level: Level) -> set[str]:
    """The nodes waiting in ``level`` and in every run stopped under it: the interrupts raised by nodes of
    these names are the ones this run waits on."""
    names: set[str] = set()
    if not level.stopped:
        return names
    for task in level.pending:
        if task in level.completed:
            continue
        names.add(level.graph.machine.task_node(task))
        for child in child_levels(level, task):
            names |= waiting_nodes(child)
    return names
