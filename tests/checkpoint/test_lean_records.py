"""Checkpoints at the floor on a store with a bulk read: a step writes what it added (a delta from its
parent, its writes by reference), a cold load is one bulk read, a warm one checks only the head."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Annotated, Any

import pytest
from pydantic import BaseModel

from plain_storage import PrimitivesOnly
from statehitl.checkpoint import Checkpointer, FileStorage, MemoryStorage
from statehitl.checkpoint.codec import decode
from statehitl.checkpoint.step_writes import reference_writes, resolve_writes, split_value_writes
from statehitl.checkpoint.storage import Storage
from statehitl.errors import CheckpointCorruptError
from statehitl.graph import END, START, StateGraph, append
from statehitl.testing import CountingStorage

MESSAGE = "x" * 240


class Chat(BaseModel):
    turn: int = 0
    messages: Annotated[list[str], append] = []


def chat_app(storage: Storage, word: str = "answer") -> Any:
    def talk(state: Chat) -> dict[str, object]:
        return {"turn": state.turn + 1, "messages": [f"{word} {state.turn} {MESSAGE}"]}

    g = StateGraph(Chat)
    g.add_node("talk", talk)
    g.add_edge(START, "talk")
    g.add_edge("talk", END)
    return g.compile(checkpointer=Checkpointer(storage))


def stored(storage: MemoryStorage, seq: int) -> dict[str, Any]:
    found = asyncio.run(storage.read(f"threads/t/{10**12 - 1 - seq:012d}"))
    assert found is not None
    return decode("record", found[0], None)


class RecordingStorage(MemoryStorage):
    """Keeps every record written, in order."""

    def __init__(self) -> None:
        super().__init__()
        self.written: list[bytes] = []

    async def write(self, key: str, data: bytes, *, expect: str, durable: bool = True) -> str:
        self.written.append(data)
        return await super().write(key, data, expect=expect, durable=durable)


def test_a_step_writes_what_it_added_whatever_the_history() -> None:
    recording = RecordingStorage()
    storage = CountingStorage(recording)
    app = chat_app(storage)
    runs = []
    for _ in range(600):
        storage.reset()
        recording.written.clear()
        app.invoke({}, thread_id="t")
        assert storage.counts.bytes_written == sum(len(data) for data in recording.written)
        runs.append(list(recording.written))
    # after the first run (which also writes the thread's index entry), each run writes one record: its step's,
    # which also says how the run began (LangGraph's input checkpoint, shown from it: the input {} adds nothing)
    assert {len(run) for run in runs[1:]} == {1}
    assert all(decode("record", data, None)["kind"] == "checkpoint" for run in runs[1:] for data in run)
    written = [len(run[0]) for run in runs]
    content = len(json.dumps({"turn": 600, "messages": [f"answer 599 {MESSAGE}"]}))  # what the step wrote
    # The target: at most 1.5x the step's new content plus 200 bytes, at every history length, and the run's
    # beginning besides (its first step's tasks and number: LangGraph writes a checkpoint of its own for it).
    start = len(json.dumps({"start": {"pending": ["talk"], "step": 599}}, separators=(",", ":")))
    assert max(written[1:]) <= 1.5 * content + 200 + start, (content, max(written[1:]))
    assert written[-1] - written[10] < 20  # the digits of the step numbers, nothing of the history
    for run in runs:
        record = decode("record", run[0], None)
        assert record["start"] == {"pending": ["talk"], "step": record["step"] - 1}


def test_records_are_deltas_from_their_parent_and_writes_name_their_items() -> None:
    memory = MemoryStorage()
    app = chat_app(memory)
    for _ in range(3):
        app.invoke({}, thread_id="t")
    last = stored(memory, 2)  # each run wrote its step's record, which also says how the run began: 0, 1, 2
    assert last["base_seq"] == last["parent_seq"] == 1
    assert last["start"] == {"pending": ["talk"], "step": last["step"] - 1}
    assert last["appends"] == {"messages": {"start": 2, "items": [f"answer 2 {MESSAGE}"]}}
    # the new message is named by its place in the piece; a number is repeated (naming it costs more)
    assert last["writes"] == {"talk": {"turn": 3, "messages": {"$items": [2, 3]}}}
    assert "value_writes" not in last
    assert "thread_id" not in last
    assert "interrupts" not in last
    newest = app.history("t")[0]
    assert newest.writes == {"talk": {"turn": 3, "messages": [f"answer 2 {MESSAGE}"]}}
    assert newest.values.messages[0] == f"answer 0 {MESSAGE}"


def test_a_cold_load_is_one_bulk_read_and_a_warm_one_checks_only_the_head() -> None:
    storage = CountingStorage(MemoryStorage())
    app = chat_app(storage)
    for _ in range(300):
        app.invoke({}, thread_id="t")
    storage.reset()
    snapshot = app.get_state("t")  # warm: this process wrote the thread
    warm = storage.reset()
    assert snapshot is not None
    assert len(snapshot.values.messages) == 300
    # the listing carries the head's version token: its value is not read; the snapshot names the checkpoint
    # before it, whose record alone (not its chain) is read for that
    assert dict(warm.calls) == {"list": 1, "read": 1}
    cold = chat_app(storage).get_state("t")  # a new process: nothing known
    counts = storage.reset()
    assert cold is not None
    assert cold.values == snapshot.values
    assert dict(counts.calls) == {"read_all": 1, "read": 1}


def test_a_warm_head_sees_what_another_process_wrote() -> None:
    memory = MemoryStorage()
    here, there = chat_app(memory), chat_app(memory, word="elsewhere")
    for _ in range(3):
        here.invoke({}, thread_id="t")
    there.invoke({}, thread_id="t")
    result = here.invoke({}, thread_id="t")
    assert [m.split()[0] for m in result.state.messages] == ["answer"] * 3 + ["elsewhere", "answer"]


def test_a_thread_deleted_and_written_anew_elsewhere_is_read_anew() -> None:
    memory = MemoryStorage()
    here, there = chat_app(memory), chat_app(memory, word="elsewhere")
    for _ in range(3):
        here.invoke({}, thread_id="t")
    asyncio.run(there.checkpointer.delete_thread("t"))
    for _ in range(3):
        there.invoke({}, thread_id="t")  # the same sequence numbers, other records
    snapshot = here.get_state("t")
    assert snapshot is not None
    assert [m.split()[0] for m in snapshot.values.messages] == ["elsewhere"] * 3


def test_prune_rewrites_the_oldest_kept_checkpoint_whole() -> None:
    memory = MemoryStorage()
    app = chat_app(memory)
    for _ in range(20):
        app.invoke({}, thread_id="t")
    # each run wrote one record: 20 checkpoints, 0 to 19; 17 to 19 are kept (the last three runs)
    assert asyncio.run(app.checkpointer.prune("t", keep_last=3)) == 17
    assert len(asyncio.run(memory.list("threads/t/"))) == 3
    oldest = stored(memory, 17)
    assert "base_seq" not in oldest
    assert oldest["appends"]["messages"]["start"] == 0
    assert len(oldest["appends"]["messages"]["items"]) == 18
    fresh = chat_app(memory)
    # each kept run shows its input and first-step checkpoints too, but the oldest, whose record before is gone
    assert [len(h.values.messages) for h in fresh.history("t")] == [20, 19, 19, 19, 18, 18, 18]
    assert fresh.history("t")[-1].writes == {"talk": {"turn": 18, "messages": [f"answer 17 {MESSAGE}"]}}
    assert len(fresh.invoke({}, thread_id="t").state.messages) == 21


class PruneWhileReading:
    """A store on which another process prunes the thread just after this one read the newest record."""

    def __init__(self, inner: MemoryStorage, pruner: Checkpointer) -> None:
        self.inner, self.pruner, self.armed = inner, pruner, False
        self.write, self.list, self.delete, self.read_all = inner.write, inner.list, inner.delete, inner.read_all

    async def read(self, key: str) -> tuple[bytes, str] | None:
        found = await self.inner.read(key)
        if self.armed:
            self.armed = False
            await self.pruner.prune("t", keep_last=1)
        return found


def test_a_reader_that_met_a_record_before_prune_rewrote_it_reads_the_rewrite() -> None:
    memory = MemoryStorage()
    for _ in range(10):
        chat_app(memory).invoke({}, thread_id="t")
    racing = PruneWhileReading(memory, Checkpointer(memory))
    reader = chat_app(racing)
    assert reader.get_state("t") is not None  # the reader knows the thread now ...
    chat_app(memory).invoke({}, thread_id="t")  # ... and another process moves it on
    racing.armed = True  # the reader reads the new head, then the thread is pruned to that head
    snapshot = reader.get_state("t")
    assert snapshot is not None
    assert len(snapshot.values.messages) == 11
    assert len(asyncio.run(memory.list("threads/t/"))) == 1


def test_a_write_that_is_the_value_the_record_holds_is_stored_once() -> None:
    long = "the model's whole answer, longer than a short string"
    writes = {"model": {"turn": {"role": "assistant", "text": "hi"}, "text": long, "stop": "end"}, "other": {"n": 2}}
    values = {"turn": {"role": "assistant", "text": "hi"}, "text": long, "stop": "end", "n": 3}
    kept, same = split_value_writes(writes, values)
    assert (kept, same) == ({"model": {"stop": "end"}, "other": {"n": 2}}, {"model": ["turn", "text"]})
    assert resolve_writes(kept, values, same) == writes
    # equal as Python compares, but not as JSON: stored as written
    assert split_value_writes({"a": {"flag": True, "ratio": 1}}, {"flag": 1, "ratio": 1.0}) == (
        {"a": {"flag": True, "ratio": 1}}, {})
    assert split_value_writes({"a": {"v": [1, {"x": True}]}}, {"v": [1, {"x": 1}]})[1] == {}
    assert split_value_writes({"a": {"v": [], "w": None, "s": "short"}}, {"v": [], "w": None, "s": "short"})[1] == {}
    assert split_value_writes(writes, {}) == (writes, {})


def test_references_stand_only_for_the_items_a_write_appended() -> None:
    piece = {"start": 4, "items": ["input", "a1", "a2", "b1"]}
    writes = {"a": {"log": ["a1", "a2"], "n": 1}, "b": {"log": ["b1"]}}
    lean = reference_writes(writes, {"log": piece})
    assert lean == {"a": {"log": {"$items": [5, 7]}, "n": 1}, "b": {"log": {"$items": [7, 8]}}}
    assert writes["a"]["log"] == ["a1", "a2"]  # the caller's writes are left as they were
    whole = {"log": ["w", "x", "y", "z", "input", "a1", "a2", "b1"]}
    assert resolve_writes(lean, whole) == writes
    # A reducer that did not append the write as it came: the write is stored as it is.
    assert reference_writes({"a": {"log": ["A1"]}}, {"log": piece}) == {"a": {"log": ["A1"]}}
    assert reference_writes({"a": {"log": ["x"] * 9}}, {"log": piece}) == {"a": {"log": ["x"] * 9}}
    assert reference_writes({"a": {"other": [1]}}, {"log": piece}) == {"a": {"other": [1]}}


class ReadsCountedFileStorage(FileStorage):
    """A file store that counts its reads, keeping the file store's ``cache_scope``."""

    def __init__(self, root: Path) -> None:
        super().__init__(root)
        self.reads: list[str] = []

    async def read(self, key: str) -> tuple[bytes, str] | None:
        self.reads.append("read")
        return await super().read(key)

    async def read_all(self, prefix: str) -> dict[str, tuple[bytes, str]]:
        self.reads.append("read_all")
        return await super().read_all(prefix)

    async def version(self, key: str) -> str | None:
        self.reads.append("version")
        return await super().version(key)

    async def list_versions(self, prefix: str, *, limit: int | None = None) -> list[tuple[str, str]]:
        self.reads.append("list_versions")
        return await super().list_versions(prefix, limit=limit)


