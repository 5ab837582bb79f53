"""The checkpoint engine under an app: records, history, thread ids, conflicts, durability."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import re
from pathlib import Path
from typing import Annotated, Any

import pytest
from pydantic import BaseModel, ValidationError

import stored_records
from statehitl.checkpoint import (
    Checkpointer,
    CheckpointRecord,
    FileCheckpointer,
    FileStorage,
    MemoryCheckpointer,
    MemoryStorage,
    validate_thread_id,
)
from statehitl.checkpoint.codec import decode, encode
from statehitl.checkpoint.reading import Head
from statehitl.checkpoint.record_parts import InterruptRecord, Piece
from statehitl.checkpoint.records import SCHEMA_VERSION, ClaimRecord, MachineShape, StoredCheckpoint, ThreadIndex
from statehitl.errors import (
    CheckpointConflict,
    CheckpointCorruptError,
    CheckpointNotFoundError,
    InvalidThreadIdError,
)
from statehitl.graph import END, START, NodeContext, StateGraph, Status, append
from statehitl.testing import CountingStorage
from statehitl.testing.faults import FaultyStorage


class S(BaseModel):
    log: Annotated[list[str], append] = []


def mark(name: str):
    def node(state: S) -> dict[str, Any]:
        return {"log": name}

    return node


def review(state: S, ctx: NodeContext) -> dict[str, Any]:
    return {"log": f"review={ctx.interrupt('approve', reason={'log': state.log})}"}


def build(checkpointer: Checkpointer | None, **compile_kwargs: Any):
    g = StateGraph(S)
    g.add_node("a", mark("a"))
    g.add_node("review", review)
    g.add_node("b", mark("b"))
    g.add_edge(START, "a")
    g.add_edge("a", "review")
    g.add_edge("review", "b")
    g.add_edge("b", END)
    return g.compile(checkpointer=checkpointer, **compile_kwargs)


def finish(app: Any, thread: str = "t") -> Any:
    result = app.invoke({}, thread_id=thread)
    return app.invoke([{"interruptResponse": {"interruptId": result.interrupts[0].id, "response": "y"}}],
                      thread_id=thread)


@pytest.fixture(params=["memory", "file"])
def checkpointer(request: pytest.FixtureRequest, tmp_path: Path) -> Checkpointer:
    return MemoryCheckpointer() if request.param == "memory" else FileCheckpointer(tmp_path / "cp")


# -- get_state and history --------------------------------------------------------------------------


def test_get_state_and_history_newest_first(checkpointer: Checkpointer) -> None:
    app = build(checkpointer)
    assert app.get_state("t") is None  # as docs/checkpoints.md says: None, not an error, for a new thread
    assert app.history("t") == []
    with pytest.raises(CheckpointNotFoundError, match=r"thread 't' has no checkpoint 000000000000"):
        app.get_state("t", "000000000000")
    finish(app)
    history = app.history("t")
    # LangGraph's history: the run's input (-1) and first step (0) come from the run's first record
    # (slot 0, which stopped after a); the interrupted record (slot 1) restates slot 0's checkpoint, under its
    # id; the resume claimed slot 2, so the run after the answer starts at 3.
    assert [(h.checkpoint_id, h.status, h.step, h.next) for h in history] == [
        ("000000000004", Status.COMPLETED, 3, ()),
        ("000000000003", Status.EXECUTING, 2, ("b",)),
        ("000000000000", Status.INTERRUPTED, 1, ("review",)),
        ("000000000000.2", Status.EXECUTING, 0, ("a",)),
        ("000000000000.1", Status.EXECUTING, -1, ("__start__",)),
    ]
    assert [h.parent_checkpoint_id for h in history] == [
        "000000000003", "000000000000", "000000000000.2", "000000000000.1", None,
    ]
    assert [h.metadata["source"] for h in history] == ["loop", "loop", "loop", "loop", "input"]
    assert app.get_state("t") == history[0]
    assert history[0].values == S(log=["a", "review=y", "b"])
    assert history[-1].values == S()  # the input checkpoint: no node has run yet
    assert history[-1].writes == {}
    assert [i.name for i in history[2].interrupts] == ["approve"]
    assert history[2].interrupts[0].reason == {"log": ["a"]}
    assert history[1].writes == {"review": {"log": "review=y"}}
    assert [h.created_at for h in history] == sorted((h.created_at for h in history), reverse=True)


def test_history_through_the_async_api(checkpointer: Checkpointer) -> None:
    app = build(checkpointer)
    finish(app)

    async def main() -> tuple[Any, Any]:
        return await app.aget_state("t"), await app.ahistory("t")

    latest, history = asyncio.run(main())
    assert latest == history[0]
    assert len(history) == 5  # the input checkpoint, the three steps' checkpoints and the interrupt's


def test_an_offered_head_is_taken_once_by_its_own_checkpointer_for_its_thread(checkpointer: Checkpointer) -> None:
    from statehitl.checkpoint.reading import offering_head

    build(checkpointer).invoke({"log": []}, thread_id="t")
    other = Checkpointer(checkpointer.storage)

    async def main() -> None:
        read = await checkpointer.head("t")
        assert read is not None
        offered = dataclasses.replace(read)
        with offering_head(checkpointer, offered):
            assert await other.head("t") is not offered  # another checkpointer on the same store reads
            assert await checkpointer.head("u") is None  # another thread is read
            assert await checkpointer.head("t", read.record.checkpoint_id) is not offered  # a checkpoint by id too
            assert await checkpointer.head("t") is offered
            assert await checkpointer.head("t") is not offered  # once
        with offering_head(checkpointer, offered):
            pass
        assert await checkpointer.head("t") is not offered  # not past its block

    asyncio.run(main())


def test_threads_are_separate_and_listed(checkpointer: Checkpointer) -> None:
    app = build(checkpointer)
    finish(app, "one")
    app.invoke({}, thread_id="two")
    assert sorted(e.thread_id for e in asyncio.run(checkpointer.threads())) == ["one", "two"]
    assert [e.thread_id for e in asyncio.run(checkpointer.threads("interrupted"))] == ["two"]
    assert app.get_state("one").status == Status.COMPLETED
    assert app.get_state("two").status == Status.INTERRUPTED
    # the run's first record (after a), the interrupt, and the thread's index record
    assert asyncio.run(checkpointer.delete_thread("two")) == 3
    assert app.get_state("two") is None
    assert asyncio.run(checkpointer.thread_info("two")) is None
    assert [e.thread_id for e in asyncio.run(checkpointer.threads())] == ["one"]


def test_delete_thread_is_sync_for_sync_callers_and_awaited_in_async_code(checkpointer: Checkpointer) -> None:
    """LangGraph's ``delete_thread`` is sync: called without an event loop it deletes at once (what it returns
    still awaits to the count); in async code it is a coroutine that does nothing until awaited."""
    app = build(checkpointer)
    for thread in ("sync", "async"):
        finish(app, thread)
    checkpointer.delete_thread("sync")  # not awaited
    assert app.get_state("sync") is None

    async def main() -> int:
        pending = checkpointer.delete_thread("async")
        assert app.get_state("async") is not None  # nothing done before the await
        return await pending

    assert asyncio.run(main()) > 0
    assert app.get_state("async") is None
    assert asyncio.run(checkpointer.adelete_thread("async")) == 0


def test_get_one_checkpoint_by_id(checkpointer: Checkpointer) -> None:
    app = build(checkpointer)
    finish(app)
    record = asyncio.run(checkpointer.get("t", "000000000001"))  # slot 0 is the run's first record, after a
    assert isinstance(record, CheckpointRecord)
    assert (record.seq, record.status) == (1, "interrupted")
    assert asyncio.run(checkpointer.get("t", 1)) == record
    with pytest.raises(CheckpointNotFoundError, match=r"^thread 't' has no checkpoint 000000000099$") as missing:
        asyncio.run(checkpointer.get("t", "000000000099"))
    assert isinstance(missing.value, KeyError)  # what LangGraph-style callers catch
    with pytest.raises(CheckpointNotFoundError, match=r"thread 't' has no checkpoint 000000000002"):
        asyncio.run(checkpointer.get("t", "000000000002"))  # the resume's claim: not a checkpoint
    for bad in ("latest", -1, 10**12):
        with pytest.raises(CheckpointNotFoundError, match=rf"^{bad!r} is not a checkpoint id of thread 't'$"):
            asyncio.run(checkpointer.get("t", bad))
    with pytest.raises(CheckpointNotFoundError, match=r"^thread 'empty' has no checkpoint '000000000001'$"):
        asyncio.run(checkpointer.head("empty", "000000000001"))


# -- durability -------------------------------------------------------------------------------------


class SpyStorage(MemoryStorage):
    """Remembers the key, the record kind and the ``durable`` flag of every write (a claim that records the
    answers its run acts on is an ``action`` claim)."""

    def __init__(self) -> None:
        super().__init__()
        self.writes: list[tuple[str, str, bool]] = []

    async def write(self, key: str, data: bytes, *, expect: str, durable: bool = True) -> str:
        record = json.loads(data)
        kind = "action" if record["kind"] == "claim" and record.get("answered") else record["kind"]
        self.writes.append((key, kind, durable))
        return await super().write(key, data, expect=expect, durable=durable)

    @property
    def durable(self) -> list[bool]:
        """The ``durable`` flag of each checkpoint record written, in order."""
        return [durable for _, kind, durable in self.writes if kind == "checkpoint"]

    def assert_only_checkpoints_are_forced(self) -> None:
        """Checkpoints live under ``threads/``; claims without answers, index and machine records are never
        forced; a resume's claim is (it records that the action started, before the action), and so are the
        audit entries ``prune`` keeps beside the index entry (a trail must survive a crash). The pointers from
        interrupt ids to their thread (``ids/``) are hints, never forced."""
        for key, kind, durable in self.writes:
            if kind in ("checkpoint", "claim", "action", "answer"):
                assert key.startswith("threads/t/"), (key, kind)
            elif kind == "resume_audit":
                assert key.startswith("index/t/audit."), (key, kind)
                assert durable, (key, kind)
            elif kind == "interrupt-pointer":
                assert key.startswith("ids/"), (key, kind)
            else:
                assert kind in ("index", "machine"), (key, kind)
            if kind == "action":
                assert durable, (key, kind)
            elif kind not in ("checkpoint", "resume_audit"):
                assert not durable, (key, kind)


def test_a_machine_shape_is_stored_once_per_store_and_process(tmp_path: Path) -> None:
    """A server builds a graph per request: each request's runner is new, but the shape is written once; a
    checkpointer per request on one directory shares what the process knows of it."""
    spy = SpyStorage()
    checkpointer = Checkpointer(spy)
    for thread in ("t1", "t2"):
        build(checkpointer).invoke({}, thread_id=thread)
    assert [kind for _, kind, _ in spy.writes].count("machine") == 1
    shapes: list[str] = []

    class ShapeSpy(FileStorage):
        async def write(self, key: str, data: bytes, *, expect: str, durable: bool = True) -> str:
            if key.startswith("machines/"):
                shapes.append(key)
            return await super().write(key, data, expect=expect, durable=durable)

    for thread in ("t1", "t2"):
        build(Checkpointer(ShapeSpy(tmp_path / "cp"))).invoke({}, thread_id=thread)
    assert len(shapes) == 1


@pytest.mark.parametrize(
    ("durability", "statuses", "flags"),
    [
        # one record per step (the run's first also says how the run began); only the records invoke returns
        # on are forced to disk
        ("step", ["completed", "executing", "interrupted", "executing"], [False, True, False, True]),
        # every step forced before the next runs: the run's beginning too, in a record of its own
        ("sync", ["completed", "executing", "interrupted", "executing", "executing"],
         [True, True, True, True, True]),
        # only the records invoke returns on (no input checkpoint)
        ("exit", ["completed", "interrupted"], [True, True]),
    ],
)
def test_durability_decides_which_records_are_written_and_forced(durability: str, statuses: list[str],
                                                                  flags: list[bool]) -> None:
    storage = SpyStorage()
    checkpointer = Checkpointer(storage)
    finish(build(checkpointer, durability=durability))
    assert [r.status for r in asyncio.run(checkpointer.history("t"))] == statuses
    assert storage.durable == flags  # checkpoint records, in the order written
    storage.assert_only_checkpoints_are_forced()
    # besides the checkpoints: the answer (its one binding record, not forced: the claim's sync covers it on
    # the file store), the resume's claim, the index after each invoke (the one that lists the interrupt
    # with the pointer from its id to the thread), the machine's shape once
    kinds = [kind for _, kind, _ in storage.writes if kind != "checkpoint"]
    assert kinds == ["index", "interrupt-pointer", "machine", "answer", "action", "index"]
    # the answer's audit entry is in the first checkpoint the resume stored, not a write of its own
    history = asyncio.run(checkpointer.history("t"))
    [interrupted] = [r for r in history if r.status == "interrupted"]
    resumed = sorted((r for r in history if r.seq > interrupted.seq), key=lambda r: r.seq)
    assert [len(r.answered) for r in resumed] == [1] + [0] * (len(resumed) - 1)
    assert resumed[0].answered[0].checkpoint_id == interrupted.checkpoint_id


def test_durability_can_be_chosen_per_invoke() -> None:
    storage = SpyStorage()
    app = build(Checkpointer(storage))
    app.invoke({}, thread_id="t", durability="sync")
    assert storage.durable == [True, True, True]  # the run's beginning, the step's, the interrupt's
    storage.assert_only_checkpoints_are_forced()


def test_without_a_checkpointer_threads_live_in_the_app() -> None:
    app = build(None)
    assert app.durability == "exit"
    result = finish(app)
    assert result.state.log == ["a", "review=y", "b"]
    assert build(None).get_state("t") is None  # another app does not see them


# -- records ----------------------------------------------------------------------------------------


def slot(seq: int) -> str:
    """The file name of record ``seq``: counts down from 999999999999, so the newest lists first."""
    return f"{999_999_999_999 - seq:012d}"


def test_records_are_versioned_json_compressed_on_disk(tmp_path: Path) -> None:
    app = build(FileCheckpointer(tmp_path))
    finish(app)
    names = stored_records.names(tmp_path, "threads/t/")
    slots = [name for name in names if name.isdigit()]
    [answer] = [name for name in names if not name.isdigit()]  # the one binding answer, a JSON record
    assert answer == f"a.{1:012d}.{stored_records.read_json(tmp_path, f'threads/t/{answer}')['interrupt_id']}"
    assert stored_records.read(tmp_path, f"threads/t/{answer}").startswith(b"{")
    assert all(stored_records.read(tmp_path, f"threads/t/{name}").startswith(b"\x00z1") for name in slots)
    assert stored_records.read(tmp_path, "index/t/entry").startswith(b"{")  # index entries stay JSON
    # slot 0: the run's first record (after a), which also says how the run began
    assert slots == [slot(4), slot(3), slot(2), slot(1), slot(0)]
    assert slots == ["999999999995", "999999999996", "999999999997", "999999999998", "999999999999"]
    assert (tmp_path / "threads" / "t~log").read_bytes().startswith(b"statehitl-log v2 ")  # one log per thread
    records = [stored_records.read_json(tmp_path, f"threads/t/{name}") for name in slots]
    assert [(r["kind"], r["seq"]) for r in records] == [
        ("checkpoint", 4), ("checkpoint", 3), ("claim", 2), ("checkpoint", 1), ("checkpoint", 0),
    ]
    assert all(r["schema_version"] == SCHEMA_VERSION for r in records)
    waiting = records[3]
    assert waiting["status"] == "interrupted"
    assert "values" not in waiting  # ``log`` is append-only: stored as a piece, and empty fields are left out
    assert "error" not in waiting
    assert "completed" not in waiting
    # A delta from its parent, which added "a": the interrupted step appended nothing.
    assert waiting["appends"] == {"log": {"start": 1, "items": []}}
    assert waiting["base_seq"] == waiting["parent_seq"] == 0
    first = records[4]  # the run's first record: its step, and how the run began (LangGraph's input checkpoint)
    assert first["appends"] == {"log": {"start": 0, "items": ["a"]}}
    assert (first["step"], first["pending"]) == (1, ["review"])
    assert first["start"] == {"pending": ["a"], "step": 0}  # the input was {}: no update to keep
    assert waiting["pending"] == ["review"]
    assert [i["name"] for i in waiting["interrupts"]] == ["approve"]
    assert waiting["machine"] == "SGraph"
    assert waiting["fingerprint"] == app.machine.fingerprint
    claim = records[2]
    assert (claim["parent_seq"], claim["owner"]) == (1, records[1]["owner"])  # the resumed run held it
    index = stored_records.read_json(tmp_path, "index/t/entry")
    assert (index["kind"], index["schema_version"]) == ("index", SCHEMA_VERSION)
    assert (index["seq"], index["status"], index["step"]) == (4, "completed", 3)
    shape = stored_records.read_json(tmp_path, f"machines/{app.machine.fingerprint}")
    assert shape["kind"] == "machine"
    assert shape["shape"]["nodes"] == ["a", "b", "review"]


def test_records_are_stored_as_pydantic_writes_them() -> None:
    """The stored body is ``model_dump_json``'s without what a stored checkpoint leaves out, byte for byte
    (non-finite floats as null, text as UTF-8),
    and a signature covers exactly those bytes."""
    checkpoint = StoredCheckpoint(
        thread_id="t", seq=3, parent_seq=2, depth=3, base_seq=2, created_at=1.25, machine="m", fingerprint="f",
        status="interrupted", step=2, pending=["review"],
        values={"text": "naïve ✓ \u2028 \x1f \"q\"", "nan": float("nan"), "inf": float("-inf"), "big": 10**20,
                "small": 1e-7},
        appends={"log": Piece(start=2, items=["a", {"nested": [1, 2.5, None, True]}])},
        interrupts=[InterruptRecord(id="i1", name="approve", reason={"log": ["a"]})],
        progress={"review": (1, 2)},
    )
    claim = ClaimRecord(thread_id="t", seq=4, parent_seq=3, owner="h:1:ab", lease_until=2.5, created_at=1.5)
    index = ThreadIndex(thread_id="t", seq=3, status="interrupted", step=2, interrupts=checkpoint.interrupts,
                        machine="m", updated_at=1.25)
    for record in (checkpoint, claim, index, MachineShape(shape={"nodes": ["a"]})):
        left_out = record.stored_exclude() if hasattr(record, "stored_exclude") else None
        body = record.model_dump_json(exclude=left_out).encode()
        assert encode(record, None) == body
        signed = encode(record, b"key", place="threads/t/x")
        assert signed.startswith(body + b"\n#hmac-sha256:")
        assert decode("record", signed, b"key", place="threads/t/x") == json.loads(body)


def test_a_commit_refuses_a_malformed_record_before_writing_it() -> None:
    storage = CountingStorage(MemoryStorage())
    checkpointer = Checkpointer(storage)
    app = build(checkpointer)
    app.invoke({}, thread_id="t")
    head = asyncio.run(checkpointer.head("t"))
    assert head is not None
    storage.reset()
    state = app.schema.load(head.record.values)
    for bad in ({"step": -1}, {"step": 1, "unknown": "field"}):
        with pytest.raises(ValidationError):
            asyncio.run(checkpointer.commit(head.cursor, state, app.schema, durable=True, status="executing",
                                            machine="m", fingerprint="f", **bad))
    assert storage.counts.calls["write"] == 0
    assert asyncio.run(checkpointer.latest("t")) == head.record


@pytest.mark.parametrize(("compress", "kind"), [(True, "compressed data"), (False, "JSON")])
def test_a_corrupt_record_is_a_clear_error(tmp_path: Path, compress: bool, kind: str) -> None:
    app = build(FileCheckpointer(tmp_path, compress=compress))
    app.invoke({}, thread_id="t")
    head = f"threads/t/{slot(1)}"  # the interrupt's checkpoint, after the run's first (the step's)
    stored_records.rewrite(tmp_path, head, stored_records.read(tmp_path, head)[:20])
    with pytest.raises(CheckpointCorruptError, match=rf"'threads/t/999999999998' is not valid {kind}"):
        app.get_state("t")
    stored_records.rewrite(tmp_path, head, b'{"kind": "checkpoint"}')
    with pytest.raises(CheckpointCorruptError, match=r"is malformed"):
        app.get_state("t")


def test_a_record_from_a_newer_version_is_refused(tmp_path: Path) -> None:
    app = build(FileCheckpointer(tmp_path))
    app.invoke({}, thread_id="t")
    head = f"threads/t/{slot(1)}"  # the interrupt's checkpoint, after the run's first (the step's)
    record = stored_records.read_json(tmp_path, head)
    record["schema_version"] = SCHEMA_VERSION + 1
    stored_records.rewrite_json(tmp_path, head, record)
    with pytest.raises(CheckpointCorruptError, match=r"newer than this statehitl understands.*upgrade"):
        app.get_state("t")


# -- conflicts --------------------------------------------------------------------------------------


def test_committing_an_existing_checkpoint_again_is_a_conflict(checkpointer: Checkpointer) -> None:
    """Two writers read the same head; the first takes the next slot, the stale one is refused."""
    app = build(checkpointer)
    app.invoke({}, thread_id="t")

    async def commit_after(head: Head, entry: str) -> Any:
        record = head.record
        state = app.schema.load({**record.values, "log": [*record.values["log"], entry]})
        return await checkpointer.commit(head.cursor, state, app.schema, durable=True, status=record.status,
                                         machine=record.machine, fingerprint=record.fingerprint,
                                         step=record.step, source="update", pending=record.pending)

    async def main() -> None:
        first, stale = await checkpointer.head("t"), await checkpointer.head("t")
        assert first is not None
        assert stale is not None
        written = await commit_after(first, "first")
        assert (written.parent_seq, written.seq) == (1, 2)  # 0: the run's first (after a), 1: the interrupt
        with pytest.raises(CheckpointConflict,
                           match=r"thread 't' moved past checkpoint 1 while this run was working"):
            await commit_after(stale, "stale")
        latest = await checkpointer.latest("t")
        assert latest is not None
        assert (latest.seq, latest.values) == (2, {"log": ["a", "first"]})
        assert [r.seq for r in await checkpointer.history("t")] == [2, 1, 0]

    asyncio.run(main())


class GatedStorage(FileStorage):
    """A file store whose first head read (the newest key and its version) once ``gate["barrier"]`` is set
    waits there."""

    def __init__(self, root: Path, gate: dict[str, asyncio.Barrier]) -> None:
        super().__init__(root)
        self.gate = gate
        self.waited = False

    async def list_versions(self, prefix: str, *, limit: int | None = None) -> list[tuple[str, str]]:
        keys = await super().list_versions(prefix, limit=limit)
        if limit == 1 and "barrier" in self.gate and not self.waited:
            self.waited = True
            await asyncio.wait_for(self.gate["barrier"].wait(), 5)
        return keys


@pytest.mark.parametrize("race", [True, False], ids=["both-read-the-head-first", "second-sees-the-claim"])
def test_two_apps_resuming_the_same_interrupt_exactly_one_proceeds(tmp_path: Path, race: bool) -> None:
    """Only one resume gets past its claim, before any node runs; the other gets ``CheckpointConflict``.

    Both give the same answer (a different one would be refused sooner, as not the first answer: see
    ``test_answers``). ``race``: both apps read the same interrupted head before either claims it, so the
    create-once write of the claim decides. Otherwise the second app starts while the first one's node is
    running and finds its live claim.
    """
    started: list[str] = []
    asked: list[str] = []
    gate: dict[str, asyncio.Barrier] = {}

    async def main() -> list[Any]:
        release = asyncio.Event()
        running = asyncio.Event()

        async def slow_review(state: S, ctx: NodeContext) -> dict[str, Any]:
            answer = ctx.interrupt("approve")
            started.append(answer)
            running.set()
            await asyncio.wait_for(release.wait(), 5)
            return {"log": answer}

        def make() -> Any:
            g = StateGraph(S)
            g.add_node("review", slow_review)
            g.add_edge(START, "review")
            g.add_edge("review", END)
            return g.compile(checkpointer=Checkpointer(GatedStorage(tmp_path, gate)))

        first, second = make(), make()
        pending = (await first.ainvoke({}, thread_id="t")).interrupts[0]
        asked.append(pending.id)

        def answer(app: Any, text: str) -> Any:
            return app.ainvoke([{"interruptResponse": {"interruptId": pending.id, "response": text}}], "t")

        if race:
            gate["barrier"] = asyncio.Barrier(2)
            release.set()
            return await asyncio.gather(answer(first, "yes"), answer(second, "yes"),
                                        return_exceptions=True)
        winner = asyncio.create_task(answer(first, "yes"))
        await asyncio.wait_for(running.wait(), 5)
        loser = await asyncio.gather(answer(second, "yes"), return_exceptions=True)
        release.set()
        return [await winner, *loser]

    outcomes = asyncio.run(main())
    [pending_id] = asked
    conflicts = [o for o in outcomes if isinstance(o, CheckpointConflict)]
    results = [o for o in outcomes if not isinstance(o, BaseException)]
    assert len(conflicts) == 1, outcomes
    assert len(results) == 1, outcomes
    expected = r"only one resume of an interrupt proceeds" if race else r"being resumed by another process"
    assert re.search(expected, str(conflicts[0]))
    assert started == results[0].state.log  # the node ran once: the loser stopped before it
    latest = asyncio.run(FileCheckpointer(tmp_path).latest("t"))
    assert latest.values == {"log": results[0].state.log}
    # the run's first record, the interrupt (0), the winner's claim (1), its completed run (2), and the one answer
    # both gave
    assert stored_records.names(tmp_path, "threads/t/") == [slot(2), slot(1), slot(0), f"a.{0:012d}.{pending_id}"]


# -- thread ids -------------------------------------------------------------------------------------

BAD_THREAD_IDS = ["../x", "a/b", "", ".hidden", "a\\b", "..", "-flag", "x" * 201, "a b", "t\n", "\u00e9t\u00e9"]


@pytest.mark.parametrize("thread_id", BAD_THREAD_IDS)
def test_thread_ids_that_could_escape_are_refused_everywhere(thread_id: str, tmp_path: Path) -> None:
    store = tmp_path / "store"
    app = build(FileCheckpointer(store))
    for call in (lambda: app.invoke({}, thread_id=thread_id), lambda: app.get_state(thread_id),
                 lambda: app.history(thread_id)):
        with pytest.raises(InvalidThreadIdError, match=r"thread id .* is not allowed") as err:
            call()
        assert isinstance(err.value, ValueError)
    with pytest.raises(InvalidThreadIdError):
        asyncio.run(app.checkpointer.latest(thread_id))
    with pytest.raises(InvalidThreadIdError):
        asyncio.run(app.checkpointer.delete_thread(thread_id))
    assert not any(tmp_path.rglob("*"))  # nothing was written anywhere


@pytest.mark.parametrize("thread_id", ["t", "t-1", "user@example.com", "a.b", "_x", "a:b=c+d", "x" * 200])
def test_safe_thread_ids_work(thread_id: str, tmp_path: Path) -> None:
    app = build(FileCheckpointer(tmp_path))
    app.invoke({}, thread_id=thread_id)
    assert app.get_state(thread_id).status == Status.INTERRUPTED
    # the run's first record (after its first step) and the interrupt's
    assert stored_records.names(tmp_path, f"threads/{thread_id}/") == [slot(1), slot(0)]
    assert stored_records.keys(tmp_path, f"index/{thread_id}/") == [f"index/{thread_id}/entry"]


def test_thread_id_must_be_a_str_where_it_is_stored() -> None:
    """The store takes only a str; a graph's caller may name a thread with any value (LangGraph's ``uuid4()``,
    ``42``), which is str()-ed before it gets there, and refused if that is unsafe."""
    with pytest.raises(InvalidThreadIdError):
        validate_thread_id(42)
    app = build(MemoryCheckpointer())
    app.invoke({}, thread_id=42)
    assert app.get_state("42").status == Status.INTERRUPTED
    with pytest.raises(InvalidThreadIdError):
        app.invoke({}, {"configurable": {"thread_id": Path("../escape")}})


def test_user_facing_names() -> None:
    assert isinstance(MemoryCheckpointer().storage, MemoryStorage)
    file_cp = FileCheckpointer("somewhere")
    assert isinstance(file_cp.storage, FileStorage)
    assert file_cp.storage.root.name == "somewhere"
    assert FileCheckpointer().storage.root.name == ".statehitl"
    assert "FileStorage" in repr(file_cp)


def test_the_index_entry_is_rewritten_only_when_what_it_says_changes() -> None:
    class S(BaseModel):
        n: int = 0

    def maybe_ask(state: S, ctx: Any) -> dict[str, int]:
        if state.n > 10:
            ctx.interrupt("big")
        return {"n": state.n + 1}

    g = StateGraph(S)
    g.add_node("inc", maybe_ask)
    g.add_edge(START, "inc")
    g.add_edge("inc", END)
    storage = CountingStorage(MemoryStorage())
    app = g.compile(checkpointer=Checkpointer(storage))
    first = app.invoke({"n": 0}, thread_id="t")
    storage.counts = type(storage.counts)()
    second = app.invoke({"n": 5}, thread_id="t")  # completed -> completed: the entry would say the same
    assert storage.counts.calls["write"] == 1  # the run's one record (its input folded in); no index read or write
    entry = asyncio.run(app.checkpointer.thread_info("t"))
    assert entry is not None
    assert (entry.status, entry.seq) == ("completed", int(first.checkpoint_id))
    assert int(second.checkpoint_id) > entry.seq
    app.invoke({"n": 20}, thread_id="t")  # now it stops on an interrupt: the entry says so
    entry = asyncio.run(app.checkpointer.thread_info("t"))
    assert entry is not None
    assert (entry.status, [i.name for i in entry.interrupts]) == ("interrupted", ["big"])


def test_a_stopping_commit_writes_its_index_entry_only_once_its_checkpoint_is_stored(tmp_path: Path) -> None:
    """The checkpoint a run stops on, then the index entry: one after the other on every store, also where
    a durable write leaves the event loop (the file store outside a sync call), so the entry never
    describes a checkpoint that is not stored (``tests/worker/test_worker_lost_races.py`` shows why)."""
    class S(BaseModel):
        n: int = 0

    def ask(state: S, ctx: Any) -> dict[str, int]:
        ctx.interrupt("ok?")
        return {"n": state.n + 1}

    g = StateGraph(S)
    g.add_node("ask", ask)
    g.add_edge(START, "ask")
    g.add_edge("ask", END)
    for storage in (FileStorage(tmp_path / "sync"), MemoryStorage()):
        app = g.compile(checkpointer=Checkpointer(storage))
        paused = app.invoke({}, thread_id="t")  # sync: the inline path
        assert paused.stop_reason == "interrupt"
        entry = asyncio.run(app.checkpointer.thread_info("t"))
        assert entry is not None
        assert (entry.status, entry.seq) == ("interrupted", int(paused.checkpoint_id))
    ordered = _OrderedWrites(FileStorage(tmp_path / "async"))
    app = g.compile(checkpointer=Checkpointer(ordered))
    paused = asyncio.run(app.ainvoke({}, thread_id="t"))  # another loop: the checkpoint's fdatasync in a thread
    entry = asyncio.run(app.checkpointer.thread_info("t"))
    assert entry is not None
    assert (entry.status, entry.seq) == ("interrupted", int(paused.checkpoint_id))
    stop = ordered.events.index(("start", "index/t/entry"))
    assert ordered.events[stop - 1][0] == "end"
    assert ordered.events[stop - 1][1].startswith("threads/t/")  # the checkpoint's write had returned


class _OrderedWrites(FaultyStorage):
    """The store's writes as they start and return, in order."""

    def __init__(self, inner: FileStorage) -> None:
        super().__init__(inner)
        self.events: list[tuple[str, str]] = []

    async def write(self, key: str, data: bytes, *, expect: str, durable: bool = True) -> str:
        self.events.append(("start", key))
        try:
            return await super().write(key, data, expect=expect, durable=durable)
        finally:
            self.events.append(("end", key))

