"""Records stored compressed, read by every checkpointer.

Compression is the default on every store but ``MemoryStorage``; ``compress=False`` writes plain JSON
(for a fleet some of whose readers predate compression). Reading never depends on the setting, so a
thread can be written by both kinds of checkpointer and read by either.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Annotated, Any

import pytest
from pydantic import BaseModel

from statehitl.checkpoint import Checkpointer, FileStorage, MemoryStorage
from statehitl.checkpoint.codec import decode, encode
from statehitl.checkpoint.records import StoredCheckpoint
from statehitl.checkpoint.storage import read_prefix
from statehitl.errors import CheckpointCorruptError
from statehitl.graph import END, START, StateGraph, append
from statehitl.testing import CountingStorage

PLACE = "threads/t/999999999996"
KEY = b"k" * 32


class Chat(BaseModel):
    messages: Annotated[list[dict[str, Any]], append] = []


def reply(state: Chat) -> dict[str, Any]:
    turn = len(state.messages) // 2
    return {"messages": [{"role": "assistant", "content": f"Answer {turn}: " + "the parcel was delivered " * 6}]}


def ask(state: Chat, ctx: Any) -> dict[str, Any]:
    answer = ctx.interrupt("approve", reason={"turn": len(state.messages)})
    return {"messages": [{"role": "user", "content": f"approved: {answer}"}]}


def chat_app(checkpointer: Checkpointer, *, asking: bool = False) -> Any:
    g = StateGraph(Chat)
    g.add_node("reply", reply)
    g.add_edge(START, "reply")
    if asking:
        g.add_node("ask", ask)
        g.add_edge("reply", "ask")
        g.add_edge("ask", END)
    else:
        g.add_edge("reply", END)
    return g.compile(checkpointer=checkpointer)


def talk(app: Any, turns: range, thread_id: str = "t") -> Any:
    result = None
    for turn in turns:
        result = app.invoke({"messages": [{"role": "user", "content": f"Question {turn}: where is my parcel?"}]},
                            thread_id=thread_id)
    return result


def reader(storage: Any) -> Checkpointer:
    """A default checkpointer that shares no cached state with the writer: it must decode every record."""
    return Checkpointer(CountingStorage(storage))


def sample_record() -> StoredCheckpoint:
    return StoredCheckpoint.model_validate({
        "thread_id": "t", "seq": 3, "parent_seq": 2, "depth": 4, "base_seq": 2, "created_at": 1.5,
        "machine": "Chat", "fingerprint": "f" * 16, "status": "executing", "step": 3, "pending": ["reply"],
        "values": {}, "appends": {"messages": {"start": 2, "items": [{"role": "user", "content": "hi " * 50}]}},
    })


def test_a_compressed_record_decodes_to_what_its_json_holds() -> None:
    record = sample_record()
    plain, packed = encode(record, None), encode(record, None, compress=True)
    assert plain.startswith(b"{")
    assert packed.startswith(b"\x00z1")
    assert len(packed) < len(plain) / 2
    assert decode("r", packed, None) == decode("r", plain, None)
    signed = encode(record, KEY, place=PLACE, compress=True)
    assert decode("r", signed, KEY, place=PLACE) == decode("r", plain, None)
    assert decode("r", signed, None) == decode("r", plain, None)  # as a signed JSON record reads without the key


@pytest.mark.parametrize(("damage", "message"), [
    (lambda data: data[:-5], "truncated"),
    (lambda data: data + b"extra", "bytes after its end"),
    (lambda data: data[:3] + bytes([data[3] ^ 0xFF]) + data[4:], "not valid compressed data"),
])
def test_damaged_compressed_records_are_reported_not_guessed(damage: Any, message: str) -> None:
    data = damage(encode(sample_record(), None, compress=True))
    with pytest.raises(CheckpointCorruptError, match=message) as caught:
        decode("record 'threads/t/x'", data, None)
    assert "record 'threads/t/x'" in str(caught.value)


def test_a_modified_compressed_record_fails_its_signature_before_it_is_inflated() -> None:
    data = bytearray(encode(sample_record(), KEY, place=PLACE, compress=True))
    data[5] ^= 0x01
    with pytest.raises(CheckpointCorruptError, match="fails its signature check"):
        decode("r", bytes(data), KEY, place=PLACE)


def test_compression_is_on_by_default_where_bytes_cost_and_must_be_a_bool(tmp_path: Path) -> None:
    assert Checkpointer(FileStorage(tmp_path)).compress is True
    assert Checkpointer(CountingStorage(FileStorage(tmp_path))).compress is True
    assert Checkpointer(MemoryStorage()).compress is False  # bytes in the process cost nothing
    assert Checkpointer(CountingStorage(MemoryStorage())).compress is False
    assert Checkpointer(MemoryStorage(), compress=True).compress is True
    assert Checkpointer(FileStorage(tmp_path), compress=False).compress is False
    with pytest.raises(TypeError, match=r"compress must be True, False or None \(the store's default\), got 'yes'"):
        Checkpointer(MemoryStorage(), compress="yes")  # type: ignore[arg-type]


def test_a_compressed_thread_writes_under_half_the_bytes_and_reads_back_whole(tmp_path: Path) -> None:
    plain, packed = CountingStorage(FileStorage(tmp_path / "plain")), CountingStorage(FileStorage(tmp_path / "packed"))
    expected = talk(chat_app(Checkpointer(plain, compress=False)), range(30))
    got = talk(chat_app(Checkpointer(packed, compress=True)), range(30))
    assert got.state == expected.state
    assert packed.counts.bytes_written < plain.counts.bytes_written / 2
    log = (tmp_path / "packed" / "threads" / "t~log").read_bytes()
    assert b'"schema_version"' not in log
    assert b"where is my parcel" not in log
    fresh = reader(FileStorage(tmp_path / "packed"))
    snapshot = chat_app(fresh).get_state("t")
    assert snapshot is not None
    assert snapshot.values == expected.state
    assert len(asyncio.run(fresh.history("t"))) == len(asyncio.run(reader(plain.inner).history("t")))


def test_one_thread_written_plain_then_compressed_reads_as_one(tmp_path: Path) -> None:
    """Turning compression on (or off) for a store that holds threads already: each record is read as
    it was written, in the same chain."""
    storage = FileStorage(tmp_path)
    talk(chat_app(Checkpointer(storage, compress=False)), range(5))
    talk(chat_app(Checkpointer(CountingStorage(storage), compress=True)), range(5, 10))
    result = talk(chat_app(Checkpointer(CountingStorage(storage), compress=False)), range(10, 12))
    questions = [m["content"] for m in result.state.messages][::2]
    assert questions == [f"Question {t}: where is my parcel?" for t in range(12)]
    history = asyncio.run(reader(storage).history("t"))  # every checkpoint, each rebuilt from its chain
    lengths = [len(h.values["messages"]) for h in history]
    # newest first: each turn's one record holds its question and its answer (and how the turn began)
    assert lengths == list(range(24, 0, -2))
    assert [h.source for h in history] == ["step"] * 12
    assert all(h.start is not None for h in history)
    assert history[0].values["messages"] == result.state.messages


def test_a_compressed_interrupt_is_answered_by_a_checkpointer_that_does_not_compress() -> None:
    storage = MemoryStorage()
    paused = talk(chat_app(Checkpointer(storage, compress=True, signing_key=KEY), asking=True), range(1))
    assert paused.stop_reason == "interrupt"
    [pending] = paused.interrupts
    answering = chat_app(Checkpointer(CountingStorage(storage), signing_key=KEY), asking=True)
    done = answering.invoke([{"interruptResponse": {"interruptId": pending.id, "response": "yes"}}], thread_id="t")
    assert done.stop_reason == "end"
    assert done.state.messages[-1] == {"role": "user", "content": "approved: yes"}


def test_a_claim_and_the_records_of_a_compressing_resume_are_read_by_a_default_checkpointer() -> None:
    storage = MemoryStorage()
    paused = talk(chat_app(Checkpointer(storage), asking=True), range(1))
    [pending] = paused.interrupts
    answering = chat_app(Checkpointer(CountingStorage(storage), compress=True), asking=True)
    done = answering.invoke([{"interruptResponse": {"interruptId": pending.id, "response": "ok"}}], thread_id="t")
    stored = asyncio.run(read_prefix(storage, "threads/t/"))  # newest first, as the slots sort
    kinds = [decode(key, data, None)["kind"] for key, (data, _) in stored.items()]
    packed = [data.startswith(b"\x00z1") for data, _ in stored.values()]
    assert "claim" in kinds
    assert packed[: kinds.index("claim") + 1] == [True] * (kinds.index("claim") + 1)  # the claim and after it
    assert packed[-1] is False  # the interrupted run's first checkpoint, written before compression
    snapshot = chat_app(reader(storage), asking=True).get_state("t")
    assert snapshot is not None
    assert snapshot.values == done.state


def test_the_signature_separator_inside_compressed_bytes_is_not_taken_for_a_signature() -> None:
    """Compressed bytes are not text: the separator's 14 bytes may occur in them by chance. Only the
    separator followed by a signature (64 hex digits, at the end) splits a record."""
    packed = encode(sample_record(), None, compress=True)
    data = packed[:8] + b"\n#hmac-sha256:" + packed[8:]  # as if the compressor had written those bytes
    with pytest.raises(CheckpointCorruptError, match="not valid compressed data"):  # inflated whole, so damaged
        decode("r", data, None)
    signed = encode(sample_record(), KEY, place=PLACE, compress=True)
    body, _, signature = signed.rpartition(b"\n#hmac-sha256:")
    assert decode("r", signed, KEY, place=PLACE) == decode("r", packed, None)
    with pytest.raises(CheckpointCorruptError, match="is not signed"):
        decode("r", body + b"\n#hmac-sha256:" + signature[:10], KEY, place=PLACE)


def test_a_record_in_a_later_format_asks_for_an_upgrade() -> None:
    with pytest.raises(CheckpointCorruptError, match="written by a newer statehitl; upgrade statehitl"):
        decode("record 'threads/t/x'", b"\x00z2" + b"\x01" * 20, None)
