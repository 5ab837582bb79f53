"""One step of a run: call its nodes (concurrently), then merge their updates and plan the next step.

``StepExecutor`` is built once per run and holds what every step of it shares (the machine, the state
adapter, the hooks, the scheduling policy, the run's settings). A step either stops on interrupts (a
``RunEnd`` the loop returns: finished nodes' work kept for the resume), or moves on (a ``StepResult``:
the state after it, its updates, cancelled nodes, and what is pending next). Which nodes run and what
runs next is the policy's (``statehitl.scheduling``); the executor never asks which policy it has.

A step with nothing to answer shares one ``InterruptContext`` for the whole run, and a lone node is
called inline, without a task: a chain of single nodes pays for little more than its nodes. Inline means
on the loop's thread for a sync node when that loop is statehitl's own (a sync call's, ``invoke``) and
serves nobody else meanwhile (``LOOP_SHARED``: a streamed run's reader, a sibling of the step the run is
nested in); else it runs in a worker thread. An async call (``ainvoke``) runs on the caller's loop, whose
other tasks a sleeping sync node would hold up, and which a cancel must reach at once: LangGraph's rule.

Under LangGraph's rule a node that raises stops its step at once: its running siblings are cancelled
(a sync one in a worker thread, which cannot be stopped, is waited for and keeps its work), and what the
finished ones wrote is kept for the step's retry; in a run whose handlers were given answers they finish
first instead, since the retry would run a task cut short again, and it may have acted on an answer.
The step in flight is ``step_at``, with the updates of its tasks that finished so far (``finished``): a
run cancelled mid-step keeps those (``ThreadRun``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from statehitl import interrupt_ids, observe
from statehitl._json import dump_written
from statehitl._sync import on_private_loop
from statehitl.errors import NodeCancelledError
from statehitl.hooks.node_events import AfterNodeCallEvent, BeforeNodeCallEvent
from statehitl.hooks.registry import HookRegistry, cancel_text
from statehitl.interrupt import ANSWERS_USED, Interrupt, InterruptContext, InterruptRaised
from statehitl.machine import Machine
from statehitl.offload import may_run_inline
from statehitl.position import NodeContext, Position, RunEnd, Writes
from statehitl.runner_parts import (
    LOOP_SHARED,
    SENT_TIMEOUT,
    Cancelled,
    Done,
    FinishedWhileCancelled,
    NodeFailed,
    NodeOutcome,
    NodeRules,
    RunSettings,
    StateAdapter,
    Stopped,
    call_handler,
)
from statehitl.scheduling import SchedulingPolicy
from statehitl.step_tasks import run_tasks
from statehitl.supersteps import Routes, awaited_routes, send_arg, send_timeout
from statehitl.transitions import InterruptRaisedTransition, NodeCancelled, NodeEntered, NodeExited

if TYPE_CHECKING:
    from statehitl.progress import Schedule


@dataclass(frozen=True, slots=True)
class StepResult:
    """A step that moved on: the state after it, what it applied (by node, in run order), the nodes a
    hook cancelled (with why), and the tasks pending next with what the scheduler keeps for them."""

    state: Any
    applied: Writes
    cancelled: dict[str, str]
    pending: list[str]
    schedule: Schedule | None


class StepExecutor:
    """Runs the steps of one run (see the module docstring). ``source`` is what node events name (the
    agent or graph), ``traced`` turns on a span per node call when the run has a tracer."""

    def __init__(self, *, machine: Machine, adapter: StateAdapter, hooks: HookRegistry, policy: SchedulingPolicy,
                 settings: RunSettings, source: Any, rules: NodeRules | None, node_hook_source: str,
                 traced: bool) -> None:
        self.machine = machine
        self.adapter = adapter
        self.hooks = hooks
        self.policy = policy
        self.settings = settings
        self.source = source
        self.rules = rules
        self.node_hook_source = node_hook_source
        self.tracer = settings.tracer if traced else None
        self.halted: Callable[[Any], bool] | None = getattr(adapter, "halted", None)
        self.watch = settings.watch
        self.inline_sync = on_private_loop() and not LOOP_SHARED.get() and settings.step_timeout is None
        """Whether a lone sync node may run on the loop's thread (nothing else is served meanwhile)."""
        self.step_at: Position | None = None
        """Where the step in flight began (None between steps)."""
        self.finished: dict[str, dict[str, Any]] | None = None
        """The updates of the step in flight's tasks that finished so far (None: none yet; only a step of
        several tasks, or a lone sync node cancelled while its thread ran on, keeps any)."""
        self._unanswered = InterruptContext({}, settings.prefix, settings.thread_id)
        """The interrupt context of every step that answers nothing (most): one per run."""
        if settings.step_timeout is not None:  # only a run with one pays for the timer
            self.run = self._run_timed  # type: ignore[method-assign]
        self.inline_allowed = may_run_inline(True)
        """Whether a lone sync node may run on the loop's thread (not in a worker's or the inbox's resume:
        ``statehitl.offload``); asked once per run."""

    def dumped(self, writes: Writes) -> dict[str, dict[str, Any]]:
        """A step's updates as its checkpoint records them (``writes``): JSON, by node."""
        return {n: dump_written(self.adapter.dump_update, n, u) for n, u in writes if u}

    def refused(self, state: Any, pending: list[str], *, kept: bool) -> dict[str, Any] | None:
        """The owner's refusal of the next step (a limit), asked before any hook of its nodes fires; a
        step re-entered with work kept was admitted when it began, and is not asked again."""
        if self.rules is None or kept:
            return None
        update = self.rules.admit(state, pending, self.settings.runtime)
        return None if update is None else self.adapter.normalize_update(self.machine.name, update)

    async def run(self, at: Position, runnable: list[str]) -> StepResult | RunEnd:
        """Run ``runnable`` (of ``at.pending``) from ``at``: where it stopped on interrupts, or where it went."""
        self.step_at = at
        if self.watch is not None:
            self.watch.step_started(at, runnable)
        if len(runnable) == 1 and not at.completed:  # a lone node: no task, no hold, no gather, no merge
            node = runnable[0]
            try:
                if at.schedule is not None or at.progress or at.responses or at.waiting or at.digests:
                    outcome = await self._call(at, node, self._context(at), inline=self.inline_sync)
                else:  # a step that carries nothing in: the node on the state
                    outcome = await self.call_node(node, at.state, at.step, self._unanswered, None,
                                                   inline=self.inline_sync)
            except Exception as exc:
                raise NodeFailed(node, exc) from None
            if type(outcome) is Done:
                self.step_at = None
                finished = [(node, outcome.update)]
                if self.machine.awaits:  # an async path function: its routes awaited (a coroutine only then)
                    return self._moved(at, runnable, finished, {}, await self._routes(at, finished))
                return self._moved(at, runnable, finished, {}, None)
            outcomes = {node: outcome}
        else:
            outcomes = await self._outcomes(at, runnable)
        self.step_at = None
        done: dict[str, dict[str, Any]] = {}
        stopped: list[Interrupt] = []
        cancels: dict[str, Cancelled] = {}
        halted = False  # a node stopped: on interrupts, or with none (a subgraph at its own breakpoint)
        for node, outcome in outcomes.items():
            if type(outcome) is Done:
                done[node] = outcome.update
            elif type(outcome) is Stopped:
                stopped.extend(outcome.interrupts)
                halted = True
            else:
                cancels[node] = outcome  # type: ignore[assignment]
        if halted:
            return self._stopped(at, runnable, outcomes, done, stopped)
        finished = [(n, done[n]) for n in runnable if n in done]
        return self._moved(at, runnable, finished, cancels, await self._routes(at, finished))

    async def _run_timed(self, at: Position, runnable: list[str]) -> StepResult | RunEnd:
        """``run`` within the run's ``step_timeout`` (this executor's ``run`` when it has one): past it the step's
        running nodes are cancelled, and it fails with ``TimeoutError``, keeping what its finished nodes wrote
        for the retry (LangGraph's rule)."""
        limit = self.settings.step_timeout
        try:
            async with asyncio.timeout(limit) as timer:
                return await StepExecutor.run(self, at, runnable)
        except TimeoutError as exc:
            if not timer.expired():
                raise
            finished = self.finished or {}
            self.finished, self.step_at = None, None
            left = [n for n in runnable if n not in finished and n not in at.completed] or runnable
            error = TimeoutError(f"step {at.step + 1} ran past step_timeout={limit}s; still running: {left}")
            raise NodeFailed(left[0], error, {n: dump_written(self.adapter.dump_update, n, u)
                                              for n, u in finished.items()}) from exc

    async def _routes(self, at: Position, finished: Writes) -> Routes | None:
        return await awaited_routes(self.machine, self.adapter.apply, at.state, finished)

    def _moved(self, at: Position, runnable: list[str], finished: Writes, cancels: dict[str, Cancelled],
               routes: Routes | None) -> StepResult:
        """The step finished: its updates applied (a cancelled node's too, where the owner gave one), and
        what runs next (``routes``: where its async routers went)."""
        applied = finished
        if cancels:
            done = dict(finished)
            applied = [(n, done[n] if n in done else cancels[n].update) for n in runnable
                       if n in done or (n in cancels and cancels[n].update)]
        adapter = self.adapter
        state = adapter.apply(at.state, applied)
        pending, schedule = self.policy.after(self.machine, adapter.apply, before=at.state, state=state,
                                              ran=runnable, done=finished, pending=at.pending,
                                              schedule=at.schedule, routes=routes)
        if self.halted is not None and self.halted(state):
            pending = []
        return StepResult(state, applied, {n: o.message for n, o in cancels.items()}, pending, schedule)

    def _stopped(self, at: Position, runnable: list[str], outcomes: dict[str, NodeOutcome],
                 done: dict[str, dict[str, Any]], stopped: list[Interrupt]) -> RunEnd:
        """The step stopped on interrupts: finished work is kept for the resume, which applies it. A bad
        update is refused now, while nothing is stored, rather than on every resume of a thread that
        could then never go on."""
        adapter = self.adapter
        adapter.apply(at.state, [(n, done[n]) for n in runnable if n in done])
        completed = dict(at.completed)
        completed.update({n: dump_written(adapter.dump_update, n, u) for n, u in done.items()
                          if n not in completed})
        if observe.observers:
            for i in stopped:
                observe.emit(InterruptRaisedTransition(i.id, i.name, i.node, i.source, i.reason))
        kept = {n: o.progress for n, o in outcomes.items() if type(o) is Stopped and o.progress is not None}
        return RunEnd("interrupted", at.state, at.step, at.pending, completed=completed, responses=at.responses,
                      progress=kept, interrupts=stopped, schedule=at.schedule)

    def _context(self, at: Position) -> InterruptContext:
        """The interrupt context of a step: the run's shared one, unless the step answers interrupts."""
        if not (at.responses or at.waiting or at.digests):
            return self._unanswered
        legacy = interrupt_ids.is_legacy([i.id for i in at.waiting])  # answering ids of the first derivation
        digests = {**at.digests, **{i.id: i.digest for i in at.waiting if i.digest is not None}}
        settings = self.settings
        return InterruptContext(at.responses, settings.prefix, None if legacy else settings.thread_id, digests)

    async def _outcomes(self, at: Position, runnable: list[str]) -> dict[str, NodeOutcome]:
        """Each runnable node's outcome, in ``runnable`` order: finished before an interrupt (its work kept,
        not re-run), or called now, concurrently with the others."""
        context = self._context(at)
        completed = at.completed
        outcomes: dict[str, NodeOutcome] = {}
        todo: list[str] = []
        for node in runnable:
            if node in completed:
                outcomes[node] = Done(self.adapter.load_update(node, completed[node]))
            else:
                todo.append(node)
        fail_fast = self.policy.keeps_finished_on_failure  # LangGraph's rule: a failure stops the step at once
        self.finished = None
        limit = self.settings.limit

        async def call(node: str, alone: bool) -> NodeOutcome | tuple[str, Exception]:
            inline = alone and self.inline_sync  # a lone one too runs in a thread while the loop serves a reader
            if not alone:
                LOOP_SHARED.set(True)  # in this task's own context: what it nests does not block its siblings
            try:
                if limit is None:
                    outcome = await self._call(at, node, context, inline=inline)
                else:  # LangGraph's max_concurrency
                    async with limit:
                        outcome = await self._call(at, node, context, inline=inline)
            except Exception as exc:
                if not fail_fast:
                    raise NodeFailed(node, exc) from None
                return node, exc  # its siblings' work is kept below, for the step's retry
            if type(outcome) is Done:
                self._finished(node, outcome.update)
            return outcome

        if fail_fast:
            ran = dict(zip(todo, await run_tasks(todo, call, failed=_is_failure, cancel_rest=_nothing_acted_on),
                           strict=True))
        else:
            ran = dict(zip(todo, await observe.gather_in_order(todo, call), strict=True))
        failures = [o for o in ran.values() if isinstance(o, tuple)]
        if failures:
            # LangGraph's rule: a failed step keeps what its finished tasks wrote; its retry runs only the rest
            kept: dict[str, dict[str, Any]] = self.finished or {}
            finished = {n: dump_written(self.adapter.dump_update, n, u) for n, u in kept.items()}
            raise NodeFailed(*failures[0], finished)
        self.finished = None
        outcomes.update(ran)  # type: ignore[arg-type]  # no failures: every one is an outcome
        return {n: outcomes[n] for n in runnable}

    def _finished(self, node: str, update: dict[str, Any]) -> None:
        """Keep a task's update as soon as it finished, for a step that stops before the others did."""
        if self.finished is None:
            self.finished = {}
        self.finished[node] = update

    async def _call(self, at: Position, node: str, context: InterruptContext, *, inline: bool) -> NodeOutcome:
        if at.schedule is not None:
            sent, arg = send_arg(at.schedule, node)
            if sent:
                limits = send_timeout(at.schedule, node)
                if limits is None:
                    return await self.call_node(node, arg, at.step, context, at.progress.get(node), inline=inline,
                                                sent=True)
                return await self._timed_send(at, node, arg, context, limits)
        return await self.call_node(node, at.state, at.step, context, at.progress.get(node) if at.progress else None,
                                    inline=inline)

    async def _timed_send(self, at: Position, node: str, arg: Any, context: InterruptContext,
                          limits: dict[str, Any]) -> NodeOutcome:
        """A Send's task whose Send gave it limits (``Send(timeout=)``): its node's attempts take them."""
        spec = self.machine.nodes[self.machine.task_node(node)]
        if not spec.is_async:
            raise ValueError(f"Send({spec.name!r}, ..., timeout=...) names a sync node; timeouts are only supported "
                             "for async nodes: a sync function cannot be cancelled in-process")
        token = SENT_TIMEOUT.set(limits)
        try:
            return await self.call_node(node, arg, at.step, context, at.progress.get(node), inline=False, sent=True)
        finally:
            SENT_TIMEOUT.reset(token)

    async def call_node(self, node: str, state: Any, step: int, context: InterruptContext, progress: Any, *,
                        inline: bool, sent: bool = False) -> NodeOutcome:
        """Call one node with its hooks: its outcome (a hook may stop or cancel it first)."""
        hooks = self.hooks
        if hooks.has_callbacks(BeforeNodeCallEvent):
            before = await self._before(node, step, context)
            if before is not None:
                return before
        if observe.observers:
            observe.emit(NodeEntered(node, step))
        nodes = self.machine.nodes
        spec = nodes[node] if node in nodes else nodes[self.machine.task_node(node)]
        args: tuple[Any, ...] = (state,)
        settings = self.settings
        if spec.takes_context:
            args = (state, NodeContext(node, step, settings.thread_id, settings.invocation_state, context,
                                       settings.runtime, progress, sent))
        watch = self.watch
        try:
            if self.tracer is None and inline and self.inline_allowed and not spec.is_async:
                returned = spec.handler(*args)  # a lone sync node, untraced: called as it is
            else:
                returned = await self._handler(spec, args, node, step, inline)
        except InterruptRaised as stop:
            return self._interrupted(node, step, stop)
        except FinishedWhileCancelled as cancelled:
            self._finished_anyway(node, step, cancelled)
            raise
        except asyncio.CancelledError as cancel:
            task = asyncio.current_task()
            if task is None or task.cancelling():  # the run (or the step) is being stopped
                raise
            raise NodeCancelledError(node) from cancel  # the node's own: a failure, as LangGraph reports it
        except Exception as exc:
            await self._failed(node, step, exc)
            raise
        update = self.adapter.normalize_update(node, returned)
        if spec.takes_context and args[1].writes:  # what the node's machinery keeps besides what it returned
            update = _with_kept(update, args[1].writes)
        if watch is not None:
            watch.task_done(node, step, returned)
        if observe.observers:
            observe.emit(NodeExited(node, "done"))
        if hooks.has_callbacks(AfterNodeCallEvent):
            await hooks.fire(AfterNodeCallEvent(self.source, node, settings.invocation_state, update))
        return Done(update)

    def _interrupted(self, node: str, step: int, stop: InterruptRaised) -> Stopped:
        """A node that raised interrupts: told to the observers and the watch, kept with its progress."""
        if observe.observers:
            observe.emit(NodeExited(node, "interrupted"))
        if self.watch is not None:
            self.watch.task_stopped(node, step, stop.interrupts)
        return Stopped(stop.interrupts, stop.progress)

    async def _failed(self, node: str, step: int, exc: Exception) -> None:
        """A node that raised: told to the watch and, as Strands does, to its after-call hooks (a node that
        raised has still been called, so they close what they opened)."""
        if self.watch is not None:
            self.watch.task_failed(node, step, exc)
        if self.hooks.has_callbacks(AfterNodeCallEvent):
            await self.hooks.fire(AfterNodeCallEvent(self.source, node, self.settings.invocation_state, error=exc))

    def _finished_anyway(self, node: str, step: int, cancelled: FinishedWhileCancelled) -> None:
        """A sync node whose call was cancelled while its thread ran on: what it returned is kept as a finished
        task's (its interrupts or its error are not: the step asks or runs it again)."""
        future = cancelled.future
        if future.cancelled() or future.exception() is not None:
            return
        returned = future.result()
        self._finished(node, self.adapter.normalize_update(node, returned))
        if self.watch is not None:
            self.watch.task_done(node, step, returned)

    async def _handler(self, spec: Any, args: tuple[Any, ...], node: str, step: int, inline: bool) -> Any:
        tracer = self.tracer
        if tracer is None:
            return await call_handler(spec, args, inline)
        with tracer.span(f"execute_node {node}", {"statehitl.node": node, "statehitl.step": step}) as span:
            try:
                return await call_handler(spec, args, inline)
            except InterruptRaised as stop:
                tracer.interrupted(span, stop.interrupts)
                raise

    async def _before(self, node: str, step: int, context: InterruptContext) -> NodeOutcome | None:
        """``BeforeNodeCallEvent``: the node's outcome if a hook stopped or cancelled it (or failed, and the
        owner's rules give an outcome instead), None to call it."""
        hooks, settings, rules = self.hooks, self.settings, self.rules
        before = BeforeNodeCallEvent(self.source, node, settings.invocation_state)
        site = interrupt_ids.before_node_hook(context.prefix, step, node)
        try:
            raised = await hooks.fire(before, scope=context.scope(site, self.node_hook_source, node))
        except Exception as exc:
            instead = None if rules is None else rules.hook_failed(node, exc, settings.runtime)
            if instead is None:
                raise
            return Done(self.adapter.normalize_update(node, instead))
        if raised:
            if self.watch is not None:
                self.watch.task_stopped(node, step, raised)
            return Stopped(raised)
        message = cancel_text(before.cancel_node, "node cancelled")
        if message is None:
            return None
        if observe.observers:
            observe.emit(NodeCancelled(node, message))
        if rules is None:
            return Cancelled(message, {})
        update = self.adapter.normalize_update(node, rules.cancelled(node, message, settings.runtime))
        if hooks.has_callbacks(AfterNodeCallEvent):
            await hooks.fire(AfterNodeCallEvent(self.source, node, settings.invocation_state, update))
        return Cancelled(message, update)


def _is_failure(outcome: object) -> bool:
    return isinstance(outcome, tuple)


def _nothing_acted_on() -> bool:
    """Whether no handler of the run was given an answer yet: its running tasks may be cut short."""
    return not ANSWERS_USED.get()


def _with_kept(update: dict[str, Any], kept: dict[str, Any]) -> dict[str, Any]:
    """A node's update with what its machinery wrote: a channel both wrote gets both writes, the machinery's first
    (``push_message`` before the node's own return), as a node writing it twice does."""
    shared = update.keys() & kept.keys()
    if not shared:
        return {**update, **kept}
    from statehitl.graph.writes import SeveralWrites  # only graphs' nodes (push_message) write a channel so

    return {**update, **kept, **{k: SeveralWrites((kept[k], update[k])) for k in shared}}
