"""What Graph and Swarm share: one orchestration thread on the shared runner, calls, streaming, results.

An orchestrator is a machine whose nodes are other machines (``nodes.OrchestratedNode``), run by the
same ``Runner`` as an agent or a StateGraph: ``BeforeNodeCallEvent`` hooks, interrupts, concurrent
nodes, checkpoints and claims all come from there. This module turns a call's task into a position
(``resume.plan_run``, as every shape does), runs it, streams Strands' multi-agent events, and reads
the result back out of the orchestration's state.

``OrchestratorNode`` is a Graph or Swarm as a node of another orchestrator (or of a StateGraph): its
whole orchestration — task, results, its own nodes' conversations — is its sub-state in the enclosing
thread, its growing lists stored as deltas there like the enclosing one's own. It runs nested on the
shared runner; where it stopped on an interrupt goes back to the enclosing node as what that node
keeps: the position, the state besides its growing lists, and only what those lists gained.
"""

from __future__ import annotations

import contextlib
import os
import time
import weakref
from abc import abstractmethod
from collections.abc import AsyncIterator, Awaitable, Callable, Collection, Sequence
from typing import Any, ClassVar

from statehitl._sync import run_sync
from statehitl.checkpoint.audit import AuditEntry
from statehitl.checkpoint.engine import Checkpointer, Head
from statehitl.checkpoint.memory import MemoryStorage
from statehitl.errors import MachineChangedError, NodeCancelledError, ResumeInputError
from statehitl.event_stream import Emit, stream_run
from statehitl.hooks.multiagent_events import (
    AfterMultiAgentInvocationEvent,
    BeforeMultiAgentInvocationEvent,
    MultiAgentInitializedEvent,
)
from statehitl.hooks.registry import HookEvent, HookProvider, HookRegistry
from statehitl.interrupt import Interrupt
from statehitl.machine import Machine, describe_change
from statehitl.multiagent.executor import MultiAgentBase, shared_state
from statehitl.multiagent.nodes import OrchestratedNode, OrchestrationRun
from statehitl.multiagent.results import MultiAgentResult, NodeResult, accumulated
from statehitl.multiagent.state import OrchestrationSchema, node_state_of
from statehitl.nesting import NodeCall, NodeDone, NodeStopped, kept_run, resumed_run, started_run
from statehitl.position import NodeContext, Position, Writes, resume_position, start_position
from statehitl.resume import ResumeRun, StartRun, plan_run
from statehitl.runner import Durability, Runner
from statehitl.session.manager import SessionManager
from statehitl.status import Status

__all__ = ["MultiAgentBase", "MultiAgentResult", "NodeResult", "Orchestrator", "OrchestratorNode", "Status",
           "check_task", "node_results"]
"""``MultiAgentBase``, ``MultiAgentResult``, ``NodeResult`` and ``Status`` are here too, where Strands'
custom nodes import them from (``strands.multiagent.base``)."""

STEP_LIMIT = 100_000
"""Steps an orchestration may take in one call: its own limits (node executions, handoffs, time) are
what end a loop; this only keeps a graph with none of them set from running forever."""


