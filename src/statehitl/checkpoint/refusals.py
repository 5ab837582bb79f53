"""Refused answers, kept for the audit trail: an answer from someone an interrupt's ``responders`` do not name,
or one stored by a door that could not check its type and refused by the handler's type on re-run.

The check runs inside the create-once write of the answer (``answer_records.record_answer``), before
the answer is stored, so a refused answer never binds: the interrupt still waits, and a later answer
from someone allowed wins. The refusal itself is stored, so the trail says who tried, what, when and
through which door (``Checkpointer.audit``, outcome ``refused``).

Stored as ``threads/<thread>/r.<checkpoint>.<interrupt>.<nonce>``, create-once, one record per refusal
(the nonce, the clock in nanoseconds then random bytes, keeps two refusals of one interrupt apart and in
order), and durably: a refusal is evidence, written
before the caller hears of it. In the thread's own keys for the reasons answers are (one log on the
file store, one partition on DynamoDB, gone with ``delete_thread``); the name starts with a letter,
after every slot (digits), so finding the thread's head by listing still reads a slot first, and the
engine leaves these records out of the thread's checkpoints and claims (``is_refusal_key``). ``prune``
deletes only slots, so refusals outlive the checkpoints they were about, like the rest of the trail.
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping, Sequence
from typing import Any

from statehitl.checkpoint.codec import decode_model, encode
from statehitl.checkpoint.record_parts import InterruptRecord
from statehitl.checkpoint.records import AuditEntry, CheckpointRecord, RefusedAnswer, Via
from statehitl.checkpoint.store_base import RecordStore
from statehitl.errors import CheckpointConflict, CheckpointCorruptError, ResponderNotAllowedError, StorageError
from statehitl.responders import bare_groups, describe

REFUSAL_MARK = "r."
"""How a refused answer's name in its thread starts (slots are digits, answers ``a.``)."""


def refusal_key(thread_id: str, checkpoint_seq: int, interrupt_id: str, nonce: str) -> str:
    if not interrupt_id or "/" in interrupt_id:
        raise ValueError(f"{interrupt_id!r} is not an interrupt id")
    return f"threads/{thread_id}/{REFUSAL_MARK}{checkpoint_seq:012d}.{interrupt_id}.{nonce}"


def is_refusal_key(key: str) -> bool:
    """Whether ``key`` (under ``threads/<thread>/``) is a refused answer rather than a slot or an answer."""
    return key.rsplit("/", 1)[-1].startswith(REFUSAL_MARK)


def parse_refusal(key: str, data: bytes, signing_key: bytes | None) -> RefusedAnswer:
    """The refusal stored under ``key``, checked to be about the thread, checkpoint and interrupt its key
    names: one copied from another thread's keys is refused, signed (the signature covers the key) or not."""
    what = f"refused answer record {key!r}"
    refused = decode_model(RefusedAnswer, what, data, signing_key, place=key)
    nonce = key.rsplit(".", 1)[-1]
    if not refused.checkpoint_id.isdigit() or refusal_key(refused.thread_id, int(refused.checkpoint_id),
                                                          refused.interrupt.id, nonce) != key:
        raise CheckpointCorruptError(f"{what} is a refusal on interrupt {refused.interrupt.id} of thread "
                                     f"{refused.thread_id!r}, not the one its key names (copied here, or edited)")
    return refused


def not_allowed_message(thread_id: str, interrupt: InterruptRecord, responder: str | None,
                        groups: Sequence[str]) -> str:
    """What a refused responder is told: who may answer, who they are, and that nothing was stored."""
    allowed = describe(interrupt.responders or [])
    if responder is None:
        who = "an answer that names no responder"
        fix = ("say who answers (\"responder\" in the interruptResponse block, --as NAME in the terminal, "
               "responder= in code, or an inbox page that knows its users)")
    else:
        member = f" (groups: {', '.join(groups)})" if groups else " (in no group)"
        who = f"{responder}{member}"
        fix = "answer as someone allowed"
    return (f"thread {thread_id!r}: interrupt {interrupt.name!r} (id {interrupt.id}) may be answered only by "
            f"{allowed}; {who} may not: the answer was refused and not stored (the refusal is in the thread's "
            f"audit trail), and the interrupt still waits; {fix}")


