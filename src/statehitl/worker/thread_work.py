"""What a worker does with one thread it was told about: apply its stored answers and due expiry defaults.

It reads the thread (its newest checkpoint and the answers stored for it), and then:

- another process holds the thread (a live claim or running step): **busy**, look again when that
  lease ends (the holder may die; then the thread says so, below);
- the last run acted on answers and never recorded how it ended: **unknown** outcome. By default
  nothing runs: it is logged and an ``outcome_unknown`` event goes to the ``on_interrupt`` sinks, since
  a human must check the outside world and allow a retry. With ``retry_unknown`` (only for apps whose
  every action honours its idempotency key), the worker gives that go-ahead itself
  (``Checkpointer.retry_unknown(responder="worker")``, kept in the audit trail) and resumes;
- the thread waits on interrupts: each expired one without an answer is answered with its
  ``on_expire`` default (create-once: a reviewer answering at the same moment, or another worker,
  may win, and then that answer applies); with any answer stored, the thread is **resumed** through
  the app's own resume call, whose claim lets exactly one process run what follows the interrupt.
  Without one it keeps **waiting** (until its next deadline, if it has one);
- answers given to the application's own call are that call's to apply (it claims the thread right
  after storing them): they are left to it for one lease, and applied only if it did not (its
  process died in between);
- the resume's handler refused a stored answer (its type's validator, which the door that stored it
  could not run): **refused**; the run withdrew the answer (audited as refused), and the interrupt
  waits on a new one: nothing to retry;
- anything else (completed, failed, gone): **done**, nothing to do.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import functools
import logging
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Literal, TypeVar

from statehitl.checkpoint.answer_records import read_answers
from statehitl.checkpoint.answer_records import record_answer as record_binding_answer
from statehitl.checkpoint.engine import Checkpointer
from statehitl.checkpoint.reading import Head, offering_head
from statehitl.checkpoint.record_parts import InterruptRecord
from statehitl.checkpoint.records import CheckpointRecord, StoredAnswer
from statehitl.errors import (
    ActionOutcomeUnknownError,
    AlreadyAnsweredError,
    CheckpointConflict,
    InvalidResponseError,
    NotInterruptedError,
    ResumeInputError,
    UnknownInterruptError,
)
from statehitl.resumable import ResumableApp, resume_stored
from statehitl.worker.events import answer_event, outcome_unknown_event
from statehitl.worker.notify import Notifier
from statehitl.worker.routing import Apps

logger = logging.getLogger("statehitl.worker")

T = TypeVar("T")

RETRY_COMMENT = ("statehitl worker --retry-unknown: retried on its own, as the app says every action honours its "
                 "idempotency key")
"""The comment of the go-ahead a worker with ``retry_unknown`` records in the audit trail."""

UNKNOWN_LOOK = 30.0
"""Seconds between a worker's looks at a thread with an action of unknown outcome (at least a lease): a
human's go-ahead (``threads retry``) writes no answer and no index entry, so a stream-fed worker learns of
it only by looking again."""

What = Literal["resumed", "busy", "waiting", "unknown", "refused", "done", "failed"]


@dataclass(frozen=True, slots=True)
class ThreadOutcome:
    """What working on a thread did. ``retry_at``: when to look at it again (epoch seconds), if ever."""

    thread_id: str
    what: What
    status: str | None = None
    """The thread's status after a resume (``completed``, ``interrupted``...)."""
    retry_at: float | None = None
    expired: tuple[str, ...] = ()
    """Interrupts this worker answered with their ``on_expire`` default."""
    retried: bool = False
    """Whether an action of unknown outcome was retried (``retry_unknown``)."""
    error: str | None = None
    result: Any = field(default=None, compare=False, repr=False)


