"""The audit trail of a thread: every answer applied to its interrupts, who gave it, what it did.

Stored beside the thread's index entry, one record per answering resume, ``index/<thread>/audit.<slot>``:
``slot`` is the slot of the claim the resume won (zero-padded, so keys list in the order answers were
applied), and the record holds every answer that resume applied, in order: a resume that answers
five interrupts costs one durable write, not five. (Trails written before this format have one record
per answer, ``audit.<slot>.<n>``; they are read alike.) Records are created once and never rewritten, so:

- an answer is recorded exactly once: only the resume that won the claim on a slot writes that slot's
  record, and a retry of the same write finds it already there;
- ``prune`` and compaction, which only touch ``threads/<thread>/``, leave the trail whole; only
  ``delete_thread`` removes it, with the thread's index.

Why next to the index entry rather than under a prefix of their own: every thread already has that
"directory", so an answer costs one more record in it, where a prefix of its own would cost a new log
file on the file store (a journal commit of its creation on the answer's forced write) and a new
partition, announced by a marker item, on DynamoDB.
"""

from __future__ import annotations

import contextlib
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from statehitl.checkpoint.codec import decode_model, encode
from statehitl.checkpoint.index import index_prefix
from statehitl.checkpoint.records import SCHEMA_VERSION
from statehitl.checkpoint.storage import ABSENT, Storage, read_prefix, validate_thread_id
from statehitl.errors import CheckpointConflict

__all__ = ["ANSWERS_PREFIX", "AuditEntry", "ResumeAudit", "answers_prefix", "audit_prefix", "read_audit",
           "write_audit"]


class AuditEntry(BaseModel):
    """One applied answer: which interrupt (its id, name and the reason the human was shown), the
    response, who gave it and their comment, when (epoch seconds), and what it did: ``applied``,
    ``rejected`` (a ``Reject``) or ``edited`` (an ``Edit``); a default applied by an expiry sweep has
    ``responder="expiry"``.

    ``checkpoint_id`` is the checkpoint whose interrupt was answered; ``digest`` the tool call an
    answer about a tool call was given for.
    """

    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    kind: Literal["audit"] = "audit"
    schema_version: int = SCHEMA_VERSION
    thread_id: str
    interrupt_id: str
    name: str
    reason: Any = None
    response: Any = None
    responder: str | None = None
    comment: str | None = None
    at: float
    outcome: Literal["applied", "rejected", "edited"] = "applied"
    node: str = ""
    source: str = "node"
    digest: str | None = None
    checkpoint_id: str | None = None


class ResumeAudit(BaseModel):
    """What one resume applied: its answers' entries, in order (the record at ``audit.<slot>``)."""

    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    kind: Literal["resume_audit"] = "resume_audit"
    schema_version: int = SCHEMA_VERSION
    entries: list[AuditEntry]


def audit_prefix(thread_id: str) -> str:
    """Where a thread's audit entries live: not under ``threads/``, so pruning never reaches them."""
    return f"{index_prefix(thread_id)}audit."


ANSWERS_PREFIX = "answers/"
"""Where the inbox keeps answers waiting to be applied (``statehitl.inbox.answers``)."""


def answers_prefix(thread_id: str) -> str:
    """A thread's stored inbox answers: deleted with the thread (``Checkpointer.delete_thread``)."""
    return f"{ANSWERS_PREFIX}{validate_thread_id(thread_id)}/"


async def write_audit(storage: Storage, thread_id: str, slot: int, entries: list[AuditEntry],
                      signing_key: bytes | None) -> None:
    """Record ``entries``, the answers applied by the resume that claimed ``slot``, in one create-once record."""
    if not entries:
        return
    with contextlib.suppress(CheckpointConflict):  # written already (this resume, retried): recorded once
        await storage.write(f"{audit_prefix(thread_id)}{slot:012d}", encode(ResumeAudit(entries=entries), signing_key),
                            expect=ABSENT)


async def read_audit(storage: Storage, thread_id: str, signing_key: bytes | None) -> list[AuditEntry]:
    """The thread's audit trail, oldest answer first."""
    prefix = audit_prefix(thread_id)
    trail: list[AuditEntry] = []
    for key, (data, _) in (await read_prefix(storage, prefix)).items():
        what = f"audit record {key!r}"
        if "." in key[len(prefix):]:  # audit.<slot>.<n>: one answer, as trails were first written
            trail.append(decode_model(AuditEntry, what, data, signing_key))
        else:
            trail.extend(decode_model(ResumeAudit, what, data, signing_key).entries)
    return trail
