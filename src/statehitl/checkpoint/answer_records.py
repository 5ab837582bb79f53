"""The one binding answer per interrupt: create-once records every door writes, and every resume applies.

A human's answer reaches a waiting thread through several doors: the application's own call with
interruptResponse blocks, the inbox (CLI and library), its web page, an expiry default. Each writes
the same record, ``threads/<thread>/a.<checkpoint>.<interrupt>``, with a create-once write: the first
answer wins everywhere, a later different one is refused naming who answered first and when
(``AlreadyAnsweredError``), the same one again is idempotent. A resume applies the stored answers, so
a call without answers (``invoke(None)``, a bare ``agent()``, a worker) picks them up.

Why in the thread's own key space: its records are one log on the file store (the answer is an append
that the claim's ``fdatasync`` makes durable with it), one partition on DynamoDB (its bulk read brings
the answers along, and its stream carries the answer's write to a worker), and ``delete_thread`` and
the thread's prefix cover them. The name starts with ``a.``, after every slot (digits), so finding the
thread's head by listing stays one request. The checkpoint in the key keeps answers to a step that
failed apart from answers to its retry, which waits on the same interrupts again.

Who may answer (``interrupt(..., responders=[...])``) is checked here too, in the one write every door
goes through: an answer from anyone else is refused before it is stored, and the refusal is kept for the
audit trail (``refusals.py``).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from statehitl.checkpoint.codec import decode_model, encode
from statehitl.checkpoint.index import index_key, read_index_versioned
from statehitl.checkpoint.record_parts import InterruptRecord
from statehitl.checkpoint.records import AnsweredMark, CheckpointRecord, StoredAnswer, Via
from statehitl.checkpoint.refusals import refuse
from statehitl.checkpoint.storage import ABSENT, read_prefix
from statehitl.checkpoint.store_base import RecordStore
from statehitl.errors import AlreadyAnsweredError, CheckpointConflict, CheckpointCorruptError, StorageError
from statehitl.responders import may_answer

ANSWER_MARK = "a."
"""How an answer's name in its thread starts (slots are digits, so answers list after them)."""

_INDEX_ROUNDS = 16
"""Compare-and-set rounds to mark an answer in the thread's index entry before giving up (it is a hint
for listings and workers; the answer itself is already stored)."""


def answer_prefix(thread_id: str, checkpoint_seq: int) -> str:
    return f"threads/{thread_id}/{ANSWER_MARK}{checkpoint_seq:012d}."


def answer_key(thread_id: str, checkpoint_seq: int, interrupt_id: str) -> str:
    if not interrupt_id or "/" in interrupt_id:
        raise ValueError(f"{interrupt_id!r} is not an interrupt id")
    return f"{answer_prefix(thread_id, checkpoint_seq)}{interrupt_id}"


def is_answer_key(key: str) -> bool:
    """Whether ``key`` (under ``threads/<thread>/``) is an answer rather than a checkpoint or claim slot."""
    return key.rsplit("/", 1)[-1].startswith(ANSWER_MARK)


def parse_answer(key: str, data: bytes, signing_key: bytes | None) -> StoredAnswer:
    """The answer stored under ``key``, checked to be the answer its key names: one copied from another
    thread's or interrupt's key is refused, signed (the signature covers the key) or not."""
    what = f"answer record {key!r}"
    answer = decode_model(StoredAnswer, what, data, signing_key, place=key)
    if not answer.checkpoint_id.isdigit() or answer_key(answer.thread_id, int(answer.checkpoint_id),
                                                        answer.interrupt_id) != key:
        raise CheckpointCorruptError(f"{what} is the answer to interrupt {answer.interrupt_id} of thread "
                                     f"{answer.thread_id!r}, not to the one its key names (copied here, or edited)")
    return answer


def same_answer(stored: StoredAnswer, response: Any) -> bool:
    """Whether ``response`` is the answer already stored (then answering again changes nothing)."""
    return bool(stored.response == response and type(stored.response) is type(response))


def already_answered(name: str, interrupt_id: str, first: StoredAnswer | None) -> str:
    """The message a later different answer gets: who answered first, when, and through which door."""
    from statehitl._text import when_text

    if first is None:
        return f"interrupt {name!r} (id {interrupt_id}) was already answered; the first answer wins"
    who = "its expiry default" if first.via == "expiry" else (first.responder or "someone unnamed")
    return (f"interrupt {name!r} (id {interrupt_id}) was already answered by {who} ({first.via}) at "
            f"{when_text(first.answered_at)}, with {first.response!r}; the first answer wins")


