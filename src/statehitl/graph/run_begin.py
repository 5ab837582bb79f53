"""Where a run of a compiled graph begins: new input on a new or finished thread, a resume with answers, a run
from a past checkpoint (a fork), or a subgraph's checkpoint config; and the stored values it starts from,
converted when the machine changed. Kept apart from ``compiled``, which runs and streams what begins here.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from statehitl.channels import INPUT
from statehitl.checkpoint.answer_records import read_answers, record_answer
from statehitl.checkpoint.reading import Head
from statehitl.checkpoint.record_parts import RunStart
from statehitl.checkpoint.records import CheckpointRecord
from statehitl.commands import Command
from statehitl.errors import MachineChangedError, ResumeInputError
from statehitl.graph.history import View, parse_view
from statehitl.graph.run_targets import (
    CommandInput,
    RunTarget,
    answer_form,
    command_input,
    commanded,
    namespace_of,
    resume_input,
    stopped,
)
from statehitl.graph.thread_state import ThreadState
from statehitl.graph.time_travel import ThreadViews
from statehitl.machine import describe_change
from statehitl.position import Position
from statehitl.resume import ContinueRun, ResumeRun, is_response_list, plan_run
from statehitl.run_start import resume_position, start_position
from statehitl.supersteps import plan_start, schedule_of, stored_schedule, with_goto

Migration = Callable[[dict[str, Any], str], dict[str, Any]]
"""``migrate(stored_values, stored_fingerprint) -> values``: converts a thread written by older code."""


@dataclass(frozen=True, slots=True)
class Reached:
    """A call that runs nothing: it reached ``record`` (with ``state``) before, or it is a finished thread's end."""

    record: CheckpointRecord
    state: Any