class Orchestrator(MultiAgentBase):
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
               hooks: Sequence[HookProvider | HookRegistry] | None, session_manager: SessionManager | None) -> None:
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
        self._last: tuple[Head, dict[str, Any]] | None = None
        self._invocation_state: dict[str, Any] = {}
        self._started: tuple[float, float] | None = None
        """The running (or last) call's invocation state and start (wall clock, ``time.monotonic``), for
        what reads them outside a node: a Graph's edge conditions and ``graph.state``. Not the run itself,
        which holds this object: that would make every orchestrator a reference cycle."""
        self._latest: tuple[dict[str, Any], Status] | None = None
        """The running call's state as of its last step, or the last call's, and its status: what
        ``.state`` shows (a Graph's ``GraphState``, a Swarm's ``SwarmState``)."""
        self._runner = Runner(machine, schema, self.hooks, self.checkpointer, source=self,
                              index=session_manager is not None, node_hook_source="multiagent-hook",
                              run_span=f"invoke_{self.kind}")
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

    def _stepped(self, run: OrchestrationRun, state: dict[str, Any], writes: Writes,
                 pending: list[str]) -> Awaitable[None]:
        """Between two steps: show the new state, then let the subclass announce the transition."""
        self._latest = (state, Status.EXECUTING)
        return self._after_step(run, state, writes, pending)

    @abstractmethod
    async def _after_step(self, run: OrchestrationRun, state: dict[str, Any], writes: Writes,
                          pending: list[str]) -> None:
        """Announce a transition between nodes on the stream (a Graph's batches, a Swarm's handoffs)."""

    def _adopt(self, state: dict[str, Any], ran: Collection[str] = ()) -> None:
        """Show the node states the orchestration keeps in the live node objects (``agent.messages``);
        the nodes that ran in this call (``ran``) show theirs already."""
        for node_id, node in self.orchestrated.items():
            if node_id in state.get("nodes", {}) and node_id not in ran:
                node.machine.adopt_node_state(node_state_of(state, node_id, node.machine))

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
        # Without a session the thread is this object's alone: where the last call left it is known, so
        # the store is not read again (a graph called often would read a growing history each time).
        head, known = self._last if self._last is not None else (await self.checkpointer.head(self.thread_id), None)
        self._last = None  # until this call ends well: after a failure, the store is the truth
        label = f"{self.kind} {self.id!r} (thread {self.thread_id!r})"
        plan = plan_run(task, None if head is None else head.record, label=label, none_continues=True,
                        lists_are_input=True)
        if isinstance(plan, StartRun):
            check_task(task, label)
        async with self._invocation(invocation_state, emit) as run:
            at = await self._position(plan, head, known)
            self._latest = (at.state, Status.EXECUTING)
            record, state = await self._runner.run(
                at, step_limit=STEP_LIMIT, durability=self.durability, invocation_state=invocation_state,
                runtime=run, after_step=lambda s, w, p: self._stepped(run, s, w, p))
            self._latest = (state, call_status(record.status, state, record.cancelled))  # before the After hooks
        await self._runner.remember_shape(record)
        self._adopt(state, run.ran)
        if self.session_manager is None:
            assert at.cursor is not None
            self._last = (Head(record, at.cursor), state)
        result = self.build_result(record.status, state, [i.to_interrupt() for i in record.interrupts],
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
        what only the stop shows: cancelled nodes, interrupts raised by hooks before a node)."""
        for node_id, message in cancelled.items():
            run.event({"type": "multiagent_node_cancel", "node_id": node_id, "message": message})
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
        return self._result(base, state)

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

    def as_node(self) -> OrchestratorNode:
        """This orchestrator as a node of another (a Swarm inside a Graph): ``statehitl.nesting``."""
        return OrchestratorNode(self)


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
            orchestrator._latest = (at.state, Status.EXECUTING)
            end = await orchestrator._runner.run_nested(
                at, step_limit=STEP_LIMIT, invocation_state=call.invocation_state, prefix=call.interrupts.prefix,
                thread_id=call.thread_id, runtime=run,
                after_step=lambda s, w, p: orchestrator._stepped(run, s, w, p))
            orchestrator._latest = (end.state, call_status(end.status, end.state, end.cancelled))
        orchestrator._adopt(end.state, run.ran)
        result = orchestrator.build_result(end.status, end.state, end.interrupts, end.cancelled, run)
        run.event({"type": "multiagent_result", "result": result})  # its stream ends as a call's own does
        if end.status == "interrupted":
            return NodeStopped(end.interrupts, kept_run(end, schema, base), result)
        if orchestrator.raises_on_cancel:  # a nested Graph fails its node, as a Graph call raises
            for node_id, message in end.cancelled.items():
                raise NodeCancelledError(message, node_id=node_id)
        status = "completed" if result.status == Status.COMPLETED else "failed"
        return NodeDone(end.state, result, dict(result.accumulated_usage), status)


def call_status(status: str, state: dict[str, Any], cancelled: dict[str, str]) -> Status:
    """How a call that stopped with the runner's ``status`` in ``state`` ended, as Strands says it."""
    if status == "interrupted":
        return Status.INTERRUPTED
    if cancelled or state.get("failure") is not None:
        return Status.FAILED
    return Status.COMPLETED


def check_task(task: Any, label: str) -> None:
    """A task is a str or a list of content blocks (dicts); refuse anything else before it runs."""
    if isinstance(task, str) or (isinstance(task, list) and task and all(isinstance(b, dict) and b for b in task)):
        return
    raise ResumeInputError(
        f"{label}: a task must be a str or a list of content blocks like {{'text': ...}} (or, to answer "
        f"interrupts, a list of {{'interruptResponse': ...}}); got {type(task).__name__}: {task!r}"
    )


def node_results(state: dict[str, Any], nodes: dict[str, OrchestratedNode]) -> dict[str, NodeResult]:
    """This invocation's results so far, as objects (what edge conditions and node inputs read)."""
    return {node_id: nodes[node_id].load_result(data) for node_id, data in state.get("results", {}).items()
            if node_id in nodes}

