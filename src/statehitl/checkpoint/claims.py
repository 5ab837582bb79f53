"""Claims and leases: of two processes resuming one interrupt exactly one proceeds, and an action whose
outcome was never recorded is not run again without a human's go-ahead.

Resuming first writes a claim with a lease into the next slot, so of two processes resuming the same
interrupt exactly one proceeds, before any node, hook or tool runs; a claim whose process died can be
taken over once its lease expires. Running checkpoints carry the same lease, renewed every step. A
resume's claim also records the answers it acts on, durably ("action started"): should its run stop
without a checkpoint saying how, the outcome is unknown (``ActionOutcomeUnknownError``) until
``retry_unknown`` records a human's go-ahead.
"""

from __future__ import annotations

import contextlib
import functools
import os
import socket
import time
from collections import OrderedDict
from typing import Literal

from statehitl.checkpoint.chain import Cursor
from statehitl.checkpoint.index import (
    read_index_versioned,
)
from statehitl.checkpoint.reading import Head, ThreadReader
from statehitl.checkpoint.records import (
    AnswerRecord,
    CheckpointRecord,
    ClaimRecord,
)
from statehitl.checkpoint.storage import (
    ABSENT,
    validate_thread_id,
)
from statehitl.errors import (
    ActionOutcomeUnknownError,
    CheckpointConflict,
    CheckpointCorruptError,
    NotInterruptedError,
    StorageError,
)


