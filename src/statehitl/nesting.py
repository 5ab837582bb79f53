"""Machines inside machines: the one interface by which an agent, a StateGraph, a Graph or a Swarm runs
as a node of another machine.

An enclosing run (a Graph, a Swarm, or a StateGraph node that hosts an agent) keeps each nested
machine's state inside its own checkpoint as a sub-document, and hands it back on every call. The
nested machine runs on the same runner (``Runner.run_nested``), writes nothing itself, and either
finishes (``NodeDone``: its new sub-state and its result) or stops on interrupts (``NodeStopped``:
the interrupts, and what it must be given back as ``NodeCall.kept`` to go on from exactly there).
Its interrupt ids carry the enclosing node call's site as a prefix, so the enclosing run's answers
reach the nested scope that asked, at any depth, by id alone.

To make a new kind of thing usable as a node, give it an ``as_node()`` returning a ``MachineNode``.
``Agent.as_node()`` is the reference implementation (``statehitl.agent.node``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from statehitl import interrupt_ids
from statehitl.checkpoint.chain import StateCodec
from statehitl.interrupt import Interrupt, InterruptContext, InterruptRaised
from statehitl.position import NodeContext, Position, RunEnd

if TYPE_CHECKING:
    pass

__all__ = ["MachineNode", "NodeCall", "NodeDone", "NodeStopped", "call_machine_node", "kept_run", "node_call",
           "resumed_run", "started_run"]


@dataclass
class NodeCall:
    """One call of a nested machine: its input, its stored sub-state, and where it stands."""

    task: Any
    """The input: a prompt, content blocks (an agent or orchestrator), a dict (a StateGraph)."""
    state: dict[str, Any]
    """The machine's sub-state as the enclosing checkpoint stores it (``MachineNode.node_state()`` at first)."""
    interrupts: InterruptContext
    """The enclosing run's answers, and the prefix that keeps the nested interrupt ids apart."""
    thread_id: str
    invocation_state: dict[str, Any] = field(default_factory=dict)
    kept: Any = None
    """What the machine returned as ``NodeStopped.kept`` when this call last stopped, or None for a new call."""
    emit: Callable[[dict[str, Any]], None] | None = None
    """Where the nested machine's stream events go (None: nowhere)."""


@dataclass
class NodeDone:
    """The nested machine finished: its new sub-state, its result, and what it cost."""

    state: dict[str, Any]
    result: Any
    usage: dict[str, int] = field(default_factory=dict)
    status: str = "completed"
    """``completed``, or ``failed`` when the machine ended without doing its work (a cancelled call)."""


@dataclass
class NodeStopped:
    """The nested machine stopped on interrupts; ``kept`` (JSON) goes back to it as ``NodeCall.kept``."""

    interrupts: list[Interrupt]
    kept: Any
    result: Any = None
    """What the machine can show of the stopped call (an agent's result with ``stop_reason="interrupt"``)."""


@runtime_checkable
class MachineNode(Protocol):
    """A machine that runs as a node of another machine.

    ``append_channels`` names the keys of its sub-state that only ever grow (an agent's
    ``messages``): the enclosing checkpoint stores them as deltas, so a step writes what it added.
    """

    append_channels: frozenset[str]

    def node_state(self) -> dict[str, Any]:
        """The sub-state of a thread that never ran this node (an agent's constructor messages and state)."""
        ...

    async def run_node(self, call: NodeCall) -> NodeDone | NodeStopped:
        """Run once on ``call.task`` from ``call.state`` (or go on from ``call.kept``); write nothing."""
        ...

    def adopt_node_state(self, state: dict[str, Any]) -> None:
        """Mirror a sub-state into the live object (``agent.messages``) after a run or a restore."""
        ...


async def call_machine_node(node: MachineNode, task: Any, state: dict[str, Any], ctx: NodeContext, *,
                            emit: Callable[[dict[str, Any]], None] | None = None) -> NodeDone:
    """Run ``node`` from inside the node ``ctx`` belongs to, and return when it finished.

    If it stops on interrupts, this raises them as the enclosing node's own: the enclosing run stops,
    keeps where the nested one stood as the node's progress, and on resume this call picks it up from
    there with the answers. This is how a StateGraph node hosts an agent, and how Graph and Swarm
    call theirs.
    """
    outcome = await node.run_node(node_call(ctx, task, state, ctx.progress, emit))
    if isinstance(outcome, NodeStopped):
        raise InterruptRaised(outcome.interrupts, progress=outcome.kept)
    return outcome


def node_call(ctx: NodeContext, task: Any, state: dict[str, Any], kept: Any,
              emit: Callable[[dict[str, Any]], None] | None = None) -> NodeCall:
    """The call of a nested machine from inside the node ``ctx`` belongs to: its interrupt ids are
    prefixed with that node call's site, and it sees the enclosing run's answers."""
    prefix = interrupt_ids.nested(interrupt_ids.node(ctx.interrupts.prefix, ctx.step, ctx.node))
    context = InterruptContext(ctx.interrupts.responses, prefix, ctx.interrupts.thread, ctx.interrupts.digests)
    return NodeCall(task, state, context, ctx.thread_id, ctx.invocation_state, kept, emit)


class _Loads(StateCodec, Protocol):
    def load(self, values: dict[str, Any]) -> Any: ...


def kept_run(end: RunEnd, codec: StateCodec, base: dict[str, Any], *, paused: bool = False) -> dict[str, Any]:
    """What a nested run that stopped on interrupts keeps, as the enclosing checkpoint stores it (a
    ``progress.KeptRun``): where it stood, its state besides its growing lists, and only what those lists
    gained beyond ``base`` (its sub-state at the call's start, which the enclosing checkpoint already holds).
    ``paused``: it stopped at a breakpoint of its own instead, with nothing to answer."""
    from statehitl.progress import KeptRun  # the record kinds load when a run first stops, not at import

    return KeptRun(
        values=codec.dump_values(end.state),
        appended={c: codec.dump_items(end.state, c, len(base.get(c, ()))) for c in codec.append_channels},
        pending=end.pending, step=end.step, completed=end.completed, responses=end.responses, progress=end.progress,
        schedule=end.schedule, paused=paused,
    ).stored()


def started_run(call: NodeCall, state: Any, pending: list[str]) -> Position:
    """Where a new nested run enters: ``state`` before ``pending``, with the enclosing run's answers and
    the digests they were given for (a nested agent's tool call is checked against them)."""
    return Position(state=state, pending=pending, responses=dict(call.interrupts.responses),
                    digests=call.interrupts.digests)


def resumed_run(kept: Any, codec: _Loads, base: dict[str, Any], call: NodeCall) -> Position:
    """Where a nested run re-enters from what ``kept_run`` kept (as stored, or read: a ``KeptRun``), with the
    enclosing run's answers."""
    from statehitl.progress import KeptRun

    run = kept if isinstance(kept, KeptRun) else KeptRun.load(kept, f"what node {call.interrupts.prefix!r} kept")
    grown = {c: [*base.get(c, ()), *items] for c, items in run.appended.items()}
    state = codec.load({**run.values, **grown})
    return Position(state=state, pending=list(run.pending), step=run.step, completed=dict(run.completed),
                    responses={**run.responses, **call.interrupts.responses}, progress=dict(run.progress),
                    digests=call.interrupts.digests, schedule=run.schedule)