class ThreadWork:
    """Works on one thread at a time (see the module docstring); a worker runs many of these at once.

    ``lease_seconds``: the lease of the resumes' claims (the worker's ``--lease``; None: each app's own).
    The app's ``build`` and its sync nodes and tools run in a thread pool of their own (``threads``
    threads): they are the user's code and may take their time, and the loop's default pool is the
    store's (boto3's requests run there)."""

    def __init__(self, checkpointer: Checkpointer, apps: Apps, notifier: Notifier, *, retry_unknown: bool,
                 lease_seconds: float | None = None, clock: Callable[[], float] = time.time, threads: int = 12) -> None:
        self.checkpointer = checkpointer
        self.apps = apps
        self.notifier = notifier
        self.retry_unknown = retry_unknown
        self.lease_seconds = lease_seconds
        self.clock = clock
        self.threads = threads
        self._pool: ThreadPoolExecutor | None = None
        self._reported: set[tuple[str, int]] = set()
        """Unknown outcomes already logged, by thread and claim slot: a pass meets them again and again."""

    @property
    def pool(self) -> ThreadPoolExecutor:
        """The threads the apps' code runs in (made when first needed)."""
        if self._pool is None:
            self._pool = ThreadPoolExecutor(max_workers=self.threads, thread_name_prefix="statehitl-app")
        return self._pool

    def close(self) -> None:
        """Let the apps' threads go once their work is done (a worker stopping)."""
        if self._pool is not None:
            self._pool.shutdown(wait=False)
            self._pool = None

    async def _in_pool(self, func: Callable[..., T], *args: Any) -> T:
        return await asyncio.get_running_loop().run_in_executor(self.pool, functools.partial(func, *args))

    @property
    def lease(self) -> float:
        """How long a resume's claim holds a thread: when to look again at a thread another worker holds."""
        return self.lease_seconds or self.checkpointer.lease_seconds

    async def __call__(self, thread_id: str) -> ThreadOutcome:
        # With one app, the thread is read through the app's own checkpointer, which its resume then
        # needs not read again (``offering_head``): per resume, the reads of the head and the answers.
        app = await self._in_pool(self.apps.sole, thread_id)
        checkpointer = self.checkpointer if app is None else app.thread_store
        head = await checkpointer.head(thread_id)
        if head is None:
            return ThreadOutcome(thread_id, "done")
        retried = False
        try:
            checkpointer.ensure_free(head, None)
        except CheckpointConflict as busy:
            return ThreadOutcome(thread_id, "busy", retry_at=_lease_end(head, self.clock() + self.lease),
                                 error=str(busy))
        except ActionOutcomeUnknownError as error:
            if not self.retry_unknown:
                return self._unknown(head, error)
            await self._retry(thread_id)
            retried = True
        record = head.record
        expired: list[str] = []
        offered: Head | None = None if retried else head
        if record.status == "interrupted" and not retried:
            answers = head.answers if head.answers is not None else await read_answers(checkpointer, record)
            for answer in answers.values():  # in the outbox before the thread moves on: then nothing derives them
                await self.notifier.enqueue(answer_event(answer))
            now = self.clock()
            for interrupt in record.interrupts:
                if interrupt.id not in answers and interrupt.expires_at is not None and interrupt.expires_at <= now:
                    stored, created = await self._expire(record, interrupt)
                    if stored is None:
                        return ThreadOutcome(thread_id, "done")  # it moved on meanwhile
                    answers[interrupt.id] = stored
                    if created:
                        expired.append(interrupt.id)
                    await self.notifier.enqueue(answer_event(stored))
            if not answers:
                deadlines = [i.expires_at for i in record.interrupts if i.expires_at is not None]
                return ThreadOutcome(thread_id, "waiting", retry_at=min(deadlines) if deadlines else None)
            left_to_app = self._left_to_app(answers, now)
            if left_to_app is not None:
                return ThreadOutcome(thread_id, "waiting", retry_at=left_to_app, expired=tuple(expired))
            offered = dataclasses.replace(head, answers=answers)
        elif record.status != "executing" and not retried:
            await self._index_caught_up(checkpointer, record)
            return ThreadOutcome(thread_id, "done")
        if app is None:
            app = await self._in_pool(self.apps.app_for, thread_id, record.machine)
            offered = None  # read through the worker's checkpointer, not the app's
        return await self._resume(thread_id, app, offered, tuple(expired), retried)

    async def _resume(self, thread_id: str, app: ResumableApp, offered: Head | None, expired: tuple[str, ...],
                      retried: bool) -> ThreadOutcome:
        for _ in range(2):  # once more after a retry the head read above could not see coming
            offer = contextlib.nullcontext() if offered is None else offering_head(app.thread_store, offered)
            offered = None
            try:
                with offer:
                    resumed = await resume_stored(app, thread_id, lease_seconds=self.lease_seconds,
                                                  executor=self.pool)
            except CheckpointConflict as busy:
                return ThreadOutcome(thread_id, "busy", retry_at=self.clock() + self.lease, expired=expired,
                                     retried=retried, error=str(busy))
            except ActionOutcomeUnknownError as error:
                head = await self.checkpointer.head(thread_id)
                if not self.retry_unknown or retried or head is None:
                    return self._unknown(head, error) if head is not None else ThreadOutcome(thread_id, "done")
                await self._retry(thread_id)
                retried = True
                continue
            except (NotInterruptedError, UnknownInterruptError, ResumeInputError) as nothing:
                return ThreadOutcome(thread_id, "done", expired=expired, retried=retried, error=str(nothing))
            except InvalidResponseError as error:
                if not error.refused_answer:
                    raise
                # Withdrawn by the run that refused it: the interrupt waits on a new answer, nothing to retry.
                logger.warning("thread %s: %s", thread_id, error)
                return ThreadOutcome(thread_id, "refused", expired=expired, retried=retried, error=str(error))
            logger.info("thread %s: resumed (%s)%s%s", thread_id, resumed.status,
                        f", expiry default applied to {', '.join(expired)}" if expired else "",
                        ", after retrying an action of unknown outcome" if retried else "")
            return ThreadOutcome(thread_id, "resumed", resumed.status, expired=expired, retried=retried, result=resumed)
        return ThreadOutcome(thread_id, "busy", retry_at=self.clock() + self.lease, expired=expired, retried=retried)

    @staticmethod
    async def _index_caught_up(checkpointer: Checkpointer, record: CheckpointRecord) -> None:
        """The thread stopped past what brought the worker to it (its index entry called it answered and
        due): most often another worker has just finished it, and wrote the entry; but a process that
        stopped between a run's last checkpoint and its index entry leaves the entry behind for good, the
        thread listed as waiting and looked at by every pass. Newer entries win, so writing the one the
        records call for is safe either way (one read of the entry when it is already there)."""
        if await checkpointer.write_index(record):
            logger.info("thread %s: its index entry was behind its checkpoint %s (%s), and is brought up to date",
                        record.thread_id, record.checkpoint_id, record.status)

    def _left_to_app(self, answers: dict[str, StoredAnswer], now: float) -> float | None:
        """When answers all came through the app's own call, and that call may still be about to apply them,
        the time from which the worker applies them instead; else None (apply now)."""
        if any(a.via != "app" for a in answers.values()):
            return None
        until = max(a.answered_at for a in answers.values()) + self.lease
        return until if until > now else None

    async def _expire(self, record: CheckpointRecord, interrupt: InterruptRecord) -> tuple[StoredAnswer | None, bool]:
        """Store the expired ``interrupt``'s default, once (marked in the index as the inbox's sweep does), or
        find the answer that beat it; and whether this call stored it. None if the thread moved on."""
        try:
            return await record_binding_answer(self.checkpointer, record, interrupt, interrupt.on_expire,
                                               responder="expiry", via="expiry", durable=True, mark_index=True)
        except AlreadyAnsweredError:  # a reviewer, or another worker with another clock, answered first
            head = await self.checkpointer.head(record.thread_id)
            if head is None or head.record.seq != record.seq:
                return None, False
            return (await read_answers(self.checkpointer, head.record)).get(interrupt.id), False

    async def _retry(self, thread_id: str) -> None:
        try:
            await self.checkpointer.retry_unknown(thread_id, responder="worker", comment=RETRY_COMMENT)
            logger.warning("thread %s: an action of unknown outcome is retried (--retry-unknown)", thread_id)
        except NotInterruptedError:
            pass  # another worker gave the go-ahead first

    def _unknown(self, head: Head, error: ActionOutcomeUnknownError) -> ThreadOutcome:
        slot = head.cursor.slot if head.cursor.slot is not None else head.record.seq
        if (head.record.thread_id, slot) not in self._reported:
            self._reported.add((head.record.thread_id, slot))
            logger.warning("thread %s: an action of unknown outcome waits on a human: %s", head.record.thread_id, error)
        self.notifier.submit(outcome_unknown_event(error, slot))
        # Looked at again now and then: once a human allows the retry (`threads retry`), the thread goes on.
        return ThreadOutcome(head.record.thread_id, "unknown", retry_at=self.clock() + max(self.lease, UNKNOWN_LOOK),
                       error=str(error))


def _lease_end(head: Head, fallback: float) -> float:
    if head.claim is not None:
        return head.claim.lease_until
    return head.record.lease_until or fallback

