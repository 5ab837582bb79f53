"""LangGraph's scheduling: which tasks the next superstep runs, after the tasks of one step finished.

A node runs in the step after any node with an edge to it finished (once, however many did); a
router's targets and a ``Command(goto=)`` count as edges; a ``Send`` is a task of its own, its node
run on the Send's argument; a waiting edge (``add_edge([a, b], c)``) fires once all its sources have
finished, across steps. Routers read the state as their node left it: the step's state with that
node's own update applied, not its siblings' (LangGraph's "fresh" read).

The next step's tasks are ordered as LangGraph applies their writes: nodes by name, then Sends in the
order they were made. What must survive between steps (the Sends' arguments, the joins' progress) is the
``schedule``, stored with each checkpoint as JSON.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from statehitl.commands import GOTO, Send, goto_of
from statehitl.errors import GraphValidationError
from statehitl.machine import END, START, Machine
from statehitl.values import decode_value

__all__ = ["Schedule", "plan_start", "plan_step", "send_arg"]

Schedule = dict[str, Any]
"""``{"sends": {task: arg}, "joins": {join key: [sources finished]}, "deferred": [nodes]}``, each present
only when not empty."""

Apply = Callable[[Any, list[tuple[str, dict[str, Any]]]], Any]


def plan_start(machine: Machine, state: Any) -> tuple[list[str], Schedule]:
    """The first step's tasks of a run from START on ``state``."""
    return _tasks(machine, machine.targets(START, state), {})


def plan_step(machine: Machine, apply: Apply, before: Any, done: list[tuple[str, dict[str, Any]]],
              schedule: Schedule) -> tuple[list[str], Schedule]:
    """The next step's tasks after ``done`` (each finished task and its update, in order) left ``before``."""
    if len(done) == 1 and not schedule:  # one node done, nothing kept: a chain's step
        task, update = done[0]
        fixed = machine.fixed_next.get(task)
        if fixed is not None and GOTO not in update:
            return list(fixed), {}
    targets: list[str | Send] = []
    joins: dict[str, list[str]] = {k: list(v) for k, v in schedule.get("joins", {}).items()}
    for task, update in done:
        node = machine.task_node(task)
        if GOTO in update:
            targets.extend(goto_of(update))
        edges, routers = machine.transitions[node]
        if routers:
            targets.extend(machine.targets(node, apply(before, [(task, update)])))
        else:
            targets.extend(e.target for e in edges)
        for join in machine.joins_from[node]:
            seen = joins.setdefault(join.key, [])
            if node not in seen:
                seen.append(node)
            if len(seen) == len(join.sources):
                del joins[join.key]
                targets.append(join.target)
    return _tasks(machine, targets, joins, schedule.get("deferred", ()))


def _tasks(machine: Machine, targets: list[str | Send], joins: dict[str, list[str]],
           deferred: Sequence[str] = ()) -> tuple[list[str], Schedule]:
    """The tasks ``targets`` make, and what waits: the joins' progress, and deferred nodes (``add_node(defer=
    True)``), which run only once nothing else is left to run."""
    pulled: set[str] = set()
    sends: dict[str, Any] = {}
    for target in targets:
        if isinstance(target, Send):
            if target.node not in machine.nodes:
                raise _unknown(machine, target.node)
            sends[f"{target.node}:{len(sends)}"] = target.stored_arg()  # as stored: read back by send_arg
        elif target != END:
            if target not in machine.nodes:
                raise _unknown(machine, target)
            pulled.add(target)
    held = sorted((pulled & machine.deferred) | set(deferred))
    pulled -= machine.deferred
    if held and not pulled and not sends:  # nothing else left: the deferred nodes' turn
        pulled, held = set(held), []
    schedule: Schedule = {}
    if sends:
        schedule["sends"] = sends
    if joins:
        schedule["joins"] = joins
    if held:
        schedule["deferred"] = held
    return [*sorted(pulled), *sends], schedule


def send_arg(schedule: Schedule, task: str) -> tuple[bool, Any]:
    """Whether ``task`` is a Send's, and its argument (as it was given: the schedule holds it as stored)."""
    sends = schedule.get("sends")
    if sends is None or task not in sends:
        return False, None
    return True, decode_value(sends[task])


def _unknown(machine: Machine, name: str) -> Exception:
    return GraphValidationError(f"{name!r} is not a node of {machine.name!r} (its nodes: {sorted(machine.nodes)}); "
                                "a Send or Command(goto=) named it")
