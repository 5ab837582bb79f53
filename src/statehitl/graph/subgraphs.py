"""A compiled StateGraph inside another: LangGraph's subgraph, on statehitl's nesting.

A subgraph runs as a node of its parent (``add_node(name, graph)``) or in a node's own code
(``graph.invoke(...)`` there). It starts from the channels it shares with its parent's state (or from
what the node gave it), and its result is the node's update (or what ``invoke`` returns there). An
interrupt inside it stops the parent's node; where the subgraph stood is kept as that node's progress in
the parent's checkpoint, so the resume goes on inside the subgraph from the node that asked, without
re-running the ones before it. A subgraph compiled with ``checkpointer=True`` keeps its state between
calls in a private channel of its parent (``kept_state_channel``), which the next call goes on from.

Namespaces are LangGraph's: ``node:<task id>`` for a subgraph run, ``node`` for one that keeps its state
(whose runs are one), and the call's order after it for a node's second and later graph calls.
"""

from __future__ import annotations

import contextlib
import inspect
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any, Protocol

from statehitl import interrupt_ids
from statehitl.errors import GraphValidationError, ParentCommand
from statehitl.graph.graph_state import StateGraphSchema
from statehitl.graph.node import StateGraphNode
from statehitl.graph.node_calls import current_run, nested_scope, node_config, reset_run, set_run, task_key
from statehitl.graph.result import GraphRunResult
from statehitl.graph.run_stream import RunStream
from statehitl.graph.state_kinds import StateKind
from statehitl.interrupt import InterruptContext, InterruptRaised
from statehitl.machine import Machine
from statehitl.nesting import NodeCall, NodeStopped, call_machine_node
from statehitl.position import NodeContext
from statehitl.stream_sink import Namespace, current_scope, enter_scope, leave_scope

if TYPE_CHECKING:
    from statehitl.progress import InvokedGraphs


class Subgraph(Protocol):
    """What runs a compiled graph inside another: its nodes as one machine node, its state's adapter, whether
    it keeps its state between calls, and what its ``invoke`` returns for a run's result."""

    schema: StateGraphSchema
    machine: Machine
    keeps_state: bool

    def as_node(self, *, breakpoints: bool = False) -> StateGraphNode[Any]: ...
    def result_of(self, result: GraphRunResult[Any]) -> Any: ...


def node_namespace(ctx: NodeContext, keeps_state: bool) -> str:
    """The namespace of the subgraph run by the node call ``ctx``, as LangGraph names it: ``node:<task id>``,
    or ``node`` for a subgraph that keeps its state (its runs continue one another)."""
    name = ctx.node.partition(":")[0]
    return name if keeps_state else f"{name}:{task_key(ctx.step, ctx.node)}"


def invoked_namespace(ctx: NodeContext, index: int, keeps_state: bool) -> tuple[str, ...]:
    """The namespace of the ``index``-th graph the node call ``ctx`` invokes in its code: the node call's,
    with the call's order after it from the second on (LangGraph's ``node:<task id>|1``)."""
    base = node_namespace(ctx, keeps_state)
    return (base,) if index == 0 else (base, str(index))


def subgraph_handler(name: str, sub: Subgraph, parent: StateKind,
                     kept: str | None = None) -> Callable[..., Any]:
    """The handler that runs ``sub`` as node ``name`` of a graph over ``parent``: its whole final state, on
    the channels the two share, is the node's update (as LangGraph writes it, so a reducer channel gets the
    subgraph's copy of it appended). ``kept``: the parent's channel where a subgraph compiled with
    ``checkpointer=True`` keeps its state, which the next call goes on from (the input merged in); the
    node's machinery writes it (``ctx.writes``), so no reader is shown it as the node's update."""
    node = sub.as_node(breakpoints=True)
    shared = [k for k in parent.model.model_fields if k in sub.schema.fields]

    async def run_subgraph(state: Any, ctx: NodeContext) -> Any:
        values = state if ctx.sent else parent.values(state)
        task = {k: v for k, v in values.items() if k in sub.schema.fields}
        labels = (node_namespace(ctx, kept is not None),)
        token = set_run(nested_scope(labels))
        before = (getattr(state, kept) or {}) if kept is not None and not ctx.sent else {}
        try:
            with streamed_as(labels, sub):
                done = await call_machine_node(node, task, before, ctx)
        except ParentCommand as handed:  # a node of the subgraph sent its update and goto here
            returned: Any = handed.command
        else:
            returned = {k: done.state[k] for k in shared if k in done.state}
            if kept is not None:
                ctx.writes = {**(ctx.writes or {}), kept: done.state}
        finally:
            reset_run(token)
        _stream_messages(sub, values, returned, ctx)
        return returned

    run_subgraph.__name__ = name
    run_subgraph.shown_input = lambda state, step: parent.values(state)  # type: ignore[attr-defined]  # a task's input
    return run_subgraph


@contextlib.contextmanager
def streamed_as(labels: Namespace, sub: Subgraph) -> Iterator[None]:
    """While ``sub`` runs as the subgraph at ``labels`` (after the current namespace) of a streamed run, its
    stream is that run's at the longer namespace (``stream(subgraphs=True)`` shows it)."""
    outer = current_scope()
    if not isinstance(outer, RunStream):
        yield
        return
    token = enter_scope(outer.nested(labels, sub.schema, sub.machine))
    try:
        yield
    finally:
        leave_scope(token)


