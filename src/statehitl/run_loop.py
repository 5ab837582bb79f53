"""One run's step loop: step after step until END, an interrupt, a cancel, a breakpoint or the step limit.

A run is an object (as LangGraph's ``PregelLoop`` is one per run beside its pure ``_algo``): ``RunLoop``
holds where the run stands and decides when it stops; the steps themselves are the ``StepExecutor``'s
(``statehitl.step_run``), which policy picks the nodes is the scheduler's (``statehitl.scheduling``).
What happens between two steps is the only difference between the two kinds of run: a thread's run
commits a checkpoint (``statehitl.thread_run.ThreadRun``); a machine running as a node of another (a
plain ``RunLoop``) writes nothing and only lets its owner mirror the state. Both keep every other rule.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from statehitl import observe
from statehitl.checkpoint.record_parts import InterruptRecord
from statehitl.checkpoint.records import AuditEntry
from statehitl.errors import InvalidResponseError
from statehitl.position import Position, RunEnd, Writes
from statehitl.runner_parts import NodeFailed, Pauses, StepFailed, kept_progress
from statehitl.step_run import StepExecutor
from statehitl.transitions import StepApplied

if TYPE_CHECKING:
    from statehitl.progress import Schedule


AfterStep = Callable[[Any, Writes, list[str]], Awaitable[None]]
"""``after_step(state, writes, next)``: called once a step's updates are applied (and its checkpoint, if
any, is written), with the state after it, each node's update and the nodes that run next. The owner of
a machine mirrors the state into its live objects here (an agent's ``messages``), apart from the nodes,
which only compute."""

_NOTHING: dict[str, Any] = {}
_NO_INTERRUPTS: list[InterruptRecord] = []
_NO_ENTRIES: list[AuditEntry] = []
_NO_KEYS: list[str] = []
"""What a step after a run's first carries from before it (no kept work, answers, digests or interrupts
waiting): shared, and never written to (the executor copies before it changes anything)."""


class RunLoop:
    """The step loop of one run from ``at``; ``between`` runs after every step that leaves nodes pending."""

    def __init__(self, executor: StepExecutor, at: Position, *, step_limit: int, pauses: Pauses | None,
                 after_step: AfterStep | None) -> None:
        self.executor = executor
        self.at = at
        self.step_limit = step_limit
        self.pauses = pauses
        self.after_step = after_step
        self.watch = executor.watch
        self.before = at
        """Where the next step begins (or the one in flight began): where a run stopped between steps stands."""

    async def between(self, step: int, state: Any, pending: list[str], applied: Writes,
                      schedule: Schedule | None) -> None:
        """After a step that leaves nodes pending: the owner sees the state (a thread's run also commits)."""
        if self.after_step is not None or self.watch is not None:
            await self.seen(state, applied, pending)

    async def seen(self, state: Any, applied: Writes, pending: list[str]) -> None:
        """The owner, and whoever watches the run, see the state after a step (``applied`` its updates)."""
        if self.after_step is not None:
            await self.after_step(state, applied, pending)
        if self.watch is not None:
            await self.watch.step_applied(state, applied, pending)

    async def steps(self) -> RunEnd:
        """Run until the run stops; how and where it stopped."""
        at, executor, machine, pauses = self.at, self.executor, self.executor.machine, self.pauses
        policy = executor.policy
        before = at
        applied: Writes = []  # what the last step applied, until an ``after_step`` sees it (dumped only when needed)
        steps_run = 0
        while True:
            state, pending, step, schedule = before.state, before.pending, before.step, before.schedule
            if not pending:
                halted = executor.halted is not None and executor.halted(state)  # a limit or a failed node ended it
                return RunEnd("failed" if halted else "completed", state, step, [], applied=applied)
            if steps_run >= self.step_limit:
                return RunEnd("executing", state, step, pending, schedule=schedule, applied=applied)
            if pauses is not None and not (steps_run == 0 and pauses.resumed) and pauses.stops_before(machine,
                                                                                                      pending):
                return RunEnd("executing", state, step, pending, schedule=schedule, applied=applied, paused=True)
            if executor.rules is not None:
                refused = executor.refused(state, pending, kept=steps_run == 0 and bool(at.completed or at.progress))
                if refused is not None:
                    applied = [(machine.name, refused)]  # the owner's own write: the limit that ended the run
                    return RunEnd("failed", executor.adapter.apply(state, applied), step + 1, [], applied=applied)
            runnable = policy.runnable(machine, pending)
            try:
                moved = await executor.run(before, runnable)
            except Exception as exc:
                raise self._failed(before, runnable, exc) from None
            if isinstance(moved, RunEnd):
                return moved
            applied, pending = moved.applied, moved.pending
            step += 1
            steps_run += 1
            if observe.observers:
                observe.emit(StepApplied(step, executor.dumped(applied), tuple(pending)))
            if moved.cancelled:
                return RunEnd("failed", moved.state, step, [], cancelled=moved.cancelled, applied=applied)
            if pending and pauses is not None and (pauses.stops_after(machine, runnable)
                                                   or pauses.stops_before(machine, pending)):
                return RunEnd("executing", moved.state, step, pending, schedule=moved.schedule, applied=applied,
                              paused=True)
            before = self.before = Position(
                state=moved.state, pending=pending, step=step, completed=_NOTHING, responses=_NOTHING,
                progress=_NOTHING, waiting=_NO_INTERRUPTS, digests=_NOTHING, answered=_NO_ENTRIES, recorded=_NO_KEYS,
                schedule=moved.schedule)
            if pending:
                await self.between(step, moved.state, pending, applied, moved.schedule)
                applied = []

    @staticmethod
    def _failed(before: Position, runnable: list[str], error: Exception) -> Exception:
        """What a step from ``before`` that raised ``error`` raises: ``StepFailed`` at ``before`` (what the
        thread records to retry), or an answer's refusal as it is."""
        if not isinstance(error, NodeFailed):  # merging the updates or choosing the next nodes failed
            return StepFailed(list(runnable), error, before)
        if isinstance(error.error, InvalidResponseError) and error.error.refused_answer and before.waiting:
            # An answer refused on re-run (its type, its tool call): it was never applied, so the run
            # stops with nothing written and the thread still waits on it, answerable again.
            return error.error
        if error.finished:
            before = dataclasses.replace(before, completed={**before.completed, **error.finished})
        kept = kept_progress(error.error)
        if kept is not None:
            before = dataclasses.replace(before, progress={**before.progress, error.node: kept})
        return StepFailed([error.node], error.error, before)
