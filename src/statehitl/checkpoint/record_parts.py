"""The parts of a checkpoint record that are records of their own: a pending interrupt as stored, why a run
failed, a piece of an append-only channel, and where a run began. ``records`` holds the records they are
parts of (and names them too, where callers import them from)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, SerializerFunctionWrapHandler, model_serializer, model_validator

from statehitl.interrupt import Interrupt


class FailureRecord(BaseModel):
    """Why a run failed: where (``nodes``), and the exception's type and message.

    ``nodes`` is the one node that raised, or every node of a step that failed outside any one of them
    (applying their updates, choosing the next nodes). Stored as records before it were, ``node`` holding
    them as one text (``"a, b"``) for older readers, with ``nodes`` besides unless it is one node whose
    name that text is; a record without ``nodes`` (one node, or written before the list) is read by
    splitting ``node`` as those readers did.
    """

    model_config = ConfigDict(frozen=True, defer_build=True)

    nodes: list[str] = Field(min_length=1)
    type: str
    message: str

    @model_validator(mode="before")
    @classmethod
    def _from_stored(cls, data: Any) -> Any:
        if isinstance(data, dict) and "nodes" not in data and isinstance(data.get("node"), str):
            data = {**data, "nodes": data["node"].split(", ")}
            del data["node"]
        elif isinstance(data, dict) and "node" in data:
            data = {k: v for k, v in data.items() if k != "node"}
        return data

    @model_serializer(mode="wrap")
    def _as_stored(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        stored = {"node": self.node, "type": data["type"], "message": data["message"]}
        if len(self.nodes) > 1 or ", " in self.nodes[0]:
            stored["nodes"] = data["nodes"]
        return stored

    @property
    def node(self) -> str:
        """The nodes as one text (``"a"``; ``"a, b"`` for a step that failed as a whole): for messages."""
        return ", ".join(self.nodes)

    def __str__(self) -> str:
        return f"node {self.node!r} raised {self.type}: {self.message}"


class InterruptRecord(BaseModel):
    """A pending interrupt as stored: enough to show it to a human and to route the answer back."""

    model_config = ConfigDict(frozen=True, defer_build=True)

    id: str
    name: str
    reason: Any = None
    source: str = "node"
    node: str = ""
    response_schema: dict[str, Any] | None = None
    """The JSON schema of the expected response (``response_type=``); None: any JSON."""
    digest: str | None = None
    """The digest of the tool call the interrupt is about (``action_digest``)."""
    expires_at: float | None = None
    """When a sweep answers it with ``on_expire`` (``statehitl.expiry``)."""
    on_expire: Any = None
    responders: list[str] | None = None
    """Who may answer: names and ``group:NAME`` groups (``statehitl.responders``); None: anyone."""

    @model_serializer(mode="wrap")
    def _omit_unset(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        # Records written before these fields existed, and interrupts that use none of them, keep their bytes.
        data: dict[str, Any] = handler(self)
        for optional in ("response_schema", "digest", "responders"):
            if data.get(optional) is None:
                data.pop(optional, None)
        if self.expires_at is None:
            data.pop("expires_at", None)
            data.pop("on_expire", None)
        return data

    def to_interrupt(self) -> Interrupt:
        return Interrupt(self.id, self.name, self.reason, source=self.source, node=self.node,
                         response_schema=self.response_schema, digest=self.digest,
                         expires_at=self.expires_at, on_expire=self.on_expire,
                         responders=None if self.responders is None else list(self.responders))

    @classmethod
    def of(cls, interrupt: Interrupt) -> InterruptRecord:
        return cls(
            id=interrupt.id,
            name=interrupt.name,
            reason=interrupt.reason,
            source=interrupt.source,
            node=interrupt.node,
            response_schema=interrupt.response_schema,
            digest=interrupt.digest,
            expires_at=interrupt.expires_at,
            on_expire=interrupt.on_expire,
            responders=interrupt.responders,
        )


class Piece(BaseModel):
    """Items ``start .. start+len(items)`` of an append-only channel."""

    model_config = ConfigDict(defer_build=True)

    start: int = Field(ge=0)
    items: list[Any]


class RunStart(BaseModel):
    """Where the run that wrote a checkpoint began, kept on the run's first checkpoint (its one write): the
    caller's input (``kind="input"``: ``update``, as the writer ``input`` applied it to the state of the
    checkpoint it follows), the checkpoint it replays (``kind="fork"``), or a replay of a run's input
    (``kind="replay"``: that input again), then the tasks its first step ran (``pending``, with
    ``schedule``) at ``step``. LangGraph shows a run's beginning as checkpoints of their own; statehitl
    derives them from this, so they cost no write (``statehitl.graph.history``)."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    kind: Literal["input", "fork", "replay"] = "input"
    update: dict[str, Any] = Field(default_factory=dict)
    pending: list[str] = Field(default_factory=list)
    schedule: dict[str, Any] = Field(default_factory=dict)
    step: int = Field(ge=0)
    completed: dict[str, dict[str, Any]] = Field(default_factory=dict)
    """A fork of a step that stopped part-way: the updates of the tasks that finished in it, kept."""

    def stored_exclude(self) -> set[str]:
        """The fields at their default, which the stored record leaves out (``StoredCheckpoint``'s rule)."""
        left_out = {name for name in ("update", "pending", "schedule", "completed") if not getattr(self, name)}
        if self.kind == "input":
            left_out.add("kind")
        return left_out