class _KeptStates:
    """The states a node call's graph keeps for the graphs compiled with ``checkpointer=True`` that the
    node invokes (its private ``channel``, by call order); ``changed`` once a call finished. (A plain class:
    a dataclass costs every import of statehitl.graph its generated methods.)"""

    __slots__ = ("changed", "channel", "states")

    def __init__(self, channel: str, states: dict[str, Any]) -> None:
        self.channel = channel
        self.states = states
        self.changed = False


_KEPT: ContextVar[_KeptStates | None] = ContextVar("statehitl_kept_subgraph_states", default=None)


def keeping_states(handler: Callable[..., Any], channel: str) -> Callable[..., Any]:
    """``handler`` (sync or async, ``(state, ctx)``) of a node whose code may invoke graphs compiled with
    ``checkpointer=True``: each such call goes on from the state kept in ``channel`` for its order, and
    the node's update keeps the state each call ended with."""

    def begin(state: Any, ctx: NodeContext) -> _KeptStates | None:
        return None if ctx.sent else _KeptStates(channel, dict(getattr(state, channel, None) or {}))

    def end(kept: _KeptStates | None, ctx: NodeContext) -> None:
        if kept is not None and kept.changed:
            ctx.writes = {**(ctx.writes or {}), channel: kept.states}

    if inspect.iscoroutinefunction(handler):

        async def run_async(state: Any, ctx: NodeContext) -> Any:
            kept = begin(state, ctx)
            token = _KEPT.set(kept)
            try:
                returned = await handler(state, ctx)
            finally:
                _KEPT.reset(token)
            end(kept, ctx)
            return returned

        run_async.__name__ = handler.__name__
        return run_async

    def run(state: Any, ctx: NodeContext) -> Any:
        kept = begin(state, ctx)
        token = _KEPT.set(kept)
        try:
            returned = handler(state, ctx)
        finally:
            _KEPT.reset(token)
        end(kept, ctx)
        return returned

    run.__name__ = handler.__name__
    return run


def _stream_messages(sub: Subgraph, given: dict[str, Any], returned: Any, ctx: NodeContext) -> None:
    """The messages a subgraph added, sent as its node's (``stream_mode="messages"``), as LangGraph does."""
    stream = current_scope()
    if not isinstance(stream, RunStream) or stream.messages is None or not isinstance(returned, dict):
        return
    from statehitl.graph.message_forms import coerce_all  # a run that streams messages loaded them already

    scope = current_run()
    held = {k: coerce_all(v) for k, v in returned.items() if k in sub.schema.message_channels}  # stored as JSON
    config = node_config({}, ctx, None) if scope is None else node_config(scope.config, ctx, None, scope.namespace)
    stream.returned_messages(given, held, config)


async def invoke_inside(sub: Subgraph, input: Any, ctx: NodeContext) -> Any:
    """``sub.invoke(input)`` called in the code of node ``ctx``: the graph runs as that node's subgraph, as
    in LangGraph. Its interrupts stop the node, and the resume goes on inside it; each graph the node invokes
    keeps its place in the node's progress by the order of the calls. A graph compiled with
    ``checkpointer=True`` goes on from the state its last call at this order ended with."""
    index = ctx.invoked
    ctx.invoked += 1
    kept = _invoked(ctx)
    calls: dict[str, Any] = {} if kept is None else dict(kept.calls)
    graphs: dict[str, str] = {} if kept is None else dict(kept.graphs)
    states = _states_for(sub, ctx) if sub.keeps_state else None
    before = (states.states.get(str(index)) or {}) if states is not None else {}
    site = interrupt_ids.node(ctx.interrupts.prefix, ctx.step, ctx.node)
    context = InterruptContext(ctx.interrupts.responses, interrupt_ids.nested_call(site, index),
                               ctx.interrupts.thread, ctx.interrupts.digests)
    call = NodeCall(input, before, context, ctx.thread_id, ctx.invocation_state, calls.get(str(index)))
    labels = invoked_namespace(ctx, index, sub.keeps_state)
    token = set_run(nested_scope(labels))
    try:
        with streamed_as(labels, sub):
            outcome = await sub.as_node(breakpoints=True).run_node(call)
    finally:
        reset_run(token)
    if isinstance(outcome, NodeStopped):
        calls[str(index)] = outcome.kept
        graphs[str(index)] = sub.machine.fingerprint
        from statehitl.progress import InvokedGraphs  # the record kinds load when a run first stops

        raise InterruptRaised(outcome.interrupts, progress=InvokedGraphs(calls=calls, graphs=graphs).stored())
    if states is not None:
        states.states[str(index)] = outcome.state
        states.changed = True
    return sub.result_of(outcome.result)


def _invoked(ctx: NodeContext) -> InvokedGraphs | None:
    """What node ``ctx`` kept of the graphs it invoked when it last stopped, if it kept that."""
    if ctx.progress is None:
        return None
    from statehitl.progress import InvokedGraphs

    if not InvokedGraphs.holds(ctx.progress):
        return None
    return InvokedGraphs.load(ctx.progress, f"what node {ctx.node!r} kept of the graphs it invoked")


def _states_for(sub: Subgraph, ctx: NodeContext) -> _KeptStates:
    """Where the node call ``ctx`` keeps the state of ``sub``, a graph compiled with ``checkpointer=True``."""
    states = _KEPT.get()
    if states is None:
        why = ("a task made by a Send has no state of its own to keep it in" if ctx.sent else
               "compile() did not find it among what the node's function refers to (its closure, the module "
               "globals it names, their attributes)")
        raise GraphValidationError(
            f"node {ctx.node!r} invoked {sub.machine.name!r}, a graph compiled with checkpointer=True, but "
            f"{why}; refer to the graph there, or add it as a node of the parent (add_node(name, graph))"
        )
    return states
