"""Retention is explicit: ``delete_thread`` removes a thread, ``prune`` keeps a thread's newest
checkpoints (the oldest of them rewritten whole if need be), ``sweep_expired`` deletes threads idle past
the ``ttl``. The last two also run the storage's optional ``cleanup`` (``SupportsCleanup``), which is the
only place crash debris that no key refers to is ever removed.
"""

from __future__ import annotations

import time
from collections.abc import Coroutine
from typing import Any

from statehitl._sync import now_or_awaited
from statehitl.checkpoint.answer_records import ANSWER_MARK
from statehitl.checkpoint.audit import keep_audit
from statehitl.checkpoint.chain import assemble
from statehitl.checkpoint.index import (
    index_prefix,
    read_index,
)
from statehitl.checkpoint.interrupt_index import forget_pointers
from statehitl.checkpoint.reading import ThreadReader, checkpoints_of
from statehitl.checkpoint.record_parts import Piece
from statehitl.checkpoint.records import StoredCheckpoint
from statehitl.checkpoint.storage import Storage, has_cleanup
from statehitl.errors import (
    CheckpointConflict,
    CheckpointCorruptError,
)


class ThreadRetention(ThreadReader):
    """The retention side of a ``Checkpointer``."""

    def delete_thread(self, thread_id: str) -> Coroutine[Any, Any, int]:
        """Remove every record of the thread (checkpoints, claims, answers, index and audit trail); returns
        how many. Awaited in async code (``await checkpointer.delete_thread(t)``); called from sync code
        without an event loop running, done at once as LangGraph's sync ``delete_thread`` is (what it returns
        may still be awaited)."""
        return now_or_awaited(lambda: self.adelete_thread(thread_id))

    async def adelete_thread(self, thread_id: str) -> int:
        """``delete_thread``, awaited (LangGraph's async name)."""
        self._warm.forget(thread_id)
        asked = await self._interrupts_known(thread_id)
        removed = await self.storage.delete(self._prefix(thread_id))
        removed += await self.storage.delete(index_prefix(thread_id))
        await forget_pointers(self.storage, asked)
        return removed

    async def _interrupts_known(self, thread_id: str) -> list[str]:
        """The ids of the interrupts the thread waits on or had answered: those its pointers were made for
        (``interrupt_index``), found without reading its checkpoints."""
        try:
            entry = await read_index(self.storage, thread_id, self.signing_key)
        except CheckpointCorruptError:  # a damaged entry: the thread is deleted all the same
            entry = None
        answered = [key.rsplit("/", 1)[-1].split(".", 2)[-1] for key in await self.storage.list(self._prefix(thread_id))
                    if key.rsplit("/", 1)[-1].startswith(ANSWER_MARK)]
        return [*(i.id for i in (entry.interrupts if entry is not None else ())), *answered]

    async def prune(self, thread_id: str, keep_last: int) -> int:
        """Keep the newest ``keep_last`` checkpoints; delete the rest.

        A kept checkpoint built on one that goes (a delta from its parent, or a Fenwick piece on an
        older base) is first rewritten whole under its own key: the same checkpoint, which no longer
        needs what is deleted. Also runs the storage's ``cleanup`` (crash debris, see
        ``SupportsCleanup``): on DynamoDB that is a full-table scan, so prune from a maintenance job
        rather than on every request. Returns how many of the thread's records were deleted (debris
        and rewrites not counted).
        """
        if keep_last < 1:
            raise ValueError(f"keep_last must be at least 1, got {keep_last!r}")
        self._warm.forget(thread_id)
        records = await self._records(thread_id)
        checkpoints = checkpoints_of(records)
        keep = set(sorted(checkpoints, reverse=True)[:keep_last])
        if records:
            keep.add(max(records))  # the head slot, even when it is a claim in force
        for seq in sorted(keep & checkpoints.keys()):
            record = checkpoints[seq]
            if record.base_seq is not None and record.base_seq not in keep:
                await self._rewrite_whole(await self._chain(record, checkpoints), records[seq].token)
        # The audit entries of the checkpoints that go stay, beside the index, before anything goes.
        await keep_audit(self.storage, thread_id, checkpoints, set(checkpoints) - keep, self.signing_key)
        removed = 0
        for seq in records:
            if seq not in keep:
                removed += await self.storage.delete(self._key(thread_id, seq))
        await _cleanup(self.storage)
        return removed

    async def _rewrite_whole(self, chain: list[StoredCheckpoint], token: str) -> None:
        """Store ``chain[0]`` again with every piece from item 0, so it needs no base; a compare-and-set
        on the version it was read at (``token``), so a racing prune or delete is noticed, not overwritten."""
        record = chain[0]
        whole = assemble(chain)
        pieces = {c: Piece(start=0, items=whole[c]) for c in record.appends}
        rewritten = record.model_copy(update={"base_seq": None, "appends": pieces})
        try:
            key = self._key(record.thread_id, record.seq)
            await self.storage.write(key, self._encode(key, rewritten), expect=token)
        except CheckpointConflict:
            raise CheckpointConflict(f"thread {record.thread_id!r}: checkpoint {record.checkpoint_id} was changed "
                                     "or deleted while it was being pruned") from None

    async def sweep_expired(self, now: float | None = None) -> list[str]:
        """Delete every thread whose TTL ran out (by its index entry); returns their ids.

        Then runs the storage's ``cleanup``, as ``prune`` does: a sweep is the maintenance job.
        """
        moment = time.time() if now is None else now
        expired = [e.thread_id for e in await self.threads() if e.expires_at is not None and e.expires_at <= moment]
        for thread_id in expired:
            await self.adelete_thread(thread_id)
        await _cleanup(self.storage)
        return expired


async def _cleanup(storage: Storage) -> None:
    if has_cleanup(storage):
        await storage.cleanup()

