"""An event is in the outbox before the worker goes on: ``enqueue`` (what a worker does with an answer's event
before it resumes the thread) must not return on the strength of a ``submit`` of the same event still in
flight, nor wait behind deliveries in progress. Found by the chaos benchmark on DynamoDB under load: a
stream-fed worker submitted the answer event, resumed the thread while the entry's write waited for a
delivery slot, and was killed; nothing derived the event again."""

from __future__ import annotations

import asyncio

from statehitl.checkpoint.engine import Checkpointer
from statehitl.checkpoint.memory_storage import MemoryStorage
from statehitl.errors import StorageError
from statehitl.worker import Event
from statehitl.worker.notify import Notifier, outbox_key


def _answer(thread: str) -> Event:
    return Event("answer", thread, "a.000000000002.i1", {"response": "y"})


async def _stored(checkpointer: Checkpointer, event: Event) -> bool:
    return await checkpointer.storage.read(outbox_key(event.id)) is not None


def test_enqueue_after_submit_returns_once_the_entry_is_stored() -> None:
    async def scenario() -> None:
        checkpointer = Checkpointer(MemoryStorage())
        receiver_open = asyncio.Event()
        taken: list[str] = []

        async def receiver(event: Event) -> None:
            await receiver_open.wait()
            taken.append(event.id)

        notifier = Notifier(checkpointer, {"answer": [receiver]}, concurrency=1)
        event = _answer("t1")
        notifier.submit(event)  # from the stream record
        await notifier.enqueue(event)  # before the thread is resumed
        assert await _stored(checkpointer, event)
        receiver_open.set()
        await notifier.drain()
        assert taken == [event.id]  # one delivery: the two derivations shared one entry
        assert not await _stored(checkpointer, event)  # settled

    asyncio.run(scenario())


def test_an_entry_is_stored_while_every_delivery_slot_is_held() -> None:
    async def scenario() -> None:
        checkpointer = Checkpointer(MemoryStorage())
        receiver_open = asyncio.Event()

        async def receiver(event: Event) -> None:
            await receiver_open.wait()

        notifier = Notifier(checkpointer, {"answer": [receiver]}, concurrency=1)
        held, waiting = _answer("held"), _answer("waiting")
        await notifier.enqueue(held)
        await asyncio.sleep(0)  # its round takes the one slot and hangs in the receiver
        notifier.submit(waiting)
        await asyncio.wait_for(notifier.enqueue(waiting), timeout=30)  # not behind the hung delivery
        assert await _stored(checkpointer, waiting)
        receiver_open.set()
        await notifier.drain()
        assert notifier.sent == 2

    asyncio.run(scenario())


def test_a_failed_entry_write_leaves_the_event_to_be_derived_again() -> None:
    async def scenario() -> None:
        checkpointer = Checkpointer(MemoryStorage())
        notifier = Notifier(checkpointer, {"answer": [lambda event: None]})
        event = _answer("t3")
        real_create = checkpointer.create
        failures = [1]

        async def create_once_failing(key: str, data: bytes, *, durable: bool = True) -> str:
            if key == outbox_key(event.id) and failures:
                failures.pop()
                raise StorageError("disk full")
            return await real_create(key, data, durable=durable)

        checkpointer.create = create_once_failing  # type: ignore[method-assign]
        notifier.submit(event)
        await notifier.drain()  # the write failed and was logged
        assert notifier.sent == 0
        await notifier.enqueue(event)  # derived again: entered this time
        await notifier.drain()
        assert notifier.sent == 1

    asyncio.run(scenario())
