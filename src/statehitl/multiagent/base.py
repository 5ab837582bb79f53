"""What Graph and Swarm share: one orchestration thread on the shared runner, calls, streaming, results.

An orchestrator is a machine whose nodes are other machines (``nodes.OrchestratedNode``), run by the
same ``Runner`` as an agent or a StateGraph: ``BeforeNodeCallEvent`` hooks, interrupts, concurrent
nodes, checkpoints and claims all come from there. This module turns a call's task into a position
(``resume.plan_run``, as every shape does), runs it, streams Strands' multi-agent events, and reads
the result back out of the orchestration's state.

The orchestrator is also the runner's ``NodeRules``: its limits are checked before a step's hooks, and
it records a cancelled node. ``nested.OrchestratorNode`` runs it as a node of another machine (a Graph's
or Swarm's ``as_node()``).
"""

from __future__ import annotations

import contextlib
import os
import time
import weakref
from abc import abstractmethod
from collections.abc import AsyncIterator, Awaitable, Callable, Collection, Mapping, Sequence
from typing import Any, ClassVar

from statehitl._sync import run_sync
from statehitl.checkpoint.engine import Checkpointer
from statehitl.checkpoint.memory_storage import MemoryStorage
from statehitl.checkpoint.reading import Head
from statehitl.checkpoint.record_parts import FailureRecord
from statehitl.checkpoint.records import AuditEntry
from statehitl.errors import MachineChangedError, NodeCancelledError
from statehitl.event_stream import Emit, stream_run
from statehitl.hooks.multiagent_events import (
    AfterMultiAgentInvocationEvent,
    BeforeMultiAgentInvocationEvent,
    MultiAgentInitializedEvent,
)
from statehitl.hooks.registry import HookEvent, HookProvider, HookRegistry
from statehitl.interrupt import Interrupt
from statehitl.machine import Machine, describe_change
from statehitl.multiagent.call_rules import STEP_LIMIT, call_status, check_task, is_retry, node_results, span_attributes
from statehitl.multiagent.executor import MultiAgentBase, shared_state
from statehitl.multiagent.failures import load_exception
from statehitl.multiagent.nodes import OrchestratedNode, OrchestrationRun
from statehitl.multiagent.results import MultiAgentResult, NodeResult, accumulated
from statehitl.multiagent.resumed import ResumableOrchestrator
from statehitl.multiagent.state import OrchestrationSchema, node_state_of
from statehitl.nesting import NodeCall
from statehitl.position import NodeContext, Position, RunEnd, Writes
from statehitl.resume import ContinueRun, ResumeRun, StartRun, plan_run
from statehitl.run_start import resume_position, start_position
from statehitl.runner import Runner
from statehitl.session.manager import SessionManager
from statehitl.status import Status
from statehitl.thread_run import Durability

__all__ = ["MultiAgentBase", "MultiAgentResult", "NodeResult", "Orchestrator", "Status"]
"""``MultiAgentBase``, ``MultiAgentResult``, ``NodeResult`` and ``Status`` are here too, where Strands'
custom nodes import them from (``strands.multiagent.base``)."""