async def record_answer(checkpointer: RecordStore, record: CheckpointRecord, interrupt: InterruptRecord,
                        response: Any, *, responder: str | None = None, groups: Sequence[str] = (),
                        comment: str | None = None, via: Via = "app", digest: str | None = None, durable: bool = True,
                        mark_index: bool = False) -> tuple[StoredAnswer, bool]:
    """Store the answer to ``interrupt`` of the waiting checkpoint ``record``, once.

    Returns the binding answer, and whether this call stored it: this one, or the same response stored
    earlier (by any door). A different response stored earlier raises ``AlreadyAnsweredError``.
    ``mark_index`` also marks it in the thread's index entry, for a door that does not resume the
    thread itself (listings then show the interrupt as answered, not yet applied, and a worker finds
    the thread).

    Every door's checks, here in one place and in one order: an interrupt that names its ``responders``
    takes an answer only from one of them: ``responder``, or a member of one of ``groups`` (what the door
    knows of the responder). Anyone else, or an answer naming nobody, is ``ResponderNotAllowedError``, and
    the refusal is stored for the audit trail. That check comes first, before the stored answer is
    looked at, so a refused responder learns nothing of an answer given before (not who gave it, not
    whether theirs was the same). Then the answer's type: the interrupt's schema, and its type itself
    where this process knows it (``response_types.check_answer``): ``ResponseValidationError``, nothing
    stored. An expiry default (``via="expiry"`` with the interrupt's own ``on_expire``) is always allowed:
    the interrupt's author chose it, and it was checked where it was declared.
    """
    thread = record.thread_id
    default = _expiry_default(interrupt, response, via)
    if interrupt.responders and not default and not may_answer(interrupt.responders, responder, groups):
        raise await refuse(checkpointer, record, interrupt, response, responder=responder, groups=groups,
                           comment=comment, via=via)
    if interrupt.response_schema is not None and not default:  # a default was checked where it was declared
        from statehitl.response_types import check_answer

        check_answer(interrupt.id, interrupt.response_schema, response,
                     f"thread {thread!r}: the answer to interrupt {interrupt.name!r} (id {interrupt.id})")
    key = answer_key(thread, record.seq, interrupt.id)
    answer = StoredAnswer(thread_id=thread, checkpoint_id=record.checkpoint_id, interrupt_id=interrupt.id,
                          name=interrupt.name, response=response, responder=responder, comment=comment,
                          answered_at=round(time.time(), 3), via=via, digest=digest)
    data = encode(answer, checkpointer.signing_key, place=key)
    try:
        await checkpointer.create(key, data, durable=durable)
    except CheckpointConflict:
        found = await checkpointer.storage.read(key)
        first = None if found is None else parse_answer(key, found[0], checkpointer.signing_key)
        if first is not None and same_answer(first, response):
            return first, False
        raise AlreadyAnsweredError(already_answered(interrupt.name, interrupt.id, first)) from None
    if mark_index:
        await _mark_index(checkpointer, record, answer)
    return answer, True


def _expiry_default(interrupt: InterruptRecord, response: Any, via: Via) -> bool:
    """Whether ``response`` is the interrupt's own expiry default, given by a sweep."""
    default = interrupt.on_expire
    return via == "expiry" and interrupt.expires_at is not None and response == default and type(response) is type(
        default)


async def withdraw_answers(checkpointer: RecordStore, keys: list[str]) -> None:
    """Delete answers a resume stored and then refused on re-run (the tool call they approved changed, an
    edit did not fit): never applied, they must not bind, so the interrupt can be answered again."""
    for key in keys:
        await checkpointer.storage.delete(key)


async def read_answers(checkpointer: RecordStore, record: CheckpointRecord) -> dict[str, StoredAnswer]:
    """The answers stored for the interrupts of the waiting checkpoint ``record``, by interrupt id."""
    prefix = answer_prefix(record.thread_id, record.seq)
    found = await read_prefix(checkpointer.storage, prefix)
    answers = (parse_answer(key, data, checkpointer.signing_key) for key, (data, _) in found.items())
    return {answer.interrupt_id: answer for answer in answers}


def answers_in(found: Mapping[str, tuple[bytes, str]], record: CheckpointRecord, signing_key: bytes | None
               ) -> dict[str, StoredAnswer]:
    """The answers to ``record``'s interrupts among a bulk read of the thread's keys."""
    prefix = answer_prefix(record.thread_id, record.seq)
    answers = (parse_answer(key, data, signing_key) for key, (data, _) in found.items() if key.startswith(prefix))
    return {answer.interrupt_id: answer for answer in answers}


async def _mark_index(checkpointer: RecordStore, record: CheckpointRecord, answer: StoredAnswer) -> None:
    """Add ``answer`` to the thread's index entry, if the entry still describes ``record``: a hint, so a
    store that keeps refusing the compare-and-set leaves it out rather than fail an answer already stored."""
    mark = AnsweredMark(interrupt_id=answer.interrupt_id, responder=answer.responder, via=answer.via,
                        at=answer.answered_at)
    await _edit_marks(checkpointer, record.thread_id, record.seq,
                      lambda marks: None if any(m.interrupt_id == mark.interrupt_id for m in marks) else [*marks, mark])


async def unmark_index(checkpointer: RecordStore, thread_id: str, checkpoint_seq: int, interrupt_id: str) -> None:
    """Take the mark of a withdrawn answer out of the thread's index entry (if it still describes checkpoint
    ``checkpoint_seq``), so listings show the interrupt as pending again and workers do not look for it."""
    await _edit_marks(checkpointer, thread_id, checkpoint_seq, lambda marks: (
        [m for m in marks if m.interrupt_id != interrupt_id] if any(m.interrupt_id == interrupt_id for m in marks)
        else None))


async def _edit_marks(checkpointer: RecordStore, thread_id: str, checkpoint_seq: int,
                      edit: Callable[[list[AnsweredMark]], list[AnsweredMark] | None]) -> None:
    """Rewrite the answered marks of the thread's index entry as ``edit`` says (None: leave it), by
    compare-and-set, while the entry describes checkpoint ``checkpoint_seq``. Best effort: the marks are a
    hint for listings and workers, which read the answers themselves before acting."""
    key = index_key(thread_id)
    for _ in range(_INDEX_ROUNDS):
        entry, version = await read_index_versioned(checkpointer.storage, thread_id, checkpointer.signing_key)
        if entry is None or entry.seq != checkpoint_seq:
            return
        marks = edit(list(entry.answered))
        if marks is None:
            return
        marked = entry.model_copy(update={"answered": marks})
        try:
            await checkpointer.storage.write(key, encode(marked, checkpointer.signing_key, place=key),
                                             expect=version or ABSENT, durable=False)
            return
        except CheckpointConflict:
            continue
        except StorageError:
            return
