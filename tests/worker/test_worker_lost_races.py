"""A run that loses its thread while still alive leaves the thread where a polling worker finds it.

The chaos benchmark's stall, replayed step by step in one process on the file store (whose durable writes
leave the event loop, as a worker's do): a run acting on an answer outlives its lease (a loaded machine),
another worker takes its action's outcome as unknown and gives the go-ahead to retry it (the settle record
takes the slot the first run's last checkpoint was going to), and is killed before its own resume. The
first run then stops, its last checkpoint refused. Its index entry must not have gone ahead of the records
(saying "completed" for a checkpoint that was never stored): the entry is all a polling worker goes by,
and one that says completed hides the thread from every pass for good.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest
from pydantic import BaseModel

from statehitl.checkpoint.engine import Checkpointer
from statehitl.errors import CheckpointConflict, StorageUnavailableError
from statehitl.graph import END, START, NodeContext, StateGraph
from statehitl.inbox.answers import answer_waiting
from statehitl.resumable import resume_stored
from statehitl.testing.faults import FaultyStorage
from statehitl.worker import Worker
from statehitl.worker.thread_work import RETRY_COMMENT


class Payout(BaseModel):
    decision: Any = None
    paid: bool = False


class Gate:
    """Holds the first run of ``act`` inside the action until ``release``; later runs go straight through.
    ``keys``: the idempotency key of every run of the action."""

    def __init__(self) -> None:
        self.entered = asyncio.Event()
        self.released = asyncio.Event()
        self.keys: list[str] = []

    async def act(self, state: Payout, ctx: NodeContext) -> dict[str, Any]:
        self.keys.append(ctx.idempotency_key)
        if len(self.keys) == 1:
            self.entered.set()
            await self.released.wait()
        return {"paid": True}


def payout_graph(gate: Gate, store: str | Checkpointer) -> Any:
    def ask(state: Payout, ctx: NodeContext) -> dict[str, Any]:
        return {"decision": ctx.interrupt("approve")}

    g = StateGraph(Payout)
    g.add_node("ask", ask)
    g.add_node("act", gate.act)
    g.add_edge(START, "ask")
    g.add_edge("ask", "act")
    g.add_edge("act", END)
    checkpointer = store if isinstance(store, Checkpointer) else Checkpointer.from_url(store)
    return g.compile(checkpointer=checkpointer)


async def _answered(app: Any, checkpointer: Checkpointer, thread: str) -> None:
    stopped = await app.ainvoke({}, thread_id=thread)
    await answer_waiting(checkpointer, thread, stopped.interrupts[0].id, "yes", responder="ann", via="inbox")


async def _lease_over(checkpointer: Checkpointer, thread: str) -> None:
    """Until the running step's lease (a microsecond) has run out: the first run looks dead to the others."""
    head = await checkpointer.head(thread)
    assert head is not None
    assert head.record.status == "executing"
    assert head.record.lease_until is not None
    while time.time() <= head.record.lease_until:
        await asyncio.sleep(0)


class EntriesDown(FaultyStorage):
    """Index entries cannot be written while ``down`` (everything else can): a process that stopped after a
    run's last checkpoint and before its index entry, as far as the store can tell."""

    down = False

    async def write(self, key: str, data: bytes, *, expect: str, durable: bool = True) -> str:
        if self.down and key.startswith("index/") and key.endswith("/entry"):
            raise StorageUnavailableError(f"injected: the index entry {key!r} was not written")
        return await super().write(key, data, expect=expect, durable=durable)


def test_a_run_that_outlived_its_lease_and_lost_its_slot_to_a_retry_leaves_the_thread_to_the_workers(
        store: str) -> None:
    async def scenario() -> None:
        gate = Gate()
        app = payout_graph(gate, store)
        checkpointer = Checkpointer.from_url(store)
        await _answered(app, checkpointer, "t")
        first = asyncio.create_task(resume_stored(app, "t", lease_seconds=1e-6))  # its lease runs out at once
        await gate.entered.wait()
        await _lease_over(checkpointer, "t")
        # Another worker: the outcome is unknown, it gives the go-ahead (--retry-unknown)... and is killed.
        await checkpointer.retry_unknown("t", responder="worker", comment=RETRY_COMMENT)
        gate.released.set()
        with pytest.raises(CheckpointConflict, match="moved past"):
            await first  # its last checkpoint's slot was taken: it stops, nothing stored after the action

        entry = await checkpointer.thread_info("t")
        assert entry is not None
        assert (entry.status, [mark.responder for mark in entry.answered]) == ("interrupted", ["ann"])
        head = await checkpointer.head("t")
        assert head is not None
        assert head.record.status == "executing"

        report = await Worker(store, lambda thread: app, lease_seconds=5, retry_unknown=True).apass()
        assert report.counts["resumed"] == 1
        latest = await checkpointer.latest("t")
        assert latest is not None
        assert latest.status == "completed"
        assert latest.values["paid"] is True
        assert len(gate.keys) == 2
        assert len(set(gate.keys)) == 1
        entry = await checkpointer.thread_info("t")
        assert entry is not None
        assert (entry.status, entry.seq) == ("completed", latest.seq)

    asyncio.run(scenario())


def test_a_worker_brings_up_to_date_an_index_entry_left_behind_a_completed_thread(store: str) -> None:
    """The process that completed the thread stopped between its last checkpoint and the index entry (here:
    the entry's write failed): the entry still says answered and waiting. A pass finds nothing to resume,
    and writes the entry the records call for, so the thread is neither listed as waiting nor looked at
    again at every pass."""

    async def scenario() -> None:
        gate = Gate()
        gate.released.set()
        faulty = EntriesDown(Checkpointer.from_url(store).storage)
        app = payout_graph(gate, Checkpointer(faulty))
        checkpointer = Checkpointer.from_url(store)
        await _answered(app, checkpointer, "t")
        faulty.down = True
        with pytest.raises(StorageUnavailableError, match="index entry"):
            await resume_stored(app, "t")
        latest = await checkpointer.latest("t")
        assert latest is not None
        assert latest.status == "completed"
        stale = await checkpointer.thread_info("t")
        assert stale is not None
        assert stale.status == "interrupted"
        faulty.down = False

        worker = Worker(store, lambda thread: app)
        assert (await worker.apass()).counts["done"] == 1
        entry = await checkpointer.thread_info("t")
        assert entry is not None
        assert (entry.status, entry.seq) == ("completed", latest.seq)
        # The report adds up every pass: the second one found nothing due.
        assert (await worker.apass()).counts["done"] == 1
        assert len(gate.keys) == 1

    asyncio.run(scenario())