class ThreadClaims(ThreadReader):
    """The claiming side of a ``Checkpointer``."""

    def ensure_free(self, head: Head, owner: str | None) -> None:
        """Raise ``CheckpointConflict`` if another run holds the thread (a live claim or run lease), and
        ``ActionOutcomeUnknownError`` if the last resume acted on answers and never recorded how it ended."""
        now = self.store_now()
        record, thread = head.record, head.record.thread_id
        holder = head.claim
        if holder is not None and holder.owner != owner:
            ended = _ENDED_HERE.get(holder.owner)  # None: running, or another process's
            alive = holder.lease_until > now and ended is None and not process_gone(holder.owner)
            if holder.acting and not alive and ended is not False:
                raise _outcome_unknown(holder, record)
            if alive:
                acted = "its answer is being acted on, do not resume twice" if holder.acting else "do not resume twice"
                raise CheckpointConflict(
                    f"thread {thread!r} is being resumed by another process ({holder.owner}) until its lease "
                    f"expires in {holder.lease_until - now:.1f}s; {acted}. Should that run have stopped without "
                    "recording how it ended, the thread says so once the lease runs out"
                )
        if head.cursor.slot == record.seq and record.status == "executing" and (record.owner is None
                                                                                or record.owner != owner):
            if _running_elsewhere(record, now):
                until = record.lease_until or now
                raise CheckpointConflict(
                    f"thread {thread!r} is running in another process ({record.owner}); it can be taken over once "
                    f"that process stops renewing its lease, at {time.strftime('%H:%M:%S', time.localtime(until))} "
                    f"(in {until - now:.1f}s), or at once should that process be gone and have run on this machine"
                )
            if record.acting is not None:
                raise _outcome_unknown_mid_run(record)

    async def claim(self, head: Head, owner: str, answered: list[AnswerRecord] | None = None) -> None:
        """Take the exclusive right to continue ``head.record``; ``CheckpointConflict`` if someone has it.

        Checked and written before anything runs, so a losing process does no work at all. A claim or
        running step whose lease expired (its process died) is taken over, unless it acted on answers
        (``ActionOutcomeUnknownError``). A resume's claim carries the ``answered`` it acts on and is
        written durably: it is the record that the action started, and must outlive a power cut that
        the action's own effects outlive.
        """
        self.check_clock(head.record.thread_id)
        self.ensure_free(head, owner)
        now = self.store_now()
        record, thread = head.record, head.record.thread_id
        # A claim of this process's whose run never started did nothing: this one says so, for the audit.
        never_ran = head.claim is not None and _ENDED_HERE.get(head.claim.owner) is False
        claim = ClaimRecord(
            thread_id=thread,
            seq=head.cursor.next_slot,
            parent_seq=record.seq,
            owner=owner,
            lease_until=now + self.lease_length(),
            created_at=now,
            answered=answered or [],
            settles="released" if never_ran else None,
        )
        key = self._key(thread, claim.seq)
        try:
            await self.create(key, self._encode(key, claim), durable=claim.acting)
        except CheckpointConflict:
            raise CheckpointConflict(
                f"thread {thread!r} was claimed or advanced by another process while this one was about to "
                "resume it; only one resume of an interrupt proceeds"
            ) from None
        except StorageError:
            _ended_here(owner, acted=False)  # it may be stored, but its run never started: nothing was done
            raise
        head.cursor.claim(claim.seq, owner, acting=claim.acting)
        if claim.acting and not head.own:
            try:
                await self._refuse_rolled_back(thread, claim.seq)
            except BaseException:
                _ended_here(owner, acted=False)  # nothing ran, as this process knows; the release tells the others
                with contextlib.suppress(StorageError, CheckpointConflict):
                    await self.release(head.cursor)
                raise

    async def _refuse_rolled_back(self, thread_id: str, slot: int) -> None:
        """Refuse to act on answers to a thread whose records were rolled back (restored from an older
        copy, a newest object deleted) behind its index entry, which would otherwise read as an older
        state whose interrupt is pending again. Skipped when this process wrote the newest record itself
        and finds it still the newest: nothing went past it, so nothing past it can have been lost.

        The index entry of checkpoint N is written with or after it, when slot N-1 was there; so once
        slot ``slot`` was free for this claim, an entry for a checkpoint past ``slot`` proves records
        were lost. (An entry for N when N failed to store, after N-1, is not past ``slot``: no false
        alarm.) Records and entry rolled back together, or the newest record alone, are not detectable
        this way (the file store's synced-to mark catches the latter on its own logs).
        """
        entry, version = await read_index_versioned(self.storage, thread_id, self.signing_key)
        # The run ends by rewriting this entry: knowing its version spares it reading the entry again.
        self._warm.keep_index_version(thread_id, -1 if entry is None else entry.seq,
                                      ABSENT if entry is None else version)
        if entry is not None and entry.seq > slot:
            raise CheckpointCorruptError(
                f"thread {thread_id!r}: its index entry describes checkpoint {entry.seq:012d}, but its records "
                f"end before {slot:012d}: records were lost (restored from an older copy, or deleted outside "
                "statehitl). Not resumed: its interrupts may already have been answered and acted on. Restore "
                "the records from a copy taken after the newest run, or delete the thread"
            )

    @staticmethod
    def finished(cursor: Cursor, *, acted: bool) -> None:
        """The run that holds ``cursor`` is over, however it ended; ``acted``: its handlers were given
        answers. If its last record still holds a lease (it failed, and so did the write that would have
        released it), this process knows that lease protects no live run: the next call here goes on at
        once, or, if the run acted on answers, is told at once that the action's outcome is unknown,
        instead of hearing that another process holds the thread until the lease runs out."""
        if cursor.owner is not None and not cursor.settled:
            _ended_here(cursor.owner, acted=acted and cursor.acting is not None)

    async def release(self, cursor: Cursor) -> None:
        """Give up a claim whose run did nothing with its answers (it stopped before any handler was given
        one), so a retry need not wait out the lease and no one is asked whether its action ran."""
        if not cursor.claimed or cursor.owner is None or cursor.parent is None:
            return
        await self._settle(cursor.thread_id, cursor.next_slot, cursor.parent, cursor.owner, how="released")
        cursor.release()

    async def retry_unknown(self, thread_id: str, *, responder: str | None = None, comment: str | None = None
                            ) -> None:
        """A human's go-ahead after ``ActionOutcomeUnknownError``: they checked the outside world (by the
        tools' idempotency keys) and the action may run again. The thread then waits on its interrupts
        as before, and the next answer runs the action again; the audit trail keeps both answers, the
        unknown outcome and this go-ahead. ``NotInterruptedError`` if the thread has no such action."""
        head = await self.head(validate_thread_id(thread_id))
        try:
            if head is not None:
                self.ensure_free(head, None)
        except ActionOutcomeUnknownError:
            assert head is not None
            parent = head.record.seq  # the interrupted checkpoint, or where the run stopped
            await self._settle(thread_id, head.cursor.next_slot, parent, responder or "", how="retry", comment=comment)
            return
        raise NotInterruptedError(f"thread {thread_id!r} has no action of unknown outcome to retry")

    async def _settle(self, thread_id: str, seq: int, parent: int, owner: str, *,
                      how: Literal["released", "retry"], comment: str | None = None) -> None:
        """Write the claim that settles the one in slot ``seq - 1``; someone who moved on first wins."""
        now = self.store_now()
        settled = ClaimRecord(thread_id=thread_id, seq=seq, parent_seq=parent, owner=owner, lease_until=now,
                              created_at=now, settles=how, comment=comment)
        key = self._key(thread_id, seq)
        with contextlib.suppress(CheckpointConflict):  # someone else moved on: nothing left to settle
            await self.create(key, self._encode(key, settled), durable=how == "retry")


