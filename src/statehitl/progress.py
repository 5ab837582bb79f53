"""What a run keeps between two steps besides its state: typed records, stored as JSON in its checkpoint.

A node that stops on an interrupt keeps its partial work as its *progress* (``CheckpointRecord.progress``,
by node), handed back to it when its step is re-entered; a machine that runs supersteps keeps its
*schedule* for the next step. Each kind of either is a model here, versioned and kind-tagged as the
project's persisted records are (``checkpoint/records.py``), and read and written only through it:

- ``Schedule``: what LangGraph's scheduler carries to the next superstep (``statehitl.supersteps``).
- ``KeptRun``: where a machine running as a node of another stopped (``statehitl.nesting``).
- ``InvokedGraphs``: the kept runs of the graphs a StateGraph node invoked in its own code, by call order
  (``statehitl.graph.subgraphs``).
- ``ToolBatch``: an agent's tool batch, stopped with some of its calls finished (``agent/tool_batch.py``).
- ``RestartedNode``: a multi-agent Graph node that had started afresh (a revisit with
  ``reset_on_revisit``), around what its machine kept (``multiagent/graph.py``).
- ``SwarmTurn``: a Swarm agent's turn, stopped (``multiagent/swarm.py``).
- ``WorkflowTasks``: the finished task calls of a functional-API entrypoint that stopped or failed
  (``func/tasks.py``).

Compatibility, both ways: these are the JSON shapes stored before the models existed, keys in the same
order. ``kind`` is new (but for ``InvokedGraphs`` and ``WorkflowTasks``, which had it first, and keep
it where it was): it comes last, and defaults to the model's own, so a record without it loads, and a
reader from before ignores it (it read these by key). ``RestartedNode`` keeps its one-key shape, which
older readers recognise by that key, so it carries no ``kind``. ``version`` is written only above 1 (no
kind has changed yet), and a record of a version this statehitl does not know is refused with a clear
error rather than misread. What a record cannot hold is a ``CheckpointCorruptError`` naming where it was found.

The modules that use a kind import it when a run first stops or resumes, not at their own import: a
process that never stops mid-step (a serverless cold start, most steps) builds none of these models.
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal, Self

from pydantic import BaseModel, ConfigDict, Field, SerializerFunctionWrapHandler, ValidationError, model_serializer

from statehitl.errors import CheckpointCorruptError

__all__ = ["InvokedGraphs", "KeptRecord", "KeptRun", "RestartedNode", "Schedule", "SwarmTurn", "ToolBatch",
           "WorkflowTasks"]


class KeptRecord(BaseModel):
    """The base of every kind: its version, the fields it leaves out of its JSON while empty, and ``load``."""

    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    VERSION: ClassVar[int] = 1
    """The newest version of the kind this statehitl writes and reads."""
    OPTIONAL: ClassVar[tuple[str, ...]] = ()
    """Fields left out of the stored JSON while at their default (None, or empty), as they were before the
    model existed."""

    version: int = Field(default=1, ge=1)

    @model_serializer(mode="wrap")
    def _lean(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        if self.version == 1:
            del data["version"]
        fields = type(self).model_fields
        for name in self.OPTIONAL:
            if getattr(self, name) == fields[name].get_default(call_default_factory=True):
                data.pop(name, None)
        return data

    @classmethod
    def load(cls, data: Any, where: str) -> Self:
        """``data`` (as stored) read as this kind; ``where`` names it in the error when it cannot be."""
        try:
            kept = cls.model_validate(data)
        except ValidationError as exc:
            raise CheckpointCorruptError(
                f"{where} is not a {cls.__name__} record: {exc.errors(include_url=False)}") from None
        if kept.version > cls.VERSION:
            raise CheckpointCorruptError(f"{where} is a {cls.__name__} record of version {kept.version}, newer than "
                                         f"this statehitl understands ({cls.VERSION}); upgrade statehitl to read it")
        return kept

    def stored(self) -> dict[str, Any]:
        """The record as its checkpoint stores it (JSON)."""
        return self.model_dump(by_alias=True)

    @classmethod
    def holds(cls, progress: Any) -> bool:
        """Whether ``progress`` (as stored) is of this kind, by its ``kind``."""
        tag = cls.model_fields.get("kind")
        return isinstance(progress, dict) and tag is not None and progress.get("kind") == tag.default


class Schedule(KeptRecord):
    """What LangGraph's scheduler carries from one superstep to the next (``statehitl.supersteps``), stored
    as its JSON in the checkpoint's ``schedule`` and read back through this model (``supersteps.schedule_of``).

    A machine whose steps leave nothing waiting keeps none (None, not an empty one): a chain's steps
    never build one."""

    OPTIONAL = ("sends", "joins", "deferred", "timeouts")

    sends: dict[str, Any] = Field(default_factory=dict)
    """Each pending Send's task (``node:index``) and the argument its node runs on."""
    timeouts: dict[str, dict[str, Any]] = Field(default_factory=dict)
    """The limits a pending Send gave its task (``Send(timeout=)``, as ``Send.stored_timeout`` keeps them)."""
    joins: dict[str, list[str]] = Field(default_factory=dict)
    """Each waiting edge (``add_edge([a, b], c)``) that some of its sources finished, by its key: those sources."""
    deferred: list[str] = Field(default_factory=list)
    """Nodes added with ``defer=True``, held until nothing else is left to run."""
    kind: Literal["schedule"] = "schedule"


