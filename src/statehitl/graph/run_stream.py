"""What a streamed StateGraph run (or a subgraph inside one) shows, in LangGraph's chunks and order.

``RunStream`` is the producer side of one run's stream: the runner tells it what happens (``StepWatch``:
a step's tasks as it begins, each task's end, each step's result, each checkpoint), the code of its nodes
writes to it (``StreamScope``: custom chunks, an agent's text), and it puts LangGraph's chunks into the
run's one ``StreamSink`` under its namespace. A subgraph's stream is ``nested``: the same sink, a longer
namespace. Nothing here is built for a run nobody streams.

The order is LangGraph's: a step's ``tasks`` chunks before any of them runs, then (on a resume) the writes
of the tasks that finished before, again, marked ``"__metadata__": {"cached": True}``; each task's
``updates`` chunk as it finishes, before its task result; an interrupting task's own ``__interrupt__``
chunks; the step's ``values`` once its writes are applied, and its checkpoint after them. A node whose writes
came from its cache (``cache_policy``) shows them marked cached too, and no task result, as LangGraph's does.

``stream_mode="messages"`` has one ``MessageStream`` per run, which its subgraphs share (so a message is sent
once, by id): the chat models a node calls stream into it, and so do the messages a node returns.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any

from statehitl.checkpoint.records import CheckpointRecord
from statehitl.commands import HANDLED, Handled
from statehitl.graph.caching import CachedWrites
from statehitl.graph.graph_state import StateGraphSchema
from statehitl.graph.node_calls import current_node, task_input, task_key
from statehitl.graph.stream_events import CheckpointEvents, MessageChunk
from statehitl.graph.task_paths import pull_triggers, task_location
from statehitl.interrupt import Interrupt
from statehitl.machine import Machine
from statehitl.position import Position, Writes
from statehitl.stream_sink import Namespace, StreamSink
from statehitl.supersteps import send_arg

if TYPE_CHECKING:
    from statehitl.graph.message_stream import MessageStream


class RunStream:
    """One streamed run of a graph over ``schema`` (``machine``), at ``namespace`` of ``sink``; ``checkpoints``
    shows its checkpoints (None: a graph without a checkpointer, or a subgraph, shows none); ``messages``: where
    the chat models of its nodes stream (None: nobody reads messages from here)."""

    def __init__(self, sink: StreamSink, schema: StateGraphSchema, machine: Machine, *, namespace: Namespace = (),
                 checkpoints: CheckpointEvents | None = None, messages: MessageStream | None = None) -> None:
        self.sink = sink
        self.messages = messages
        self.schema = schema
        self.machine = machine
        self.namespace = namespace
        self.checkpoints = checkpoints
        self._held: tuple[CheckpointRecord, Any] | None = None
        """A checkpoint written, shown once the values of its step are (before the next step's tasks)."""
        self._before: Any = None
        """The state the step in flight runs on: what an interrupting task's ``values`` chunk shows."""
        self.stepped: Callable[[Any, list[str]], None] | None = None
        """Told each step's state and what runs next: a subgraph's checkpoints, which no record shows
        (``subgraph_stream``)."""

    def nested(self, labels: Namespace, schema: StateGraphSchema, machine: Machine) -> RunStream:
        """The stream of a subgraph run at ``labels`` after this one's namespace (LangGraph's ``node:<task id>``)."""
        namespace = (*self.namespace, *labels)
        messages = self.messages if self.sink.wants("messages", namespace) else None
        return RunStream(self.sink, schema, machine, namespace=namespace, messages=messages)

    def put(self, mode: str, chunk: Any, *, step: int = 0, at: float | None = None) -> None:
        self.sink.put(self.namespace, mode, chunk, step=step, at=at)

    # -- what the code of a node streams (``StreamScope``) ------------------------------------------------

    def wants(self, mode: str) -> bool:
        return self.sink.wants(mode, self.namespace)

    def custom(self, chunk: Any) -> None:
        self.sink.put(self.namespace, "custom", chunk)

    def model_text(self, text: str) -> None:
        """A piece of an agent's text, as LangGraph's ``(message chunk, metadata)`` pair."""
        node = current_node()
        name = "" if node is None else node.node.partition(":")[0]
        where = {} if node is None else {"langgraph_node": name, "langgraph_step": node.step + 1,
                                         **task_location(name, node.node, sent=node.sent, metadata=None),
                                         "thread_id": node.thread_id}
        self.sink.put(self.namespace, "messages", (MessageChunk(text), where))

    def watch_messages(self, config: dict[str, Any], given: Any
                       ) -> AbstractContextManager[Callable[[Any], None]] | None:
        if self.messages is not None:
            return self.messages.node(config, given, self.namespace)
        if self.namespace and self.sink.wants("messages", ()):  # a subgraph's, the run streaming only its own:
            from statehitl.graph.langchain_stream import muted  # its chat models reach no outer node's handler

            return muted()
        return None

    def returned_messages(self, given: Any, returned: dict[str, Any], config: dict[str, Any]) -> None:
        """A subgraph node of this run was given ``given`` and returned ``returned`` (its message channels'
        values): the messages it added are sent as its node's, as LangGraph does."""
        if self.messages is not None:
            self.messages.given(given)
            self.messages.returned(returned, config.get("metadata") or {}, self.namespace)

    # -- the run's own ------------------------------------------------------------------------------------

    def begin(self, state: Any, *, shown: bool = True) -> None:
        """The run begins on ``state``: its ``values`` chunk (unless not ``shown``: an input that wrote
        nothing), between the checkpoints of how it began."""
        if self.checkpoints is not None:
            self.checkpoints.before_values()
        if shown:
            self.put("values", self.schema.shown(state))
        if self.checkpoints is not None:
            self.checkpoints.after_values()

    def finish(self, record: CheckpointRecord, values: Any) -> None:
        """The run stopped at ``record`` (``values``: its values as a snapshot shows them). A breakpoint says so
        with an empty ``__interrupt__``; a step that stopped on interrupts after some of its tasks finished
        shows the state with their writes applied, as LangGraph's last ``values`` chunk does (so does a step that a
        subgraph's breakpoint stopped)."""
        self._show_held()
        if record.status != "interrupted":
            return
        if not record.interrupts:
            if record.completed:  # a subgraph's breakpoint stopped the step part-way: its siblings' writes shown
                self.put("values", values)
            self.put("updates", {"__interrupt__": ()})
        elif any(record.completed.values()) and not self.schema.native:
            self.put("values", values)

    # -- what the runner tells (``StepWatch``) ------------------------------------------------------------

    def step_started(self, at: Position, runnable: list[str]) -> None:
        self._show_held()
        self._before = at.state
        if self.sink.wants("tasks", self.namespace):
            for task in runnable:
                self.put("tasks", self._task(at, task), step=at.step + 1)
        if at.completed and self.sink.wants("updates", self.namespace):
            for task in runnable:
                if task in at.completed:
                    name, kept = self.machine.task_node(task), at.completed[task]
                    self.put("updates", {kept.get(HANDLED, name): self.schema.shown_update(name, kept),
                                         "__metadata__": {"cached": True}})

    def _task(self, at: Position, task: str) -> dict[str, Any]:
        name = self.machine.task_node(task)
        sent, arg = send_arg(at.schedule, task)
        given = arg if sent else task_input(self.machine.nodes[name].handler, at.state, at.step)
        return {"id": task_key(at.step, task), "name": name, "input": given,
                "triggers": ("__pregel_push",) if sent else pull_triggers(name, self.machine.joins)}

    def task_done(self, task: str, step: int, returned: Any) -> None:
        if not (self.sink.wants("updates", self.namespace) or self.sink.wants("tasks", self.namespace)):
            return
        name = self.machine.task_node(task)
        shown = self.schema.shown_update(name, returned)
        if isinstance(returned, CachedWrites):  # LangGraph marks a cache hit's writes, and shows no task result
            self.put("updates", {name: shown, "__metadata__": {"cached": True}})
            return
        self.put("updates", {returned.by if type(returned) is Handled else name: shown})  # a handler's as its own
        if self.sink.wants("tasks", self.namespace):  # its writes by channel (one written twice: {"$writes": [...]})
            self.put("tasks", {"id": task_key(step, task), "name": name, "error": None,
                               "result": self.schema.task_result(name, returned), "interrupts": []}, step=step + 1)

    def task_stopped(self, task: str, step: int, interrupts: list[Interrupt]) -> None:
        if not interrupts:  # a subgraph stopped at its own breakpoint: the run's end says so (``finish``)
            return
        asked = tuple(interrupts)
        self.put("updates", {"__interrupt__": asked})
        if self.sink.wants("values", self.namespace) and not self.schema.native:
            values = self.schema.kind.values(self._before)
            self.put("values", {**values, "__interrupt__": asked} if isinstance(values, dict)
                     else {"__interrupt__": asked})
        name = self.machine.task_node(task)
        self.put("tasks", {"id": task_key(step, task), "name": name, "error": None, "result": {},
                           "interrupts": [{"value": i.reason, "id": i.id, "response_schema": i.response_schema}
                                          for i in interrupts]}, step=step + 1)

    def task_failed(self, task: str, step: int, error: BaseException) -> None:
        self.put("tasks", {"id": task_key(step, task), "name": self.machine.task_node(task), "error": error,
                           "result": {}, "interrupts": []}, step=step + 1)

    async def step_applied(self, state: Any, writes: Writes, pending: list[str]) -> None:
        if any(update for _, update in writes):  # a step that wrote nothing changed no value
            self.put("values", self.schema.shown(state))
        if self.stepped is not None:
            self.stepped(state, pending)
        await asyncio.sleep(0)  # the reader gets this step before the next one starts

    def committed(self, record: CheckpointRecord, state: Any) -> None:
        if self.checkpoints is None:
            return
        self._show_held()
        self._held = (record, state)

    def _show_held(self) -> None:
        if self._held is not None and self.checkpoints is not None:
            record, state = self._held
            self._held = None
            self.checkpoints.committed(record, state)

