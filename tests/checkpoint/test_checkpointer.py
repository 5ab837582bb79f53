"""The checkpoint engine under an app: records, history, thread ids, conflicts, durability."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Annotated, Any

import pytest
from pydantic import BaseModel

from statehitl.checkpoint import (
    Checkpointer,
    CheckpointRecord,
    FileCheckpointer,
    FileStorage,
    MemoryCheckpointer,
    MemoryStorage,
    validate_thread_id,
)
from statehitl.checkpoint.records import SCHEMA_VERSION
from statehitl.errors import CheckpointConflict, CheckpointCorruptError, InvalidThreadIdError
from statehitl.graph import END, START, NodeContext, StateGraph, Status, append


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
    assert app.get_state("t") is None
    assert app.history("t") == []
    finish(app)
    history = app.history("t")
    assert [(h.checkpoint_id, h.status, h.step, h.next) for h in history] == [
        ("000000000003", Status.COMPLETED, 3, ()),
        ("000000000002", Status.EXECUTING, 2, ("b",)),
        ("000000000001", Status.INTERRUPTED, 1, ("review",)),
        ("000000000000", Status.EXECUTING, 1, ("review",)),
    ]
    assert [h.parent_checkpoint_id for h in history] == ["000000000002", "000000000001", "000000000000", None]
    assert app.get_state("t") == history[0]
    assert history[0].values == S(log=["a", "review=y", "b"])
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
    assert len(history) == 4


def test_threads_are_separate_and_listed(checkpointer: Checkpointer) -> None:
    app = build(checkpointer)
    finish(app, "one")
    app.invoke({}, thread_id="two")
    assert sorted(asyncio.run(checkpointer.threads())) == ["one", "two"]
    assert app.get_state("one").status == Status.COMPLETED
    assert app.get_state("two").status == Status.INTERRUPTED
    assert asyncio.run(checkpointer.delete_thread("two")) == 2  # the step before the interrupt, and it
    assert app.get_state("two") is None
    assert asyncio.run(checkpointer.threads()) == ["one"]


def test_get_one_checkpoint_by_id(checkpointer: Checkpointer) -> None:
    app = build(checkpointer)
    finish(app)
    record = asyncio.run(checkpointer.get("t", "000000000001"))
    assert isinstance(record, CheckpointRecord)
    assert (record.seq, record.status) == (1, "interrupted")
    assert asyncio.run(checkpointer.get("t", 1)) == record
    with pytest.raises(KeyError, match=r"thread 't' has no checkpoint '000000000099'"):
        asyncio.run(checkpointer.get("t", "000000000099"))
    with pytest.raises(KeyError, match=r"'latest' is not a checkpoint id"):
        asyncio.run(checkpointer.get("t", "latest"))


# -- durability -------------------------------------------------------------------------------------


class SpyStorage(MemoryStorage):
    """Remembers the ``durable`` flag of every write."""

    def __init__(self) -> None:
        super().__init__()
        self.durable: list[bool] = []

    async def write(self, key: str, data: bytes, *, expect: str, durable: bool = True) -> str:
        self.durable.append(durable)
        return await super().write(key, data, expect=expect, durable=durable)


@pytest.mark.parametrize(
    ("durability", "statuses", "flags"),
    [
        # one record per step; only the records invoke returns on are forced to disk
        ("step", ["completed", "running", "interrupted", "running"], [False, True, False, True]),
        ("sync", ["completed", "running", "interrupted", "running"], [True, True, True, True]),
        # only the records invoke returns on
        ("exit", ["completed", "interrupted"], [True, True]),
    ],
)
def test_durability_decides_which_records_are_written_and_forced(durability: str, statuses: list[str],
                                                                  flags: list[bool]) -> None:
    storage = SpyStorage()
    checkpointer = Checkpointer(storage)
    finish(build(checkpointer, durability=durability))
    assert [r.status for r in asyncio.run(checkpointer.history("t"))] == statuses
    assert storage.durable == flags


def test_durability_can_be_chosen_per_invoke() -> None:
    storage = SpyStorage()
    app = build(Checkpointer(storage))
    app.invoke({}, thread_id="t", durability="sync")
    assert storage.durable == [True, True]


def test_without_a_checkpointer_threads_live_in_the_app() -> None:
    app = build(None)
    assert app.durability == "exit"
    result = finish(app)
    assert result.state.log == ["a", "review=y", "b"]
    assert build(None).get_state("t") is None  # another app does not see them


# -- records ----------------------------------------------------------------------------------------


def test_records_are_plain_versioned_json_on_disk(tmp_path: Path) -> None:
    app = build(FileCheckpointer(tmp_path))
    finish(app)
    files = sorted((tmp_path / "threads" / "t" / "cp").iterdir())
    assert [f.name for f in files] == ["000000000000", "000000000001", "000000000002", "000000000003"]
    waiting = json.loads(files[1].read_bytes())
    assert waiting["kind"] == "checkpoint"
    assert waiting["schema_version"] == SCHEMA_VERSION
    assert waiting["status"] == "interrupted"
    assert waiting["values"] == {"log": ["a"]}
    assert waiting["pending"] == ["review"]
    assert [i["name"] for i in waiting["interrupts"]] == ["approve"]
    assert waiting["machine"] == "SGraph"
    assert waiting["fingerprint"] == app.machine.fingerprint


def test_a_corrupt_record_is_a_clear_error(tmp_path: Path) -> None:
    app = build(FileCheckpointer(tmp_path))
    app.invoke({}, thread_id="t")
    head = tmp_path / "threads" / "t" / "cp" / "000000000001"
    head.write_bytes(head.read_bytes()[:20])
    with pytest.raises(CheckpointCorruptError, match=r"'threads/t/cp/000000000001' is not valid JSON"):
        app.get_state("t")
    head.write_bytes(b'{"kind": "checkpoint"}')
    with pytest.raises(CheckpointCorruptError, match=r"is malformed"):
        app.get_state("t")


def test_a_record_from_a_newer_version_is_refused(tmp_path: Path) -> None:
    app = build(FileCheckpointer(tmp_path))
    app.invoke({}, thread_id="t")
    head = tmp_path / "threads" / "t" / "cp" / "000000000001"
    record = json.loads(head.read_bytes())
    record["schema_version"] = SCHEMA_VERSION + 1
    head.write_text(json.dumps(record))
    with pytest.raises(CheckpointCorruptError, match=r"newer than this statehitl understands.*upgrade"):
        app.get_state("t")


# -- conflicts --------------------------------------------------------------------------------------


def test_committing_an_existing_checkpoint_again_is_a_conflict(checkpointer: Checkpointer) -> None:
    app = build(checkpointer)
    app.invoke({}, thread_id="t")
    head = asyncio.run(checkpointer.latest("t"))
    with pytest.raises(CheckpointConflict, match=r"thread 't' moved past checkpoint 0 while this run was working"):
        asyncio.run(checkpointer.commit(head))
    assert asyncio.run(checkpointer.latest("t")) == head


def test_two_apps_resuming_the_same_interrupt_exactly_one_proceeds(tmp_path: Path) -> None:
    """Both read the same head; the commit (create-once of the next record) lets only one through."""
    started: list[str] = []

    async def main() -> list[Any]:
        both_in = asyncio.Event()

        async def slow_review(state: S, ctx: NodeContext) -> dict[str, Any]:
            answer = ctx.interrupt("approve")
            started.append(answer)
            if len(started) == 2:
                both_in.set()
            await asyncio.wait_for(both_in.wait(), 5)
            return {"log": answer}

        def make() -> Any:
            g = StateGraph(S)
            g.add_node("review", slow_review)
            g.add_edge(START, "review")
            g.add_edge("review", END)
            return g.compile(checkpointer=FileCheckpointer(tmp_path))

        first, second = make(), make()
        pending = (await first.ainvoke({}, thread_id="t")).interrupts[0]
        return await asyncio.gather(
            first.ainvoke([{"interruptResponse": {"interruptId": pending.id, "response": "first"}}], "t"),
            second.ainvoke([{"interruptResponse": {"interruptId": pending.id, "response": "second"}}], "t"),
            return_exceptions=True,
        )

    outcomes = asyncio.run(main())
    conflicts = [o for o in outcomes if isinstance(o, CheckpointConflict)]
    results = [o for o in outcomes if not isinstance(o, BaseException)]
    assert len(conflicts) == 1
    assert len(results) == 1
    latest = asyncio.run(FileCheckpointer(tmp_path).latest("t"))
    assert latest.values == {"log": results[0].state.log}


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
    assert (tmp_path / "threads" / thread_id / "cp").is_dir()


def test_thread_id_must_be_a_str() -> None:
    with pytest.raises(InvalidThreadIdError):
        validate_thread_id(42)
    with pytest.raises(InvalidThreadIdError):
        build(MemoryCheckpointer()).invoke({}, thread_id=42)  # type: ignore[arg-type]


def test_user_facing_names() -> None:
    assert isinstance(MemoryCheckpointer().storage, MemoryStorage)
    file_cp = FileCheckpointer("somewhere")
    assert isinstance(file_cp.storage, FileStorage)
    assert file_cp.storage.root.name == "somewhere"
    assert FileCheckpointer().storage.root.name == ".statehitl"
    assert "FileStorage" in repr(file_cp)
