"""The runner: drives any ``Machine`` step by step, catching interrupts and committing checkpoints.

One step runs every runnable pending node concurrently, then applies their updates together through
the state adapter's reducers, then follows the transitions. If any node (or a hook before it)
interrupts, the nodes that finished keep their updates in the checkpoint and the step is re-entered on
resume with only the interrupted nodes re-run. The runner knows nothing about what the state is; the
adapter does.
"""

from __future__ import annotations

import asyncio
import weakref
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from statehitl import observe
from statehitl.checkpoint.chain import Cursor, StateCodec
from statehitl.checkpoint.engine import Checkpointer, Head, owner_id
from statehitl.checkpoint.records import InterruptRecord, Status, StoredCheckpoint
from statehitl.errors import CheckpointConflict, StepLimitError
from statehitl.hooks.events import AfterNodeCallEvent, BeforeNodeCallEvent
from statehitl.hooks.registry import HookRegistry, cancel_text
from statehitl.interrupt import Interrupt, InterruptRaised, InterruptScope
from statehitl.machine import END, Machine

__all__ = ["Durability", "NodeContext", "Position", "Runner", "StateAdapter", "resume_position", "start_position"]

Durability = Literal["sync", "step", "exit"]
"""When checkpoints are written: ``sync`` fsyncs after every step; ``step`` (default) writes every step
and fsyncs the checkpoint ``invoke`` returns on; ``exit`` writes only that one."""


class StateAdapter(StateCodec, Protocol):
    """How a machine's state is reduced and stored; the runner treats the state as opaque."""

    def apply(self, state: Any, writes: list[tuple[str, dict[str, Any]]]) -> Any: ...
    def normalize_update(self, node: str, returned: Any) -> dict[str, Any]: ...
    def dump_update(self, update: dict[str, Any]) -> dict[str, Any]: ...


@dataclass
class NodeContext:
    """The optional second argument of a node: who and where it is, and ``interrupt()``."""

    node: str
    step: int
    thread_id: str
    invocation_state: dict[str, Any]
    _scope: InterruptScope
    progress: Any = None
    """What this node kept of its work when it last stopped on an interrupt in this step (else None)."""

    def interrupt(self, name: str, reason: Any = None, response: Any = None) -> Any:
        """Ask the human. Returns the response on resume (or ``response``, an answer known in advance);
        ``reason`` must be JSON-serializable."""
        return self._scope.interrupt(name, reason, response)

    def scope(self, site: str, source: str, node: str) -> InterruptScope:
        """An interrupt scope for something this node runs (a hook event, a tool call), seeing the same
        answers as the node; ``site`` keeps its interrupt ids apart from the node's own."""
        return InterruptScope(site, self._scope.responses, source, node)


@dataclass
class Position:
    """Where a thread stands: everything the runner needs to (re-)enter a step."""

    state: Any
    pending: list[str]
    cursor: Cursor
    step: int = 0
    completed: dict[str, dict[str, Any]] = field(default_factory=dict)
    responses: dict[str, Any] = field(default_factory=dict)
    progress: dict[str, Any] = field(default_factory=dict)


def start_position(head: Head | None, thread_id: str, state: Any, pending: list[str]) -> Position:
    """Where a new run from ``state`` enters: after ``head`` if the thread has one, else at its start.

    The caller checks first that no other process holds ``head`` (``Checkpointer.ensure_free``), before
    its hooks or reducers run. The cursor gets a fresh owner so the run's held checkpoints carry a lease
    against takeovers.
    """
    cursor = Cursor(thread_id) if head is None else head.cursor
    cursor.owner = owner_id()
    return Position(state, pending, cursor, 0 if head is None else head.record.step)


async def resume_position(checkpointer: Checkpointer, head: Head, answers: dict[str, Any], state: Any) -> Position:
    """Claim the stopped ``head`` (interrupted, or running when its process died) for this process and
    return where its run re-enters, with ``answers`` to its interrupts (none for a crashed run).

    Called once the answers are checked: the claim is the first write, so of two processes answering
    the same interrupt only one gets past it, before any node, hook or tool runs.
    """
    record = head.record
    await checkpointer.claim(head, owner_id())
    if observe.observers:
        for i in record.interrupts:
            if i.id in answers:
                observe.emit("interrupt.answered", name=i.name, node=i.node, response=answers[i.id])
    return Position(state, record.pending, head.cursor, record.step, record.completed,
                    {**record.responses, **answers}, record.progress)


@dataclass
class _Done:
    update: dict[str, Any]


@dataclass
class _Cancelled:
    message: str


@dataclass
class _Stopped:
    interrupts: list[Interrupt]
    progress: Any = None


_Outcome = _Done | _Cancelled | _Stopped


