"""The inbox's side of the one binding answer per interrupt: answers given without the application's code.

The inbox (its CLI, its web page, an expiry sweep) writes the same create-once record every door does
(``statehitl.checkpoint.answer_records``): the first answer wins everywhere, whether it came through
the inbox or the application's own call. Since the inbox does not resume the thread itself (unless it
was given the app), it also marks the answer in the thread's index entry, so listings show the
interrupt as answered, not yet applied, and a worker or ``resume_answered`` picks it up.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from statehitl.checkpoint.answer_records import answer_key, parse_answer, read_answers, record_answer
from statehitl.checkpoint.engine import Checkpointer
from statehitl.checkpoint.records import CheckpointRecord, StoredAnswer, Via
from statehitl.errors import InterruptResponseError, NotInterruptedError, UnknownInterruptError
from statehitl.values import encode_value


async def waiting_checkpoint(checkpointer: Checkpointer, thread_id: str) -> CheckpointRecord:
    """The checkpoint the thread waits at (its newest), or ``NotInterruptedError``."""
    record = await checkpointer.latest(thread_id)
    if record is None or record.status != "interrupted":
        why = "it has no checkpoint" if record is None else f"its status is {record.status}"
        raise NotInterruptedError(f"thread {thread_id!r} is not waiting on any interrupt ({why})")
    return record


async def answer_waiting(checkpointer: Checkpointer, thread_id: str, interrupt_id: str, response: Any, *,
                         responder: str | None = None, groups: Sequence[str] = (), comment: str | None = None,
                         via: Via = "inbox") -> StoredAnswer:
    """Store the answer to the thread's waiting interrupt, once, forced to disk, and mark it in the index.

    ``AlreadyAnsweredError`` if a different answer came first (through any door); the same answer again
    returns the one stored. ``ResponderNotAllowedError`` (the refusal audited) if the interrupt names
    who may answer and ``responder``, in ``groups``, is not one of them."""
    stored, _ = await store_answer(checkpointer, thread_id, interrupt_id, response, responder=responder,
                                   groups=groups, comment=comment, via=via)
    return stored


async def store_answer(checkpointer: Checkpointer, thread_id: str, interrupt_id: str, response: Any, *,
                       responder: str | None = None, groups: Sequence[str] = (), comment: str | None = None,
                       via: Via = "inbox") -> tuple[StoredAnswer, bool]:
    """``answer_waiting``, and whether this call stored the answer (False: the same answer was there first),
    for a caller that counts what it did (a sweep: of racing sweepers, only one applied the default)."""
    response = encode_value(response, f"the response to interrupt {interrupt_id}", error=InterruptResponseError)
    record = await waiting_checkpoint(checkpointer, thread_id)
    interrupt = next((i for i in record.interrupts if i.id == interrupt_id), None)
    if interrupt is None:
        raise UnknownInterruptError(f"thread {thread_id!r} is not waiting on interrupt {interrupt_id!r}; it waits "
                                    f"on {', '.join(i.id for i in record.interrupts)}")
    return await record_answer(checkpointer, record, interrupt, response, responder=responder,
                               groups=groups, comment=comment, via=via, durable=True, mark_index=True)


async def read_answer(checkpointer: Checkpointer, thread_id: str, interrupt_id: str, checkpoint_seq: int
                      ) -> StoredAnswer | None:
    """The answer stored for ``interrupt_id`` of the thread's checkpoint ``checkpoint_seq``, if any."""
    key = answer_key(thread_id, checkpoint_seq, interrupt_id)
    found = await checkpointer.storage.read(key)
    return None if found is None else parse_answer(key, found[0], checkpointer.signing_key)


async def read_thread_answers(checkpointer: Checkpointer, thread_id: str) -> dict[str, StoredAnswer]:
    """The answers stored for the interrupts the thread waits on now, by interrupt id (none if it does not)."""
    record = await checkpointer.latest(thread_id)
    if record is None or not record.interrupts:
        return {}
    return await read_answers(checkpointer, record)
