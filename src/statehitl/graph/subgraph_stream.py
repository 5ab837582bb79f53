"""A subgraph's checkpoints, as LangGraph streams them under its namespace while its parent streams with
``subgraphs=True`` (``"checkpoints"``, and ``"debug"``): the input's (step -1) and the first step's when a run
starts, then one after each step. Its values, updates, tasks and interrupts go out through its ``RunStream``
(``run_stream.RunStream.nested``), as its parent's do.

statehitl writes none of these checkpoints (a subgraph's state lives in its parent's records: where it
stopped, and what one compiled with ``checkpointer=True`` ended with), so their configs name the
subgraph's namespace and no ``checkpoint_id``: they say what happened, and are not places to go back to.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from statehitl.graph.graph_state import StateGraphSchema
from statehitl.graph.node_calls import task_key
from statehitl.machine import START
from statehitl.position import Position

if TYPE_CHECKING:
    from statehitl.graph.run_stream import RunStream


class SubgraphCheckpoints:
    """The checkpoints one subgraph run would write, put on its stream ``stream`` (of thread ``thread``)."""

    def __init__(self, stream: RunStream, schema: StateGraphSchema, thread: str, step: int) -> None:
        self.stream, self.schema, self.thread = stream, schema, thread
        self.step = step
        self.last: dict[str, Any] | None = None
        """The config of the checkpoint sent last: the next one's ``parent_config``."""

    def began(self, before: Any, state: Any, pending: list[str]) -> None:
        """A new run on ``state`` (``before``: the state before its input): its input's and first step's."""
        self.checkpoint(before, [START], self.step - 1, "input")
        self.checkpoint(state, pending, self.step, "loop")

    def stepped(self, state: Any, pending: list[str]) -> None:
        """A step of the run ended on ``state``, ``pending`` next."""
        self.step += 1
        self.checkpoint(state, pending, self.step, "loop")

    def checkpoint(self, state: Any, pending: list[str], step: int, source: str) -> None:
        """One checkpoint of the run as LangGraph streams it."""
        machine = self.stream.machine
        config = {"configurable": {"thread_id": self.thread, "checkpoint_ns": "|".join(self.stream.namespace),
                                   "checkpoint_id": None}}
        tasks = [{"id": task_key(step, t), "name": t if t == START else machine.task_node(t),
                  "interrupts": (), "state": None} for t in pending]
        payload = {"config": config, "parent_config": self.last, "values": self.schema.kind.values(state),
                   "metadata": {"source": source, "step": step, "parents": {}},
                   "next": [t["name"] for t in tasks], "tasks": tasks}
        self.last = config
        self.stream.put("checkpoints", payload, step=step)


def stream_checkpoints(stream: RunStream, thread: str, at: Position, before: Any, *, new: bool) -> None:
    """Show the checkpoints of the subgraph run about to start at ``at`` on ``stream``: a ``new`` run's first
    two (``before``: the state before its input, None for an empty one), then one per step; a run that goes
    on from where it stopped shows its steps' only. A native pydantic state's subgraph shows none."""
    schema = stream.schema
    if schema.native:
        return
    shown = SubgraphCheckpoints(stream, schema, thread, at.step)
    if new:
        if before is None:
            from statehitl.graph.time_travel import ThreadViews  # (the empty state a new thread starts from)

            before = ThreadViews.empty(schema)
        shown.began(before, at.state, at.pending)
    stream.stepped = shown.stepped
