"""The audit trail of a thread: every answer applied to its interrupts, who gave it, what it did.

Where it is stored:

- With the step. The checkpoint a resume writes first after applying its answers carries them
  (``CheckpointRecord.answered``, ``AnswerRecord``: what the interrupt does not already say), in
  that checkpoint's one write; reading the trail joins each with the interrupt it answered, from the
  checkpoint that asked. So the trail costs no write of its own (on the file store no second forced
  write per answering resume, on S3 and DynamoDB no second request). It is recorded exactly when the
  step is: only the resume that won the thread's claim stores that checkpoint, an answer refused on
  re-run stores none, and a crash that loses the step loses its answers with it, while the thread
  still waits on the interrupt.
- Beside the thread's index entry, ``index/<thread>/audit.<seq>``: a ``ResumeAudit`` holding the whole
  entries of checkpoint ``seq``, written by ``prune`` before it deletes that checkpoint or the one
  whose interrupts it answered, so the trail outlives the records it was stored in. Created once (a
  retried prune finds it there); only ``delete_thread`` removes it, with the index. Trails written
  before the answers moved into the checkpoints are read from there too: ``audit.<claim slot>`` (one
  record per resume) and ``audit.<slot>.<n>`` (one per answer). Slots and sequence numbers count in
  one series, so the trail reads in order.
- In the thread's keys, ``threads/<thread>/r.<checkpoint>.<interrupt>.<nonce>``: an answer refused because
  its responder is not among the interrupt's ``responders`` (``refusals.py``), outcome ``refused``. It
  never bound, so no step carries it; it is kept by itself, written before the refusal is reported.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping, Sequence
from typing import Literal

from pydantic import BaseModel, ConfigDict

from statehitl.checkpoint.codec import decode_model, encode
from statehitl.checkpoint.index import index_prefix
from statehitl.checkpoint.records import SCHEMA_VERSION, AuditEntry, ClaimRecord, StoredCheckpoint
from statehitl.checkpoint.storage import ABSENT, Storage, read_prefix
from statehitl.errors import CheckpointConflict, CheckpointCorruptError


class ResumeAudit(BaseModel):
    """The entries of one checkpoint (or, as first stored, of one resume's claim), kept beside the index."""

    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    kind: Literal["resume_audit"] = "resume_audit"
    schema_version: int = SCHEMA_VERSION
    entries: list[AuditEntry]


def audit_prefix(thread_id: str) -> str:
    """Where a thread's audit entries live: not under ``threads/``, so pruning never reaches them."""
    return f"{index_prefix(thread_id)}audit."


def whole_entries(record: StoredCheckpoint | ClaimRecord, checkpoints: Mapping[int, StoredCheckpoint]
                  ) -> list[AuditEntry]:
    """``record``'s answers as audit entries: each joined with the interrupt it answered, which the
    checkpoint it names lists (among ``checkpoints``). An interrupt no longer there (its checkpoint
    deleted by a version of ``prune`` that did not keep entries) leaves its name empty."""
    entries = []
    for answer in record.answered:
        source = checkpoints.get(int(answer.checkpoint_id)) if answer.checkpoint_id.isdigit() else None
        asked = next((i for i in source.interrupts if i.id == answer.interrupt_id), None) if source else None
        shown = {} if asked is None else {"name": asked.name, "reason": asked.reason, "node": asked.node,
                                          "source": asked.source, "digest": asked.digest}
        entries.append(AuditEntry(**{"name": "", **shown}, thread_id=record.thread_id, **answer.model_dump()))
    return entries


async def keep_audit(storage: Storage, thread_id: str, checkpoints: Mapping[int, StoredCheckpoint],
                     deleted: set[int], signing_key: bytes | None) -> None:
    """Before ``prune`` deletes the checkpoints numbered ``deleted``: store beside the index the answers
    of every checkpoint that goes, or whose answered interrupts go, whole, one create-once, durable
    record per checkpoint."""
    prefix = audit_prefix(thread_id)
    for seq, record in sorted(checkpoints.items()):
        sources = {int(a.checkpoint_id) for a in record.answered if a.checkpoint_id.isdigit()}
        if record.answered and (seq in deleted or sources & deleted):
            entries = whole_entries(record, checkpoints)
            key = f"{prefix}{seq:012d}"
            with contextlib.suppress(CheckpointConflict):  # kept already (a prune retried)
                await storage.write(key, encode(ResumeAudit(entries=entries), signing_key, place=key), expect=ABSENT)


def claim_entries(claim: ClaimRecord, after: ClaimRecord | None, checkpoints: Mapping[int, StoredCheckpoint]
                  ) -> list[AuditEntry]:
    """What ``claim`` adds to the trail that no checkpoint carries: the answers its run acted on when no
    checkpoint records them (outcome ``unknown``) unless ``after``, the claim in the next slot, says the
    run did nothing; or a human's go-ahead to retry (``retried``)."""
    if claim.settles == "retry":
        return [AuditEntry(thread_id=claim.thread_id, interrupt_id="", name="", responder=claim.owner or None,
                           comment=claim.comment, at=claim.created_at, outcome="retried",
                           checkpoint_id=f"{claim.parent_seq:012d}")]
    if not claim.acting or (after is not None and after.settles == "released"):  # released: nothing was done
        return []
    recorded = {(a.interrupt_id, a.at) for record in checkpoints.values() if record.seq > claim.seq
                for a in record.answered}
    lost = [a for a in claim.answered if (a.interrupt_id, a.at) not in recorded]
    if not lost:
        return []
    unknown = claim.model_copy(update={"answered": [a.model_copy(update={"outcome": "unknown"}) for a in lost]})
    return whole_entries(unknown, checkpoints)


async def read_audit(storage: Storage, thread_id: str, checkpoints: Mapping[int, StoredCheckpoint],
                     signing_key: bytes | None, *, claims: Mapping[int, ClaimRecord] | None = None,
                     refused: Sequence[tuple[int, AuditEntry]] = ()) -> list[AuditEntry]:
    """The thread's audit trail, oldest answer first: what its ``checkpoints`` carry, and what was kept
    beside its index (which, for a checkpoint that has both, is the whole form of the same answers); from
    its ``claims``, answers acted on with no recorded outcome and the go-aheads to retry them; and the
    ``refused`` answers, each with the checkpoint whose interrupt it was about (``refusals.py``), placed
    after what that checkpoint carries and before what came after it."""
    prefix = audit_prefix(thread_id)
    by_slot: dict[tuple[int, int], list[AuditEntry]] = {}
    for key, (data, _) in (await read_prefix(storage, prefix)).items():
        what = f"audit record {key!r}"
        slot, _, n = key[len(prefix):].partition(".")
        if n:  # audit.<slot>.<n>: one answer, as trails were first written
            entries = [decode_model(AuditEntry, what, data, signing_key, place=key)]
        else:
            entries = decode_model(ResumeAudit, what, data, signing_key, place=key).entries
        if any(entry.thread_id != thread_id for entry in entries):
            raise CheckpointCorruptError(f"{what} holds answers of another thread (copied here, or edited)")
        by_slot[int(slot), int(n or 0)] = entries
    for seq, record in checkpoints.items():
        if record.answered and (seq, 0) not in by_slot:
            by_slot[seq, 0] = whole_entries(record, checkpoints)
    claims = claims or {}
    for seq, claim in claims.items():
        entries = claim_entries(claim, claims.get(seq + 1), checkpoints)
        if entries:
            by_slot[seq, 0] = entries
    ordered = [((seq, n, 0.0), entries) for (seq, n), entries in by_slot.items()]
    ordered += [((seq, _AFTER_SLOT, entry.at), [entry]) for seq, entry in refused]
    return [entry for _, entries in sorted(ordered, key=lambda item: item[0]) for entry in entries]


_AFTER_SLOT = 1 << 62
"""Where a refusal sorts among the entries of its checkpoint's slot: after them all (they were applied
before the checkpoint asked what the refusal answered), then by time."""
