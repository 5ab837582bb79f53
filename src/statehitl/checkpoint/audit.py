"""The audit trail of a thread: every answer applied to its interrupts, who gave it, what it did.

Stored beside the thread's index entry, ``index/<thread>/audit.<slot>.<n>``: ``slot`` is the slot of
the claim the answering resume won (zero-padded, so keys list in the order answers were applied) and
``n`` the answer's place among that resume's answers. Entries are created once and never rewritten, so:

- an answer is recorded exactly once: only the resume that won the claim on a slot writes that slot's
  entries, and a retry of the same write finds them already there;
- ``prune`` and compaction, which only touch ``threads/<thread>/``, leave the trail whole; only
  ``delete_thread`` removes it, with the thread's index.

Why next to the index entry rather than under a prefix of their own: every thread already has that
"directory", so an answer costs one more record in it, where a prefix of its own would cost a new log
file on the file store (a journal commit of its creation on the answer's forced write) and a new
partition, announced by a marker item, on DynamoDB.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from statehitl.checkpoint.codec import decode_model, encode
from statehitl.checkpoint.index import index_prefix
from statehitl.checkpoint.records import SCHEMA_VERSION
from statehitl.checkpoint.storage import ABSENT, Storage, read_prefix, validate_thread_id
from statehitl.errors import CheckpointConflict

__all__ = ["ANSWERS_PREFIX", "AuditEntry", "answers_prefix", "audit_prefix", "read_audit", "write_audit"]


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
    """Record ``entries``, the answers applied by the resume that claimed ``slot``; create-once each."""
    prefix = audit_prefix(thread_id)
    for n, entry in enumerate(entries):
        try:
            await storage.write(f"{prefix}{slot:012d}.{n:03d}", encode(entry, signing_key), expect=ABSENT)
        except CheckpointConflict:
            continue  # written already (this resume, retried): an answer is recorded once


async def read_audit(storage: Storage, thread_id: str, signing_key: bytes | None) -> list[AuditEntry]:
    """The thread's audit trail, oldest answer first."""
    found = await read_prefix(storage, audit_prefix(thread_id))
    return [decode_model(AuditEntry, f"audit record {key!r}", data, signing_key) for key, (data, _) in found.items()]
