"""What a subgraph's run streams under its namespace while its parent streams with ``subgraphs=True``:
its ``values``, its interrupt chunks, and its checkpoints (``"checkpoints"`` and ``"debug"``) as LangGraph
sends them: the input's (step -1) and the first step's when a run starts, then one after each step.

statehitl writes none of these checkpoints (a subgraph's state lives in its parent's records: where it
stopped, and what one compiled with ``checkpointer=True`` ended with), so their configs name the
subgraph's namespace and no ``checkpoint_id``: they say what happened, and are not places to go back to.
Its nodes' updates, custom and task chunks go there from the nodes themselves (``node_calls``).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from statehitl.graph.graph_state import GraphState
from statehitl.graph.node_calls import RunScope, current_run, task_key
from statehitl.interrupt import Interrupt
from statehitl.machine import START, Machine
from statehitl.position import Writes

__all__ = ["SubgraphStream", "subgraph_stream"]


class SubgraphStream:
    """One subgraph run's chunks, sent to its parent's stream (``scope.sink``) under ``scope.namespace``."""

    def __init__(self, schema: GraphState, machine: Machine, scope: RunScope, thread: str) -> None:
        self.schema, self.machine, self.thread = schema, machine, thread
        self.namespace, self.sink = scope.namespace, scope.sink
        self.step = 0
        self.last: dict[str, Any] | None = None
        """The config of the checkpoint sent last: the next one's ``parent_config``."""

    def send(self, mode: str, state: Any, extra: dict[str, Any] | None = None) -> None:
        assert self.sink is not None
        self.sink(self.namespace, mode, {**self.schema.kind.values(state), **(extra or {})})

    def began(self, state: Any, pending: list[str], step: int, before: Any | None) -> None:
        """The run starts at ``step`` on ``state`` (``before``: the state before its input, for a new run;
        None when it goes on from where it stopped)."""
        self.step = step
        if before is not None:
            self.checkpoint(before, [START], step - 1, "input")
            self.checkpoint(state, pending, step, "loop")
        self.send("values", state)

    async def after_step(self, state: Any, writes: Writes, pending: list[str]) -> None:
        self.step += 1
        if any(update for _, update in writes):
            self.send("values", state)
        self.checkpoint(state, pending, self.step, "loop")

    def stopped(self, state: Any, interrupts: list[Interrupt]) -> None:
        asked = tuple(interrupts)
        assert self.sink is not None
        self.sink(self.namespace, "updates", {"__interrupt__": asked})
        self.send("values", state, {"__interrupt__": asked})

    def checkpoint(self, state: Any, pending: list[str], step: int, source: str) -> None:
        """One checkpoint of the run as LangGraph streams it (``"checkpoints"``, and ``"debug"``)."""
        assert self.sink is not None
        config = {"configurable": {"thread_id": self.thread, "checkpoint_ns": "|".join(self.namespace),
                                   "checkpoint_id": None}}
        tasks = [{"id": task_key(step, t), "name": t if t == START else self.machine.task_node(t),
                  "interrupts": (), "state": None} for t in pending]
        payload = {"config": config, "parent_config": self.last, "values": self.schema.kind.values(state),
                   "metadata": {"source": source, "step": step, "parents": {}},
                   "next": [t["name"] for t in tasks], "tasks": tasks}
        self.last = config
        self.sink(self.namespace, "checkpoints", payload)
        self.sink(self.namespace, "debug", {"step": step, "timestamp": datetime.now(UTC).isoformat(),
                                            "type": "checkpoint", "payload": payload})


def subgraph_stream(schema: Any, machine: Machine, thread: str) -> SubgraphStream | None:
    """The stream of the subgraph run about to start, when its parent streams with ``subgraphs=True``."""
    scope = current_run()
    if scope is None or scope.sink is None or not isinstance(schema, GraphState) or schema.native:
        return None
    return SubgraphStream(schema, machine, scope, thread)