class RunBeginnings(ThreadState):
    """The part of ``CompiledStateGraph`` that finds the position a run starts from."""

    accept_machine_change: bool
    migrate: Migration | None

    async def _begin(self, input: Any, target: RunTarget, head: Head | None) -> tuple[Position, bool] | Reached:
        """Where the call's run begins, and whether it continues a stopped run; or what it reached already.

        Without a checkpoint id, the thread's current checkpoint: a new run, a resume or a continued run
        (``_position``); given a config, ``invoke(None)`` on a finished thread reaches its end again (a thread
        id alone says there is no stopped run to continue). A config naming a past
        checkpoint begins a new branch there (``_from_past``); naming the current one is the same as naming
        none, except that a thread waiting on interrupts nobody answered asks them again.
        """
        thread = target.thread
        if head is not None and target.named and namespace_of(target.config):  # a subgraph's checkpoint
            begun = await self._from_subgraph(input, target, head)
            if begun is not None:
                return begun
            target = dataclasses.replace(target, checkpoint_id=None)  # it is the thread's current one
        command = command_input(input, lambda given: self.schema.normalize_update(INPUT, given))
        plain = resume_input(input, head)  # None for a Command without resume: the run goes on, with its command
        if target.checkpoint_id is not None and head is not None:
            views = ThreadViews(self.checkpointer, self.machine, self.schema, thread)
            view = await views.at(parse_view(thread, target.checkpoint_id), head)
            if not (view.own and view.record.seq == head.record.seq):
                return await self._from_past(input, views, view, head, command)
            if plain is None and head.record.status == "interrupted" and head.record.interrupts \
                    and not await self._answered(head):  # a replay of the waiting step: its questions asked afresh
                return commanded(self.machine, await views.fork(view, await views.state(view)), command), False
        if command is not None and plain is None and (head is None or not stopped(head)):
            return await self._position(command.update, thread, head, command=command)  # a run of its goto
        if target.named and head is not None and input is None and head.record.status == "completed" \
                and not head.record.pending:  # LangGraph's: a finished thread's end, reached again
            return Reached(head.record, self.schema.load(head.record.values))
        return await self._position(plain, thread, head, answer_form(head, target), ask_again=target.named,
                                    command=command)

    async def _from_subgraph(self, input: Any, target: RunTarget, head: Head
                             ) -> tuple[Position, bool] | Reached | None:
        """A run from a subgraph's checkpoint (its config from ``get_state(config, subgraphs=True)``): a replay
        is a branch at the parent checkpoint whose task goes on inside the subgraph from there; answers
        answer the record that holds it. None: that record is the thread's current one, which the call goes
        on from as from the thread's."""
        from statehitl.graph.subgraph_travel import locate, replay_from  # loaded with a subgraph's config

        views = ThreadViews(self.checkpointer, self.machine, self.schema, target.thread)
        found = await locate(self, views, head, target.config["configurable"])
        current = found.record.seq == head.record.seq
        if (isinstance(input, Command) and input.resume is not None) or is_response_list(input):
            # the config of an edit (nothing waits there) answers what the run from it stopped on, if current
            current = current or (not found.record.interrupts and found.view.record.seq == head.record.seq)
            return None if current else await self._answer_past(input, dataclasses.replace(found.view,
                                                                                           record=found.record), head)
        if input is None:
            return None if current and head.record.status != "interrupted" else (await replay_from(views, found),
                                                                                  False)
        return await self._from_past(input, views, found.view, head)

    async def _answered(self, head: Head) -> bool:
        """Whether an answer is stored for any of the interrupts the thread's current checkpoint waits on."""
        answers = head.answers if head.answers is not None else await read_answers(self.checkpointer, head.record)
        return bool(answers)

    async def _from_past(self, input: Any, views: ThreadViews, view: View, head: Head,
                         command: CommandInput | None = None) -> tuple[Position, bool] | Reached:
        """A run from the past checkpoint ``view``: a new branch (a replay asks its interrupts afresh; a
        ``Command``'s update applied first, its goto run too), or an answer to one of its interrupts, which
        binds as any answer does."""
        state = await views.state(view)
        if (isinstance(input, Command) and input.resume is not None) or is_response_list(input):
            return await self._answer_past(input, view, head)
        if input is None or command is not None:
            if command is not None:
                state = self.schema.apply(state, [(INPUT, command.update)])
            elif not view.pending:
                return Reached(view.record, state)  # replaying an end: nothing to run
            return commanded(self.machine, await views.fork(view, state), command), False
        return await views.fork(view, state, more=resume_input(input, head)), False

    async def _answer_past(self, input: Any, view: View, head: Head) -> tuple[Position, bool] | Reached:
        """Answers to a past checkpoint's interrupts. Each interrupt has one binding answer: the same answer
        again reaches what it reached (nothing runs), another one is ``AlreadyAnsweredError``; an interrupt
        nobody answered yet is answered now, and the run goes on from there, on a branch of its own."""
        record = view.record
        past = await self.checkpointer.head(record.thread_id, record.seq)
        assert past is not None
        plan = plan_run(resume_input(input, past), record, label=f"thread {record.thread_id!r}",
                        none_continues=True, lists_are_input=False)
        if not isinstance(plan, ResumeRun):
            raise ResumeInputError(f"checkpoint {view.id} of thread {record.thread_id!r} waits on no interrupt")
        stored = await read_answers(self.checkpointer, record)
        known = {iid: answer.response for iid, answer in stored.items()}
        if plan.answers and all(iid in known for iid in plan.answers):
            for iid, response in plan.answers.items():
                await record_answer(self.checkpointer, record, next(i for i in record.interrupts if i.id == iid),
                                    response, via="app", durable=False)  # the same: fine; another: refused
            return Reached(head.record, self.schema.load(head.record.values))
        values, migrated = await self._stored_values(past, resuming=True)
        return await resume_position(self.checkpointer, past, plan.answers, self.schema.load(values),
                                     rewritten=migrated, meta=plan.meta), True

    async def _position(self, input: Any, thread: str, head: Head | None, form: str | None = None, *,
                        ask_again: bool = False, command: CommandInput | None = None) -> tuple[Position, bool]:
        """Turn the caller's input into where the runner starts (and whether it continues a stopped run);
        reject misfits before any write.

        Continuing a stopped run (answering interrupts, or ``None`` after a crash) first claims the
        thread, so a second process doing the same gets ``CheckpointConflict`` before anything runs.
        ``ask_again``: ``None`` on a thread waiting on interrupts nobody answered runs the step again, which
        asks them again (LangGraph's way), instead of saying that no answer is stored. ``command``: a caller's
        ``Command``'s update, applied before the run's step (checked before the claim), and its goto, run in that
        step; a new run of a thread that had not stopped runs only its goto.
        """
        plan = plan_run(input, None if head is None else head.record, label=f"thread {thread!r}",
                        none_continues=True, lists_are_input=self.schema.kind.kind == "root", answer_form=form,
                        tagged_answers=True, input_leaves_breakpoint=command is None)
        if isinstance(plan, ResumeRun | ContinueRun):
            assert head is not None
            values, migrated = await self._stored_values(head, resuming=True)
            answers = plan.answers if isinstance(plan, ResumeRun) else {}
            state = self.schema.load(values)
            if command is not None:  # its update and goto are checked before the claim: a refusal changes nothing
                state = self.schema.apply(state, [(INPUT, command.update)])
                with_goto(self.machine, head.record.pending,
                          schedule_of(head.record.schedule, f"thread {thread!r}"), command.goto)
            at = await resume_position(self.checkpointer, head, answers, state, rewritten=migrated,
                                       meta=plan.meta if isinstance(plan, ResumeRun) else None, ask_again=ask_again)
            return commanded(self.machine, at, command), True
        if head is None:
            state = self.schema.initial(input)
            pending, schedule = await plan_start(self.machine, state, () if command is None else command.goto)
            given = {name: getattr(state, name) for name in state.model_fields_set}  # the input as validated
            start = RunStart(update=self.schema.dump_input(given), pending=pending,
                             schedule=stored_schedule(schedule), step=0)
            return start_position(None, thread, state, pending, schedule=schedule, start=start), False
        self.checkpointer.ensure_free(head, None)
        values, migrated = await self._stored_values(head, resuming=False)
        update = self.schema.input_update(input) if command is None else command.update
        state = self.schema.apply(self.schema.load(values), [("input", update)])
        if command is not None:  # no input checkpoints: the update goes on from the thread's last step, as in LangGraph
            pending, schedule = with_goto(self.machine, [], None, command.goto)
            return start_position(head, thread, state, pending, rewritten=migrated, schedule=schedule), False
        pending, schedule = await plan_start(self.machine, state)
        step = head.record.step + 2  # LangGraph's numbering: the input's checkpoint, then the first step's
        start = RunStart(update=self.schema.dump_input(update), pending=pending, schedule=stored_schedule(schedule),
                         step=step)
        return start_position(head, thread, state, pending, rewritten=migrated, schedule=schedule, step=step,
                              start=start), False

    async def _stored_values(self, head: Head, *, resuming: bool) -> tuple[dict[str, Any], bool]:
        """The head's values for this machine (migrated, accepted, or refused if the machine changed),
        and whether they were migrated (then the next checkpoint stores them whole).

        Continuing a stopped run on changed code is refused unless the app opted in, because the
        position (which nodes to re-enter) and the state may no longer mean what they meant.
        """
        record = head.record
        if record.fingerprint == self.machine.fingerprint:
            return record.values, False
        if self.migrate is not None:
            return self.migrate(dict(record.values), record.fingerprint), True
        if self.accept_machine_change or not resuming:
            return record.values, False
        old = await self.checkpointer.machine_shape(record.fingerprint)
        raise MachineChangedError(
            f"thread {record.thread_id!r} stopped at checkpoint {record.checkpoint_id} under a different "
            f"version of machine {record.machine!r}: {describe_change(old, self.machine.shape())}. Pass "
            "accept_machine_change=True to compile() to continue it anyway, or migrate=fn(values, "
            "old_fingerprint) to convert its stored state"
        )
