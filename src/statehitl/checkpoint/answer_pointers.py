"""Where an interrupt answered by id was: so a late reviewer is told who answered, after the thread moved on.

The doors that take an answer by interrupt id alone (the inbox's ``answer``, its page and API, the CLI)
find the interrupt in the thread index, which describes what each thread waits on *now*. Once the
answer was applied and the thread went on (or finished), the index no longer names the interrupt, and a
second reviewer arriving late would be told no such interrupt is pending, as if their id were wrong,
instead of who answered it first.

So such a door writes, before the answer itself (``answer_records.record_answer`` with ``mark_index``), a
small create-once pointer from the interrupt's id to its thread and checkpoint,
``answered/<interrupt id>/<thread>/<checkpoint>``, holding the interrupt as asked (its reason left out).
A door that finds no pending interrupt with the id looks for pointers by a prefix listing of
``answered/<id given>`` (exact id or the start of one: one listing, whatever the number of threads),
then reads the answer each names: the record that binds, signed like any answer
(``statehitl.inbox.late_answers``). A pointer whose answer is not stored (its write was refused, or
withdrawn, or pruned) points at nothing and is passed over; ``delete_thread`` deletes the thread's
pointers with it.

Answers given through the application's own call (``Command(resume=...)``, interruptResponse blocks)
write no pointer: that path stays one write, and those callers hold the thread, not an id alone.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from statehitl.checkpoint.codec import encode
from statehitl.checkpoint.records import InterruptRecord
from statehitl.checkpoint.storage import Storage
from statehitl.checkpoint.store_base import RecordStore
from statehitl.errors import CheckpointConflict

__all__ = ["POINTER_PREFIX", "AnswerPointer", "delete_pointers", "pointer_key", "pointers_of", "write_pointer"]

POINTER_PREFIX = "answered/"


class AnswerPointer(BaseModel):
    """An interrupt answered through a door that takes ids: its thread, the checkpoint it was asked at,
    and the interrupt as stored there (its name, and who may answer it, for a late reviewer's refusal)."""

    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    thread_id: str
    checkpoint_seq: int
    interrupt: InterruptRecord


def pointer_key(interrupt_id: str, thread_id: str, checkpoint_seq: int) -> str:
    """The pointer's key: the id first, so a listing by the id (or its start) finds it; then the thread, a
    segment of its own (``pointers_of`` deletes one thread's without touching a thread whose id starts with
    it), then the checkpoint, since a retried step asks the same interrupt again."""
    return f"{pointers_of(interrupt_id, thread_id)}{checkpoint_seq:012d}"


def pointers_of(interrupt_id: str, thread_id: str) -> str:
    """The prefix of every pointer from ``interrupt_id`` into ``thread_id`` (``v1:`` ids repeat across threads)."""
    return f"{POINTER_PREFIX}{interrupt_id}/{thread_id}/"


async def write_pointer(checkpointer: RecordStore, thread_id: str, checkpoint_seq: int,
                        interrupt: InterruptRecord) -> None:
    """Store the pointer for ``interrupt`` of checkpoint ``checkpoint_seq``, once (a racing door writes the
    same pointer: the one there stands). It keeps what a late answer is checked with (the name, who may
    answer, the schema), not the reason or the expiry default, which may say more than a key outside the
    thread should."""
    key = pointer_key(interrupt.id, thread_id, checkpoint_seq)
    asked = interrupt.model_copy(update={"reason": None, "expires_at": None, "on_expire": None})
    pointer = AnswerPointer(thread_id=thread_id, checkpoint_seq=checkpoint_seq, interrupt=asked)
    try:
        await checkpointer.create(key, encode(pointer, checkpointer.signing_key, place=key), durable=True)
    except CheckpointConflict:
        return


async def delete_pointers(storage: Storage, thread_id: str, answer_keys: list[str]) -> int:
    """Delete the pointers into ``thread_id`` of the interrupts its answers (``answer_keys``) answer: what
    ``delete_thread`` does first, so no key outside the thread names it once it is gone."""
    removed = 0
    for interrupt_id in sorted({key.rsplit("/", 1)[-1].split(".", 2)[-1] for key in answer_keys}):  # a.<seq>.<id>
        removed += await storage.delete(pointers_of(interrupt_id, thread_id))
    return removed
