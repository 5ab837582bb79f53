"""LangGraph's scheduling: which tasks the next superstep runs, after the tasks of one step finished.

A node runs in the step after any node with an edge to it finished (once, however many did); a
router's targets and a ``Command(goto=)`` count as edges; a ``Send`` is a task of its own, its node
run on the Send's argument; a waiting edge (``add_edge([a, b], c)``) fires once all its sources have
finished, across steps. Routers read the state as their node left it: the step's state with that
node's own update applied, not its siblings' (LangGraph's "fresh" read).

The next step's tasks are ordered as LangGraph applies their writes: nodes by name, then Sends in the
order they were made. What must survive between steps (the Sends' arguments, the joins' progress, the
deferred nodes) is the ``Schedule`` (``statehitl.progress``), stored with each checkpoint; a step that leaves
nothing of the kind keeps None.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any

from statehitl.commands import GOTO, HANDLED, Send, goto_of, loaded_arg
from statehitl.errors import GraphValidationError
from statehitl.machine import END, START, Machine

if TYPE_CHECKING:
    from statehitl.progress import Schedule


Apply = Callable[[Any, list[tuple[str, dict[str, Any]]]], Any]
"""``apply(state, writes)``: the state after ``writes`` (the state adapter's reducers)."""

Routes = dict[str, list[str | Send]]
"""Where each finished task's routers went, by task, awaited beforehand (``awaited_routes``)."""


async def plan_start(machine: Machine, state: Any, goto: Sequence[str | Send] = ()
                     ) -> tuple[list[str], Schedule | None]:
    """The first step's tasks of a run from START on ``state`` (and ``goto``: the targets of a caller's
    ``Command(goto=...)``)."""
    return _tasks(machine, [*await machine.atargets(START, state), *goto], {})


async def awaited_routes(machine: Machine, apply: Apply, before: Any, done: list[tuple[str, dict[str, Any]]]
                         ) -> Routes | None:
    """The targets of ``done``'s routers, each awaited where it is an async path function, for ``plan_step``;
    None for a machine without one, whose steps are planned without a coroutine (a chain pays for none)."""
    if not machine.awaits:
        return None
    routes: Routes = {}
    for task, update in done:
        node = machine.task_node(task)
        if machine.transitions[node][1]:
            routes[task] = await machine.atargets(node, apply(before, [(task, update)]))
    return routes


def plan_step(machine: Machine, apply: Apply, before: Any, done: list[tuple[str, dict[str, Any]]],
              schedule: Schedule | None, *, routes: Routes | None = None) -> tuple[list[str], Schedule | None]:
    """The next step's tasks after ``done`` (each finished task and its update, in order) left ``before``;
    ``routes``: where its routers went, when they were awaited beforehand (``awaited_routes``)."""
    if len(done) == 1 and schedule is None:  # one node done, nothing kept: a chain's step
        task, update = done[0]
        fixed = machine.fixed_next.get(task)
        if fixed is not None and GOTO not in update and HANDLED not in update:
            return list(fixed), None
    targets: list[str | Send] = []
    joins: dict[str, list[str]] = {} if schedule is None else {k: list(v) for k, v in schedule.joins.items()}
    for task, update in done:
        node = machine.task_node(task)
        if GOTO in update:
            targets.extend(goto_of(update))
        if HANDLED in update:  # the node failed and its error handler wrote instead: only the handler's goto
            continue
        edges, routers = machine.transitions[node]
        if routers:
            chosen = routes[task] if routes is not None else machine.targets(node, apply(before, [(task, update)]))
            targets.extend(chosen)
        else:
            targets.extend(e.target for e in edges)
        for join in machine.joins_from[node]:
            seen = joins.setdefault(join.key, [])
            if node not in seen:
                seen.append(node)
            if len(seen) == len(join.sources):
                del joins[join.key]
                targets.append(join.target)
    return _tasks(machine, targets, joins, () if schedule is None else schedule.deferred)


def _tasks(machine: Machine, targets: list[str | Send], joins: dict[str, list[str]],
           deferred: Sequence[str] = ()) -> tuple[list[str], Schedule | None]:
    """The tasks ``targets`` make, and what waits: the joins' progress, and deferred nodes (``add_node(defer=
    True)``), which run only once nothing else is left to run."""
    sends: dict[str, Any] = {}
    timeouts: dict[str, dict[str, Any]] = {}
    pulled = set(_named_targets(machine, targets, sends, timeouts))
    held = sorted((pulled & machine.deferred) | set(deferred))
    pulled -= machine.deferred
    if held and not pulled and not sends:  # nothing else left: the deferred nodes' turn
        pulled, held = set(held), []
    if not (sends or joins or held):
        return sorted(pulled), None
    from statehitl.progress import Schedule  # only a graph with Sends, joins or deferred nodes needs it

    return [*sorted(pulled), *sends], Schedule(sends=sends, joins=joins, deferred=held, timeouts=timeouts)


def _named_targets(machine: Machine, targets: Iterable[str | Send], sends: dict[str, Any],
                   timeouts: dict[str, dict[str, Any]]) -> list[str]:
    """The nodes ``targets`` name (END left out), in order; each ``Send`` added to ``sends`` as a task of its own,
    its argument as stored (read back by ``send_arg``), and its ``timeout`` to ``timeouts``. An unknown node is
    refused."""
    named = []
    for target in targets:
        if isinstance(target, Send):
            if target.node not in machine.nodes:
                raise _unknown(machine, target.node)
            task = f"{target.node}:{len(sends)}"
            sends[task] = target.stored_arg()
            limits = target.stored_timeout()
            if limits is not None:
                timeouts[task] = limits
        elif target != END:
            if target not in machine.nodes:
                raise _unknown(machine, target)
            named.append(target)
    return named


def with_goto(machine: Machine, pending: list[str], schedule: Schedule | None, goto: Sequence[str | Send]
              ) -> tuple[list[str], Schedule | None]:
    """``pending`` (with its ``schedule``) and the tasks of ``goto`` besides: a caller's ``Command(goto=...)``
    on a thread that goes on from a step (LangGraph runs those nodes in that step)."""
    sends = {} if schedule is None else dict(schedule.sends)
    timeouts = {} if schedule is None else dict(schedule.timeouts)
    nodes = [t for t in pending if t not in sends] + _named_targets(machine, goto, sends, timeouts)
    tasks = [*sorted(set(nodes)), *sends]
    if not sends or (schedule is not None and sends == schedule.sends):
        return tasks, schedule
    from statehitl.progress import Schedule

    kept = Schedule() if schedule is None else schedule
    return tasks, kept.model_copy(update={"sends": sends, "timeouts": timeouts})


def schedule_of(stored: dict[str, Any], where: str) -> Schedule | None:
    """The schedule a checkpoint stores (``CheckpointRecord.schedule``), read through its model; ``where``
    names the checkpoint in the error if it cannot be. None when nothing waits."""
    if not stored:
        return None
    from statehitl.progress import Schedule

    return Schedule.load(stored, where)


def stored_schedule(schedule: Schedule | None) -> dict[str, Any]:
    """``schedule`` as a checkpoint stores it (empty when nothing waits)."""
    return {} if schedule is None else schedule.stored()


def send_timeout(schedule: Schedule, task: str) -> dict[str, Any] | None:
    """The limits the Send that made ``task`` gave it (``Send(timeout=)``), as stored; None: its node's own."""
    return schedule.timeouts.get(task) if schedule.timeouts else None


def send_arg(schedule: Schedule | None, task: str) -> tuple[bool, Any]:
    """Whether ``task`` is a Send's, and its argument (as it was given: the schedule holds it as stored)."""
    if schedule is None or task not in schedule.sends:
        return False, None
    return True, loaded_arg(schedule.sends[task])


def _unknown(machine: Machine, name: str) -> Exception:
    return GraphValidationError(f"{name!r} is not a node of {machine.name!r} (its nodes: {sorted(machine.nodes)}); "
                                "a Send or Command(goto=) named it")
