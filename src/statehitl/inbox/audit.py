"""The thread's audit trail as its records tell it today: every interrupt it raised, and its answer.

Read from the thread's checkpoint history (each interrupt it stopped on, with its reason and when) and
the answers the inbox stored (who answered what, when, by hand or by expiry). An interrupt answered
directly through the app (``invoke([...interruptResponse...])``) shows as answered, without the response,
which its checkpoints do not keep.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from statehitl.checkpoint.engine import Checkpointer
from statehitl.inbox.answers import read_answers
from statehitl.inbox.listing import open_store

__all__ = ["AuditRow", "athread_audit_trail", "thread_audit_trail"]

Outcome = Literal["pending", "answered, not yet applied", "applied", "answered outside the inbox"]


@dataclass(frozen=True, slots=True)
class AuditRow:
    """One interrupt of the thread: what it asked, when, and what became of it."""

    interrupt_id: str
    name: str
    reason: Any
    raised_at: float
    outcome: Outcome
    response: Any = None
    responder: str | None = None
    answered_at: float | None = None
    via: str | None = None


async def athread_audit_trail(store: str | Checkpointer, thread_id: str) -> list[AuditRow]:
    """Every interrupt the thread raised, oldest first, with its answer where one is known."""
    checkpointer = open_store(store)
    history = await checkpointer.history(thread_id)  # newest first
    stored = await read_answers(checkpointer, thread_id)
    waiting = {i.id for i in history[0].interrupts} if history and history[0].status == "interrupted" else set()
    raised: dict[str, tuple[Any, float]] = {}
    for record in reversed(history):
        for interrupt in record.interrupts:
            if interrupt.id not in raised:
                raised[interrupt.id] = (interrupt, record.created_at)
    rows = []
    for iid, (interrupt, at) in raised.items():
        answer = stored.get(iid)
        outcome: Outcome
        if iid in waiting:
            outcome = "pending" if answer is None else "answered, not yet applied"
        else:
            outcome = "applied" if answer is not None else "answered outside the inbox"
        rows.append(AuditRow(iid, interrupt.name, interrupt.reason, at, outcome,
                             response=None if answer is None else answer.response,
                             responder=None if answer is None else answer.responder,
                             answered_at=None if answer is None else answer.answered_at,
                             via=None if answer is None else answer.via))
    return rows


def thread_audit_trail(store: str | Checkpointer, thread_id: str) -> list[AuditRow]:
    """Sync ``athread_audit_trail``."""
    from statehitl._sync import run_sync

    return run_sync(athread_audit_trail(store, thread_id))
