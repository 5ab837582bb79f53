"""``Worker``: resumes answered threads and applies expiry defaults as they fall due, on any store.

Where it learns of work:

- **A change stream** (DynamoDB with its stream on): the write of an answer record is the event. The
  worker positions itself at the stream's end, passes once over the index (what arrived while no
  worker ran), then resumes each thread whose answer it reads in the stream. Index entries written
  in the stream tell it of new interrupts (events for ``on_interrupt``) and their deadlines, which it
  keeps in a timer and applies when due, as it looks again at a thread another process held.
- **Polling** (the file store, S3): every ``interval`` it reads the index (only what changed,
  ``index_watch.py``) and works on threads whose entry marks stored answers or whose interrupts
  expired. A thread that could not be finished (held by a process that died) is still marked at the
  next pass, so nothing needs remembering.
- **Given changes** (``aapply_changes``): the storage keys a caller read itself, as the AWS Lambda
  handler gets them in its event.

What it does with a thread is ``thread_work.ThreadWork``; everything a thread's resume needs is the
app's own resume call, whose claim (a conditional write) makes racing workers and redelivered
records harmless: of all the workers told of one answer, one runs the action. Events go to their
sinks once across workers (``notify.py``).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from statehitl.checkpoint.answer_records import answer_prefix, parse_answer
from statehitl.checkpoint.engine import Checkpointer
from statehitl.checkpoint.index import read_index
from statehitl.checkpoint.records import ThreadIndex
from statehitl.checkpoint.storage import ChangeFeed, has_change_feed
from statehitl.errors import CheckpointCorruptError, StorageError
from statehitl.inbox.apps import AppBuilder
from statehitl.inbox.listing import open_store
from statehitl.resumable import Resumed
from statehitl.worker.events import answer_event, interrupt_event
from statehitl.worker.index_watch import IndexWatch
from statehitl.worker.notify import RETRY_SCHEDULE, Notifier
from statehitl.worker.pacing import Pacing
from statehitl.worker.report import Report, changed_thread
from statehitl.worker.routing import Apps
from statehitl.worker.stalls import Stalls
from statehitl.worker.thread_work import ThreadOutcome, ThreadWork
from statehitl.worker.webhook import Sink

logger = logging.getLogger("statehitl.worker")


class Worker:
    """Resumes answered threads and applies expiry defaults on ``store`` (a URL or a ``Checkpointer``).

    ``apps``: the ``build(thread_id) -> app`` functions (``statehitl.inbox.load_app("module:build")``),
    routed by machine name when there are several (``routing.Apps``). ``interval``: seconds between
    passes over the index (polling stores), or between looks at the timers (stream-fed).
    ``lease_seconds``: the claims' lease of the worker and its apps (how soon a thread whose resuming
    process died is taken over). ``retry_unknown``: retry actions of unknown outcome without a human
    (only for apps whose every action honours its idempotency key). ``on_interrupt`` / ``on_answer``:
    sinks for the events (``webhook.Sink``), sent through the durable outbox, whose failed rounds are tried
    again after ``delivery_schedule`` (seconds, ``notify.RETRY_SCHEDULE``). ``concurrency``: threads worked
    on at once.
    """

    def __init__(self, store: str | Checkpointer, apps: AppBuilder | Sequence[AppBuilder], *,
                 app_names: Sequence[str] | None = None, interval: float = 1.0, lease_seconds: float | None = None,
                 retry_unknown: bool = False, on_interrupt: Sink | Sequence[Sink] = (),
                 on_answer: Sink | Sequence[Sink] = (), concurrency: int = 8,
                 clock: Callable[[], float] = time.time, delivery_schedule: Sequence[float] = RETRY_SCHEDULE
                 ) -> None:
        if interval <= 0:
            raise ValueError(f"interval must be positive seconds, got {interval!r}")
        if concurrency < 1:
            raise ValueError(f"concurrency must be at least 1, got {concurrency!r}")
        if lease_seconds is not None and not lease_seconds > 0:
            raise ValueError(f"lease_seconds must be positive, got {lease_seconds!r}")
        self.checkpointer = open_store(store)
        self.lease_seconds = lease_seconds
        """The lease of this worker's resumes (None: each app's own); set per call, never on the apps."""
        builders = list(apps) if isinstance(apps, Sequence) else [apps]
        self.apps = Apps(builders, names=app_names)
        self.interval = interval
        self.clock = clock
        lease = lease_seconds or self.checkpointer.lease_seconds
        attention = _sinks(on_interrupt)  # what a human must look at: new interrupts, unknown outcomes, lost events
        self.notifier = Notifier(self.checkpointer, {"interrupt": attention, "answer": _sinks(on_answer),
                                                     "outcome_unknown": attention, "delivery_failed": attention},
                                 lease=lease, clock=clock, schedule=delivery_schedule)
        self.work = ThreadWork(self.checkpointer, self.apps, self.notifier, retry_unknown=retry_unknown,
                               lease_seconds=lease_seconds, clock=clock, threads=concurrency + 4)
        self.concurrency = concurrency
        self._slots: asyncio.Semaphore | None = None
        self._trickle: asyncio.Semaphore | None = None
        self._running: dict[str, asyncio.Task[ThreadOutcome]] = {}
        self._again: set[str] = set()
        self.pacing = Pacing(interval, clock)
        self._stalls = Stalls()
        self._watch: IndexWatch | None = None
        self.report = Report()

    # -- one thread, many threads ---------------------------------------------------------------------

    async def aprocess(self, thread_id: str) -> ThreadOutcome:
        """Work on one thread now (``thread_work``); a failure is logged and returned, never raised: one
        thread's trouble must not stop the worker (a store that fails everything fails its passes and its
        stream too, which do stop it). A thread that failed is looked at again after a pause that doubles
        with each failure in a row (``backoff``): a timer when stream-fed, a later pass when polling."""
        try:
            outcome = await self.work(thread_id)
        except StorageError as exc:
            wait = self.pacing.failed(thread_id, str(exc))
            if exc.transient:
                self.report.retry.add(thread_id)
            else:
                wait = max(wait, 30.0)
            logger.warning("thread %s: the store failed (%s); looking again in %.1fs", thread_id, exc, wait)
            outcome = ThreadOutcome(thread_id, "failed", retry_at=self.clock() + wait, error=str(exc))
        except Exception as exc:
            error = f"{type(exc).__name__}: {exc}"
            wait = self.pacing.failed(thread_id, error, exc=exc)
            outcome = ThreadOutcome(thread_id, "failed", retry_at=self.clock() + wait, error=error)
        self.pacing.settle(outcome)
        self._stalls.outcome(outcome)
        self.report.add(outcome)
        if outcome.what != "failed" or outcome.retry_at is None:
            self.report.retry.discard(thread_id)
        return outcome

    def _task(self, thread_id: str, *, again: bool, trickle: bool = False) -> asyncio.Task[ThreadOutcome]:
        """The task working on ``thread_id``: a new one, or the one running. ``again``: what asks (a stream
        record) may have come after that task read the thread, so it looks once more when done; a pass
        over the index need not ask, as the next pass finds the thread again if it is still due. ``trickle``:
        the thread was found by a stream-fed worker's first pass, and goes ``_TRICKLE`` at a time."""
        running = self._running.get(thread_id)
        if running is not None:
            if again:
                self._again.add(thread_id)
            return running
        task = asyncio.get_running_loop().create_task(self._limited(thread_id, trickle))
        self._running[thread_id] = task
        return task

    async def _limited(self, thread_id: str, trickle: bool) -> ThreadOutcome:
        if self._slots is None or self._trickle is None:
            self._slots, self._trickle = asyncio.Semaphore(self.concurrency), asyncio.Semaphore(_TRICKLE)
        gate: contextlib.AbstractAsyncContextManager[Any] = self._trickle if trickle else contextlib.nullcontext()
        try:
            async with gate:
                while True:
                    async with self._slots:
                        outcome = await self.aprocess(thread_id)
                    if thread_id not in self._again:
                        break
                    self._again.discard(thread_id)
        finally:
            self._running.pop(thread_id, None)
        if outcome.retry_at is not None and self._timed:
            self.schedule(thread_id, outcome.retry_at)
        elif isinstance(outcome.result, Resumed) and self._timed:
            self._schedule_result(thread_id, outcome.result)
        return outcome

    def _schedule_result(self, thread_id: str, resumed: Resumed) -> None:
        """After a resume that stopped on new interrupts, their first deadline: this worker wrote the index
        entry that holds them, and does not read it back (``_handled``)."""
        deadlines = [i.expires_at for i in resumed.interrupts if i.expires_at is not None]
        if deadlines:
            self.schedule(thread_id, min(deadlines))

    def _handled(self, thread_id: str) -> bool:
        """Whether this worker is working on the thread, or will look at it again (a timer): an index entry
        written meanwhile (the mark of the answer it is applying, a run it lost the race to) needs no read,
        since that look reads the thread itself. Once done with it, the next entry is read: it may be a new
        run's, with a deadline."""
        return thread_id in self._running or self.pacing.scheduled(thread_id)

    def _all(self, threads: Iterable[str], *, again: bool, trickle: bool = False) -> list[asyncio.Task[ThreadOutcome]]:
        return [self._task(t, again=again, trickle=trickle) for t in dict.fromkeys(threads)]

    _timed = False
    """Whether this worker keeps timers (stream-fed): a polling worker finds everything again at its next pass."""

    def schedule(self, thread_id: str, at: float) -> None:
        """Look at ``thread_id`` again at ``at`` (epoch seconds), or earlier if already due earlier."""
        self.pacing.schedule(thread_id, at)

    # -- passes over the index, and changes -------------------------------------------------------------

    async def apass(self, *, wait: bool = True) -> Report:
        """One pass over the index: every thread with stored answers not yet applied or an interrupt past
        its deadline is worked on; ``on_interrupt`` sinks hear of every thread waiting. ``wait``: return once
        that work is done (else at once: a polling worker's next pass does not wait for a slow resume)."""
        if self.notifier.sinks:
            await self.notifier.scan()  # events a dead worker, or a receiver that was down, left in the outbox
        if self._watch is None:
            # A store with a change stream is passed over rarely (at start, --once): one bulk read is fewest requests.
            streamed = has_change_feed(self.checkpointer.storage)
            self._watch = IndexWatch(self.checkpointer, bulk=streamed)
        read = await self._watch.read()
        for thread, why in self._watch.corrupt.items():
            logger.error("thread %s: its index entry cannot be read, skipped: %s", thread, why)
        now = self.clock()
        due = []
        for thread, entry in read.entries.items():
            if entry.status != "interrupted":
                continue
            self.notifier.submit(interrupt_event(entry))
            if not self.pacing.pausing(thread, now) and self._due_now(thread, entry, now):
                due.append(thread)
        self._stalls.seen(due, now)
        if self.notifier.wants("answer"):
            for thread, before in read.before.items():
                await self._answers_since(before, read.entries.get(thread))
        # A stream-fed worker's pass (at its start) finds what the stream did not bring it: mostly threads other
        # workers have in hand; it works through them a few at a time, behind what the stream brings, and in
        # an order of its own, so that workers restarted one after the other do not all start at the same end.
        random.shuffle(due)
        started = self._all(due, again=False, trickle=self._timed)
        if wait:
            await asyncio.gather(*started)
        return self.report

    def _due_now(self, thread: str, entry: ThreadIndex, now: float) -> bool:
        """Whether a pass works on the waiting ``thread`` now (an answer stored, a deadline passed); a stream-fed
        worker schedules a later look instead where one is due later."""
        answered = {mark.interrupt_id for mark in entry.answered}
        deadlines = [i.expires_at for i in entry.interrupts if i.id not in answered and i.expires_at is not None]
        fresh = max((mark.at for mark in entry.answered), default=0.0) + min(self.work.lease, _FRESH)
        if any(at <= now for at in deadlines):
            return True
        if answered and self._timed and fresh > now:
            # A stream-fed worker's first pass: an answer stored seconds ago is most likely in the hands of
            # the workers that read it in the stream; look a little later rather than race them for it (a
            # fleet restarting a worker would otherwise redo every answer in flight).
            self.schedule(thread, fresh)
            return False
        if deadlines and self._timed and not answered:
            self.schedule(thread, min(deadlines))
        return bool(answered)

    async def _answers_since(self, before: ThreadIndex | None, now: ThreadIndex | None) -> None:
        """Answer events for a thread that moved on from the checkpoint it waited at: its answers were given
        straight to the app (the inbox's are marked in the index and were seen while it waited)."""
        if before is None or before.status != "interrupted" or (now is not None and now.seq <= before.seq):
            return
        prefix = answer_prefix(before.thread_id, before.seq)
        with contextlib.suppress(StorageError, CheckpointCorruptError):
            for key in await self.checkpointer.storage.list(prefix):
                found = await self.checkpointer.storage.read(key)
                if found is not None:
                    self.notifier.submit(answer_event(parse_answer(key, found[0], self.checkpointer.signing_key)))

    async def aapply_changes(self, keys: Iterable[str]) -> Report:
        """Act on storage keys written (a stream's records): an answer's thread is worked on; an index
        entry's is read for its ``on_interrupt`` event and its deadlines (kept as timers when this worker
        runs them). Returns the report (so far) once every thread named is done with."""
        threads: dict[str, None] = {}
        entries: dict[str, None] = {}
        for key in keys:
            changed = changed_thread(key)
            if changed is None:
                continue
            kind, thread = changed
            if kind == "answer":
                if self.notifier.wants("answer"):
                    await self._announce_answer(key)
                threads[thread] = None
            else:
                entries[thread] = None
        started = self._all(threads, again=True)
        for thread in entries:  # once per batch, and not for a thread this worker has in hand
            if (self.notifier.wants("interrupt") or (self._timed and not self._handled(thread))) \
                    and thread not in threads:
                await self._entry_changed(thread)
        await asyncio.gather(*started)
        return self.report

    async def _announce_answer(self, key: str) -> None:
        try:
            found = await self.checkpointer.storage.read(key)
            if found is not None:
                self.notifier.submit(answer_event(parse_answer(key, found[0], self.checkpointer.signing_key)))
        except (StorageError, CheckpointCorruptError) as exc:
            logger.warning("answer %s: could not be read for its event (%s)", key, exc)

    async def _entry_changed(self, thread: str) -> None:
        try:
            entry = await read_index(self.checkpointer.storage, thread, self.checkpointer.signing_key)
        except (StorageError, CheckpointCorruptError) as exc:
            logger.warning("thread %s: its index entry could not be read (%s)", thread, exc)
            return
        if entry is None or entry.status != "interrupted":
            return
        self.notifier.submit(interrupt_event(entry))
        answered = {mark.interrupt_id for mark in entry.answered}
        deadlines = [i.expires_at for i in entry.interrupts if i.id not in answered and i.expires_at is not None]
        if deadlines and self._timed:
            self.schedule(thread, min(deadlines))

    # -- running ----------------------------------------------------------------------------------------

    def _feed(self) -> ChangeFeed | None:
        storage = self.checkpointer.storage
        return storage.change_feed() if has_change_feed(storage) else None

    async def arun(self, *, once: bool = False, stop: asyncio.Event | None = None) -> Report:
        """Run until ``stop`` is set (or, with ``once``, one pass over the index: what is due now), then wait
        for the threads being worked on and the events being sent. Returns the report."""
        if once:
            try:
                await self.apass()
                await self.notifier.drain()
            finally:
                self.work.close()
            return self.report
        stop = stop or asyncio.Event()
        feed = self._feed()
        if feed is not None:
            await asyncio.to_thread(feed.start)  # the stream's end, before the pass: nothing falls between
            self._timed = True
        tasks = [asyncio.create_task(self._ticker(stop, feed is None))]
        if feed is not None:
            tasks.append(asyncio.create_task(self._follow(feed, stop)))
        stopped = asyncio.create_task(stop.wait())
        try:
            if feed is not None:
                await self._guarded(self.apass(), "the first pass over the index")
            done, _ = await asyncio.wait([*tasks, stopped], return_when=asyncio.FIRST_COMPLETED)
            for task in done:
                if task is not stopped and (failure := task.exception()) is not None:
                    raise failure
        finally:
            stop.set()
            for task in [*tasks, stopped]:
                task.cancel()
            await asyncio.gather(*tasks, stopped, return_exceptions=True)
            await asyncio.gather(*list(self._running.values()), return_exceptions=True)
            await self.notifier.drain()
            self.notifier.close()
            self.work.close()
        return self.report

    async def _guarded(self, work: Any, what: str) -> None:
        """Await ``work``; a transient store failure is logged (the next round tries again), others raise."""
        try:
            await work
        except StorageError as exc:
            if not exc.transient:
                raise
            logger.warning("%s failed (%s); trying again in %.1fs", what, exc, self.interval)

    async def _ticker(self, stop: asyncio.Event, polling: bool) -> None:
        """Every ``interval`` (from the start of the last round, whatever its resumes take): a pass over the
        index when polling, else the threads whose timer is due, and the outbox every ``_OUTBOX_LOOK``."""
        outbox = time.monotonic()
        while not stop.is_set():
            started = time.monotonic()
            if polling:
                await self._guarded(self.apass(wait=False), "a pass over the index")
            else:
                self._all(self.pacing.pop_due(), again=True)
                if self.notifier.sinks and started - outbox >= _OUTBOX_LOOK:
                    outbox = started
                    await self._guarded(self.notifier.scan(), "a look at the outbox")
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), max(0.0, started + self.interval - time.monotonic()))

    async def _follow(self, feed: ChangeFeed, stop: asyncio.Event) -> None:
        """Read the stream until ``stop``, a round of its shards every ``_STREAM_POLL`` seconds at most; each
        batch of keys is acted on without holding up the next read."""
        pending: set[asyncio.Task[Report]] = set()
        # A thread of its own: on the loop's default pool, a read of the stream would wait behind the resumes'
        # requests, which hold its few threads while the store answers.
        reader = ThreadPoolExecutor(max_workers=1, thread_name_prefix="statehitl-stream")
        try:
            await self._read_stream(feed, stop, reader, pending)
        finally:
            reader.shutdown(wait=False)
            await asyncio.gather(*pending, return_exceptions=True)

    async def _read_stream(self, feed: ChangeFeed, stop: asyncio.Event, reader: ThreadPoolExecutor,
                           pending: set[asyncio.Task[Report]]) -> None:
        failures = 0
        while not stop.is_set():
            started = time.monotonic()
            try:
                changes = await asyncio.get_running_loop().run_in_executor(reader, feed.poll)
                failures = 0
            except StorageError as exc:
                if not exc.transient:
                    raise
                failures += 1
                logger.warning("reading the stream failed (%s); trying again", exc)
                await asyncio.sleep(min(5.0, 0.1 * 2**failures))
                continue
            if changes:
                task = asyncio.create_task(self.aapply_changes([c.key for c in changes]))
                pending.add(task)
                task.add_done_callback(pending.discard)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), max(0.0, started + _STREAM_POLL - time.monotonic()))

    def run(self, *, once: bool = False) -> Report:
        """Sync ``arun``: until interrupted (Ctrl-C stops it after the threads in hand), or one pass."""
        from statehitl._sync import run_sync

        return run_sync(self.arun(once=once))


_OUTBOX_LOOK = 10.0
"""Seconds between a stream-fed worker's looks at the outbox, for events another worker left (it died, or
its receiver was down): a polling worker looks at every pass."""

_TRICKLE = 2
"""Threads a stream-fed worker's first pass works on at once (of its ``concurrency``), so that a worker
restarting in a busy fleet, whose pass finds every answer in flight, does not hold up the stream's."""

_FRESH = 3.0
"""Seconds an answer marked in the index is left to the workers that read it in the stream, by a worker
that has just started (at most a lease): they resume a thread well within that."""

_STREAM_POLL = 0.1
"""Seconds from one round of ``GetRecords`` over the stream's shards to the next, found something or not:
an answer waits in the stream 50 ms on average before a worker sees it, and a worker asks each shard at
most 10 times a second (back to back, a busy stream cost a ``GetRecords`` per few records, and the worker
as much CPU again as its resumes; AWS Lambda's own poller asks 4 times a second)."""


def _sinks(found: Sink | Sequence[Sink]) -> list[Sink]:
    if isinstance(found, Sequence) and not isinstance(found, str):
        return list(found)
    return [found]
