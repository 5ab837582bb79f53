"""The runner: drives any ``Machine`` step by step, catching interrupts and committing checkpoints.

One step runs every runnable pending node concurrently, then applies their updates together through
the state adapter's reducers, then follows the transitions. If any node (or a hook before it)
interrupts, the nodes that finished keep their updates in the checkpoint and the step is re-entered on
resume with only the interrupted nodes re-run. The runner knows nothing about what the state is; the
adapter does.

Two ways to run: ``run`` is a thread's run, committing a checkpoint per step to the store;
``run_nested`` is a machine running as one node of another machine (an agent inside a Graph), which
writes nothing itself: where it stopped goes back to the enclosing node, whose own checkpoint keeps it.
Both share one step loop, so a nested machine keeps every rule of a top-level one.
"""

from __future__ import annotations

import contextlib
import dataclasses
import weakref
from collections.abc import Awaitable, Callable
from typing import Any, Literal

from statehitl import interrupt_ids, observe
from statehitl.checkpoint.chain import Cursor
from statehitl.checkpoint.engine import Checkpointer
from statehitl.checkpoint.records import AnswerRecord, RecordStatus, StoredCheckpoint
from statehitl.errors import CheckpointConflict, GraphRecursionError, InvalidResponseError
from statehitl.hooks.events import AfterNodeCallEvent, BeforeNodeCallEvent
from statehitl.hooks.registry import HookRegistry, cancel_text
from statehitl.interrupt import ANSWERS_USED, InterruptContext, InterruptRaised
from statehitl.machine import END, Machine
from statehitl.position import NodeContext, Position, RunEnd, Writes
from statehitl.refused_answers import withdraw_refused
from statehitl.runner_parts import (
    Between,
    Cancelled,
    Done,
    NodeFailed,
    NodeRules,
    Outcome,
    Pauses,
    RunSettings,
    StateAdapter,
    StepFailed,
    Stopped,
    call_handler,
    record_source,
    say_acted,
)
from statehitl.supersteps import plan_step, send_arg
from statehitl.telemetry import RunTracer, run_tracer
from statehitl.transitions import (
    CheckpointWritten,
    InterruptRaisedTransition,
    NodeCancelled,
    NodeEntered,
    NodeExited,
    StepApplied,
)

__all__ = ["AfterStep", "Durability", "NodeRules", "Pauses", "Runner", "StateAdapter"]

Durability = Literal["sync", "step", "exit"]
"""When checkpoints are written: ``sync`` fsyncs after every step; ``step`` (default) writes every step
and fsyncs the checkpoint ``invoke`` returns on; ``exit`` writes only that one."""

AfterStep = Callable[[Any, Writes, list[str]], Awaitable[None]]
"""``after_step(state, writes, next)``: called once a step's updates are applied (and its checkpoint, if
any, is written), with the state after it, each node's update and the nodes that run next. The owner of
a machine mirrors the state into its live objects here (an agent's ``messages``), apart from the nodes,
which only compute."""


