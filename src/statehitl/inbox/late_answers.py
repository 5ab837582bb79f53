"""A reviewer who answers by id after the thread went on is told who answered first, not that the id is unknown.

The inbox finds an interrupt by id in the thread index, which names only what threads wait on now. When
nothing there matches, the doors that take ids (``inbox.answer``, the page and its API, the CLI's
``answer`` and ``show``) look for the pointer the first answer's door wrote
(``statehitl.checkpoint.answer_pointers``): a prefix listing of the id, so the miss costs one listing
and a read or two, never a walk over the threads. Found, the late answer is refused as the first answer
binds: ``AlreadyAnsweredError`` naming who answered, how and when, or, for an interrupt that names who may
answer and a reviewer who is not one of them, ``ResponderNotAllowedError`` (audited), which says nothing
of the earlier answer, as the same reviewer would have been told while it was pending.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from statehitl.checkpoint.answer_pointers import POINTER_PREFIX, AnswerPointer, pointer_key
from statehitl.checkpoint.answer_records import already_answered, answer_key, parse_answer
from statehitl.checkpoint.codec import decode_model
from statehitl.checkpoint.records import InterruptRecord, StoredAnswer, Via
from statehitl.checkpoint.refusals import refuse_at
from statehitl.checkpoint.storage import read_prefix, validate_prefix
from statehitl.checkpoint.store_base import RecordStore
from statehitl.errors import (
    AlreadyAnsweredError,
    CheckpointCorruptError,
    InterruptResponseError,
    InvalidThreadIdError,
    ResponderNotAllowedError,
    UnknownInboxItemError,
)
from statehitl.responders import may_answer
from statehitl.values import encode_value

__all__ = ["AnsweredBefore", "already_answered_error", "answered_before", "find_answered", "late_answer_error"]


@dataclass(frozen=True, slots=True)
class AnsweredBefore:
    """An interrupt no longer pending whose binding answer is stored: where it was asked, and that answer."""

    pointer: AnswerPointer
    answer: StoredAnswer

    @property
    def thread_id(self) -> str:
        return self.pointer.thread_id

    @property
    def interrupt(self) -> InterruptRecord:
        return self.pointer.interrupt

    @property
    def response_schema(self) -> dict[str, Any] | None:
        """The schema the interrupt asked its answer in (a page reads a late form with it, as it would have)."""
        return self.pointer.interrupt.response_schema

    @property
    def responders(self) -> list[str] | None:
        return self.pointer.interrupt.responders


async def answered_before(checkpointer: RecordStore, wanted: str) -> list[AnsweredBefore]:
    """The interrupts whose id is ``wanted`` or starts with it that were answered through a door taking ids,
    each with the answer of the newest checkpoint that asked it (a retried step asks again). Empty if none,
    or if ``wanted`` cannot start an id."""
    prefix = f"{POINTER_PREFIX}{wanted}"
    try:
        if not wanted or "/" in wanted:
            return []
        validate_prefix(prefix)
    except InvalidThreadIdError:
        return []
    newest: dict[str, AnsweredBefore] = {}
    for key, (data, _) in (await read_prefix(checkpointer.storage, prefix)).items():
        pointer = _pointer(checkpointer, key, data)
        if pointer is None:
            continue
        held = newest.get(pointer.interrupt.id)
        if held is not None and held.pointer.checkpoint_seq > pointer.checkpoint_seq:
            continue
        answer = await _answer_at(checkpointer, pointer)
        if answer is not None:  # no answer there: its write was refused, or the answer withdrawn
            newest[pointer.interrupt.id] = AnsweredBefore(pointer, answer)
    return [newest[iid] for iid in sorted(newest)]


async def find_answered(checkpointer: RecordStore, wanted: str) -> AnsweredBefore | None:
    """The one interrupt ``wanted`` names among those answered before (its exact id, else the only one
    starting with it); None for none, ``UnknownInboxItemError`` if it starts several."""
    found = await answered_before(checkpointer, wanted)
    exact = [f for f in found if f.interrupt.id == wanted]
    matches = exact or found
    if len(matches) > 1:
        raise UnknownInboxItemError(f"interrupt id {wanted!r} is ambiguous: it starts "
                                    f"{', '.join(f.interrupt.id for f in matches)} (all answered); give more of it")
    return matches[0] if matches else None


def already_answered_error(found: AnsweredBefore) -> AlreadyAnsweredError:
    """What a late answer gets: the first answer, and that the thread went on with it."""
    message = already_answered(found.interrupt.name, found.interrupt.id, found.answer)
    return AlreadyAnsweredError(f"{message} (thread {found.thread_id!r} has gone on with it)")


async def late_answer_error(checkpointer: RecordStore, found: AnsweredBefore, response: Any, *,
                            responder: str | None, groups: Sequence[str] = (), comment: str | None = None,
                            via: Via = "inbox") -> AlreadyAnsweredError | ResponderNotAllowedError:
    """The error for ``response`` given late to ``found``, checked as the answer's write checks a pending one:
    who answers first (a refusal is kept in the audit trail and says nothing of the earlier answer; a sweep's
    default is the interrupt author's own), then that the first answer binds."""
    interrupt = found.interrupt
    if via != "expiry" and interrupt.responders and not may_answer(interrupt.responders, responder, groups):
        response = encode_value(response, f"the response to interrupt {interrupt.id}", error=InterruptResponseError)
        return await refuse_at(checkpointer, found.thread_id, found.pointer.checkpoint_seq, interrupt, response,
                               responder=responder, groups=groups, comment=comment, via=via)
    return already_answered_error(found)


def _pointer(checkpointer: RecordStore, key: str, data: bytes) -> AnswerPointer | None:
    """The pointer stored under ``key``; None for one that cannot be read or names another key (copied there):
    a bad pointer only costs a late reviewer the better message."""
    try:
        pointer = decode_model(AnswerPointer, f"answer pointer {key!r}", data, checkpointer.signing_key, place=key)
    except CheckpointCorruptError:
        return None
    return pointer if pointer_key(pointer.interrupt.id, pointer.thread_id, pointer.checkpoint_seq) == key else None


async def _answer_at(checkpointer: RecordStore, pointer: AnswerPointer) -> StoredAnswer | None:
    key = answer_key(pointer.thread_id, pointer.checkpoint_seq, pointer.interrupt.id)
    found = await checkpointer.storage.read(key)
    return None if found is None else parse_answer(key, found[0], checkpointer.signing_key)
