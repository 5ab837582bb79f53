"""Each event to its sinks once, however many workers derive it and however often a record is redelivered.

Every worker that reads a stream record, and every pass over the index, may derive the same event:
four workers on one stream all see each answer's write, Lambda redelivers a batch that failed, and a
thread that keeps waiting is seen by every pass. So before an event goes out, a marker is created for
it in the store, ``index/<thread>/n.<event name>``, with a create-once write: of all the workers that
try, exactly one creates it and sends; the others find it and skip. The marker sits beside the thread's
index entry, so ``delete_thread`` (which deletes ``index/<thread>/``) takes it along with the thread.

A marker says who is sending and until when (a lease), and is rewritten as ``sent`` once every sink
took the event. A worker killed between creating the marker and sending leaves it ``sending``: once
its lease has run out, the next worker that derives the event again (the thread is still waiting, a
record is redelivered) takes the marker over with a compare-and-set and sends. So an event is never
lost to a crash while it can still be derived, and is sent twice only if a worker dies after a sink
took it and before the marker said so: the payload's ``id`` lets a receiver drop that copy.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import Literal

from pydantic import BaseModel, ConfigDict

from statehitl.checkpoint.codec import decode_model, encode
from statehitl.checkpoint.engine import Checkpointer, owner_id
from statehitl.checkpoint.index import index_prefix
from statehitl.checkpoint.records import SCHEMA_VERSION
from statehitl.errors import CheckpointConflict, CheckpointCorruptError, StorageError
from statehitl.worker.events import Event, EventKind
from statehitl.worker.webhook import Sink, WebhookDeliveryError, as_sink

__all__ = ["NotificationMark", "Notifier", "mark_key"]

logger = logging.getLogger("statehitl.worker")

_REMEMBERED = 100_000
"""Event ids a notifier remembers as settled (sent, or another worker's), so a thread that keeps waiting
costs no request per pass; past this the oldest are forgotten (costing one read of its marker)."""


class NotificationMark(BaseModel):
    """The create-once marker of one event: who sends it, until when, and whether every sink took it."""

    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    kind: Literal["notification"] = "notification"
    schema_version: int = SCHEMA_VERSION
    event: str
    state: Literal["sending", "sent"]
    owner: str
    lease_until: float
    at: float


def mark_key(event: Event) -> str:
    """Where the marker of ``event`` lives: beside its thread's index entry (``delete_thread`` removes it)."""
    return f"{index_prefix(event.thread_id)}n.{event.name}"


class Notifier:
    """Sends events to the sinks of their kind, once per event across workers (see the module docstring).

    ``submit`` queues an event and returns at once, so a slow receiver never delays a resume;
    ``drain`` waits until everything queued was delivered or given up (an ``--once`` run, a Lambda
    invocation). ``lease`` is how long a sender holds an event's marker before another may take it over.
    """

    def __init__(self, checkpointer: Checkpointer, sinks: dict[EventKind, Sequence[Sink]], *, lease: float = 60.0,
                 clock: Callable[[], float] = time.time, concurrency: int = 8) -> None:
        self.checkpointer = checkpointer
        self.sinks = {kind: [as_sink(s) for s in found] for kind, found in sinks.items() if found}
        self.lease = lease
        self.clock = clock
        self._settled: OrderedDict[str, None] = OrderedDict()
        self._tasks: set[asyncio.Task[None]] = set()
        self._slots = asyncio.Semaphore(concurrency)
        self.sent = 0
        self.failed = 0

    def wants(self, kind: EventKind) -> bool:
        """Whether any sink takes events of ``kind`` (else deriving them is not worth a request)."""
        return kind in self.sinks

    def submit(self, event: Event | None) -> None:
        """Send ``event`` in the background, unless it has no sink or is known to be settled."""
        if event is None or not self.wants(event.kind) or event.id in self._settled:
            return
        self._settled[event.id] = None  # while in flight too: the same event again is not queued twice
        task = asyncio.get_running_loop().create_task(self._send(event))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def drain(self) -> None:
        """Wait for every event submitted so far to be delivered or given up."""
        while self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)

    def _remember(self, event_id: str) -> None:
        self._settled[event_id] = None
        self._settled.move_to_end(event_id)
        while len(self._settled) > _REMEMBERED:
            self._settled.popitem(last=False)

    async def _send(self, event: Event) -> None:
        async with self._slots:
            try:
                token = await self._take(event)
                if token is None:  # another worker sent it, or is sending it now
                    self._remember(event.id)
                    return
                try:
                    for sink in self.sinks[event.kind]:
                        await sink(event)
                except WebhookDeliveryError as exc:
                    self.failed += 1
                    self._settled.pop(event.id, None)  # derived again later, it is tried again once the lease ends
                    logger.error("event %s (%s) was not delivered: %s", event.id, event.kind, exc)
                    return
                self.sent += 1
                self._remember(event.id)
                await self._settle(event, token)
            except (StorageError, CheckpointCorruptError) as exc:
                self._settled.pop(event.id, None)
                logger.warning("event %s: its marker could not be written or read (%s); it is tried again when the "
                               "event is seen again", event.id, exc)

    def _mark(self, event: Event, state: Literal["sending", "sent"], key: str) -> bytes:
        now = self.clock()
        mark = NotificationMark(event=event.id, state=state, owner=owner_id(), lease_until=now + self.lease, at=now)
        return encode(mark, self.checkpointer.signing_key, place=key)

    async def _take(self, event: Event) -> str | None:
        """Create the event's marker (or take over one whose sender's lease ran out); its version, or None
        when the event is someone else's to send, or sent."""
        key = mark_key(event)
        storage = self.checkpointer.storage
        try:
            return await self.checkpointer.create(key, self._mark(event, "sending", key), durable=True)
        except CheckpointConflict:
            pass
        found = await storage.read(key)
        if found is None:  # the thread was deleted meanwhile: nothing to tell anyone
            return None
        mark = decode_model(NotificationMark, f"notification marker {key!r}", found[0], self.checkpointer.signing_key,
                            place=key)
        if mark.state == "sent" or mark.lease_until > self.clock():
            return None
        try:
            return await storage.write(key, self._mark(event, "sending", key), expect=found[1], durable=True)
        except CheckpointConflict:  # another worker took it over first
            return None

    async def _settle(self, event: Event, token: str) -> None:
        """Rewrite the marker as ``sent`` (on the version this worker wrote: a takeover since wins)."""
        key = mark_key(event)
        try:
            await self.checkpointer.storage.write(key, self._mark(event, "sent", key), expect=token, durable=False)
        except CheckpointConflict:
            pass
        except StorageError as exc:  # delivered: its lease alone now stands between it and a second copy
            logger.warning("event %s was delivered, but its marker could not say so (%s)", event.id, exc)

