"""``OrchestratorNode``: a Graph or Swarm as a node of another orchestrator (or of a StateGraph).

Its whole orchestration — task, results, its own nodes' conversations — is its sub-state in the
enclosing thread, its growing lists stored as deltas there like the enclosing one's own. It runs nested
on the shared runner; where it stopped on an interrupt goes back to the enclosing node as what that node
keeps: the position, the state besides its growing lists, and only what those lists gained.
"""

from __future__ import annotations

from typing import Any

from statehitl.errors import NodeCancelledError
from statehitl.multiagent.base import STEP_LIMIT, Orchestrator, call_status
from statehitl.nesting import NodeCall, NodeDone, NodeStopped, kept_run, resumed_run, started_run
from statehitl.status import Status

__all__ = ["OrchestratorNode"]


class OrchestratorNode:
    """``MachineNode`` for a Graph or Swarm (built by its ``as_node()``)."""

    def __init__(self, orchestrator: Orchestrator) -> None:
        self.orchestrator = orchestrator
        self.append_channels = orchestrator.schema.append_channels

    def node_state(self) -> dict[str, Any]:
        return self.orchestrator.schema.fresh()

    def adopt_node_state(self, state: dict[str, Any]) -> None:
        self.orchestrator._adopt(self.orchestrator.schema.load(state))

    async def run_node(self, call: NodeCall) -> NodeDone | NodeStopped:
        orchestrator, schema = self.orchestrator, self.orchestrator.schema
        base = schema.load(call.state)
        if call.kept is None:
            state = orchestrator._begin(base, call.task)
            at = started_run(call, state, orchestrator._entry(state))
        else:
            at = resumed_run(call.kept, schema, base, call)
        async with orchestrator._invocation(call.invocation_state, call.emit) as run:
            orchestrator._show(at.state, Status.EXECUTING)
            end = await orchestrator._runner.run_nested(
                at, step_limit=STEP_LIMIT, invocation_state=call.invocation_state, prefix=call.interrupts.prefix,
                thread_id=call.thread_id, runtime=run,
                after_step=lambda s, w, p: orchestrator._stepped(run, s, w, p))
            shown = orchestrator._with_stopped(end.state, end.progress)
            orchestrator._show(shown, call_status(end.status, end.state, end.cancelled))
        orchestrator._adopt(end.state, run.ran)
        result = orchestrator.build_result(end.status, shown, end.interrupts, end.cancelled, run)
        run.event({"type": "multiagent_result", "result": result})  # its stream ends as a call's own does
        if end.status == "interrupted":
            return NodeStopped(end.interrupts, kept_run(end, schema, base), result)
        if orchestrator.raises_on_cancel:  # a nested Graph fails its node, as a Graph call raises
            for node_id, message in end.cancelled.items():
                raise NodeCancelledError(message, node_id=node_id)
        status = "completed" if result.status == Status.COMPLETED else "failed"
        return NodeDone(end.state, result, dict(result.accumulated_usage), status)
