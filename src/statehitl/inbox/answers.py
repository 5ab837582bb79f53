"""Stored answers: an answer given in the inbox, kept durably until the application applies it.

Resuming a thread needs the application's code, which the inbox may not have. So an answer is first
written to its own create-once key, ``answers/<thread>/<interrupt_id>``: of two reviewers (or a reviewer
and an expiry sweep) the first write wins and the second gets ``AlreadyAnsweredError``, before anything
runs. The record stays after the answer is applied: it is who answered what and when, which the
thread's checkpoints do not keep.
"""

from __future__ import annotations

import time
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from statehitl._json import require_json
from statehitl.checkpoint.audit import ANSWERS_PREFIX, answers_prefix
from statehitl.checkpoint.codec import decode_model, encode
from statehitl.checkpoint.engine import Checkpointer
from statehitl.checkpoint.records import SCHEMA_VERSION
from statehitl.checkpoint.storage import ABSENT, read_prefix
from statehitl.errors import AlreadyAnsweredError, CheckpointConflict, CheckpointCorruptError, InterruptReasonError
from statehitl.inbox.text import when_text

__all__ = ["StoredAnswer", "answer_key", "read_answer", "read_answers", "record_answer", "stored_answer_keys"]


class StoredAnswer(BaseModel):
    """One answer to one interrupt, as the inbox (or an expiry sweep) recorded it."""

    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    kind: Literal["answer"] = "answer"
    schema_version: int = SCHEMA_VERSION
    thread_id: str
    interrupt_id: str
    name: str
    response: Any
    responder: str | None = None
    answered_at: float
    via: Literal["inbox", "expiry"] = "inbox"
    """``expiry``: a sweep applied the interrupt's ``on_expire`` default once its deadline had passed."""


def answer_key(thread_id: str, interrupt_id: str) -> str:
    if not interrupt_id or "/" in interrupt_id:
        raise ValueError(f"{interrupt_id!r} is not an interrupt id")
    return f"{answers_prefix(thread_id)}{interrupt_id}"


async def record_answer(checkpointer: Checkpointer, thread_id: str, interrupt_id: str, name: str, response: Any,
                        *, responder: str | None = None, via: Literal["inbox", "expiry"] = "inbox") -> StoredAnswer:
    """Store the answer once; ``AlreadyAnsweredError`` if someone answered this interrupt first."""
    require_json(response, f"the response to interrupt {name!r}", InterruptReasonError)
    record = StoredAnswer(thread_id=thread_id, interrupt_id=interrupt_id, name=name, response=response,
                          responder=responder, answered_at=time.time(), via=via)
    key = answer_key(thread_id, interrupt_id)
    try:
        data = encode(record, checkpointer.signing_key, place=key)
        await checkpointer.storage.write(key, data, expect=ABSENT, durable=True)
    except CheckpointConflict:
        first = await read_answer(checkpointer, thread_id, interrupt_id)
        raise AlreadyAnsweredError(already_answered(name, interrupt_id, first)) from None
    return record


def already_answered(name: str, interrupt_id: str, first: StoredAnswer | None) -> str:
    """The message a reviewer who lost the race sees: who won, and when."""
    if first is None:
        return f"interrupt {name!r} (id {interrupt_id}) was already answered"
    who = "its expiry default" if first.via == "expiry" else (first.responder or "someone")
    when = when_text(first.answered_at)
    return f"interrupt {name!r} (id {interrupt_id}) was already answered by {who} at {when}; the first answer wins"


async def read_answer(checkpointer: Checkpointer, thread_id: str, interrupt_id: str) -> StoredAnswer | None:
    key = answer_key(thread_id, interrupt_id)
    found = await checkpointer.storage.read(key)
    return None if found is None else _parse(checkpointer, key, found[0])


async def read_answers(checkpointer: Checkpointer, thread_id: str) -> dict[str, StoredAnswer]:
    """Every answer stored for the thread, by interrupt id (applied or not)."""
    found = await read_prefix(checkpointer.storage, answers_prefix(thread_id))
    records = (_parse(checkpointer, key, data) for key, (data, _) in found.items())
    return {record.interrupt_id: record for record in records}


async def stored_answer_keys(checkpointer: Checkpointer) -> set[tuple[str, str]]:
    """``(thread, interrupt_id)`` of every stored answer in the store: one listing, no reads."""
    keys = set()
    for key in await checkpointer.storage.list(ANSWERS_PREFIX):
        parts = key[len(ANSWERS_PREFIX):].split("/")
        if len(parts) == 2:
            keys.add((parts[0], parts[1]))
    return keys


def _parse(checkpointer: Checkpointer, key: str, data: bytes) -> StoredAnswer:
    """The answer stored under ``key``, which must be the answer to that thread's interrupt: a record copied
    from another interrupt's key (another thread's approval) is refused, signed or not."""
    what = f"answer record {key!r}"
    answer = decode_model(StoredAnswer, what, data, checkpointer.signing_key, place=key)
    if answer_key(answer.thread_id, answer.interrupt_id) != key:
        raise CheckpointCorruptError(f"{what} is the answer to interrupt {answer.interrupt_id} of thread "
                                     f"{answer.thread_id!r}, not to the one its key names (copied here, or edited)")
    return answer