async def refuse(checkpointer: RecordStore, record: CheckpointRecord, interrupt: InterruptRecord, response: Any, *,
                 responder: str | None, groups: Sequence[str], comment: str | None, via: Via
                 ) -> ResponderNotAllowedError:
    """Store the refusal of ``response`` to ``interrupt`` of the waiting checkpoint ``record``, durably, and
    return the error to raise. Should the store fail, the answer is refused all the same (it was never
    allowed), and the error says the refusal is missing from the trail."""
    thread = record.thread_id
    said = bare_groups(groups)
    message = not_allowed_message(thread, interrupt, responder, said)
    kept = await keep_refusal(checkpointer, thread, record.seq, interrupt, response, responder=responder, groups=said,
                              comment=comment, via=via)
    if kept is not None:
        message = f"{message} (the refusal could not be kept in the audit trail: {kept})"
    error = ResponderNotAllowedError(message, thread_id=thread, interrupt_id=interrupt.id, responder=responder,
                                     groups=said, responders=tuple(interrupt.responders or ()))
    error.__cause__ = kept
    return error


async def keep_refusal(checkpointer: RecordStore, thread_id: str, checkpoint_seq: int, interrupt: InterruptRecord,
                       response: Any, *, responder: str | None, groups: Sequence[str] = (), comment: str | None,
                       via: Via, why: str | None = None) -> StorageError | None:
    """Store a refusal of ``response`` to ``interrupt`` of checkpoint ``checkpoint_seq``, create-once and
    durably; the store's error if it could not (the refusal stands, only its record is missing)."""
    # The clock first, so that two refusals within one millisecond (what refused_at keeps) still read in
    # order; then random, so that two writers never meet on one key.
    key = refusal_key(thread_id, checkpoint_seq, interrupt.id, f"{time.time_ns():x}{os.urandom(6).hex()}")
    refused = RefusedAnswer(thread_id=thread_id, checkpoint_id=f"{checkpoint_seq:012d}", interrupt=interrupt,
                            response=response, responder=responder, groups=list(groups), comment=comment,
                            refused_at=round(time.time(), 3), via=via, why=why)
    try:
        await checkpointer.create(key, encode(refused, checkpointer.signing_key, place=key), durable=True)
    except CheckpointConflict:
        pass  # eight random bytes met an earlier refusal's: that one stands in the trail
    except StorageError as exc:
        return exc
    return None


def refusal_entries(found: Mapping[str, tuple[bytes, str]], thread_id: str, signing_key: bytes | None
                    ) -> list[tuple[int, AuditEntry]]:
    """The audit entries of the refusals among ``found`` (a read of the thread's keys), each with the
    sequence number of the checkpoint whose interrupt it was about, oldest first."""
    entries = []
    for key, (data, _) in sorted(found.items()):
        if not is_refusal_key(key):
            continue
        refused = parse_refusal(key, data, signing_key)  # its key is this thread's: so is the refusal
        asked = refused.interrupt
        entries.append((int(refused.checkpoint_id), AuditEntry(
            thread_id=thread_id, interrupt_id=asked.id, name=asked.name, reason=asked.reason,
            response=refused.response, responder=refused.responder, comment=refused.comment, at=refused.refused_at,
            outcome="refused", node=asked.node, source=asked.source, digest=asked.digest,
            checkpoint_id=refused.checkpoint_id, via=refused.via, why=refused.why)))
    entries.sort(key=lambda found_entry: (found_entry[0], found_entry[1].at))  # stable: keys break ties
    return entries
