"""The runner: drives any ``Machine`` step by step, catching interrupts and committing checkpoints.

One step runs every runnable pending node concurrently, then applies their updates together through
the state adapter's reducers, then follows the transitions. If any node (or a hook before it)
interrupts, the nodes that finished keep their updates in the checkpoint and the step is re-entered on
resume with only the interrupted nodes re-run. The runner knows nothing about what the state is; the
adapter does.

The ``Runner`` is built once per app and holds nothing per thread; each run is an object of its own:
``run`` makes a ``ThreadRun`` (``statehitl.thread_run``: a checkpoint per step), ``run_nested`` a plain
``RunLoop`` (``statehitl.run_loop``) for a machine running as one node of another machine (an agent
inside a Graph), which writes nothing itself: where it stopped goes back to the enclosing node, whose
own checkpoint keeps it. Both share one step loop and one ``StepExecutor`` (``statehitl.step_run``), so
a nested machine keeps every rule of a top-level one; which nodes a step runs is the machine's
scheduling policy (``statehitl.scheduling``).
"""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, TypeVar

from statehitl._json import dump_written
from statehitl.checkpoint.chain import Cursor
from statehitl.checkpoint.engine import Checkpointer, IndexNotWritten
from statehitl.checkpoint.records import Source, StoredCheckpoint
from statehitl.errors import GraphRecursionError
from statehitl.hooks.registry import HookRegistry
from statehitl.interrupt import ANSWERS_USED
from statehitl.machine import Machine
from statehitl.position import Position, RunEnd
from statehitl.run_loop import AfterStep, RunLoop
from statehitl.runner_parts import NodeRules, Pauses, RunSettings, StateAdapter, StepFailed, StepWatch
from statehitl.scheduling import policy_of
from statehitl.step_run import StepExecutor
from statehitl.telemetry import RunTracer, run_tracer
from statehitl.thread_run import Durability, ThreadRun