class KeptRun(KeptRecord):
    """Where a machine running as a node of another stopped on interrupts (``nesting.kept_run``): its place,
    its state besides its growing lists, and only what those lists gained beyond the sub-state the
    enclosing checkpoint holds for it (``appended``)."""

    OPTIONAL = ("schedule", "paused", "edited_from")

    values: dict[str, Any]
    appended: dict[str, list[Any]]
    pending: list[str]
    step: int = Field(ge=0)
    completed: dict[str, dict[str, Any]]
    responses: dict[str, Any]
    progress: dict[str, Any]
    """Its own nodes' progress, by node (each a record of this module, or a node's own JSON)."""
    schedule: Schedule | None = None
    paused: bool = False
    """It stopped at one of its own breakpoints (``interrupt_before``/``interrupt_after`` compiled into a
    subgraph), with nothing to answer: its resume goes on past it."""
    edited_from: str | None = None
    """``update_state`` wrote this state, given the config of the subgraph checkpoint held by this record (its
    id): shown as LangGraph's ``"update"`` checkpoint, whose parent is that one."""
    kind: Literal["nested run"] = "nested run"


class InvokedGraphs(KeptRecord):
    """The graphs a StateGraph node invoked in its own code before it stopped: each one's kept run, by the
    order of the calls (``"0"``, ``"1"``...), so each goes on from its own place when the node runs again."""

    OPTIONAL = ("graphs",)

    kind: Literal["invoked graphs"] = "invoked graphs"
    calls: dict[str, KeptRun]
    graphs: dict[str, str] = Field(default_factory=dict)
    """The machine fingerprint of each graph called, by the same order: which graph a subgraph config's
    ``checkpoint_ns`` reaches there (``graph.subgraph_levels``)."""


class ToolBatch(KeptRecord):
    """An agent's tool batch that stopped on interrupts: the results of the calls that finished (not run
    again), and ``agent.state`` if hooks or tools changed it. Binary content is in its JSON-safe form
    (``agent.binary``)."""

    OPTIONAL = ("results", "agent_state")

    results: dict[str, Any] = Field(default_factory=dict)
    """Each finished call's tool result, by tool use id."""
    agent_state: dict[str, Any] | None = None
    kind: Literal["tool batch"] = "tool batch"


class RestartedNode(KeptRecord):
    """A multi-agent Graph node that started afresh (its first call after a revisit with ``reset_on_revisit``,
    or ``reset_executor_state``) and stopped: its resume starts afresh too. Stored as ``{"$restarted": kept}``,
    the shape older readers know it by."""

    KEY: ClassVar[str] = "$restarted"

    kept: Any = Field(alias="$restarted")
    """What the node's machine kept (a ``KeptRun`` for an agent or an orchestrator)."""

    @classmethod
    def around(cls, kept: Any) -> RestartedNode:
        return cls.model_validate({cls.KEY: kept})

    @classmethod
    def holds(cls, progress: Any) -> bool:
        """Whether a node's progress is one of these (by its one key)."""
        return isinstance(progress, dict) and progress.keys() == {cls.KEY}


class SwarmTurn(KeptRecord):
    """A Swarm agent's turn that stopped on interrupts: what its machine kept, what its ``handoff_to_agent``
    calls asked for, the shared context it took, and its ``INTERRUPTED`` result (shown until the turn ends)."""

    node: Any
    """What the agent's machine kept (a ``KeptRun``)."""
    turn: dict[str, Any]
    """The turn's handoff requests: ``agents``, ``handoff``, ``context``."""
    added: dict[str, dict[str, Any]] = Field(default_factory=dict)
    """What ``add_context`` added, by node: written into the thread when the turn ends."""
    result: dict[str, Any]
    """The agent's ``INTERRUPTED`` ``NodeResult``, as stored."""
    kind: Literal["swarm turn"] = "swarm turn"


class WorkflowTasks(KeptRecord):
    """A functional-API entrypoint's task calls that finished before its node stopped (on an interrupt) or
    failed: each one's result by its call's key, so a resume or retry runs only the rest."""

    kind: Literal["tasks"] = "tasks"
    results: dict[str, Any] = Field(default_factory=dict)