class Runner:
    """Runs one machine for one app; holds nothing per thread, so one runner serves many threads.

    ``checkpointer`` may be None for a runner that only ever runs nested (``run_nested``).
    ``index=False`` skips the thread index entries, for a store nothing ever lists (an agent's
    private memory store). ``node_hook_source`` is the ``source`` of interrupts raised by
    ``BeforeNodeCallEvent`` hooks (``"hook"``; multi-agent orchestrators say ``"multiagent-hook"``).
    ``run_span`` names the span of a whole run and turns on a span per node call (StateGraph, Graph,
    Swarm); None leaves the run's span to the owner (an agent makes its own invocation spans);
    ``span_attributes`` are added to the run's span (a Graph's ``trace_attributes``). Checkpoint
    commits get a span either way, when a tracer provider is set up. ``rules``: what the owner decides
    about its nodes (``NodeRules``); held weakly, like ``source``, since the owner holds this runner.
    """

    def __init__(
        self,
        machine: Machine,
        adapter: StateAdapter,
        hooks: HookRegistry,
        checkpointer: Checkpointer | None,
        *,
        source: Any,
        index: bool = True,
        node_hook_source: str = "hook",
        run_span: str | None = None,
        span_attributes: dict[str, Any] | None = None,
        rules: NodeRules | None = None,
    ) -> None:
        self.machine = machine
        self.index = index
        self.adapter = adapter
        self.hooks = hooks
        self.checkpointer = checkpointer
        self.node_hook_source = node_hook_source
        self.run_span = run_span
        self.span_attributes = dict(span_attributes or {})
        self._rules = None if rules is None else weakref.ref(rules)
        self._halted: Callable[[Any], bool] | None = getattr(adapter, "halted", None)
        # Weakly: the agent or graph that owns this runner is the source, and a strong reference
        # back would make every dropped Agent garbage that only the cycle collector frees (a
        # server building one per request would keep their open logs until it ran).
        self._source = weakref.ref(source)
        self._shape_saved = False

    @property
    def source(self) -> Any:
        """The agent or graph whose hooks' node events name it (alive while it runs this runner)."""
        return self._source()

    @property
    def rules(self) -> NodeRules | None:
        return None if self._rules is None else self._rules()

    async def run(
        self,
        at: Position,
        *,
        step_limit: int,
        durability: Durability,
        invocation_state: dict[str, Any],
        runtime: Any = None,
        after_step: AfterStep | None = None,
        pauses: Pauses | None = None,
        on_commit: Callable[[StoredCheckpoint, Any], None] | None = None,
    ) -> tuple[StoredCheckpoint, Any]:
        """Run a thread from ``at`` until END, an interrupt, a cancel or the step limit.

        Returns the last checkpoint written and the state it holds. Whatever way the run stops, its
        last checkpoint also updates the thread's index entry. ``pauses``: nodes to stop before or after
        (LangGraph's breakpoints); ``on_commit(record, state)`` sees each checkpoint of the run as it is
        written (a stream of them).
        """
        cursor, checkpointer = at.cursor, self.checkpointer
        if cursor is None or checkpointer is None:
            raise ValueError("Runner.run needs a checkpointer and a position on a thread; run_nested needs neither")
        last: list[tuple[StoredCheckpoint, Any]] = []
        tracer = run_tracer()
        answered = list(at.answered)

        def audit(outcome: Literal["failed"] | None = None) -> dict[str, Any]:
            # The first checkpoint stored after the answers were applied carries them (the audit trail,
            # in the step's one write): an answer refused on re-run is in none; one whose step then failed
            # says so (the thread waits to be answered again).
            if not answered:
                return {}
            records = [AnswerRecord.of(entry) for entry in answered]
            if outcome is not None:
                records = [record.model_copy(update={"outcome": outcome}) for record in records]
            answered.clear()
            return {"answered": records}

        async def commit(step: int, state: Any, status: RecordStatus, durable: bool, *, held: bool = False,
                         **fields: Any) -> StoredCheckpoint:
            # A held checkpoint is one the run goes on from; any other is the one it stops on, which
            # also updates the thread's index entry. While a run acts on answers, its held checkpoints
            # say so: should it stop without a checkpoint saying how, its next step's outcome is unknown.
            acting = {"acting": cursor.acting} if held and cursor.acting is not None else {}
            record = await self._commit(cursor, step, state, status, durable=durable, held=held,
                                        index=self.index and not held, tracer=tracer, **fields, **audit(), **acting)
            last[:] = [(record, state)]
            if on_commit is not None:
                on_commit(record, state)
            return record

        async def between(step: int, state: Any, pending: list[str], raw: Writes, schedule: dict[str, Any]) -> None:
            if durability != "exit":
                await commit(step, state, "executing", durability == "sync", held=True, pending=pending,
                             writes=self._dumped(raw), schedule=schedule)
            if after_step is not None:
                await after_step(state, raw, pending)

        async def to_the_end() -> tuple[StoredCheckpoint, RunEnd]:
            if at.started and self.machine.supersteps and durability != "exit":
                # LangGraph's input checkpoint: the state before the first node, to replay or fork from
                await commit(at.step, at.state, "executing", durability == "sync", held=True, pending=at.pending,
                             schedule=at.schedule, source="input")
            end = await self._steps(at, settings, step_limit, between)
            if end.paused:  # a breakpoint: the thread waits, as on an interrupt, but on nothing to answer
                return await commit(end.step, end.state, "interrupted", True, pending=end.pending,
                                    writes=self._dumped(end.applied), schedule=end.schedule), end
            if end.status == "executing":
                await commit(end.step, end.state, "executing", True, pending=end.pending, schedule=end.schedule)
                raise GraphRecursionError(
                    f"thread {cursor.thread_id!r} ran {step_limit} steps without reaching END (next: "
                    f"{end.pending}); if the loop is intended, raise step_limit= on compile() or invoke(); "
                    "the thread is saved and invoke(None, thread_id=...) continues it"
                )
            return await commit(end.step, end.state, end.status, True, writes=self._dumped(end.applied),
                                **end.fields()), end

        settings = RunSettings(cursor.thread_id, invocation_state, runtime, "", tracer, pauses)
        used: set[str] = set()
        watching = ANSWERS_USED.set(used)
        try:
            if tracer is None or self.run_span is None:
                record, end = await to_the_end()
            else:
                attributes = {**self.span_attributes, "statehitl.machine": self.machine.name,
                              "statehitl.thread_id": cursor.thread_id, "gen_ai.conversation.id": cursor.thread_id}
                with tracer.span(f"{self.run_span} {self.machine.name}", attributes) as span:
                    record, end = await to_the_end()
                    tracer.interrupted(span, end.interrupts)
        except CheckpointConflict:
            raise  # another process owns the thread now: leave its records alone
        except StepFailed as failed:
            # The thread says where it failed and why, in a checkpoint no lease holds: it reads as
            # failed, and invoke(None, ...) retries the step.
            at_failure = failed.position
            await self._commit(cursor, at_failure.step, at_failure.state, "failed", durable=True, index=self.index,
                               tracer=tracer, pending=at_failure.pending, completed=at_failure.completed,
                               responses=at_failure.responses, progress=at_failure.progress,
                               interrupts=at_failure.waiting, error=failed.record(), schedule=at_failure.schedule,
                               **audit("failed"))  # the answers were acted on, and the step failed
            raise failed.error from failed.error.__cause__
        except BaseException as failure:
            # The run is over but the thread says "held until ...": release it, so the thread can be
            # continued at once instead of after the lease runs out. A claim whose answers a node may
            # have acted on stays: no checkpoint says what was done, so the action's outcome is unknown
            # and the thread asks a human before anything runs again. A release that fails too (the store
            # is down) leaves the lease to run out; the run's own error is the one to report.
            with contextlib.suppress(Exception):
                if last and last[-1][0].lease_until is not None:
                    held, state = last[-1]
                    acting = {} if cursor.acting is None else {"acting": cursor.acting}
                    await self._commit(cursor, held.step, state, "executing", durable=True, index=self.index,
                                       tracer=tracer, pending=held.pending, schedule=held.schedule, **acting)
                elif not last and not (cursor.acting is not None and used):
                    # an answer refused on re-run: no door's answer may bind; withdrawn while the claim holds
                    await withdraw_refused(checkpointer, at, failure)
                    await checkpointer.release(cursor)
            say_acted(failure, cursor, acted=bool(used))  # a store error after acting must not say "nothing done"
            raise
        finally:
            checkpointer.finished(cursor, acted=bool(used))
            ANSWERS_USED.reset(watching)
        if cursor.index_error is not None:  # the run's checkpoints are stored; its listing is stale
            error, cursor.index_error = cursor.index_error, None
            raise error
        if after_step is not None and end.applied:
            await after_step(end.state, end.applied, [])
        return record, end.state

    async def run_nested(
        self,
        at: Position,
        *,
        step_limit: int,
        invocation_state: dict[str, Any],
        prefix: str,
        thread_id: str,
        runtime: Any = None,
        after_step: AfterStep | None = None,
    ) -> RunEnd:
        """Run this machine as a node of another machine, writing nothing: where it stops is returned.

        ``prefix`` keeps its interrupt ids apart from the enclosing machine's (``interrupt_ids.nested``
        of the enclosing node call's site); ``at.responses`` holds the enclosing run's answers, and
        each nested scope finds its own there. A run that hits ``step_limit`` raises ``GraphRecursionError`` (a
        ``StepLimitError``).
        """

        async def between(step: int, state: Any, pending: list[str], raw: Writes,
                          schedule: dict[str, Any]) -> None:
            if after_step is not None:
                await after_step(state, raw, pending)

        tracer = run_tracer()
        settings = RunSettings(thread_id, invocation_state, runtime, prefix, tracer)
        try:
            if tracer is None or self.run_span is None:
                end = await self._steps(at, settings, step_limit, between)
            else:
                with tracer.span(f"{self.run_span} {self.machine.name}",
                                 {**self.span_attributes, "statehitl.machine": self.machine.name}) as span:
                    end = await self._steps(at, settings, step_limit, between)
                    tracer.interrupted(span, end.interrupts)
        except StepFailed as failed:  # the enclosing node fails with the error: its run records it
            raise failed.error from failed.error.__cause__
        if end.status == "executing":
            raise GraphRecursionError(
                f"{self.machine.name!r} ran {step_limit} steps inside node {prefix.rstrip('/')!r} without "
                f"reaching END (next: {end.pending}); raise its step limit if the loop is intended"
            )
        if after_step is not None and end.applied:
            await after_step(end.state, end.applied, [])
        return end

    async def _steps(self, at: Position, settings: RunSettings, step_limit: int, between: Between) -> RunEnd:
        """The step loop both kinds of run share; ``between`` runs after every step but the last."""
        pending, state, step, schedule = list(at.pending), at.state, at.step, at.schedule
        completed, responses, progress = dict(at.completed), dict(at.responses), dict(at.progress)
        applied: Writes = []  # what the last step applied, until an ``after_step`` sees it (dumped only when needed)
        steps_run = 0
        blockers = self.machine.blockers
        pauses = settings.pauses
        while True:
            if not pending:
                halted = self._halted is not None and self._halted(state)  # a limit or a failed node ended it
                return RunEnd("failed" if halted else "completed", state, step, [], applied=applied)
            if steps_run >= step_limit:
                return RunEnd("executing", state, step, pending, schedule=schedule, applied=applied)
            if pauses is not None and not (steps_run == 0 and pauses.resumed) and pauses.stops_before(self.machine,
                                                                                                      pending):
                return RunEnd("executing", state, step, pending, schedule=schedule, applied=applied, paused=True)
            refused = self._refused(state, pending, settings, kept=step == at.step and bool(completed or progress))
            if refused is not None:
                applied = [(self.machine.name, refused)]  # the owner's own write: the limit that ended the run
                state = self.adapter.apply(state, applied)
                return RunEnd("failed", state, step + 1, [], applied=applied)
            if self.machine.supersteps:
                runnable = pending  # LangGraph's superstep: every triggered task runs
            else:
                waiting = set(pending)
                runnable = [n for n in pending if not (blockers[n] & waiting)] or pending
            before = Position(state, pending, None, step, completed, responses, progress,
                              at.waiting if step == at.step else [], at.digests if step == at.step else {},
                              schedule=schedule)
            try:
                moved = await self._one_step(before, runnable, settings)
            except NodeFailed as failed:
                if isinstance(failed.error, InvalidResponseError) and failed.error.refused_answer and before.waiting:
                    # An answer refused on re-run (its type, its tool call): it was never applied, so the
                    # run stops with nothing written and the thread still waits on it, answerable again.
                    raise failed.error from None
                if failed.finished:
                    before = dataclasses.replace(before, completed={**before.completed, **failed.finished})
                raise StepFailed(failed.node, failed.error, before) from None
            except Exception as exc:  # merging the updates or choosing the next nodes failed
                raise StepFailed(", ".join(runnable), exc, before) from None
            if isinstance(moved, RunEnd):
                return moved
            state, applied, cancelled, pending, schedule = moved
            step += 1
            steps_run += 1
            completed, responses, progress = {}, {}, {}
            if observe.observers:
                observe.emit(StepApplied(step, self._dumped(applied), tuple(pending)))
            if cancelled:
                return RunEnd("failed", state, step, [], cancelled=cancelled, applied=applied)
            if pending and pauses is not None and (pauses.stops_after(self.machine, runnable)
                                                   or pauses.stops_before(self.machine, pending)):
                return RunEnd("executing", state, step, pending, schedule=schedule, applied=applied, paused=True)
            if pending:
                await between(step, state, pending, applied, schedule)
                applied = []

    def _refused(self, state: Any, pending: list[str], settings: RunSettings, *, kept: bool) -> dict[str, Any] | None:
        """The owner's refusal of the next step (a limit), asked before any hook of its nodes fires; a
        step re-entered with work kept was admitted when it began, and is not asked again."""
        rules = self.rules
        if rules is None or kept:
            return None
        update = rules.admit(state, pending, settings.runtime)
        return None if update is None else self.adapter.normalize_update(self.machine.name, update)

    def _dumped(self, writes: Writes) -> dict[str, dict[str, Any]]:
        """A step's updates as its checkpoint records them (``writes``): JSON, by node."""
        return {n: self.adapter.dump_update(u) for n, u in writes if u}

    async def _one_step(self, at: Position, runnable: list[str], settings: RunSettings
                        ) -> RunEnd | tuple[Any, Writes, dict[str, str], list[str], dict[str, Any]]:
        """Run one step from ``at``: where it stopped on interrupts, or the state after it, its updates,
        the nodes cancelled, and the nodes pending next."""
        state, pending, completed = at.state, at.pending, dict(at.completed)
        legacy = interrupt_ids.is_legacy([i.id for i in at.waiting])  # answering ids of the first derivation
        digests = {**at.digests, **{i.id: i.digest for i in at.waiting if i.digest is not None}}
        context = InterruptContext(at.responses, settings.prefix, None if legacy else settings.thread_id, digests)
        outcomes = await self._run_step(runnable, state, at.step, settings, context, completed, at.progress,
                                        at.schedule)
        stopped = [i for o in outcomes.values() if isinstance(o, Stopped) for i in o.interrupts]
        done = {n: o.update for n, o in outcomes.items() if isinstance(o, Done)}
        if stopped:
            # Finished work is kept for the resume, which applies it: reject a bad update now, while
            # nothing is stored, rather than on every resume of a thread that could then never go on.
            self.adapter.apply(state, [(n, done[n]) for n in runnable if n in done])
            completed.update({n: self.adapter.dump_update(u) for n, u in done.items() if n not in completed})
            if observe.observers:
                for i in stopped:
                    observe.emit(InterruptRaisedTransition(i.id, i.name, i.node, i.source, i.reason))
            kept = {n: o.progress for n, o in outcomes.items() if isinstance(o, Stopped) and o.progress is not None}
            return RunEnd("interrupted", state, at.step, pending, completed=completed, responses=at.responses,
                          progress=kept, interrupts=stopped, schedule=at.schedule)
        cancels = {n: o for n, o in outcomes.items() if isinstance(o, Cancelled)}
        applied = [(n, done[n] if n in done else cancels[n].update) for n in runnable
                   if n in done or (n in cancels and cancels[n].update)]
        state = self.adapter.apply(state, applied)
        cancelled = {n: o.message for n, o in cancels.items()}
        schedule: dict[str, Any] = {}
        if self.machine.supersteps:
            pending, schedule = plan_step(self.machine, self.adapter.apply, at.state,
                                          [(n, done[n]) for n in runnable if n in done], at.schedule)
        else:
            after = [n for n in pending if n not in outcomes]
            for node in runnable:
                if node in done:
                    after.extend(self.machine.next_nodes(node, state))
            pending = [n for n in dict.fromkeys(after) if n != END]
        if self._halted is not None and self._halted(state):
            pending = []
        return state, applied, cancelled, pending, schedule

    async def _run_step(
        self,
        runnable: list[str],
        state: Any,
        step: int,
        settings: RunSettings,
        context: InterruptContext,
        completed: dict[str, dict[str, Any]],
        progress: dict[str, Any],
        schedule: dict[str, Any],
    ) -> dict[str, Outcome]:
        outcomes: dict[str, Outcome] = {}
        todo: list[str] = []
        for node in runnable:
            if node in completed:  # finished before the interrupt: keep its work, do not re-run
                outcomes[node] = Done(self.adapter.load_update(node, completed[node]))
            else:
                todo.append(node)

        async def call(node: str, inline: bool) -> Outcome | tuple[str, Exception]:
            try:
                sent, arg = send_arg(schedule, node)
                return await self._call_node(node, arg if sent else state, step, settings, context, progress.get(node),
                                             inline, sent)
            except Exception as exc:
                if not self.machine.supersteps:
                    raise NodeFailed(node, exc) from None
                return node, exc  # its siblings' work is kept below, for the step's retry

        ran = dict(zip(todo, await observe.gather_in_order(todo, call), strict=True))
        failures = [o for o in ran.values() if isinstance(o, tuple)]
        if failures:
            # LangGraph's rule: a failed step keeps what its finished tasks wrote; its retry runs only the rest
            finished = {n: self.adapter.dump_update(o.update) for n, o in ran.items() if isinstance(o, Done)}
            raise NodeFailed(*failures[0], finished)
        outcomes.update({n: o for n, o in ran.items() if not isinstance(o, tuple)})
        return {n: outcomes[n] for n in runnable}

    async def _call_node(
        self,
        node: str,
        state: Any,
        step: int,
        settings: RunSettings,
        context: InterruptContext,
        progress: Any,
        inline: bool,
        sent: bool = False,
    ) -> Outcome:
        hooks = self.hooks
        invocation_state = settings.invocation_state
        if hooks.has_callbacks(BeforeNodeCallEvent):
            before = BeforeNodeCallEvent(self.source, node, invocation_state)
            site = interrupt_ids.before_node_hook(context.prefix, step, node)
            rules = self.rules
            try:
                raised = await hooks.fire(before, scope=context.scope(site, self.node_hook_source, node))
            except Exception as exc:
                instead = None if rules is None else rules.hook_failed(node, exc, settings.runtime)
                if instead is None:
                    raise
                return Done(self.adapter.normalize_update(node, instead))
            if raised:
                return Stopped(raised)
            message = cancel_text(before.cancel_node, "node cancelled")
            if message is not None:
                if observe.observers:
                    observe.emit(NodeCancelled(node, message))
                if rules is None:
                    return Cancelled(message, {})
                update = self.adapter.normalize_update(node, rules.cancelled(node, message, settings.runtime))
                if hooks.has_callbacks(AfterNodeCallEvent):
                    await hooks.fire(AfterNodeCallEvent(self.source, node, invocation_state, update))
                return Cancelled(message, update)
        if observe.observers:
            observe.emit(NodeEntered(node, step))
        spec = self.machine.nodes[self.machine.task_node(node)]
        args: tuple[Any, ...] = (state,)
        if spec.takes_context:
            args = (state, NodeContext(node, step, settings.thread_id, invocation_state, context, settings.runtime,
                                       progress, sent))
        tracer = settings.tracer if self.run_span is not None else None
        try:
            if tracer is None:
                returned = await call_handler(spec, args, inline)
            else:
                with tracer.span(f"execute_node {node}", {"statehitl.node": node, "statehitl.step": step}) as span:
                    try:
                        returned = await call_handler(spec, args, inline)
                    except InterruptRaised as stop:
                        tracer.interrupted(span, stop.interrupts)
                        raise
        except InterruptRaised as stop:
            if observe.observers:
                observe.emit(NodeExited(node, "interrupted"))
            return Stopped(stop.interrupts, stop.progress)
        except Exception as exc:
            # As Strands does: a node that raised has still been called (its hooks close what they opened).
            if hooks.has_callbacks(AfterNodeCallEvent):
                await hooks.fire(AfterNodeCallEvent(self.source, node, invocation_state, error=exc))
            raise
        update = self.adapter.normalize_update(node, returned)
        if observe.observers:
            observe.emit(NodeExited(node, "done"))
        if hooks.has_callbacks(AfterNodeCallEvent):
            await hooks.fire(AfterNodeCallEvent(self.source, node, invocation_state, update))
        return Done(update)

    async def remember_shape(self, record: StoredCheckpoint) -> None:
        """Store this machine's shape (once per runner) when a run of it left a thread waiting, so that a
        resume by changed code can say what changed (``MachineChangedError``)."""
        if record.status == "interrupted" and not self._shape_saved and self.checkpointer is not None:
            await self.checkpointer.remember_machine(self.machine.fingerprint, self.machine.shape())
            self._shape_saved = True

    async def commit_update(
        self, cursor: Cursor, step: int, state: Any, writer: str, update: dict[str, Any], *, rewritten: bool = False,
        **position: Any,
    ) -> StoredCheckpoint:
        """Write a checkpoint that no step made: ``state`` after ``writer`` applied ``update`` outside a
        run (a human editing a graph's state, a direct tool call recorded in an agent's conversation).

        Durable and indexed like the checkpoint a run stops on; ``position`` gives its status and
        pending nodes (and, for a waiting thread, its interrupts and kept work). ``rewritten``: the
        state's history was edited or migrated, not appended to, so this checkpoint stores it whole.
        """
        cursor.migrated = cursor.migrated or rewritten
        assert self.checkpointer is not None, "a nested-only runner writes nothing"
        record = await self.checkpointer.commit(
            cursor, state, self.adapter, durable=True, index=True, machine=self.machine.name,
            fingerprint=self.machine.fingerprint, step=step, source="update",
            writes={writer: self.adapter.dump_update(update)}, **position,
        )
        if cursor.index_error is not None:  # stored; only the listing is stale
            error, cursor.index_error = cursor.index_error, None
            raise error
        return record

    async def _commit(
        self,
        cursor: Cursor,
        step: int,
        state: Any,
        status: RecordStatus,
        *,
        durable: bool,
        tracer: RunTracer | None,
        **fields: Any,
    ) -> StoredCheckpoint:
        assert self.checkpointer is not None, "a nested-only runner writes nothing"
        source = fields.pop("source", None) or record_source(status, fields)
        commit = self.checkpointer.commit(cursor, state, self.adapter, durable=durable, status=status,
                                          machine=self.machine.name, fingerprint=self.machine.fingerprint, step=step,
                                          source=source, **fields)
        if tracer is None:
            record = await commit
        else:
            attributes = {"statehitl.thread_id": cursor.thread_id, "statehitl.status": status,
                          "statehitl.step": step, "statehitl.durable": durable}
            with tracer.span("checkpoint.commit", attributes) as span:
                record = await commit
                span.set_attribute("statehitl.checkpoint_id", record.checkpoint_id)
        if observe.observers:
            observe.emit(CheckpointWritten(record.seq, step, status, tuple(record.pending),
                                           tuple(i.name for i in record.interrupts)))
        return record
