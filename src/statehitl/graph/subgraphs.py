"""A compiled StateGraph as a node of another: LangGraph's subgraph, on statehitl's nesting.

The subgraph starts from the parent's state (the channels the two share) and its result is the node's
update (again the shared channels). An interrupt inside it stops the parent's node; where the subgraph
stood is kept as that node's progress in the parent's checkpoint, so the resume goes on inside the
subgraph from the node that asked, without re-running the ones before it.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, Protocol

from statehitl import interrupt_ids
from statehitl.commands import ParentCommand
from statehitl.errors import GraphValidationError
from statehitl.graph.graph_state import StateGraphSchema
from statehitl.graph.node import StateGraphNode
from statehitl.graph.node_calls import current_run, nested_scope, node_config, reset_run, set_run
from statehitl.graph.result import GraphRunResult
from statehitl.graph.run_stream import RunStream
from statehitl.graph.state_kinds import StateKind
from statehitl.interrupt import InterruptContext, InterruptRaised
from statehitl.machine import Machine
from statehitl.nesting import NodeCall, NodeStopped, call_machine_node
from statehitl.position import NodeContext
from statehitl.stream_sink import current_scope, enter_scope, leave_scope

if TYPE_CHECKING:
    from statehitl.progress import InvokedGraphs

__all__ = ["Subgraph", "invoke_inside", "streamed_as", "subgraph_handler"]


class Subgraph(Protocol):
    """What runs a compiled graph inside another: its nodes as one machine node, its state's adapter, whether
    it keeps its state between calls, and what its ``invoke`` returns for a run's result."""

    schema: StateGraphSchema
    machine: Machine
    keeps_state: bool

    def as_node(self) -> StateGraphNode[Any]: ...
    def result_of(self, result: GraphRunResult[Any]) -> Any: ...


def subgraph_handler(name: str, sub: Subgraph, parent: StateKind,
                     kept: str | None = None) -> Callable[..., Any]:
    """The handler that runs ``sub`` as node ``name`` of a graph over ``parent``: its whole final state, on
    the channels the two share, is the node's update (as LangGraph writes it, so a reducer channel gets the
    subgraph's copy of it appended). ``kept``: the parent's channel where a subgraph compiled with
    ``checkpointer=True`` keeps its state, which the next call goes on from (the input merged in)."""
    node = sub.as_node()
    shared = [k for k in parent.model.model_fields if k in sub.schema.fields]

    async def run_subgraph(state: Any, ctx: NodeContext) -> Any:
        values = state if ctx.sent else parent.values(state)
        task = {k: v for k, v in values.items() if k in sub.schema.fields}
        token = set_run(nested_scope())
        before = (getattr(state, kept) or {}) if kept is not None and not ctx.sent else {}
        try:
            with streamed_as(f"{name}:{ctx.step}", sub):
                done = await call_machine_node(node, task, before, ctx)
        except ParentCommand as handed:  # a node of the subgraph sent its update and goto here
            returned: Any = handed.command
        else:
            returned = {k: done.state[k] for k in shared if k in done.state}
            if kept is not None:
                returned[kept] = done.state
        finally:
            reset_run(token)
        _stream_messages(sub, values, returned, ctx)
        return returned

    run_subgraph.__name__ = name
    run_subgraph.shown_input = lambda state, step: parent.values(state)  # type: ignore[attr-defined]  # a task's input
    return run_subgraph


@contextlib.contextmanager
def streamed_as(label: str, sub: Subgraph) -> Iterator[None]:
    """While ``sub`` runs as the subgraph labelled ``label`` of a streamed run, its stream is that run's at
    the namespace one longer (``stream(subgraphs=True)`` shows it)."""
    outer = current_scope()
    if not isinstance(outer, RunStream):
        yield
        return
    token = enter_scope(outer.nested(label, sub.schema, sub.machine))
    try:
        yield
    finally:
        leave_scope(token)


def _stream_messages(sub: Subgraph, given: dict[str, Any], returned: Any, ctx: NodeContext) -> None:
    """The messages a subgraph added, sent as its node's (``stream_mode="messages"``), as LangGraph does."""
    stream = current_scope()
    if not isinstance(stream, RunStream) or stream.messages is None or not isinstance(returned, dict):
        return
    from statehitl.graph.message_forms import coerce_all  # a run that streams messages loaded them already

    scope = current_run()
    held = {k: coerce_all(v) for k, v in returned.items() if k in sub.schema.message_channels}  # stored as JSON
    stream.returned_messages(given, held, node_config(scope.config if scope is not None else {}, ctx, None))


async def invoke_inside(sub: Subgraph, input: Any, ctx: NodeContext) -> Any:
    """``sub.invoke(input)`` called in the code of node ``ctx``: the graph runs as that node's subgraph, as
    in LangGraph. Its interrupts stop the node, and the resume goes on inside it; each graph the node invokes
    keeps its place in the node's progress by the order of the calls."""
    if sub.keeps_state:
        raise GraphValidationError(
            "a graph compiled with checkpointer=True keeps its state as a node of its parent graph "
            "(add_node(name, graph)); invoked in a node's code it would start afresh on every call"
        )
    index = ctx.invoked
    ctx.invoked += 1
    kept = _invoked(ctx)
    calls: dict[str, Any] = {} if kept is None else dict(kept.calls)
    site = interrupt_ids.node(ctx.interrupts.prefix, ctx.step, ctx.node)
    context = InterruptContext(ctx.interrupts.responses, interrupt_ids.nested_call(site, index),
                               ctx.interrupts.thread, ctx.interrupts.digests)
    call = NodeCall(input, {}, context, ctx.thread_id, ctx.invocation_state, calls.get(str(index)))
    token = set_run(nested_scope())
    try:
        with streamed_as(f"{ctx.node}:{ctx.step}" if index == 0 else f"{ctx.node}:{ctx.step}:{index}", sub):
            outcome = await sub.as_node().run_node(call)
    finally:
        reset_run(token)
    if isinstance(outcome, NodeStopped):
        calls[str(index)] = outcome.kept
        from statehitl.progress import InvokedGraphs  # the record kinds load when a run first stops

        raise InterruptRaised(outcome.interrupts, progress=InvokedGraphs(calls=calls).stored())
    return sub.result_of(outcome.result)


def _invoked(ctx: NodeContext) -> InvokedGraphs | None:
    """What node ``ctx`` kept of the graphs it invoked when it last stopped, if it kept that."""
    if ctx.progress is None:
        return None
    from statehitl.progress import InvokedGraphs

    if not InvokedGraphs.holds(ctx.progress):
        return None
    return InvokedGraphs.load(ctx.progress, f"what node {ctx.node!r} kept of the graphs it invoked")