def owner_id() -> str:
    """Who holds a claim: host and process (for the conflict message), a nonce for this call, and, where it can
    be told (Linux), which machine and process namespace, after ``@``: so that a process on the same machine
    can tell that the holder is gone (``process_gone``)."""
    machine = _machine()
    return f"{_this_process()}:{os.urandom(4).hex()}" + (f"@{machine}" if machine else "")


@functools.cache
def _this_process() -> str:
    """``host:pid``, asked once: both are system calls, which cost more than the rest of ``owner_id``."""
    return f"{socket.gethostname()}:{os.getpid()}"


@functools.cache
def _machine() -> str | None:
    """This boot of this machine and this process's pid namespace (Linux), or None where they cannot be told.
    The boot id tells machines apart that share a hostname; the namespace, containers that share a kernel."""
    try:
        with open("/proc/sys/kernel/random/boot_id", encoding="ascii") as boot:
            boot_id = boot.read().strip().replace("-", "")[:16]
        namespace = os.stat("/proc/self/ns/pid").st_ino
    except OSError:
        return None
    return f"{boot_id}.{namespace}" if boot_id else None


def process_gone(owner: str) -> bool:
    """Whether the process that holds a lease as ``owner`` is known to be gone: it ran on this machine, in
    this process namespace, and no process has its pid now. Its lease then protects nothing, and is taken
    over at once instead of when it runs out. Anything that cannot be told (another machine, an owner
    written before owners said their machine) is taken to be alive."""
    named, at, machine = owner.rpartition("@")
    if not at or machine != _machine():
        return False
    parts = named.rsplit(":", 2)
    if len(parts) != 3 or not parts[1].isdigit():
        return False
    pid = int(parts[1])
    if pid == os.getpid():
        return False  # this process: whether its run is over is _ENDED_HERE's to say
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except OSError:  # it exists, and belongs to another user
        return False
    return False


# A forked worker is another process: it asks again, so that it names its own pid.
os.register_at_fork(after_in_child=_this_process.cache_clear)


_ENDED_HERE: OrderedDict[str, bool] = OrderedDict()
"""Owners of this process's runs that ended while their last record still held a lease (they failed, and
so did the write that would have released it), each with whether it acted on answers (its claim recorded
them and its handlers were given them): their leases protect no live run. Only such failures are kept,
the most recent few thousand."""


def _ended_here(owner: str, *, acted: bool) -> None:
    _ENDED_HERE[owner] = acted
    if len(_ENDED_HERE) > 4096:
        _ENDED_HERE.popitem(last=False)


def _outcome_unknown(claim: ClaimRecord, record: CheckpointRecord) -> ActionOutcomeUnknownError:
    names = {i.id: i.name for i in record.interrupts}
    answers = ", ".join(
        f"{names.get(a.interrupt_id, '?')!r} (id {a.interrupt_id}) by {a.responder or 'an unnamed responder'}"
        for a in claim.answered)
    started = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(claim.created_at))
    return ActionOutcomeUnknownError(
        f"thread {record.thread_id!r}: the answers to {answers} were being acted on by {claim.owner} since "
        f"{started}, and that run never recorded how it ended (its process stopped, or the store failed after "
        "the action ran). The action may have run: it is not run again on a second answer. Check the outside "
        "world (tools were given an idempotency key, ToolContext.idempotency_key, to name the action there), then "
        f"allow a retry with `statehitl threads retry {record.thread_id}` or checkpointer.retry_unknown(...), "
        "and answer again",
        thread_id=record.thread_id, interrupt_ids=tuple(a.interrupt_id for a in claim.answered),
        owner=claim.owner, started_at=claim.created_at,
    )


def _outcome_unknown_mid_run(record: CheckpointRecord) -> ActionOutcomeUnknownError:
    return ActionOutcomeUnknownError(
        f"thread {record.thread_id!r}: the run that acted on the answers its claim {record.acting:012d} recorded "
        f"stopped after checkpoint {record.checkpoint_id} without recording how step {record.step + 1} "
        f"({', '.join(record.pending)}) ended (its process stopped, or the store failed). What that step did "
        "may have happened: it is not run again on its own. Check the outside world (tools and nodes were "
        "given idempotency keys), then allow it "
        f"with `statehitl threads retry {record.thread_id}` or checkpointer.retry_unknown(...), and continue",
        thread_id=record.thread_id, owner=record.owner or "", started_at=record.created_at,
    )


def _running_elsewhere(record: CheckpointRecord, now: float) -> bool:
    """Whether the run that wrote ``record`` (executing, by another owner) may still be running: its lease
    is live and it is not a run of this process that is known to be over."""
    return (
        record.owner is not None
        and record.lease_until is not None
        and record.lease_until > now
        and record.owner not in _ENDED_HERE
        and not process_gone(record.owner)
    )