T = TypeVar("T")


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
        self.policy = policy_of(machine)
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
        watch: StepWatch | None = None,
        max_concurrency: int | None = None,
        metadata: dict[str, Any] | None = None,
        step_timeout: float | None = None,
    ) -> tuple[StoredCheckpoint, Any]:
        """Run a thread from ``at`` until END, an interrupt, a cancel or the step limit.

        Returns the last checkpoint written and the state it holds. Whatever way the run stops, its
        last checkpoint also updates the thread's index entry. ``pauses``: nodes to stop before or after
        (LangGraph's breakpoints); ``watch`` sees the run as it goes (its tasks, steps and checkpoints: a
        stream of them); ``max_concurrency``: at most that many of a step's nodes run at once; ``metadata``: what
        each of its checkpoints carries of the run's config (LangGraph's metadata keys); ``step_timeout``:
        seconds a step may take (``TimeoutError`` past them). A cancelled run records where it stood before it
        is cancelled.
        """
        cursor, checkpointer = at.cursor, self.checkpointer
        if cursor is None or checkpointer is None:
            raise ValueError("Runner.run needs a checkpointer and a position on a thread; run_nested needs neither")
        tracer = run_tracer()
        limit = None if max_concurrency is None else asyncio.Semaphore(max_concurrency)
        settings = RunSettings(cursor.thread_id, invocation_state, runtime, "", tracer, pauses, watch, limit,
                               step_timeout)
        run = ThreadRun(self._executor(settings), at, checkpointer, step_limit=step_limit, durability=durability,
                        index=self.index, pauses=pauses, after_step=after_step, tracer=tracer, metadata=metadata)
        used: set[str] = set()
        watching = ANSWERS_USED.set(used)
        try:
            record, end = await self._traced(tracer, cursor.thread_id, run.to_the_end, _second)
        except StepFailed as failed:
            await run.failed(failed)
            raise failed.error from failed.error.__cause__
        except asyncio.CancelledError:
            await run.cancelled(acted=bool(used))
            raise
        except BaseException as failure:
            await run.crashed(failure, acted=bool(used))
            raise
        finally:
            checkpointer.finished(cursor, acted=bool(used))
            ANSWERS_USED.reset(watching)
        if run.index_error is not None:  # the run's checkpoints are stored; its listing is stale
            raise run.index_error
        if end.applied:
            await run.seen(end.state, end.applied, [])
        return record, end.state

    async def _traced(self, tracer: RunTracer | None, thread_id: str | None, steps: Callable[[], Awaitable[T]],
                      end_of: Callable[[T], RunEnd]) -> T:
        """``steps()`` in the run's span (when this runner names one and a tracer is set up), which records
        the interrupts the run stopped on (``end_of`` finds its ``RunEnd`` in what ``steps`` returned)."""
        if tracer is None or self.run_span is None:
            return await steps()
        attributes = {**self.span_attributes, "statehitl.machine": self.machine.name}
        if thread_id is not None:
            attributes.update({"statehitl.thread_id": thread_id, "gen_ai.conversation.id": thread_id})
        with tracer.span(f"{self.run_span} {self.machine.name}", attributes) as span:
            result = await steps()
            tracer.interrupted(span, end_of(result).interrupts)
            return result

    def _executor(self, settings: RunSettings) -> StepExecutor:
        return StepExecutor(machine=self.machine, adapter=self.adapter, hooks=self.hooks, policy=self.policy,
                            settings=settings, source=self.source, rules=self.rules,
                            node_hook_source=self.node_hook_source, traced=self.run_span is not None)

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
        pauses: Pauses | None = None,
        watch: StepWatch | None = None,
    ) -> RunEnd:
        """Run this machine as a node of another machine, writing nothing: where it stops is returned.

        ``prefix`` keeps its interrupt ids apart from the enclosing machine's (``interrupt_ids.nested``
        of the enclosing node call's site); ``at.responses`` holds the enclosing run's answers, and
        each nested scope finds its own there. A run that hits ``step_limit`` raises ``GraphRecursionError`` (a
        ``StepLimitError``). ``pauses``: the machine's own breakpoints, where it stops (``RunEnd.paused``)
        as on an interrupt with nothing to answer.
        """
        tracer = run_tracer()
        settings = RunSettings(thread_id, invocation_state, runtime, prefix, tracer, watch=watch)
        run = RunLoop(self._executor(settings), at, step_limit=step_limit, pauses=pauses, after_step=after_step)
        try:
            end = await self._traced(tracer, None, run.steps, _itself)
        except StepFailed as failed:  # the enclosing node fails with the error: its run records it
            raise failed.error from failed.error.__cause__
        if end.status == "executing" and not end.paused:
            raise GraphRecursionError(
                f"{self.machine.name!r} ran {step_limit} steps inside node {prefix.rstrip('/')!r} without "
                f"reaching END (next: {end.pending}); raise its step limit if the loop is intended"
            )
        if end.applied:
            await run.seen(end.state, end.applied, [])
        return end

    async def remember_shape(self, record: StoredCheckpoint) -> None:
        """Store this machine's shape (once per runner) when a run of it left a thread waiting, so that a
        resume by changed code can say what changed (``MachineChangedError``)."""
        if record.status == "interrupted" and not self._shape_saved and self.checkpointer is not None:
            await self.checkpointer.remember_machine(self.machine.fingerprint, self.machine.shape())
            self._shape_saved = True

    async def commit_update(
        self, cursor: Cursor, step: int, state: Any, writer: str, update: dict[str, Any], *, rewritten: bool = False,
        source: Source = "update", **position: Any,
    ) -> StoredCheckpoint:
        """Write a checkpoint that no step made: ``state`` after ``writer`` applied ``update`` outside a
        run (a human editing a graph's state, a direct tool call recorded in an agent's conversation).

        Durable and indexed like the checkpoint a run stops on; ``position`` gives its status and
        pending nodes (and, for a waiting thread, its interrupts and kept work). ``rewritten``: the
        state's history was edited or migrated, not appended to, so this checkpoint stores it whole. ``source``:
        what made it (an update, or a copy of a checkpoint: ``"fork"``).
        """
        return await self.commit_updates(cursor, step, state, {writer: update}, rewritten=rewritten, source=source,
                                         **position)

    async def commit_updates(
        self, cursor: Cursor, step: int, state: Any, updates: Mapping[str, dict[str, Any]], *,
        rewritten: bool = False, source: Source = "update", **position: Any,
    ) -> StoredCheckpoint:
        """``commit_update`` of the updates of several writers at once (by writer), as one step's."""
        cursor.store_whole(rewritten)
        assert self.checkpointer is not None, "a nested-only runner writes nothing"
        writes = {writer: dump_written(self.adapter.dump_update, writer, update) for writer, update in updates.items()}
        try:
            return await self.checkpointer.commit(
                cursor, state, self.adapter, durable=True, index=True, machine=self.machine.name,
                fingerprint=self.machine.fingerprint, step=step, source=source, writes=writes, **position,
            )
        except IndexNotWritten as stale:  # the update is stored; only the listing is stale
            stale.raise_error()


def _second(result: tuple[StoredCheckpoint, RunEnd]) -> RunEnd:
    return result[1]


def _itself(end: RunEnd) -> RunEnd:
    return end
