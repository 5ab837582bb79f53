"""Where a run starts: a new run's position on its thread, or a stopped thread's, claimed for this process
with the answers its resume applies bound to their interrupts.

``start_position`` and ``resume_position`` are how a shape (an agent, a StateGraph, an orchestrator)
asks for a place to run from: they own the cursor bookkeeping (the run's owner, a claim on a stopped
thread, whether the next checkpoint must store the state whole), so no shape edits a cursor itself.
The position they return is plain data (``statehitl.position``).
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from statehitl import observe
from statehitl.checkpoint.answer_records import answer_key, read_answers, record_answer
from statehitl.checkpoint.chain import Cursor
from statehitl.checkpoint.claims import owner_id
from statehitl.checkpoint.engine import Checkpointer
from statehitl.checkpoint.reading import Head
from statehitl.checkpoint.record_parts import InterruptRecord, RunStart
from statehitl.checkpoint.records import AnswerRecord, AuditEntry, CheckpointRecord, ViewPart
from statehitl.errors import ResumeInputError
from statehitl.position import Position
from statehitl.responders import may_answer
from statehitl.resume import AnswerMeta
from statehitl.supersteps import schedule_of
from statehitl.transitions import ClaimTaken, InterruptAnswered

if TYPE_CHECKING:
    from statehitl.progress import Schedule


def start_position(head: Head | None, thread_id: str, state: Any, pending: list[str], *,
                   rewritten: bool = False, schedule: Schedule | None = None, step: int | None = None,
                   start: RunStart | None = None, parent_view: ViewPart | None = None,
                   completed: dict[str, dict[str, Any]] | None = None) -> Position:
    """Where a new run from ``state`` enters: after ``head`` if the thread has one, else at its start.

    The caller checks first that no other process holds ``head`` (``Checkpointer.ensure_free``), before
    its hooks or reducers run. The cursor gets a fresh owner so the run's held checkpoints carry a lease
    against takeovers. ``rewritten`` says the state's history was edited rather than appended to (a
    trimmed conversation): the next checkpoint stores it whole. ``step``: the step the run begins at (by
    default the head's, or 0); ``start``: how it began, for its first checkpoint to keep, with
    ``parent_view`` (which checkpoint of the head's record it follows, when not the record's own);
    ``completed``: the tasks of its first step that finished before (a replay of a step that stopped).
    """
    cursor = Cursor(thread_id) if head is None else head.cursor
    cursor.take(owner_id())
    cursor.store_whole(rewritten)
    if step is None:
        step = 0 if head is None else head.record.step
    return Position(state=state, pending=pending, cursor=cursor, step=step, schedule=schedule, start=start,
                    parent_view=parent_view, completed=completed or {})


async def resume_position(checkpointer: Checkpointer, head: Head, answers: dict[str, Any], state: Any, *,
                          rewritten: bool = False, meta: Mapping[str, AnswerMeta] | None = None,
                          ask_again: bool = False) -> Position:
    """Claim the stopped ``head`` (interrupted, or running when its process died) for this process and
    return where its run re-enters, with ``answers`` to its interrupts (none for a crashed run).

    Called once the answers are checked: the claim is the first write, so of two processes answering
    the same interrupt only one gets past it, before any node, hook or tool runs. ``rewritten``: the
    state was converted (a migration), so the next checkpoint stores it whole. ``meta``: who gave
    which answer, for the audit trail. ``ask_again``: a thread waiting on interrupts nobody answered
    re-runs its step, which asks them again, instead of refusing to go on without an answer.
    """
    record = head.record
    recorded: list[str] = []
    if record.interrupts and (record.status == "interrupted" or answers):
        answers, meta, recorded = await bind_answers(checkpointer, head, answers, meta or {}, ask_again=ask_again)
        if head.fork and answers and not recorded:
            raise ResumeInputError(
                f"the interrupts of checkpoint {record.checkpoint_id} of thread {record.thread_id!r} were answered "
                "before, and the thread went on from there: the same answer again does nothing, another is refused "
                "(an answer binds once). To ask again, replay that checkpoint: invoke(None, its config) starts a "
                "new branch that asks afresh"
            )
    answered = audit_entries(record, answers, meta or {})
    await checkpointer.claim(head, owner_id(), [AnswerRecord.of(entry) for entry in answered])
    head.cursor.store_whole(rewritten)
    if observe.observers:
        if head.cursor.slot is not None:  # the claim's own number, set by the claim
            observe.emit(ClaimTaken(head.cursor.slot, record.seq))
        for i in record.interrupts:
            if i.id in answers:
                observe.emit(InterruptAnswered(i.name, i.node, answers[i.id]))
    return Position(state=state, pending=record.pending, cursor=head.cursor, step=record.step,
                    completed=record.completed, responses={**record.responses, **answers}, progress=record.progress,
                    waiting=list(record.interrupts), answered=answered, recorded=recorded,
                    schedule=schedule_of(record.schedule, f"checkpoint {record.checkpoint_id} of thread "
                                                          f"{record.thread_id!r}"))


async def bind_answers(checkpointer: Checkpointer, head: Head, given: dict[str, Any],
                       meta: Mapping[str, AnswerMeta], *, ask_again: bool = False
                       ) -> tuple[dict[str, Any], dict[str, AnswerMeta], list[str]]:
    """The answers a resume of ``head`` applies: each given one recorded as its interrupt's one binding
    answer (the same answer stored before by any door is fine; a different one is ``AlreadyAnsweredError``,
    and one from someone the interrupt's ``responders`` do not name is ``ResponderNotAllowedError``, before
    anything is claimed or run), and the answers other doors stored for its other interrupts.

    The given answers are written without forcing them to disk: the claim that follows is forced, and on
    the file store it shares their log, so one ``fdatasync`` covers both (S3 and DynamoDB write durably).
    Also returns the keys of the answers this call stored, to withdraw should the run refuse them.
    """
    record = head.record
    by_id = {i.id: i for i in record.interrupts}
    bound: dict[str, Any] = {}
    who: dict[str, AnswerMeta] = {}
    recorded: list[str] = []
    # Answers their responder may not give go first: the refusal then comes before any answer of the same
    # call is stored, so a refused call binds nothing.
    for iid, response in sorted(given.items(), key=lambda item: _may_give(by_id[item[0]], meta.get(item[0]))):
        said = meta.get(iid, AnswerMeta())
        stored, created = await record_answer(checkpointer, record, by_id[iid], response, responder=said.responder,
                                              groups=said.groups, comment=said.comment, via=said.via or "app",
                                              durable=False)
        bound[iid], who[iid] = stored.response, AnswerMeta(stored.responder, stored.comment, stored.via)
        if created:
            recorded.append(answer_key(record.thread_id, record.seq, iid))
    if len(bound) < len(by_id):
        stored_answers = head.answers if head.answers is not None else await read_answers(checkpointer, record)
        for iid, answer in stored_answers.items():
            if iid in by_id and iid not in bound:
                bound[iid], who[iid] = answer.response, AnswerMeta(answer.responder, answer.comment, answer.via)
    if not bound and not ask_again:
        waiting = ", ".join(f"{i.name!r} (id {i.id})" for i in record.interrupts)
        raise ResumeInputError(
            f"thread {record.thread_id!r} is waiting on interrupts {waiting} and no answer to them is stored; "
            "resume it with a list like [{'interruptResponse': {'interruptId': interrupt.id, 'response': ...}}], "
            "or answer in the inbox"
        )
    return bound, who, recorded


def _may_give(interrupt: InterruptRecord, said: AnswerMeta | None) -> bool:
    """Whether the responder ``said`` names may answer ``interrupt`` (``record_answer`` decides; this orders)."""
    who = said or AnswerMeta()
    return may_answer(interrupt.responders, who.responder, who.groups)


def audit_entries(record: CheckpointRecord, answers: dict[str, Any], meta: Mapping[str, AnswerMeta]
                  ) -> list[AuditEntry]:
    """The audit entries of ``answers`` to the interrupts ``record`` waits on, in the order it lists them."""
    from statehitl.answers import outcome_of  # only a resume needs the vocabulary: not every cold start

    now = time.time()
    entries = []
    for i in record.interrupts:
        if i.id in answers:
            who = meta.get(i.id, AnswerMeta())
            entries.append(AuditEntry(
                thread_id=record.thread_id, interrupt_id=i.id, name=i.name, reason=i.reason, response=answers[i.id],
                responder=who.responder, comment=who.comment, at=now, outcome=outcome_of(answers[i.id]),
                node=i.node, source=i.source, digest=i.digest, checkpoint_id=record.checkpoint_id, via=who.via,
            ))
    return entries
