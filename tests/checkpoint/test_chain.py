"""Where a checkpoint's items live: the Fenwick chain on stores without a bulk read, deltas from the
parent on stores with one; bounded reads, writes that grow with what a step added."""

from __future__ import annotations

import asyncio
import math
from typing import Annotated

import pytest
from pydantic import BaseModel

from plain_storage import PrimitivesOnly
from statehitl.checkpoint import Checkpointer, MemoryStorage
from statehitl.checkpoint.chain import assemble, base_depth
from statehitl.checkpoint.record_parts import Piece
from statehitl.checkpoint.records import StoredCheckpoint
from statehitl.errors import CheckpointCorruptError
from statehitl.graph import END, START, StateGraph, append
from statehitl.testing import CountingStorage


class Chat(BaseModel):
    turn: int = 0
    messages: Annotated[list[str], append] = []


def talk(state: Chat) -> dict[str, object]:
    return {"turn": state.turn + 1, "messages": f"answer {state.turn} " + "x" * 180}


def chat_app(storage: CountingStorage):
    g = StateGraph(Chat)
    g.add_node("talk", talk)
    g.add_edge(START, "talk")
    g.add_edge("talk", END)
    return g.compile(checkpointer=Checkpointer(storage))


def test_base_depth_clears_the_lowest_bit() -> None:
    assert [base_depth(d) for d in range(1, 9)] == [0, 0, 2, 0, 4, 4, 6, 0]


def _stored(seq: int, start: int, items: list[str]) -> StoredCheckpoint:
    return StoredCheckpoint(thread_id="t", seq=seq, created_at=0, machine="m", fingerprint="f",
                            status="running", step=0, values={}, appends={"log": Piece(start=start, items=items)})


def test_assemble_joins_pieces_oldest_first_and_stops_at_a_full_piece() -> None:
    chain = [_stored(3, 3, ["d"]), _stored(2, 2, ["c"]), _stored(1, 0, ["a", "b"]), _stored(0, 0, ["zz"])]
    assert assemble(chain) == {"log": ["a", "b", "c", "d"]}


def test_assemble_refuses_a_gap() -> None:
    with pytest.raises(CheckpointCorruptError, match="starts at item 3 but the chain holds 2"):
        assemble([_stored(2, 3, ["d"]), _stored(1, 0, ["a", "b"])])


@pytest.mark.parametrize("turns", [10, 100, 1000])
def test_reading_the_head_takes_at_most_log2_reads(turns: int) -> None:
    storage = CountingStorage(PrimitivesOnly(MemoryStorage()))
    for _ in range(turns):
        chat_app(storage).invoke({}, thread_id="t")  # a new process each turn: nothing known here
    storage.reset()
    state = chat_app(storage).get_state("t")
    assert state is not None
    assert len(state.values.messages) == turns
    counts = storage.reset()
    assert counts.calls["list"] == 1
    # the head's chain, and its parent's record alone (the snapshot names the checkpoint before it)
    assert counts.calls["read"] <= math.floor(math.log2(turns)) + 2


def test_bytes_written_per_turn_grow_with_the_turn_not_the_history() -> None:
    written = {}
    for turns in (100, 1000):
        storage = CountingStorage(PrimitivesOnly(MemoryStorage()))
        app = chat_app(storage)
        for _ in range(turns):
            app.invoke({}, thread_id="t")
        written[turns] = storage.counts.bytes_written
    per_turn_100, per_turn_1000 = written[100] / 100, written[1000] / 1000
    # Whole snapshots would make the per-turn cost ten times larger at 1000 turns than at 100; the
    # chain rewrites each item once per level, so it grows only with log2(turns).
    assert per_turn_1000 < per_turn_100 * 2.5
    assert per_turn_1000 < 4000  # a turn adds ~200 bytes of message: a few KB of records in all


def test_history_rebuilds_every_checkpoint_whole() -> None:
    storage = CountingStorage(MemoryStorage())
    app = chat_app(storage)
    for _ in range(9):
        app.invoke({}, thread_id="t")
    history = app.history("t")
    # Each run's one record shows LangGraph's three checkpoints: what the thread held before the run's input
    # (source "input"), the input applied (the first step's, "loop"; the input is {} here), then the step's.
    assert [len(h.values.messages) for h in history] == [n for k in range(9, 0, -1) for n in (k, k - 1, k - 1)]
    assert [h.metadata["source"] for h in history] == ["loop", "loop", "input"] * 9
    assert history[-3].values.messages[0].startswith("answer 0 ")
    assert history[2].values.messages == history[3].values.messages  # the 9th run's input = the 8th's result


def test_reads_do_not_depend_on_the_event_loop_reusing_state() -> None:
    storage = CountingStorage(MemoryStorage())
    app = chat_app(storage)
    app.invoke({}, thread_id="t")
    snapshot = asyncio.run(app.aget_state("t"))
    assert snapshot is not None
    assert snapshot.values.turn == 1
