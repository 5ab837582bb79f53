"""A compiled StateGraph as a node of another: LangGraph's subgraph, on statehitl's nesting.

The subgraph starts from the parent's state (the channels the two share) and its result is the node's
update (again the shared channels). An interrupt inside it stops the parent's node; where the subgraph
stood is kept as that node's progress in the parent's checkpoint, so the resume goes on inside the
subgraph from the node that asked, without re-running the ones before it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from statehitl import interrupt_ids
from statehitl.commands import ParentCommand
from statehitl.errors import GraphValidationError
from statehitl.graph.graph_state import GraphState
from statehitl.graph.node import StateGraphNode
from statehitl.graph.node_calls import current_run, nested_scope, node_config, report_update, reset_run, set_run
from statehitl.graph.result import GraphRunResult
from statehitl.graph.state_kinds import StateKind
from statehitl.interrupt import InterruptContext, InterruptRaised
from statehitl.nesting import NodeCall, NodeStopped, call_machine_node
from statehitl.position import NodeContext

__all__ = ["Subgraph", "invoke_inside", "subgraph_handler"]


class Subgraph(Protocol):
    """What runs a compiled graph inside another: its nodes as one machine node, its state's adapter, whether
    it keeps its state between calls, and what its ``invoke`` returns for a run's result."""

    schema: GraphState
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
        token = set_run(nested_scope(f"{name}:{ctx.step}", sub.schema.shown_update))
        before = (getattr(state, kept) or {}) if kept is not None and not ctx.sent else {}
        try:
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
        return report_update(name, returned)

    run_subgraph.__name__ = name
    return run_subgraph


def _stream_messages(sub: Subgraph, given: dict[str, Any], returned: Any, ctx: NodeContext) -> None:
    """The messages a subgraph added, sent as its node's (``stream_mode="messages"``), as LangGraph does."""
    scope = current_run()
    if scope is None or scope.messages is None or not isinstance(returned, dict):
        return
    from statehitl.graph.message_forms import coerce_all  # a run that streams messages loaded them already

    scope.messages.given(given)
    held = {k: coerce_all(v) for k, v in returned.items() if k in sub.schema.message_channels}  # stored as JSON
    scope.messages.returned(held, node_config(scope.config, ctx, None)["metadata"], scope.namespace)


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
    kept = ctx.progress if isinstance(ctx.progress, dict) and ctx.progress.get("kind") == _INVOKED else None
    calls: dict[str, Any] = dict(kept["calls"]) if kept else {}
    site = interrupt_ids.node(ctx.interrupts.prefix, ctx.step, ctx.node)
    context = InterruptContext(ctx.interrupts.responses, interrupt_ids.nested_call(site, index),
                               ctx.interrupts.thread, ctx.interrupts.digests)
    call = NodeCall(input, {}, context, ctx.thread_id, ctx.invocation_state, calls.get(str(index)))
    token = set_run(nested_scope(f"{ctx.node}:{ctx.step}" if index == 0 else f"{ctx.node}:{ctx.step}:{index}",
                                 sub.schema.shown_update))
    try:
        outcome = await sub.as_node().run_node(call)
    finally:
        reset_run(token)
    if isinstance(outcome, NodeStopped):
        calls[str(index)] = outcome.kept
        raise InterruptRaised(outcome.interrupts, progress={"kind": _INVOKED, "calls": calls})
    return sub.result_of(outcome.result)


_INVOKED = "invoked graphs"
