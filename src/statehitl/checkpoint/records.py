"""Persisted records: versioned, kind-tagged pydantic models, JSON only.

Loading a record validates it and never executes code. ``schema_version`` lets a newer statehitl read
older records and lets an older one refuse newer records with a clear message.

Four kinds live in storage (besides answers, ``StoredAnswer``, and refused ones, ``RefusedAnswer``):

- ``StoredCheckpoint`` (``kind="checkpoint"``): one transition of a thread. Ordinary fields are stored
  whole; append-only channels are stored as a ``Piece`` (the items added since the record's *base*,
  an ancestor chosen Fenwick-style, see ``checkpoint/chain.py``), so a step writes what it added.
- ``ClaimRecord`` (``kind="claim"``): a process's exclusive right to resume a thread, with a lease.
- ``ThreadIndex`` (``kind="index"``): the small per-thread summary used to list threads by status.
- ``MachineShape`` (``kind="machine"``): what a machine fingerprint stands for.

``CheckpointRecord`` is the decoded view callers get: the same metadata with every channel whole.

Their validators are built on first use (``defer_build``), not at import: a serverless cold start
pays only for the record kinds its calls touch.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field

from statehitl.checkpoint.record_parts import FailureRecord, InterruptRecord, Piece, RunStart

SCHEMA_VERSION = 6
"""2: statuses read as the API names them (``executing`` was ``running``, ``failed`` was ``cancelled``)
and a failed run records its ``error``. Records of version 1 are read with the old names mapped.
3: a stored checkpoint leaves out the fields that hold their default, and a step's write to an
append-only channel names the items of the record's piece it added (``{"$items": [start, end]}``)
instead of repeating them. 4: the checkpoint that applied a resume's answers carries them
(``answered``: what the interrupts they answer do not already say), stored with the step in its one
write, and is the thread's audit trail. 5: a claim records the answers its run acts on (``answered``:
"action started"), and a claim may settle the one before it (``settles``: released before any node
ran, or a human's go-ahead to retry an action whose outcome is unknown). 6: a run's first checkpoint
says where the run began (``start``: the caller's input, or the checkpoint a replay forks from), and a
checkpoint may follow one of the checkpoints its parent's record shows besides its own (``parent_view``).
Records of earlier versions are read as they are."""

_LEGACY_STATUS = {"running": "executing", "cancelled": "failed"}


def _current_status(value: Any) -> Any:
    return _LEGACY_STATUS.get(value, value) if isinstance(value, str) else value


RecordStatus = Annotated[Literal["executing", "interrupted", "completed", "failed"], BeforeValidator(_current_status)]
"""Where a stored run stands, in the one vocabulary of the API (``statehitl.status.Status``), the index
and the CLI: ``executing`` (running, or stopped mid-way by a crash or the step limit: ``invoke(None)``
goes on), ``interrupted`` (waiting on a human), ``completed``, ``failed`` (a node raised, whose
``error`` the record keeps and which ``invoke(None)`` retries; or a hook cancelled a node, which
``cancelled`` names)."""
Source = Literal["input", "step", "interrupt", "cancel", "update", "error", "fork"]

ViewPart = Literal["input", "loop", "fork", "root"]
"""A checkpoint a record shows besides its own (``statehitl.graph.history``): the state before a run's
input, the state the run's first step ran on, or the checkpoint a replay forked; ``"root"``: none, the
record is shown without a parent (a copy of a checkpoint that follows none)."""


Via = Literal["app", "inbox", "page", "expiry"]
"""The door an answer came through: the application's own call (``invoke``/an agent call with
interruptResponse blocks, the demo), the inbox (CLI or library), the inbox's web page, an expiry default."""


class AuditEntry(BaseModel):
    """One applied answer: which interrupt (its id, name and the reason the human was shown), the
    response, who gave it and their comment, when (epoch seconds), and what it did: ``applied``,
    ``rejected`` (a ``Reject``) or ``edited`` (an ``Edit``); a default applied by an expiry sweep has
    ``responder="expiry"``.

    ``checkpoint_id`` is the checkpoint whose interrupt was answered; ``digest`` the tool call an
    answer about a tool call was given for.

    Three outcomes record what went wrong instead: ``unknown``, an answer a run acted on and never recorded
    how it ended (its process stopped, or the store failed: see ``ActionOutcomeUnknownError``),
    ``retried``, a human's go-ahead to run such an action again (``responder`` and ``comment`` are theirs;
    ``interrupt_id`` and ``name`` are empty, ``checkpoint_id`` is where the thread went on from), and
    ``refused``, an answer that never bound (``RefusedAnswer``): from someone the interrupt's ``responders``
    do not name (``responder`` is who tried, None when the answer named nobody), or one the handler's type
    refused when it re-ran, withdrawn whichever door stored it (``why`` says so).
    ``failed``: an answer applied to a step whose node then raised (the thread waits on it again).
    """

    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    kind: Literal["audit"] = "audit"
    schema_version: int = SCHEMA_VERSION
    thread_id: str
    interrupt_id: str
    name: str
    reason: Any = None
    response: Any = None
    responder: str | None = None
    comment: str | None = None
    at: float
    outcome: Literal["applied", "rejected", "edited", "unknown", "retried", "refused", "failed"] = "applied"
    node: str = ""
    source: str = "node"
    digest: str | None = None
    checkpoint_id: str | None = None
    via: Via | None = None
    """The door the answer came through (None: recorded before doors were)."""
    why: str | None = None
    """For a ``refused`` answer that was stored and withdrawn on re-run: why the handler refused it."""


class AnswerRecord(BaseModel):
    """An applied answer as the checkpoint that applied it stores it: only what the interrupt it
    answers does not already say. Its name, reason, node, source and tool-call digest are in the
    interrupts of checkpoint ``checkpoint_id``, and ``Checkpointer.audit`` joins the two into an
    ``AuditEntry``: the step's one write stays small (on DynamoDB, within its write unit)."""

    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    interrupt_id: str
    checkpoint_id: str
    response: Any = None
    responder: str | None = None
    comment: str | None = None
    at: float
    outcome: Literal["applied", "rejected", "edited", "unknown", "failed"] = "applied"
    via: Via | None = None

    @classmethod
    def of(cls, entry: AuditEntry) -> AnswerRecord:
        if entry.outcome == "retried":
            raise ValueError("a go-ahead to retry is not an answer to an interrupt")
        if entry.outcome == "refused":
            raise ValueError("a refused answer is never applied: it is kept by itself (RefusedAnswer)")
        return cls(interrupt_id=entry.interrupt_id, checkpoint_id=entry.checkpoint_id or "", response=entry.response,
                   responder=entry.responder, comment=entry.comment, at=round(entry.at, 3), outcome=entry.outcome,
                   via=entry.via)

    def stored_exclude(self) -> set[str]:
        """The fields at their default, left out of the stored JSON."""
        omitted = {name for name in ("responder", "comment", "via") if getattr(self, name) is None}
        if self.outcome == "applied":
            omitted.add("outcome")
        return omitted


class CheckpointRecord(BaseModel):
    """The full state of one thread after a transition.

    ``pending`` is the position: the nodes to (re-)enter next. For an interrupted step, ``completed``
    holds the updates of the nodes that finished (kept, not re-run) and ``responses`` the answers
    gathered so far in this step (so a handler that interrupts again still sees its earlier answers);
    ``progress`` what an interrupted node kept of its partial work, handed back to it on re-entry (a
    typed record of ``statehitl.progress``: a nested run, a tool batch...).
    ``writes`` is what the step that produced this checkpoint applied, and ``answered`` the answers a
    resume applied in it (``Checkpointer.audit`` gives them whole, as the audit trail). ``parent_seq`` is the
    checkpoint this one follows (an earlier one after a fork); ``depth`` counts checkpoints from the
    thread's first. ``owner``/``lease_until`` mark a run in progress, so a crashed run can be taken over.
    """

    model_config = ConfigDict(extra="forbid", defer_build=True)

    kind: Literal["checkpoint"] = "checkpoint"
    schema_version: int = SCHEMA_VERSION
    thread_id: str
    seq: int = Field(ge=0)
    parent_seq: int | None = None
    depth: int = Field(default=1, ge=1)
    base_seq: int | None = None
    created_at: float
    machine: str
    fingerprint: str
    status: RecordStatus
    step: int = Field(ge=0)
    source: Source = "step"
    pending: list[str] = Field(default_factory=list)
    values: dict[str, Any] = Field(default_factory=dict)
    completed: dict[str, dict[str, Any]] = Field(default_factory=dict)
    responses: dict[str, Any] = Field(default_factory=dict)
    progress: dict[str, Any] = Field(default_factory=dict)
    interrupts: list[InterruptRecord] = Field(default_factory=list)
    cancelled: dict[str, str] = Field(default_factory=dict)
    error: FailureRecord | None = None
    writes: dict[str, dict[str, Any]] = Field(default_factory=dict)
    owner: str | None = None
    lease_until: float | None = None
    answered: list[AnswerRecord] = Field(default_factory=list)
    replaced_text: int | None = None
    """How many characters of this checkpoint could not be stored as they were (lone surrogates, as from a
    file name that is not UTF-8) and are U+FFFD instead; None when none."""
    schedule: dict[str, Any] = Field(default_factory=dict)
    """A machine that runs supersteps (a StateGraph): the pending Sends' arguments, the waiting edges'
    progress and the deferred nodes, as a ``statehitl.progress.Schedule`` stores them, read back through it
    (``supersteps.schedule_of``); empty when nothing waits. Kept as JSON here, so a record of a run
    without one never builds the Schedule's validator."""
    start: RunStart | None = None
    """On a run's first checkpoint: where the run began (its input, or the checkpoint it replays)."""
    parent_view: ViewPart | None = None
    """Which checkpoint of the parent's record this one follows when it is not the record's own (a fork or
    an update made from a run's input or first-step checkpoint)."""
    metadata: dict[str, str | int | float | bool] = Field(default_factory=dict)
    """The run's own keys LangGraph copies into every checkpoint's metadata: the plain values of its config's
    ``configurable`` and ``metadata`` (``graph.run_targets.checkpoint_metadata``); empty, and so not stored,
    for a run given none."""
    acting: int | None = None
    """On the checkpoints of a run that acts on answers, while it runs (and on the one that released its
    lease after a failure): the slot of the claim that recorded the answers. Such a run that stopped
    without a checkpoint saying how may have done anything after its last one: continuing it waits for
    a human (``ActionOutcomeUnknownError``)."""

    @property
    def checkpoint_id(self) -> str:
        """The id users see: the thread's sequence number, zero-padded so ids sort in order."""
        return f"{self.seq:012d}"


class StoredCheckpoint(CheckpointRecord):
    """A checkpoint as written: ``values`` holds the ordinary channels, ``appends`` the pieces, and
    ``writes`` what the step applied less what those already hold (``value_writes`` names it).

    Stored without the fields that hold their default (most of a step's record: no interrupts, no
    answers, no error) and without ``thread_id``, which its key holds, since the metadata of a step
    is what a thread pays for on every write and every cold read; the engine's reader fills them
    back in.
    """

    appends: dict[str, Piece] = Field(default_factory=dict)
    value_writes: dict[str, list[str]] = Field(default_factory=dict)
    """By node, the channels whose write is the value ``values`` holds, left out of ``writes``
    (``checkpoint/step_writes.py``)."""

    def stored_exclude(self) -> set[str] | dict[str, Any]:
        """What ``encode`` leaves out of the stored JSON: ``thread_id`` and every field at its empty default
        (inside the answers too).

        A set for ``to_json(exclude=...)`` rather than a serializer of the model's own: a wrapping
        serializer makes pydantic build the whole record as Python objects before the JSON, several
        times the cost of the record's bytes for a large state.
        """
        fields = self.__dict__
        omitted = {name for name in _OMITTED_WHEN_EMPTY  # 0 is a sequence number: only None, [] and {} go
                   if (value := fields[name]) is None or (not value and type(value) in _CONTAINERS)}
        omitted.add("thread_id")
        if self.source == "step":
            omitted.add("source")
        if not self.answered and self.start is None:
            return omitted
        nested: dict[str, Any] = dict.fromkeys(omitted, True)
        if self.answered:
            nested["answered"] = {i: answer.stored_exclude() for i, answer in enumerate(self.answered)}
        if self.start is not None:
            nested["start"] = self.start.stored_exclude()
        return nested


_OMITTED_WHEN_EMPTY = ("parent_seq", "base_seq", "pending", "values", "completed", "responses", "progress",
                       "schedule", "interrupts", "cancelled", "error", "writes", "owner", "lease_until", "answered",
                       "appends", "value_writes", "acting", "replaced_text", "start", "parent_view", "metadata")
"""Fields whose default is empty (None, [] or {}): a stored checkpoint leaves them out when they are.
``parent_seq`` and ``base_seq`` are None only at a thread's root, and a missing one reads back as None."""

_CONTAINERS = (list, dict)


class ClaimRecord(BaseModel):
    """Exclusive right to continue the checkpoint ``parent_seq``, held by ``owner`` until ``lease_until``.

    A resume's claim is also its record that the action started: ``answered`` holds the answers the run
    acts on, written durably before any node runs. If no checkpoint follows it (the process died, or
    the store failed past every retry after the action ran), nobody knows whether the action ran, and
    the thread refuses a second answer (``ActionOutcomeUnknownError``) until a human settles it.
    ``settles`` marks a claim that ends the one before it: ``released`` (its run stopped before any
    node ran: nothing was done) or ``retry`` (a human, ``owner``, allowed the action to run again).
    """

    model_config = ConfigDict(extra="forbid", defer_build=True)

    kind: Literal["claim"] = "claim"
    schema_version: int = SCHEMA_VERSION
    thread_id: str
    seq: int = Field(ge=0)
    parent_seq: int = Field(ge=0)
    owner: str
    lease_until: float
    created_at: float
    answered: list[AnswerRecord] = Field(default_factory=list)
    settles: Literal["released", "retry"] | None = None
    comment: str | None = None
    """What the human who settled an unknown outcome said about it (``settles="retry"``)."""

    @property
    def acting(self) -> bool:
        """Whether this claim's run acts on answers: if it left no checkpoint, its action's outcome is unknown."""
        return bool(self.answered)

    def stored_exclude(self) -> set[str] | dict[str, Any]:
        """The fields at their default, left out of the stored JSON (a claim with no answers keeps its bytes)."""
        omitted = {name for name in ("settles", "comment") if getattr(self, name) is None}
        if not self.answered:
            return omitted | {"answered"}
        answers = {i: answer.stored_exclude() for i, answer in enumerate(self.answered)}
        return {**dict.fromkeys(omitted, True), "answered": answers}


class StoredAnswer(BaseModel):
    """The one binding answer to one interrupt of one waiting checkpoint, as the first door to give it
    stored it: create-once under ``threads/<thread>/a.<checkpoint>.<interrupt>``, so whichever door
    answers first (the app, the inbox, the page, an expiry) wins everywhere, and a resume applies it.
    ``answered_at`` is epoch seconds; ``digest`` the tool call an answer was given for, when it said."""

    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    kind: Literal["answer"] = "answer"
    schema_version: int = SCHEMA_VERSION
    thread_id: str
    checkpoint_id: str
    interrupt_id: str
    name: str
    response: Any = None
    responder: str | None = None
    comment: str | None = None
    answered_at: float
    via: Via = "app"
    digest: str | None = None

    def stored_exclude(self) -> set[str]:
        return {name for name in ("responder", "comment", "digest") if getattr(self, name) is None}


class RefusedAnswer(BaseModel):
    """An answer that never bound, kept for the audit trail under
    ``threads/<thread>/r.<checkpoint>.<interrupt>.<nonce>`` (create-once, one per refusal;
    ``checkpoint/refusals.py``): refused because its responder is not among the interrupt's
    ``responders`` (never stored as the answer), or stored by a door that could not check its type and
    refused by the handler's type when it re-ran, then withdrawn (``why`` says what the type said).

    Whole in itself: it holds the interrupt as asked (its name, reason and who may answer), so the trail
    still shows it once ``prune`` has deleted the checkpoint that asked. ``groups`` are the groups the door
    said the responder belongs to; ``refused_at`` is epoch seconds.
    """

    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    kind: Literal["refusal"] = "refusal"
    schema_version: int = SCHEMA_VERSION
    thread_id: str
    checkpoint_id: str
    interrupt: InterruptRecord
    response: Any = None
    responder: str | None = None
    groups: list[str] = Field(default_factory=list)
    comment: str | None = None
    refused_at: float
    via: Via = "app"
    why: str | None = None

    def stored_exclude(self) -> set[str]:
        omitted = {name for name in ("responder", "comment", "why") if getattr(self, name) is None}
        return omitted | ({"groups"} if not self.groups else set())


class AnsweredMark(BaseModel):
    """In a thread's index entry: an interrupt answered through a door that does not resume (the inbox
    without the app, the page, an expiry), so listings show it as answered, not yet applied, and a
    worker finds the thread to resume."""

    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    interrupt_id: str
    responder: str | None = None
    via: Via = "inbox"
    at: float


class ThreadIndex(BaseModel):
    """What listing needs about a thread, kept in one small record instead of reading checkpoints."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    kind: Literal["index"] = "index"
    schema_version: int = SCHEMA_VERSION
    thread_id: str
    seq: int
    status: RecordStatus
    step: int
    pending: list[str] = Field(default_factory=list)
    interrupts: list[InterruptRecord] = Field(default_factory=list)
    error: FailureRecord | None = None
    machine: str
    updated_at: float
    expires_at: float | None = None
    answered: list[AnsweredMark] = Field(default_factory=list)
    """Interrupts of checkpoint ``seq`` answered and not yet applied (empty for most entries)."""

    def stored_exclude(self) -> set[str]:
        return {"answered"} if not self.answered else set()


class MachineShape(BaseModel):
    """The nodes, edges and schema behind a fingerprint, kept to explain a changed machine later."""

    model_config = ConfigDict(defer_build=True)

    kind: Literal["machine"] = "machine"
    schema_version: int = SCHEMA_VERSION
    shape: dict[str, Any]
