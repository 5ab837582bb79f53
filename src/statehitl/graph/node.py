"""A compiled StateGraph as a node of another machine (``app.as_node()``), e.g. a step of a Graph.

Its state is its sub-state in the enclosing thread (append-only fields stored as deltas there), so
a node call continues it as ``invoke`` continues a thread: the input is merged through the reducers
and the machine runs from START. The input is a dict of fields; text (a Graph hands its nodes the
task and their predecessors' outputs as content blocks) goes to a ``task: str`` field, which the
state must then have.
"""

from __future__ import annotations

from typing import Any, Generic, TypeVar

from pydantic import BaseModel

from statehitl.channels import StateSchema
from statehitl.errors import InvalidUpdateError
from statehitl.graph.result import GraphRunResult, run_result
from statehitl.graph.run_stream import RunStream
from statehitl.hooks.registry import HookRegistry
from statehitl.machine import Machine
from statehitl.nesting import NodeCall, NodeDone, NodeStopped, kept_run, resumed_run, started_run
from statehitl.runner import Runner
from statehitl.runner_parts import Pauses
from statehitl.stream_sink import current_scope
from statehitl.supersteps import plan_start

M = TypeVar("M", bound=BaseModel)


class StateGraphNode(Generic[M]):
    """``MachineNode`` for a compiled StateGraph (built by its ``as_node()``, ``app`` being the source
    its node hook events name)."""

    def __init__(self, machine: Machine, schema: StateSchema[M], hooks: HookRegistry, step_limit: int,
                 app: Any, *, pauses: Pauses | None = None) -> None:
        self.machine = machine
        self.schema = schema
        self.step_limit = step_limit
        self.pauses = pauses
        """The graph's own ``interrupt_before``/``interrupt_after``: it stops there, and so does its parent."""
        self.append_channels = schema.append_channels
        self._runner = Runner(machine, schema, hooks, None, source=app, run_span="invoke_graph")

    def node_state(self) -> dict[str, Any]:
        return {}

    def adopt_node_state(self, state: dict[str, Any]) -> None:
        return None  # a compiled StateGraph keeps no live state of its own: its threads hold it

    def load_result(self, payload: dict[str, Any]) -> GraphRunResult[M]:
        return GraphRunResult.from_dict(payload, self.schema)

    async def run_node(self, call: NodeCall) -> NodeDone | NodeStopped:
        schema = self.schema
        stream = current_scope()
        watch = stream if isinstance(stream, RunStream) and stream.machine is self.machine else None
        before: Any = None
        if call.kept is not None:
            at = resumed_run(call.kept, schema, call.state, call)
        else:
            given = call.task if _root_value(schema) else _as_input(call.task, schema.fields)
            before = schema.load(call.state) if call.state else None
            if before is not None:
                state = schema.apply(before, [("input", schema.normalize_update("input", given))])
            else:
                state = schema.initial(given)
            pending, schedule = await plan_start(self.machine, state)
            at = started_run(call, state, pending)
            at.schedule = schedule
        if watch is not None:  # where it starts, or goes on from on a resume, as LangGraph shows it
            if watch.sink.wants("checkpoints", watch.namespace):
                from statehitl.graph.subgraph_stream import stream_checkpoints  # loaded by the first one shown

                stream_checkpoints(watch, call.thread_id, at, before, new=call.kept is None)
            watch.begin(at.state)
        pauses = self.pauses
        if pauses is not None and _paused(call.kept):
            pauses = Pauses(pauses.before, pauses.after, resumed=True)  # going on from its breakpoint
        end = await self._runner.run_nested(at, step_limit=self.step_limit, invocation_state=call.invocation_state,
                                            prefix=call.interrupts.prefix, thread_id=call.thread_id, watch=watch,
                                            pauses=pauses)
        if end.paused:  # its breakpoint stops the parent too, with nothing to answer (LangGraph's)
            kept = kept_run(end, schema, call.state, paused=True)
            return NodeStopped([], kept, run_result(call.thread_id, "interrupted", end.state, interrupts=[],
                                                                  step=end.step, cancelled={}))
        result = run_result(call.thread_id, end.status, end.state, interrupts=end.interrupts, step=end.step,
                            cancelled=end.cancelled)
        if end.status == "interrupted":
            return NodeStopped(end.interrupts, kept_run(end, schema, call.state), result)
        sub = {**schema.dump_values(end.state), **{c: schema.dump_items(end.state, c, 0) for c in self.append_channels}}
        return NodeDone(sub, result, status="failed" if end.cancelled else "completed")


def _paused(kept: Any) -> bool:
    """Whether a nested run's kept place (as stored, or read: a ``KeptRun``) is one of its own breakpoints."""
    return bool(kept.get("paused")) if isinstance(kept, dict) else bool(getattr(kept, "paused", False))


def _root_value(schema: Any) -> bool:
    """Whether ``schema`` is a root-value state's (``StateGraph(list[str])``): its input is the value itself, of
    any type, not a dict of fields."""
    return getattr(getattr(schema, "kind", None), "kind", None) == "root"


def _as_input(task: Any, fields: dict[str, Any]) -> dict[str, Any]:
    if isinstance(task, dict):
        return task
    text = task if isinstance(task, str) else "\n".join(b["text"] for b in task or () if "text" in b)
    if "task" not in fields:
        raise InvalidUpdateError(
            f"a StateGraph node takes a dict of its fields; given text, its state needs a 'task: str' field to "
            f"hold it (its fields: {list(fields)})"
        )
    return {"task": text}
