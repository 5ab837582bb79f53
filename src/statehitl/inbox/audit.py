"""A thread's audit trail as the inbox shows it: the engine's trail, plus what is still on its way.

The engine records every applied answer (``Checkpointer.audit``: who, what, when, what it did). The
inbox adds the two states an answer passes through before that: ``pending`` (the thread waits, nobody
answered) and ``answered, not yet applied`` (an answer stored through any door, waiting for a
resume: the application's, a worker's, a sweep with ``--app``). Reads the thread's index entry, its
audit trail (which its checkpoints carry, one bulk read on stores that have one) and its stored answers.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from statehitl.checkpoint.engine import Checkpointer
from statehitl.checkpoint.records import Via
from statehitl.inbox.answers import read_thread_answers
from statehitl.inbox.listing import open_store

AuditOutcome = Literal["pending", "answered, not yet applied", "applied", "rejected", "edited", "unknown",
                       "retried", "refused", "failed"]


@dataclass(frozen=True, slots=True)
class AuditRow:
    """One interrupt of the thread: what it asked, and what became of it (``at``: when it was answered,
    or, while pending, when the thread stopped on it)."""

    interrupt_id: str
    name: str
    reason: Any
    outcome: AuditOutcome
    at: float
    response: Any = None
    responder: str | None = None
    comment: str | None = None
    via: Via | None = None


async def athread_audit_trail(store: str | Checkpointer, thread_id: str) -> list[AuditRow]:
    """The thread's answered interrupts, oldest first, then those still waiting."""
    checkpointer = open_store(store)
    stored = await read_thread_answers(checkpointer, thread_id)
    rows = [AuditRow(e.interrupt_id, e.name, e.reason, e.outcome, e.at, e.response, e.responder,
                     e.comment, e.via)
            for e in await checkpointer.audit(thread_id)]
    applied = {row.interrupt_id for row in rows if row.outcome in ("applied", "rejected", "edited")}
    entry = await checkpointer.thread_info(thread_id)
    if entry is not None and entry.status == "interrupted":
        for i in entry.interrupts:
            if i.id in applied:
                continue
            answer = stored.get(i.id)
            if answer is None:
                rows.append(AuditRow(i.id, i.name, i.reason, "pending", entry.updated_at))
            else:
                rows.append(AuditRow(i.id, i.name, i.reason, "answered, not yet applied", answer.answered_at,
                                     answer.response, answer.responder, via=answer.via))
    return rows


def thread_audit_trail(store: str | Checkpointer, thread_id: str) -> list[AuditRow]:
    """Sync ``athread_audit_trail``."""
    from statehitl._sync import run_sync

    return run_sync(athread_audit_trail(store, thread_id))

