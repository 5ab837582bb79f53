"""The inbox: every interrupt waiting on a human across a store, answered from the terminal, a web page
or code, and expiry (``expires_in=``/``on_expire=``) applied by a sweep.

``pending`` lists from the thread index alone; ``answer`` stores an answer once (the first wins) and,
given the app's ``build(thread_id)``, resumes the thread through the engine at once; otherwise a worker
(``statehitl worker``) or the application's next call applies it (``resume_answered(app, thread_id)``),
and ``unapplied`` lists the answers stored and not yet applied.
``sweep`` answers expired interrupts with their defaults, exactly once however many sweepers run.
See docs/inbox.md.
"""

from __future__ import annotations

from statehitl.checkpoint.records import StoredAnswer
from statehitl.inbox.apps import AppBuilder, apply_answered, aresume_answered, build_app, load_app, resume_answered
from statehitl.inbox.audit import AuditRow, athread_audit_trail, thread_audit_trail
from statehitl.inbox.listing import (
    PendingInterrupt,
    UnappliedAnswer,
    afind_pending,
    apending,
    aunapplied,
    find_pending,
    open_store,
    pending,
    unapplied,
)
from statehitl.inbox.service import Answered, SweepReport, aanswer, answer, asweep, sweep

__all__ = [
    "Answered",
    "AppBuilder",
    "AuditRow",
    "PendingInterrupt",
    "StoredAnswer",
    "SweepReport",
    "UnappliedAnswer",
    "aanswer",
    "afind_pending",
    "answer",
    "apending",
    "apply_answered",
    "aresume_answered",
    "asweep",
    "athread_audit_trail",
    "aunapplied",
    "build_app",
    "find_pending",
    "load_app",
    "open_store",
    "pending",
    "resume_answered",
    "sweep",
    "thread_audit_trail",
    "unapplied",
]
