"""``OrchestratorNode``: a Graph or Swarm as a node of another orchestrator (or of a StateGraph).

Its whole orchestration — task, results, its own nodes' conversations — is its sub-state in the
enclosing thread, its growing lists stored as deltas there like the enclosing one's own. It runs nested
on the shared runner; where it stopped on an interrupt goes back to the enclosing node as what that node
keeps: the position, the state besides its growing lists, and only what those lists gained.
"""

from __future__ import annotations

from typing import Any

from statehitl.errors import NodeCancelledError
from statehitl.multiagent.base import Orchestrator
from statehitl.nesting import NodeCall, NodeDone, NodeStopped, kept_run, resumed_run, started_run
from statehitl.status import Status


class OrchestratorNode:
    """``MachineNode`` for a Graph or Swarm (built by its ``as_node()``), on the orchestrator's public
    interface for it (``Orchestrator.start_nested``, ``run_nested``, ``adopt``)."""

    def __init__(self, orchestrator: Orchestrator) -> None:
        self.orchestrator = orchestrator
        self.append_channels = orchestrator.schema.append_channels

    def node_state(self) -> dict[str, Any]:
        return self.orchestrator.schema.fresh()

    def adopt_node_state(self, state: dict[str, Any]) -> None:
        self.orchestrator.adopt(self.orchestrator.schema.load(state))

    async def run_node(self, call: NodeCall) -> NodeDone | NodeStopped:
        orchestrator, schema = self.orchestrator, self.orchestrator.schema
        base = schema.load(call.state)
        if call.kept is None:
            at = started_run(call, *orchestrator.start_nested(base, call.task))
        else:
            at = resumed_run(call.kept, schema, base, call)
        end, result = await orchestrator.run_nested(at, call)
        if end.status == "interrupted":
            return NodeStopped(end.interrupts, kept_run(end, schema, base), result)
        if orchestrator.raises_on_cancel:  # a nested Graph fails its node, as a Graph call raises
            for node_id, message in end.cancelled.items():
                raise NodeCancelledError(message, node_id=node_id)
        status = "completed" if result.status == Status.COMPLETED else "failed"
        return NodeDone(end.state, result, dict(result.accumulated_usage), status)