class Orchestrator(MultiAgentBase, ResumableOrchestrator):
    """An orchestrator of agents and other machines (a Graph, a Swarm): call it with a task, or with the
    answers to its interrupts. ``graph(task)``, ``await graph.invoke_async(task)``, ``graph.stream_async(task)``."""

    kind: ClassVar[str] = "orchestrator"
    raises_on_cancel: ClassVar[bool] = False
    """Whether a node cancelled by a hook makes the call raise ``NodeCancelledError`` (a Graph, as in
    Strands) rather than return a FAILED result (a Swarm)."""
    id: str
    orchestrated: dict[str, OrchestratedNode]
    """Each node as the machine runs it (its ``MachineNode``), by id; ``nodes`` is Strands' view of them."""

    def _setup(self, *, id: str, machine: Machine, schema: OrchestrationSchema,
               hooks: Sequence[HookProvider | HookRegistry] | None, session_manager: SessionManager | None,
               trace_attributes: Mapping[str, Any] | None) -> None:
        self.id = id
        self.machine = machine
        self.schema = schema
        self.hooks = HookRegistry()
        for hook in hooks or ():
            self.hooks.add(hook)
        self.session_manager = session_manager
        if session_manager is not None:
            self.checkpointer = session_manager.checkpointer
            self.thread_id = session_manager.thread_id(id)
        else:  # the id names nothing in a store: any text will do, as in Strands
            self.checkpointer = Checkpointer(MemoryStorage())
            self.thread_id = f"{self.kind}-{os.urandom(16).hex()}"
        self.durability: Durability = "step" if session_manager is not None else "exit"
        self._last: tuple[Head | None, dict[str, Any] | None] | None = None
        """Where the thread stands, when this object knows without reading the store: its head and the
        state it holds (None, None: a thread never written). Without a session the thread is this
        object's alone; with one, only the read made when the orchestrator was built is kept, for its
        first call."""
        self._invocation_state: dict[str, Any] = {}
        self._started: tuple[float, float] | None = None
        """The running (or last) call's invocation state and start (wall clock, ``time.monotonic``), for
        what reads them outside a node: a Graph's edge conditions and ``graph.state``. Not the run itself,
        which holds this object: that would make every orchestrator a reference cycle."""
        self._latest: tuple[dict[str, Any], Status] | None = None
        """The running call's state as of its last step, or the last call's, and its status: what
        ``.state`` shows (a Graph's ``GraphState``, a Swarm's ``SwarmState``)."""
        self.trace_attributes = span_attributes(trace_attributes)
        self._runner = Runner(machine, schema, self.hooks, self.checkpointer, source=self,
                              index=session_manager is not None, node_hook_source="multiagent-hook",
                              run_span=f"invoke_{self.kind}", span_attributes=self.trace_attributes, rules=self)
        if session_manager is not None:  # show where the thread stands, as `threads show` would, before any call
            self._restore(run_sync(self.checkpointer.head(self.thread_id)))
        else:
            self._last = (None, None)  # a thread of its own, never written
        if self.hooks.has_callbacks(MultiAgentInitializedEvent):
            run_sync(self.hooks.fire(MultiAgentInitializedEvent(self)))

    # -- what a subclass says -------------------------------------------------------------------------

    @abstractmethod
    def _begin(self, state: dict[str, Any], task: Any) -> dict[str, Any]:
        """The state a new invocation on ``task`` starts from, keeping what lasts between invocations."""

    @abstractmethod
    def _entry(self, state: dict[str, Any]) -> list[str]:
        """The nodes a new invocation starts with."""

    @abstractmethod
    def _result(self, base: MultiAgentResult, state: dict[str, Any]) -> MultiAgentResult:
        """The orchestrator's own result type, from the common fields in ``base``."""

    @abstractmethod
    async def _run_node(self, node_id: str, state: dict[str, Any], ctx: NodeContext) -> dict[str, Any]:
        """One call of node ``node_id``: its update of the orchestration's state."""

    @abstractmethod
    def _limit(self, state: dict[str, Any], run: OrchestrationRun) -> str | None:
        """Which of the orchestrator's limits the next step would pass, if one (its reason, in Strands' words)."""

    @abstractmethod
    def _cancel(self, node_id: str, message: str, run: OrchestrationRun) -> dict[str, Any]:
        """A hook cancelled ``node_id``: announce it on the stream; the update that records it."""

    @abstractmethod
    def _snapshot(self, state: dict[str, Any], interrupted: list[str]) -> dict[str, Any]:
        """The orchestrator's own keys of ``serialize_state`` (Strands' names), from ``state`` and the nodes
        whose calls wait on ``interrupted``."""

    def _stopped_results(self, progress: Mapping[str, Any], error: FailureRecord | None) -> dict[str, dict[str, Any]]:
        """Stored results of nodes that stopped mid-call, which the state's ``results`` do not hold: the
        node whose step failed (``error``); a Swarm adds its node stopped on an interrupt (``progress``)."""
        if error is None or len(error.nodes) != 1 or error.nodes[0] not in self.orchestrated:
            return {}  # a step that failed as a whole (its updates did not apply) has no failed node to show
        failed = NodeResult(load_exception({"exception": error.type, "message": error.message}),
                            status=Status.FAILED, execution_count=1)
        return {error.nodes[0]: failed.to_dict()}

    def _node_handler(self, node_id: str) -> Callable[[dict[str, Any], NodeContext], Awaitable[dict[str, Any]]]:
        """The machine's handler for node ``node_id`` (the runner calls it with the state and its context).

        It holds the orchestrator weakly: the orchestrator holds its machine, so a strong reference
        would make every Graph and Swarm a reference cycle, freed only by the garbage collector, whose
        passes over them took about a tenth of a Graph chain's time."""
        orchestrator, kind = weakref.ref(self), type(self).__name__

        async def run_node(state: dict[str, Any], ctx: NodeContext) -> dict[str, Any]:
            owner = orchestrator()
            if owner is None:
                raise RuntimeError(f"node {node_id!r} was called after its {kind} was freed")
            return await owner._run_node(node_id, state, ctx)

        return run_node

    def _shown(self) -> tuple[dict[str, Any], Status]:
        """The state and status ``.state`` shows: the running or last call's, else a fresh one."""
        return self._latest or (self.schema.fresh(), Status.PENDING)

    def _clock(self) -> tuple[float, int]:
        """When the running or last call began (wall clock) and how long it has run, in ms."""
        if self._started is None:
            return time.time(), 0
        wall, monotonic = self._started
        return wall, round((time.monotonic() - monotonic) * 1000)

    def _show(self, state: dict[str, Any], status: Status) -> None:
        """Show ``state`` with ``status`` in ``.state`` (and, for a Swarm, in ``shared_context``)."""
        self._latest = (state, status)

    def _show_update(self, node_id: str, update: dict[str, Any]) -> None:
        """Show a node's update before its ``AfterNodeCallEvent`` hooks run, as Strands' state holds a
        node's result by then; the step applies it, with its other nodes' updates, after they finish.
        Only what ``.state`` reads: the node's own sub-state (a conversation) would be copied for nothing."""
        state, status = self._shown()
        shown = {k: v for k, v in update.items() if k != "nodes" and k not in self.schema.append_channels}
        self._show(self.schema.apply(state, [(node_id, shown)]), status)

    def _stepped(self, run: OrchestrationRun, state: dict[str, Any], writes: Writes,
                 pending: list[str]) -> Awaitable[None]:
        """Between two steps: show the new state, then let the subclass announce the transition."""
        self._show(state, Status.EXECUTING)
        return self._after_step(run, state, writes, pending)

    @abstractmethod
    async def _after_step(self, run: OrchestrationRun, state: dict[str, Any], writes: Writes,
                          pending: list[str]) -> None:
        """Announce a transition between nodes on the stream (a Graph's batches, a Swarm's handoffs)."""

    def _restore(self, head: Head | None) -> None:
        """Show where the thread stands: its status, its nodes' results, its node agents' conversations.

        A new Graph or Swarm on a session does this when it is built, so what it shows before its first
        call is what ``statehitl threads show`` shows; that call goes on from the same read."""
        if head is None:
            self._last = (None, None)
            return
        record = head.record
        state = self.schema.load(record.values)
        self._last = (head, state)
        self._show(self._with_stopped(state, record.progress, record.error),
                   call_status(record.status, state, record.cancelled))
        self.adopt(state)
        self._shown_nodes(self._shown()[0], [i.node for i in record.interrupts])

    def _with_stopped(self, state: dict[str, Any], progress: Mapping[str, Any],
                      error: FailureRecord | None = None) -> dict[str, Any]:
        """``state`` as shown: with the results of nodes that stopped mid-call (``_stopped_results``)."""
        stopped = self._stopped_results(progress, error)
        if not stopped:
            return state
        return {**state, "results": {**stopped, **state.get("results", {})}}

    def _shown_nodes(self, state: dict[str, Any], interrupted: list[str]) -> None:
        """Show each node's outcome in its live node object (a Graph's ``GraphNode``); nothing by default."""

    def adopt(self, state: dict[str, Any], ran: Collection[str] = ()) -> None:
        """Show the node states the orchestration ``state`` keeps in the live node objects (``agent.messages``);
        the nodes that ran in this call (``ran``) show theirs already."""
        for node_id, node in self.orchestrated.items():
            if node_id in state.get("nodes", {}) and node_id not in ran:
                node.machine.adopt_node_state(node_state_of(state, node_id, node.machine))

    # -- NodeRules: what the runner asks the orchestrator about its nodes ------------------------------

    def admit(self, state: dict[str, Any], pending: list[str], runtime: Any) -> dict[str, Any] | None:
        """Before a step, ahead of its ``BeforeNodeCallEvent`` hooks: a limit reached ends the call FAILED
        (so no human is asked to approve a node that a limit then refuses)."""
        reason = self._limit(state, runtime)
        return None if reason is None else {"failure": reason, **self._halt}

    def cancelled(self, node: str, message: str, runtime: Any) -> dict[str, Any]:
        update = self._cancel(node, message, runtime)
        self._show_update(node, update)
        return update

    def hook_failed(self, node: str, error: Exception, runtime: Any) -> dict[str, Any] | None:
        """A ``BeforeNodeCallEvent`` hook raised: a Graph fails with the error (None); a Swarm ends FAILED."""
        return None

    _halt: ClassVar[dict[str, Any]] = {}
    """What else a state that ends the call writes besides ``failure`` (a Swarm's pending handoff: none)."""

    # -- hooks ----------------------------------------------------------------------------------------

    def add_hook(self, callback: Any, event_type: Any = None) -> None:
        """Register a callback: Strands' ``add_hook(fn, EventType)`` or ``add_hook(fn)`` (the type from
        ``fn``'s annotation), or ``add_hook(EventType, fn)``."""
        if isinstance(callback, type) and issubclass(callback, HookEvent):
            callback, event_type = event_type, callback
        known = event_type is None or (isinstance(event_type, type) and issubclass(event_type, HookEvent))
        if not known or not callable(callback):
            raise TypeError(f"add_hook expects (callback, EventType); got ({callback!r}, {event_type!r})")
        self.hooks.add_callback(event_type, callback)

    # -- calling --------------------------------------------------------------------------------------

    async def invoke_async(self, task: Any, invocation_state: dict[str, Any] | None = None,
                           **kwargs: Any) -> MultiAgentResult:
        """Run the orchestration on ``task`` (a str or content blocks), or answer its interrupts."""
        return await self._invoke(task, shared_state(invocation_state, kwargs), None)

    async def stream_async(self, task: Any, invocation_state: dict[str, Any] | None = None,
                           **kwargs: Any) -> AsyncIterator[dict[str, Any]]:
        """Run, yielding Strands' multi-agent events as they happen (``multiagent_node_start``,
        ``multiagent_node_stream`` around each agent event, ``multiagent_node_stop``,
        ``multiagent_node_interrupt``, ``multiagent_node_cancel``, ``multiagent_handoff``); the last
        is ``{"type": "multiagent_result", "result": ...}``."""
        state = shared_state(invocation_state, kwargs)
        async for event in stream_run(lambda emit: self._invoke(task, state, emit),
                                      lambda result: {"type": "multiagent_result", "result": result}):
            yield event

    async def _invoke(self, task: Any, invocation_state: dict[str, Any], emit: Emit | None) -> MultiAgentResult:
        # Where the last call left the thread is known without a session (a graph called often would
        # otherwise read a growing history each time), and for a first call, from when it was built.
        head, known = self._last if self._last is not None else (await self.checkpointer.head(self.thread_id), None)
        self._last = None  # until this call ends well: after a failure, the store is the truth
        label = f"{self.kind} {self.id!r} (thread {self.thread_id!r})"
        record = None if head is None else head.record
        plan = plan_run(task, record, label=label, none_continues=True, lists_are_input=True)
        if isinstance(plan, StartRun) and record is not None and is_retry(task, record):
            plan = ContinueRun()  # the same task again after a crash or a failed step: a retry goes on
        if isinstance(plan, StartRun):
            check_task(task, label)
        async with self._invocation(invocation_state, emit) as run:
            at = await self._position(plan, head, known)
            self._show(at.state, Status.EXECUTING)
            try:
                record, state = await self._runner.run(
                    at, step_limit=STEP_LIMIT, durability=self.durability, invocation_state=invocation_state,
                    runtime=run, after_step=lambda s, w, p: self._stepped(run, s, w, p))
            except Exception:
                self._show(self._shown()[0], Status.FAILED)  # as Strands' state says of a call that raised
                raise
            shown = self._with_stopped(state, record.progress)
            self._show(shown, call_status(record.status, state, record.cancelled))  # before the After hooks
        await self._runner.remember_shape(record)
        self.adopt(state, run.ran)
        if self.session_manager is None:
            assert at.cursor is not None
            self._last = (Head(record, at.cursor), state)
        result = self.build_result(record.status, shown, [i.to_interrupt() for i in record.interrupts],
                                   record.cancelled, run)
        if self.raises_on_cancel:
            for node_id, message in record.cancelled.items():
                raise NodeCancelledError(message, node_id=node_id)
        return result

    @contextlib.asynccontextmanager
    async def _invocation(self, invocation_state: dict[str, Any], emit: Emit | None) -> AsyncIterator[OrchestrationRun]:
        """One call of this orchestrator, on its own or as a node of another: its before and after hooks
        around it, and the run its nodes share. The invocation state is also what its edge conditions see."""
        if self.hooks.has_callbacks(BeforeMultiAgentInvocationEvent):
            await self.hooks.fire(BeforeMultiAgentInvocationEvent(self, invocation_state))
        run = OrchestrationRun(self, invocation_state, emit)
        self._invocation_state, self._started = invocation_state, (run.started_at, run.started)
        try:
            yield run
        finally:
            if self.hooks.has_callbacks(AfterMultiAgentInvocationEvent):
                await self.hooks.fire(AfterMultiAgentInvocationEvent(self, invocation_state))

    async def _position(self, plan: Any, head: Head | None, known: dict[str, Any] | None) -> Position:
        """Where the call starts; ``known`` is the state ``head`` holds, when this object wrote it."""
        if isinstance(plan, StartRun):
            if head is None:
                state = self._begin(self.schema.fresh(), plan.input)
            else:
                self.checkpointer.ensure_free(head, None)
                state = self._begin(known if known is not None else self.schema.load(head.record.values), plan.input)
            return start_position(head, self.thread_id, state, self._entry(state))
        assert head is not None
        record = head.record
        if record.fingerprint != self.machine.fingerprint:
            old = await self.checkpointer.machine_shape(record.fingerprint)
            raise MachineChangedError(
                f"{self.kind} {self.id!r} stopped at checkpoint {record.checkpoint_id} under a different version of "
                f"its nodes and edges: {describe_change(old, self.machine.shape())}; resume it with the {self.kind} "
                "that stopped, or start a new task"
            )
        answers = plan.answers if isinstance(plan, ResumeRun) else {}
        state = known if known is not None else self.schema.load(record.values)
        return await resume_position(self.checkpointer, head, answers, state,
                                     meta=plan.meta if isinstance(plan, ResumeRun) else None)

    # -- results --------------------------------------------------------------------------------------

    def build_result(self, status: str, state: dict[str, Any], interrupts: list[Interrupt],
                     cancelled: dict[str, str], run: OrchestrationRun) -> MultiAgentResult:
        """The result of a call that stopped with ``status`` in ``state`` (also announces on the stream
        what only the stop shows: interrupts raised by hooks before a node)."""
        by_hook: dict[str, list[Interrupt]] = {}
        for i in interrupts:
            if i.source == "multiagent-hook":
                by_hook.setdefault(i.node, []).append(i)
        for node_id, raised in by_hook.items():
            run.event({"type": "multiagent_node_interrupt", "node_id": node_id, "interrupts": raised})
        results = node_results(state, self.orchestrated)
        usage, metrics = accumulated(results.values())
        failure = next(iter(cancelled.values()), None) or state.get("failure")
        outcome = call_status(status, state, cancelled)
        base = MultiAgentResult(outcome, results, usage, metrics, len(state.get("order", ())),
                                round((time.monotonic() - run.started) * 1000), interrupts, failure)
        result = self._result(base, state)
        self._shown_nodes(state, [i.node for i in interrupts])
        return result

    # -- as a node of another machine (``nested.OrchestratorNode``) ---------------------------------------

    def start_nested(self, state: dict[str, Any], task: Any) -> tuple[dict[str, Any], list[str]]:
        """Where a call on ``task`` as a node of another machine starts (``state``: the orchestration's
        sub-state there): its state, and its first nodes."""
        begun = self._begin(state, task)
        return begun, self._entry(begun)

    async def run_nested(self, at: Position, call: NodeCall) -> tuple[RunEnd, MultiAgentResult]:
        """One call as a node of another machine, from ``at``, writing nothing (the enclosing checkpoint keeps
        it): where it stopped, and its result, announced on ``call``'s stream and shown as a call's own is."""
        async with self._invocation(call.invocation_state, call.emit) as run:
            self._show(at.state, Status.EXECUTING)
            end = await self._runner.run_nested(
                at, step_limit=STEP_LIMIT, invocation_state=call.invocation_state, prefix=call.interrupts.prefix,
                thread_id=call.thread_id, runtime=run, after_step=lambda s, w, p: self._stepped(run, s, w, p))
            shown = self._with_stopped(end.state, end.progress)
            self._show(shown, call_status(end.status, end.state, end.cancelled))
        self.adopt(end.state, run.ran)
        result = self.build_result(end.status, shown, end.interrupts, end.cancelled, run)
        run.event({"type": "multiagent_result", "result": result})  # its stream ends as a call's own does
        return end, result

    # -- Strands' state snapshot ------------------------------------------------------------------------

    def serialize_state(self) -> dict[str, Any]:
        """The thread's last state in Strands' shape (``type``, ``id``, ``status``, ``node_results``,
        ``next_nodes_to_execute``, ``current_task``, ...), JSON, read from the thread; ``thread_id`` and
        ``checkpoint_id`` say which state of which thread it is."""
        record = run_sync(self.checkpointer.latest(self.thread_id))
        state, status, pending, interrupted = self.schema.fresh(), Status.PENDING, [], []
        if record is not None:
            state = self.schema.load(record.values)
            status = call_status(record.status, state, record.cancelled)
            state = self._with_stopped(state, record.progress, record.error)
            pending = list(record.pending)  # where a stopped call goes on: none once it ended
            interrupted = [i.node.split("/")[0] for i in record.interrupts]
        return {"type": self.kind, "id": self.id, "status": status.value,
                "node_results": dict(state.get("results", {})), "next_nodes_to_execute": pending,
                "current_task": state.get("task"), **self._snapshot(state, interrupted),
                "thread_id": self.thread_id, "checkpoint_id": None if record is None else record.checkpoint_id}

    def deserialize_state(self, payload: dict[str, Any]) -> None:
        """Show the thread's last state again, given a ``serialize_state()`` of that very state.

        The thread, with its claims and its audit trail, is where an orchestration's state comes from;
        a payload cannot replace it (it could put a run past an approval), so one of another
        orchestrator, another thread or an older checkpoint is refused with a ``ValueError``."""
        mine = (self.kind, self.id, self.thread_id)
        given = (payload.get("type"), payload.get("id"), payload.get("thread_id", self.thread_id))
        if given != mine:
            raise ValueError(f"this state is of {given[0]} {given[1]!r} (thread {given[2]!r}), not of this "
                             f"{self.kind} {self.id!r} (thread {self.thread_id!r})")
        head = run_sync(self.checkpointer.head(self.thread_id))
        newest = None if head is None else head.record.checkpoint_id
        if payload.get("checkpoint_id") != newest:
            raise ValueError(
                f"{self.kind} {self.id!r}: this state is of checkpoint {payload.get('checkpoint_id')!r}, but thread "
                f"{self.thread_id!r} is at {newest!r}; the thread is the source of truth for where a run stands, so a "
                "state is restored by building the orchestrator on its session, not from a copy")
        self._restore(head)

    @property
    def interrupts(self) -> list[Interrupt]:
        """The interrupts the orchestration waits on, read from its thread (after a restart too)."""
        record = run_sync(self.checkpointer.latest(self.thread_id))
        if record is None or record.status != "interrupted":
            return []
        return [i.to_interrupt() for i in record.interrupts]

    def audit(self) -> list[AuditEntry]:
        """Every answer given to the orchestration's interrupts (its own and its nodes'), oldest first."""
        return run_sync(self.checkpointer.audit(self.thread_id))

    def draw_mermaid(self) -> str:
        """The orchestration's machine as a Mermaid flowchart."""
        return self.machine.draw_mermaid()