def test_a_checkpointer_per_request_on_one_directory_knows_what_the_last_one_wrote(tmp_path: Path) -> None:
    for _ in range(5):
        chat_app(FileStorage(tmp_path)).invoke({}, thread_id="t")  # a new store and app per request
    counted = ReadsCountedFileStorage(tmp_path)
    snapshot = chat_app(counted).get_state("t")
    assert snapshot is not None
    assert len(snapshot.values.messages) == 5
    # the head's token: another checkpointer of this process wrote the rest; the record before it, for its id
    assert counted.reads == ["list_versions", "read"]
    signed = ReadsCountedFileStorage(tmp_path)
    g = StateGraph(Chat)
    g.add_node("talk", lambda state: {"turn": state.turn + 1})
    g.add_edge(START, "talk")
    g.add_edge("talk", END)
    with pytest.raises(CheckpointCorruptError, match="not signed"):  # another key: nothing taken on trust
        g.compile(checkpointer=Checkpointer(signed, signing_key=b"k")).get_state("t")


def test_a_thread_written_as_a_fenwick_chain_goes_on_as_deltas() -> None:
    memory = MemoryStorage()
    for _ in range(10):
        chat_app(PrimitivesOnly(memory)).invoke({}, thread_id="t")  # as every store was written before deltas
    # each run writes one record: seq 0 to 9 here, 10 to 14 below
    assert stored(memory, 6)["base_seq"] == 5  # depth 7's base is depth 6 (seq 5): a Fenwick record
    assert "base_seq" not in stored(memory, 7)  # depth 8 holds every item from the first
    assert stored(memory, 5)["base_seq"] == 3  # depth 6's base is depth 4 (seq 3)
    for _ in range(5):
        chat_app(memory).invoke({}, thread_id="t")
    # each a delta from its parent (as a Fenwick chain, depth 12's base would be depth 8, seq 7)
    assert [stored(memory, seq)["base_seq"] for seq in range(10, 15)] == list(range(9, 14))
    fresh = chat_app(memory)
    # newest first; each run shows its step's checkpoint, its first step's and its input's (what the run
    # before it left)
    assert [len(h.values.messages) for h in fresh.history("t")] == [n for k in range(15, 0, -1)
                                                                     for n in (k, k - 1, k - 1)]
    assert fresh.get_state("t").values.messages[9] == f"answer 9 {MESSAGE}"


def test_a_run_stores_its_config_keys_only_when_it_was_given_some() -> None:
    """LangGraph's checkpoint metadata holds the run config's own keys; a run given none stores nothing for
    them, and one given some stores their plain values on each of its checkpoints."""
    storage = MemoryStorage()
    app = chat_app(storage)
    app.invoke({}, {"configurable": {"thread_id": "t"}})
    assert "metadata" not in stored(storage, 0)
    app.invoke({}, {"configurable": {"thread_id": "t", "user": "ann", "handle": object()},
                    "metadata": {"team": "blue"}})
    assert stored(storage, 1)["metadata"] == {"team": "blue", "user": "ann"}
    assert app.get_state({"configurable": {"thread_id": "t"}}).metadata == {
        "source": "loop", "step": 4, "parents": {}, "team": "blue", "user": "ann"}
