"""Where a run stands: the position the runner enters, how it stopped, and what a node sees of it.

Plain data: the I/O that makes a position (a new run's, or a stopped thread's claimed with its answers
bound) is ``statehitl.run_start``'s.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from statehitl import interrupt_ids
from statehitl.checkpoint.chain import Cursor
from statehitl.checkpoint.record_parts import InterruptRecord, RunStart
from statehitl.checkpoint.records import AuditEntry, RecordStatus, ViewPart
from statehitl.interrupt import Interrupt, InterruptContext, InterruptScope

if TYPE_CHECKING:
    from statehitl.progress import Schedule


Writes = list[tuple[str, dict[str, Any]]]
"""One step's updates: ``(node, update)`` in the order the nodes were scheduled."""


@dataclass(slots=True)
class NodeContext:
    """The optional second argument of a node: who and where it is, and ``interrupt()``.

    ``runtime`` is what the machine's owner gives its nodes for this run (the agent loop's model,
    tools and hooks), None for a StateGraph. ``interrupts`` makes scopes for what the node runs (a
    hook event, a tool call) that see the same answers as the node.
    """

    node: str
    step: int
    thread_id: str
    invocation_state: dict[str, Any]
    interrupts: InterruptContext
    runtime: Any = None
    progress: Any = None
    """What this node kept of its work when it last stopped on an interrupt in this step (else None)."""
    sent: bool = False
    """This task was made by a ``Send``: the node was given the Send's argument instead of the state."""
    asked: int = 0
    """How many times the node called LangGraph's free ``interrupt()`` (``graph.node_calls``): each call's
    order names its interrupt."""
    invoked: int = 0
    """How many graphs the node invoked in its own code (``graph.subgraphs``): each call's order keeps
    its interrupts and its progress apart."""
    writes: dict[str, Any] | None = None
    """Channel writes the node's own machinery adds to what it returns, merged into its update: where a
    StateGraph node keeps the state of a subgraph compiled with ``checkpointer=True`` between runs."""
    _scope: InterruptScope | None = None

    def interrupt(self, name: str, reason: Any = None, response: Any = None, *, response_type: Any = None,
                  expires_in: float | None = None, expires_at: float | None = None, on_expire: Any = None,
                  responders: list[str] | None = None, schema: dict[str, Any] | None = None) -> Any:
        """Ask the human. Returns the response on resume (or ``response``, an answer known in advance);
        ``reason`` must be JSON-serializable. ``response_type``: the response is validated as this type
        (a pydantic model, a ``Literal[...]``...) and returned as its value; ``schema``: a JSON schema the
        interrupt shows a form by, the response not validated against it.
        ``expires_in`` (seconds) or ``expires_at`` (epoch) with ``on_expire``: past the deadline a sweep
        (``statehitl inbox sweep``) answers it with ``on_expire``. ``responders``: who may answer, names
        and ``group:NAME`` groups; an answer from anyone else is refused (``ResponderNotAllowedError``) and
        kept in the audit trail as ``refused``."""
        if self._scope is None:
            site = interrupt_ids.node(self.interrupts.prefix, self.step, self.node)
            self._scope = self.interrupts.scope(site, "node", self.node)
        return self._scope.interrupt(name, reason, response, response_type, expires_in=expires_in,
                                     expires_at=expires_at, on_expire=on_expire, responders=responders,
                                     schema=schema)

    @property
    def idempotency_key(self) -> str:
        """A key that names this node call for the outside world: the same whenever this step of this thread
        runs again (another process, a retry after an unknown outcome), different for every other call.
        Pass it to the service an approved action acts on, so that a re-run does the action once."""
        return interrupt_ids.action_key(self.thread_id, interrupt_ids.node(self.interrupts.prefix, self.step,
                                                                           self.node))


@dataclass(kw_only=True, slots=True)
class Position:
    """Where a thread (or a nested run) stands: everything the runner needs to (re-)enter a step.

    ``cursor`` is the thread's place in its store; a nested run has none.
    """

    state: Any
    pending: list[str]
    cursor: Cursor | None = None
    step: int = 0
    completed: dict[str, dict[str, Any]] = field(default_factory=dict)
    responses: dict[str, Any] = field(default_factory=dict)
    progress: dict[str, Any] = field(default_factory=dict)
    waiting: list[InterruptRecord] = field(default_factory=list)
    """The interrupts this position's step answers (a resume): kept if the step fails, so they can be
    answered again."""
    digests: dict[str, str] = field(default_factory=dict)
    """The tool-call digests of answered interrupts that ``waiting`` does not list (a nested run's)."""
    answered: list[AuditEntry] = field(default_factory=list)
    """The audit entries of this resume's answers, stored with the first checkpoint written after they
    were applied (``Runner.run``)."""
    recorded: list[str] = field(default_factory=list)
    """The keys of the answers this call stored as binding: withdrawn if the run refuses them on re-run."""
    schedule: Schedule | None = None
    """What a machine that runs supersteps keeps between steps (``statehitl.supersteps``): Sends, joins."""
    parent_view: ViewPart | None = None
    """Which checkpoint of the cursor's parent record the run follows, when not that record's own."""
    start: RunStart | None = None
    """How a StateGraph's run began (its input, or the checkpoint it replays): its first checkpoint keeps it,
    and shows it as LangGraph's input (or fork) checkpoint and first-step checkpoint (``graph.history``)."""


@dataclass
class RunEnd:
    """How a run stopped, with everything its last checkpoint records.

    ``status`` is ``completed``, ``interrupted``, ``failed``, or ``executing`` when the step limit cut
    it short. ``applied`` is the last step's updates when no ``after_step`` has seen them yet (every
    run that ends after a step: only a step that leaves nodes pending is followed by one); the last
    checkpoint records them as ``writes`` (a nested run, which writes nothing, never pays for turning
    them into JSON).
    """

    status: RecordStatus
    state: Any
    step: int
    pending: list[str]
    completed: dict[str, dict[str, Any]] = field(default_factory=dict)
    responses: dict[str, Any] = field(default_factory=dict)
    progress: dict[str, Any] = field(default_factory=dict)
    interrupts: list[Interrupt] = field(default_factory=list)
    cancelled: dict[str, str] = field(default_factory=dict)
    applied: Writes = field(default_factory=list)
    schedule: Schedule | None = None
    paused: bool = False
    """An ``interrupt_before``/``interrupt_after`` stopped it (``executing`` until its checkpoint says
    ``interrupted``, with no interrupts: nothing to answer, and no worker continues it)."""

    def fields(self) -> dict[str, Any]:
        """The checkpoint fields this end writes (besides status, step and the state)."""
        return {
            "pending": self.pending, "completed": self.completed,
            "responses": self.responses, "progress": self.progress, "cancelled": self.cancelled,
            "interrupts": [InterruptRecord.of(i) for i in self.interrupts],
            "schedule": {} if self.schedule is None else self.schedule.stored(),
        }
