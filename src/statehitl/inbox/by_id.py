"""Finding one interrupt by its id without listing the store: follow the pointer from the id to its thread
(``checkpoint.interrupt_index``) and read that thread's index entry and answers.

What a reviewer answering ``v2:dc33…`` costs then does not grow with how many other threads wait: one
listing of the pointers sharing the id's first two digits, a read of each match and of its thread's
entry. Whatever the pointers cannot settle (no pointer: a thread that stopped before pointers were
written) is left to the caller's full listing, so the answer is the same either way, only slower.
"""

from __future__ import annotations

from statehitl.checkpoint.answer_records import ANSWER_MARK, parse_answer
from statehitl.checkpoint.engine import Checkpointer
from statehitl.checkpoint.interrupt_index import pointed_threads
from statehitl.checkpoint.record_parts import InterruptRecord
from statehitl.checkpoint.records import StoredAnswer, ThreadIndex
from statehitl.errors import CheckpointCorruptError


class Pointed:
    """What the pointers matching an id (or id prefix) led to: interrupts waiting unanswered, each with its
    thread's entry, and answers already given to the others (first answer by interrupt id)."""

    def __init__(self) -> None:
        self.waiting: list[tuple[ThreadIndex, InterruptRecord]] = []
        self.answered: dict[str, StoredAnswer] = {}


async def follow_pointers(checkpointer: Checkpointer, wanted: str) -> Pointed:
    """Every interrupt whose id is ``wanted`` (or starts with it) that a pointer names: waiting on a human
    in its thread's index entry, or answered there (now or at a checkpoint the thread has moved past)."""
    pointed = Pointed()
    for interrupt_id, thread_id in sorted((await pointed_threads(checkpointer.storage, wanted)).items()):
        try:
            entry = await checkpointer.thread_info(thread_id)
        except CheckpointCorruptError:
            continue  # a damaged entry: the full listing reports it
        if entry is not None and entry.status == "interrupted":
            asked = next((i for i in entry.interrupts if i.id == interrupt_id), None)
            if asked is not None and not any(m.interrupt_id == interrupt_id for m in entry.answered):
                pointed.waiting.append((entry, asked))
                continue
        first = await _first_answer(checkpointer, thread_id, interrupt_id)
        if first is not None:
            pointed.answered[interrupt_id] = first
    return pointed


async def _first_answer(checkpointer: Checkpointer, thread_id: str, interrupt_id: str) -> StoredAnswer | None:
    """The binding answer stored for ``interrupt_id`` in the thread, at whichever checkpoint asked it (the
    newest, if a replay asked it again): one listing of the thread's records, one read."""
    keys = [key for key in await checkpointer.storage.list(f"threads/{thread_id}/{ANSWER_MARK}")
            if key.endswith(f".{interrupt_id}")]
    for key in reversed(keys):
        found = await checkpointer.storage.read(key)
        if found is not None:
            try:
                return parse_answer(key, found[0], checkpointer.signing_key)
            except CheckpointCorruptError:
                continue
    return None
