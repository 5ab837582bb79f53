"""The inbox: every interrupt waiting on a human across a store, answered from the terminal, a web page
or code, and expiry (``expires_in=``/``on_expire=``) applied by a sweep.

``pending`` lists from the thread index alone; ``answer`` stores an answer once (the first wins) and,
given the app's ``build(thread_id)``, resumes the thread through the engine at once; an application
without the inbox in its process applies stored answers with ``resume_answered(app, thread_id)``.
``sweep`` answers expired interrupts with their defaults, exactly once however many sweepers run.
See docs/inbox.md.
"""

from __future__ import annotations

from statehitl.inbox.answers import StoredAnswer
from statehitl.inbox.apps import AppBuilder, aresume_answered, build_app, load_app, resume_answered
from statehitl.inbox.audit import AuditRow, athread_audit_trail, thread_audit_trail
from statehitl.inbox.listing import PendingInterrupt, afind_pending, apending, find_pending, open_store, pending
from statehitl.inbox.service import Answered, SweepReport, aanswer, answer, asweep, sweep

__all__ = [
    "Answered",
    "AppBuilder",
    "AuditRow",
    "PendingInterrupt",
    "StoredAnswer",
    "SweepReport",
    "aanswer",
    "afind_pending",
    "answer",
    "apending",
    "aresume_answered",
    "asweep",
    "athread_audit_trail",
    "build_app",
    "find_pending",
    "load_app",
    "open_store",
    "pending",
    "resume_answered",
    "sweep",
    "thread_audit_trail",
]
