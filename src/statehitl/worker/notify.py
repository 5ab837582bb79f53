"""Each event to its sinks once, through a durable outbox: a crash or a receiver that is down delays an
event, never loses it.

Every worker that reads a stream record, and every pass over the index, may derive the same event: four
workers on one stream all see each answer's write, Lambda redelivers a batch, a thread that keeps
waiting is seen by every pass. Before an event goes out it is written to the outbox,
``outbox/<digest of its id>`` (``OutboxEntry``: the event itself, which sinks took it, how many rounds
failed, when to try next), with a create-once write: of all the workers that derive it, one creates the
entry and sends; the others find it and leave it. Once every sink took the event, the worker writes its
marker beside the thread's index entry, ``index/<thread>/n.<event name>`` (``sent``: an event derived
again later is not sent again), and deletes the entry.

A round that fails (the receiver is down, answers ``5xx``) leaves the entry with the time of its next
try, along a schedule that spans days (``RETRY_SCHEDULE``, Standard Webhooks' example); a worker
killed mid-round leaves it holding its lease. Every worker reads the outbox now and then
(``scan``: one listing, the entries whose version changed) and takes over what is due, by
compare-and-set; a live worker also keeps a timer for the entries it failed. So an event is lost
neither to a crash nor to an outage shorter than the schedule. When the schedule is spent, the entry
stays, marked ``failed`` with the last error: ``statehitl deliveries`` lists it (and ``--retry`` sends
it again), and a ``delivery_failed`` event goes to the ``on_interrupt`` sinks.

A receiver can get an event twice: a worker that dies after the receiver took it and before the marker
said so leaves the entry to be sent again (and a delivery answered after its timeout is tried again).
The ``webhook-id`` header (and the payload's ``id``) is the same on every copy: receivers dedupe by it.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
import random
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from statehitl.checkpoint.claims import owner_id, process_gone
from statehitl.checkpoint.codec import decode_model, encode
from statehitl.checkpoint.engine import Checkpointer
from statehitl.checkpoint.index import index_prefix
from statehitl.checkpoint.records import SCHEMA_VERSION
from statehitl.checkpoint.storage import has_list_versions
from statehitl.errors import CheckpointConflict, CheckpointCorruptError, StorageError
from statehitl.worker.events import Event, EventKind, delivery_failed_event
from statehitl.worker.webhook import Sink, WebhookDeliveryError, as_sink, sink_id

logger = logging.getLogger("statehitl.worker")

OUTBOX_PREFIX = "outbox/"

RETRY_SCHEDULE: tuple[float, ...] = (5, 300, 1800, 7200, 18000, 36000, 50400, 72000, 86400)
"""Seconds from a failed round to the next (each drawn within 20% of it): Standard Webhooks' example, about
three days in all before an event is given up."""

_REMEMBERED = 100_000
"""Event ids a notifier remembers as settled (sent, or another worker's), so a thread that keeps waiting
costs no request per pass; past this the oldest are forgotten (costing one read of its marker)."""


class NotificationMark(BaseModel):
    """The marker of an event every sink took (``sent``), beside its thread's index entry: an event derived
    again is not sent again. (``sending`` markers were written by statehitl before the outbox.)"""

    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    kind: Literal["notification"] = "notification"
    schema_version: int = SCHEMA_VERSION
    event: str
    state: Literal["sending", "sent"]
    owner: str
    lease_until: float
    at: float


class OutboxEntry(BaseModel):
    """An event on its way to its sinks: the event, the sinks that took it, the rounds that failed."""

    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    kind: Literal["outbox"] = "outbox"
    schema_version: int = SCHEMA_VERSION
    event_kind: str
    thread_id: str
    name: str
    data: dict[str, Any] = Field(default_factory=dict)
    delivered: list[str] = Field(default_factory=list)
    """The sinks (``webhook.sink_id``) that took the event."""
    failures: int = 0
    """Rounds that failed so far."""
    next_at: float
    """When to try again (epoch seconds, the store's clock)."""
    owner: str | None = None
    lease_until: float = 0.0
    """While a worker is sending: until when the entry is its (a worker that died holds it no longer)."""
    state: Literal["pending", "failed"] = "pending"
    last_error: str | None = None
    created_at: float

    def event(self) -> Event:
        return Event(self.event_kind, self.thread_id, self.name, dict(self.data))  # type: ignore[arg-type]


def mark_key(event: Event) -> str:
    """Where the marker of ``event`` lives: beside its thread's index entry (``delete_thread`` removes it)."""
    return f"{index_prefix(event.thread_id)}n.{event.name}"


def outbox_key(event_id: str) -> str:
    """The outbox entry of event ``event_id`` (a digest: an event's id is no storage key)."""
    return f"{OUTBOX_PREFIX}{hashlib.sha256(event_id.encode()).hexdigest()[:40]}"


async def read_outbox(checkpointer: Checkpointer) -> dict[str, tuple[OutboxEntry, str]]:
    """Every outbox entry, by key, with its version token (``statehitl deliveries`` lists them)."""
    found = {}
    for key in await checkpointer.storage.list(OUTBOX_PREFIX):
        read = await checkpointer.storage.read(key)
        if read is not None:
            found[key] = (_parse(checkpointer, key, read[0]), read[1])
    return found


async def retry_failed(checkpointer: Checkpointer) -> int:
    """Put every outbox entry that gave up back on the schedule, due now; how many (``statehitl deliveries
    --retry``). The next worker to read the outbox sends them."""
    count = 0
    for key, (entry, token) in (await read_outbox(checkpointer)).items():
        if entry.state != "failed":
            continue
        again = entry.model_copy(update={"state": "pending", "failures": 0, "next_at": 0.0})
        with contextlib.suppress(CheckpointConflict):
            await checkpointer.storage.write(key, encode(again, checkpointer.signing_key, place=key), expect=token,
                                             durable=True)
            count += 1
    return count


def _parse(checkpointer: Checkpointer, key: str, data: bytes) -> OutboxEntry:
    return decode_model(OutboxEntry, f"outbox entry {key!r}", data, checkpointer.signing_key, place=key)


class Notifier:
    """Sends events to the sinks of their kind, once per event across workers, through the outbox.

    ``submit`` queues an event and returns at once, so a slow receiver never delays a resume; ``drain``
    waits until everything queued had its round (an ``--once`` run, a Lambda invocation). ``lease`` is how
    long a sender holds an entry before another may take it over; ``schedule`` the pauses between rounds.
    """

    def __init__(self, checkpointer: Checkpointer, sinks: dict[EventKind, Sequence[Sink]], *, lease: float = 60.0,
                 clock: Callable[[], float] = time.time, concurrency: int = 8,
                 schedule: Sequence[float] = RETRY_SCHEDULE) -> None:
        self.checkpointer = checkpointer
        self.sinks = {kind: [as_sink(s) for s in found] for kind, found in sinks.items() if found}
        self.lease = lease
        self.clock = clock
        self.schedule = tuple(schedule)
        self._settled: OrderedDict[str, None] = OrderedDict()
        """Events known to be in the outbox, sent, or someone else's to send: not entered again."""
        self._entering: dict[str, asyncio.Task[tuple[str, OutboxEntry, str] | None]] = {}
        """Events whose outbox entry is being created: whoever derives one again waits for that write."""
        self._tasks: set[asyncio.Task[None]] = set()
        self._timers: set[asyncio.TimerHandle] = set()
        self._slots = asyncio.Semaphore(concurrency)
        self._seen: dict[str, str] = {}
        """Outbox entries as last scanned: key -> version token (an unchanged one is not read again)."""
        self.sent = 0
        self.failed = 0

    def wants(self, kind: EventKind) -> bool:
        """Whether any sink takes events of ``kind`` (else deriving them is not worth a request)."""
        return kind in self.sinks

    def submit(self, event: Event | None) -> None:
        """Send ``event`` in the background, unless it has no sink or is known to be settled."""
        if event is None or not self.wants(event.kind) or event.id in self._settled:
            return
        entering, mine = self._entry_write(event)
        if mine:
            self._spawn(self._send(entering), slotted=False)

    async def drain(self) -> None:
        """Wait for every round started so far (later rounds are the outbox's: they survive this process)."""
        while self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)

    def close(self) -> None:
        """Forget the timers of later rounds (a worker stopping: the outbox keeps them)."""
        for timer in self._timers:
            timer.cancel()
        self._timers.clear()

    def _spawn(self, work: Awaitable[None], *, slotted: bool = True) -> None:
        """Run ``work`` in the background; ``slotted`` work (a round: a delivery) waits for one of the
        ``concurrency`` slots."""
        task = asyncio.get_running_loop().create_task(self._slotted(work) if slotted else self._guarded(work))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _slotted(self, work: Awaitable[None]) -> None:
        async with self._slots:
            await self._guarded(work)

    async def _guarded(self, work: Awaitable[None]) -> None:
        try:
            await work
        except (StorageError, CheckpointCorruptError) as exc:
            logger.warning("the outbox could not be written or read (%s); its entries are tried again at the "
                           "next look", exc)

    def _remember(self, event_id: str) -> None:
        self._settled[event_id] = None
        self._settled.move_to_end(event_id)
        while len(self._settled) > _REMEMBERED:
            self._settled.popitem(last=False)

    # -- one event ------------------------------------------------------------------------------------

    async def enqueue(self, event: Event | None) -> None:
        """Put ``event`` in the outbox now (durably, before the caller goes on), and give it its first round
        in the background. What a worker does with an answer's event before it resumes the thread: once the
        thread has moved on, nothing derives that event again, so it must be in the outbox first. A store
        that fails raises, and the caller goes on later."""
        if event is None or not self.wants(event.kind) or event.id in self._settled:
            return
        entering, mine = self._entry_write(event)
        entered = await asyncio.shield(entering)  # a failed write raises: not remembered, derived again later
        if mine and entered is not None:
            self._spawn(self._round(*entered))

    def _entry_write(self, event: Event) -> tuple[asyncio.Task[tuple[str, OutboxEntry, str] | None], bool]:
        """The write of ``event``'s outbox entry, and whether this call started it (its starter has the first
        round). An event derived twice at once (``submit`` from a stream record, then ``enqueue`` before its
        thread is resumed) shares one write, and both callers can wait for it: an event is counted settled
        only once that write is done, so ``enqueue`` never returns before the entry is stored."""
        entering = self._entering.get(event.id)
        if entering is not None:
            return entering, False
        entering = asyncio.get_running_loop().create_task(self._enter(event))
        self._entering[event.id] = entering
        entering.add_done_callback(lambda done: self._entry_written(event.id, done))
        return entering, True

    def _entry_written(self, event_id: str, done: asyncio.Task[tuple[str, OutboxEntry, str] | None]) -> None:
        self._entering.pop(event_id, None)
        if not done.cancelled() and done.exception() is None:  # (reading it marks a failure as seen)
            self._remember(event_id)

    async def _send(self, entering: Awaitable[tuple[str, OutboxEntry, str] | None]) -> None:
        """Wait for a newly derived event's outbox entry (no slot held: a delivery in progress never delays
        it), then have its first round in a slot."""
        entered = await entering
        if entered is not None:
            async with self._slots:
                await self._round(*entered)

    async def _enter(self, event: Event) -> tuple[str, OutboxEntry, str] | None:
        """Create ``event``'s outbox entry (unless it was sent, or is there already): its key, the entry and its
        version, for this worker to send; None when it is someone else's to send, or sent."""
        storage = self.checkpointer.storage
        marker = await storage.read(mark_key(event))
        if marker is not None and self._sent(event, marker[0]):
            self._remember(event.id)
            return None
        now = self.checkpointer.store_now()
        entry = OutboxEntry(event_kind=event.kind, thread_id=event.thread_id, name=event.name, data=event.data,
                            next_at=now, owner=owner_id(), lease_until=now + self.lease, created_at=now)
        key = outbox_key(event.id)
        try:
            token = await self.checkpointer.create(key, self._encode(key, entry), durable=True)
        except CheckpointConflict:
            self._remember(event.id)  # in the outbox already: its sender, or a look at the outbox, sends it
            return None
        return key, entry, token

    def _sent(self, event: Event, data: bytes) -> bool:
        mark = decode_model(NotificationMark, f"notification marker {mark_key(event)!r}", data,
                            self.checkpointer.signing_key, place=mark_key(event))
        return mark.state == "sent"

    async def _round(self, key: str, entry: OutboxEntry, token: str) -> None:
        """Give the event to every sink that has not taken it; then settle it, or schedule the next round."""
        event = entry.event()
        delivered, errors = list(entry.delivered), []
        for sink in self.sinks.get(event.kind, ()):
            name = sink_id(sink)
            if name in delivered:
                continue
            try:
                await sink(event)
            except WebhookDeliveryError as exc:
                errors.append(str(exc))
            else:
                delivered.append(name)
        if not errors:
            await self._settle(key, event)
            return
        await self._failed(key, entry.model_copy(update={"delivered": delivered}), token, "; ".join(errors))

    async def _settle(self, key: str, event: Event) -> None:
        """Every sink took ``event``: its marker says so, and its outbox entry goes."""
        self.sent += 1
        self._remember(event.id)
        now = self.checkpointer.store_now()
        mark = NotificationMark(event=event.id, state="sent", owner=owner_id(), lease_until=now, at=now)
        marker = mark_key(event)
        with contextlib.suppress(CheckpointConflict):  # a copy sent by another worker said so first
            await self.checkpointer.create(marker, self._encode(marker, mark), durable=True)
        await self.checkpointer.storage.delete(key)
        self._seen.pop(key, None)

    async def _failed(self, key: str, entry: OutboxEntry, token: str, error: str) -> None:
        """A round failed: the entry says when to try again, or, past the schedule, that it gave up."""
        self.failed += 1
        failures = entry.failures + 1
        now = self.checkpointer.store_now()
        if failures > len(self.schedule):
            update: dict[str, Any] = {"failures": failures, "state": "failed", "owner": None, "lease_until": 0.0,
                                      "last_error": error, "next_at": now}
            logger.error("event %s (%s) was given up after %d rounds: %s", entry.thread_id + "/" + entry.name,
                         entry.event_kind, failures, error)
        else:
            pause = self.schedule[failures - 1] * random.uniform(0.8, 1.2)
            update = {"failures": failures, "owner": None, "lease_until": 0.0, "last_error": error,
                      "next_at": now + pause}
            logger.warning("event %s (%s) was not delivered (%s); trying again in %.1fs", f"{entry.thread_id}/"
                           f"{entry.name}", entry.event_kind, error, pause)
        later = entry.model_copy(update=update)
        try:
            await self.checkpointer.storage.write(key, self._encode(key, later), expect=token, durable=True)
        except CheckpointConflict:
            return  # taken over meanwhile (this worker's lease ran out): the taker has it
        if later.state == "failed":
            if entry.event_kind != "delivery_failed":  # a notice that fails is not noticed again
                self.submit(delivery_failed_event(later.event(), later.failures, error))
            return
        self._later(key, later.next_at - now)

    def _later(self, key: str, delay: float) -> None:
        """Look at ``key`` again in ``delay`` seconds, while this process lives (the outbox keeps it anyway)."""
        loop = asyncio.get_running_loop()
        timer = loop.call_later(max(0.0, delay), lambda: self._spawn(self._due(key)))
        self._timers.add(timer)

    # -- the outbox -----------------------------------------------------------------------------------

    async def scan(self) -> int:
        """Take over the outbox entries that are due (their next round's time came, and no live worker holds
        them), and have their rounds; how many. One listing, and a read of each entry that changed since."""
        storage = self.checkpointer.storage
        if has_list_versions(storage):
            listed = await storage.list_versions(OUTBOX_PREFIX)
        else:
            listed = [(key, "") for key in await storage.list(OUTBOX_PREFIX)]
        started = 0
        for key, version in listed:
            if version and self._seen.get(key) == version:
                continue
            self._seen[key] = version
            self._spawn(self._due(key))
            started += 1
        for gone in set(self._seen) - {key for key, _ in listed}:
            del self._seen[gone]
        return started

    async def _due(self, key: str) -> None:
        """Have a round of the entry at ``key`` if it is due and this worker takes it over."""
        read = await self.checkpointer.storage.read(key)
        if read is None:
            return
        entry, token = _parse(self.checkpointer, key, read[0]), read[1]
        now = self.checkpointer.store_now()
        if entry.state != "pending" or entry.event_kind not in self.sinks:
            return
        held = entry.lease_until > now and not (entry.owner is not None and process_gone(entry.owner))
        if entry.next_at > now or held:
            self._later(key, max(entry.next_at, entry.lease_until) - now)  # a scan skips it while it stays as is
            return
        taken = entry.model_copy(update={"owner": owner_id(), "lease_until": now + self.lease})
        try:
            token = await self.checkpointer.storage.write(key, self._encode(key, taken), expect=token, durable=True)
        except CheckpointConflict:
            return  # another worker took it first
        await self._round(key, taken, token)

    def _encode(self, key: str, record: BaseModel) -> bytes:
        return encode(record, self.checkpointer.signing_key, place=key)