class Runner:
    """Runs one machine for one app; holds nothing per thread, so one runner serves many threads.

    ``index=False`` skips the thread index entries, for a store nothing ever lists (an agent's
    private memory store).
    """

    def __init__(
        self,
        machine: Machine,
        adapter: StateAdapter,
        hooks: HookRegistry,
        checkpointer: Checkpointer,
        *,
        source: Any,
        index: bool = True,
    ) -> None:
        self.machine = machine
        self.index = index
        self.adapter = adapter
        self.hooks = hooks
        self.checkpointer = checkpointer
        # Weakly: the agent or graph that owns this runner is the source, and a strong reference
        # back would make every dropped Agent garbage that only the cycle collector frees (a
        # server building one per request would keep their open logs until it ran).
        self._source = weakref.ref(source)

    @property
    def source(self) -> Any:
        """The agent or graph whose hooks' node events name it (alive while it runs this runner)."""
        return self._source()

    async def run(
        self,
        at: Position,
        *,
        step_limit: int,
        durability: Durability,
        invocation_state: dict[str, Any],
    ) -> tuple[StoredCheckpoint, Any]:
        """Run from ``at`` until END, an interrupt, a cancel or the step limit.

        Returns the last checkpoint written and the state it holds. Whatever way the run stops, its
        last checkpoint also updates the thread's index entry.
        """
        last: list[tuple[StoredCheckpoint, Any]] = []
        try:
            return await self._run(at, last, step_limit, durability, invocation_state)
        except CheckpointConflict:
            raise  # another process owns the thread now: leave its records alone
        except BaseException:
            # The run is over but the thread says "held until ...": release it, so the thread can be
            # continued at once instead of after the lease runs out.
            if last and last[-1][0].lease_until is not None:
                record, state = last[-1]
                await self._commit(at.cursor, record.step, state, "running", durable=True, index=self.index,
                                   pending=record.pending)
            elif not last:
                await self.checkpointer.release(at.cursor)
            raise

    async def _run(
        self,
        at: Position,
        last: list[tuple[StoredCheckpoint, Any]],
        step_limit: int,
        durability: Durability,
        invocation_state: dict[str, Any],
    ) -> tuple[StoredCheckpoint, Any]:
        pending, state, step, cursor = list(at.pending), at.state, at.step, at.cursor
        thread_id = cursor.thread_id
        completed, responses, progress = dict(at.completed), dict(at.responses), dict(at.progress)
        writes_before: dict[str, dict[str, Any]] = {}  # what the last step applied, for its record

        async def commit(status: Status, durable: bool, *, held: bool = False, **fields: Any) -> StoredCheckpoint:
            # A held checkpoint is one the run goes on from; any other is the one it stops on, which
            # also updates the thread's index entry.
            record = await self._commit(cursor, step, state, status, durable=durable, held=held,
                                        index=self.index and not held,
                                        **fields)
            last[:] = [(record, state)]
            return record

        steps_run = 0
        blockers = self.machine.blockers
        while True:
            if not pending:
                return await commit("completed", True, pending=[], writes=writes_before), state
            if steps_run >= step_limit:
                await commit("running", True, pending=pending)
                raise StepLimitError(
                    f"thread {thread_id!r} ran {step_limit} steps without reaching END (next: {pending}); "
                    "if the loop is intended, raise step_limit= on compile() or invoke(); the thread is "
                    "saved and invoke(None, thread_id=...) continues it"
                )
            waiting = set(pending)
            runnable = [n for n in pending if not (blockers[n] & waiting)] or pending
            outcomes = await self._run_step(runnable, state, step, thread_id, responses, completed, progress,
                                            invocation_state)
            stopped = [i for o in outcomes.values() if isinstance(o, _Stopped) for i in o.interrupts]
            done = {n: o.update for n, o in outcomes.items() if isinstance(o, _Done)}
            if stopped:
                # Finished work is kept for the resume, which applies it: reject a bad update now, while
                # nothing is stored, rather than on every resume of a thread that could then never go on.
                self.adapter.apply(state, [(n, done[n]) for n in runnable if n in done])
                completed.update({n: self.adapter.dump_update(u) for n, u in done.items()
                                  if n not in completed})
                if observe.observers:
                    for i in stopped:
                        observe.emit("interrupt.raised", name=i.name, node=i.node, source=i.source,
                                     reason=i.reason, id=i.id)
                record = await commit("interrupted", True, pending=pending, completed=completed,
                                      responses=responses, interrupts=[InterruptRecord.of(i) for i in stopped],
                                      progress={n: o.progress for n, o in outcomes.items()
                                                if isinstance(o, _Stopped) and o.progress is not None})
                return record, state
            writes = [(n, done[n]) for n in runnable if n in done]
            state = self.adapter.apply(state, writes)
            cancelled = {n: o.message for n, o in outcomes.items() if isinstance(o, _Cancelled)}
            after = [n for n in pending if n not in outcomes]
            for node in runnable:
                if node in done:
                    after.extend(self.machine.next_nodes(node, state))
            pending = [n for n in dict.fromkeys(after) if n != END]
            step += 1
            steps_run += 1
            completed, responses, progress = {}, {}, {}
            writes_before = {n: self.adapter.dump_update(u) for n, u in writes if u}
            if observe.observers:
                observe.emit("step", step=step, writes=writes_before, next=list(pending))
            if cancelled:
                record = await commit("cancelled", True, pending=[], writes=writes_before, cancelled=cancelled)
                return record, state
            if durability != "exit" and pending:
                await commit("running", durability == "sync", held=True, pending=pending, writes=writes_before)

    async def _run_step(
        self,
        runnable: list[str],
        state: Any,
        step: int,
        thread_id: str,
        responses: dict[str, Any],
        completed: dict[str, dict[str, Any]],
        progress: dict[str, Any],
        invocation_state: dict[str, Any],
    ) -> dict[str, _Outcome]:
        outcomes: dict[str, _Outcome] = {}
        todo: list[str] = []
        for node in runnable:
            if node in completed:  # finished before the interrupt: keep its work, do not re-run
                outcomes[node] = _Done(self.adapter.normalize_update(node, completed[node]))
            else:
                todo.append(node)

        async def call(node: str, inline: bool) -> _Outcome:
            return await self._call_node(node, state, step, thread_id, responses, progress.get(node),
                                         invocation_state, inline)

        outcomes.update(zip(todo, await observe.gather_in_order(todo, call), strict=True))
        return {n: outcomes[n] for n in runnable}

    async def _call_node(
        self,
        node: str,
        state: Any,
        step: int,
        thread_id: str,
        responses: dict[str, Any],
        progress: Any,
        invocation_state: dict[str, Any],
        inline: bool,
    ) -> _Outcome:
        hooks = self.hooks
        if hooks.has_callbacks(BeforeNodeCallEvent):
            before = BeforeNodeCallEvent(self.source, node, invocation_state)
            hook_scope = InterruptScope(f"hook:before_node:{step}:{node}", responses, "hook", node)
            raised = await hooks.fire(before, scope=hook_scope)
            if raised:
                return _Stopped(raised)
            message = cancel_text(before.cancel_node, "node cancelled")
            if message is not None:
                if observe.observers:
                    observe.emit("node.cancelled", node=node, message=message)
                return _Cancelled(message)
        if observe.observers:
            observe.emit("node.enter", node=node, step=step)
        spec = self.machine.nodes[node]
        args: tuple[Any, ...] = (state,)
        if spec.takes_context:
            scope = InterruptScope(f"node:{step}:{node}", responses, "node", node)
            args = (state, NodeContext(node, step, thread_id, invocation_state, scope, progress))
        try:
            if spec.is_async:
                returned = await spec.handler(*args)
            elif inline:
                returned = spec.handler(*args)
            else:
                returned = await asyncio.to_thread(spec.handler, *args)
        except InterruptRaised as stop:
            if observe.observers:
                observe.emit("node.exit", node=node, outcome="interrupted")
            return _Stopped(stop.interrupts, stop.progress)
        update = self.adapter.normalize_update(node, returned)
        if observe.observers:
            observe.emit("node.exit", node=node, outcome="done")
        if hooks.has_callbacks(AfterNodeCallEvent):
            await hooks.fire(AfterNodeCallEvent(self.source, node, invocation_state, update))
        return _Done(update)

    async def commit_update(
        self, cursor: Cursor, step: int, state: Any, writer: str, update: dict[str, Any], **position: Any
    ) -> StoredCheckpoint:
        """Write a checkpoint that no step made: ``state`` after ``writer`` applied ``update`` outside a
        run (a human editing a graph's state, a direct tool call recorded in an agent's conversation).

        Durable and indexed like the checkpoint a run stops on; ``position`` gives its status and
        pending nodes (and, for a waiting thread, its interrupts and kept work).
        """
        return await self.checkpointer.commit(
            cursor, state, self.adapter, durable=True, index=True, machine=self.machine.name,
            fingerprint=self.machine.fingerprint, step=step, source="update",
            writes={writer: self.adapter.dump_update(update)}, **position,
        )

    async def _commit(
        self,
        cursor: Cursor,
        step: int,
        state: Any,
        status: Status,
        *,
        durable: bool,
        **fields: Any,
    ) -> StoredCheckpoint:
        record = await self.checkpointer.commit(
            cursor,
            state,
            self.adapter,
            durable=durable,
            status=status,
            machine=self.machine.name,
            fingerprint=self.machine.fingerprint,
            step=step,
            source=_SOURCES[status],
            **fields,
        )
        if observe.observers:
            observe.emit("checkpoint", seq=record.seq, step=step, status=status, next=record.pending,
                         interrupts=[i.name for i in record.interrupts])
        return record


_SOURCES: dict[Status, Any] = {
    "running": "step",
    "completed": "step",
    "interrupted": "interrupt",
    "cancelled": "cancel",
}
