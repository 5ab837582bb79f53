"""Answering by id reads the interrupt's own thread, not the store: the pointer from an id to its thread,
what it costs, and what happens when a pointer is missing, stale or forged."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TypedDict

import pytest
from inbox_app import actions, build

from statehitl import inbox
from statehitl.checkpoint import FileCheckpointer
from statehitl.checkpoint.engine import Checkpointer
from statehitl.checkpoint.interrupt_index import IDS_PREFIX
from statehitl.checkpoint.storage import ABSENT
from statehitl.errors import AlreadyAnsweredError, UnknownInboxItemError
from statehitl.graph import END, START, StateGraph
from statehitl.testing.counting import CountingStorage
from statehitl.types import interrupt


class Ask(TypedDict):
    n: int


def asker(checkpointer: Checkpointer) -> object:
    graph = StateGraph(Ask)
    graph.add_node("ask", lambda s: {"n": interrupt("ok?")})
    graph.add_edge(START, "ask")
    graph.add_edge("ask", END)
    return graph.compile(checkpointer=checkpointer)


def waiting(app: object, threads: range) -> list[str]:
    return [app.invoke({"n": 0}, {"configurable": {"thread_id": f"t{i}"}})["__interrupt__"][0].id  # type: ignore[attr-defined]
            for i in threads]


def pointers(checkpointer: Checkpointer) -> list[str]:
    return asyncio.run(checkpointer.storage.list(IDS_PREFIX))


def test_answering_an_interrupt_whose_thread_finished_says_who_answered_first(app_store: str, action_log: Path
                                                                               ) -> None:
    iid = build("t1").invoke({"item": "book"}, thread_id="t1").interrupts[0].id
    done = inbox.answer(app_store, iid, "reviewer1", responder="reviewer1", build=build)
    assert done.status == "completed"
    with pytest.raises(AlreadyAnsweredError, match="reviewer1"):
        inbox.answer(app_store, iid, "reviewer2", responder="reviewer2", build=build)
    with pytest.raises(AlreadyAnsweredError, match="reviewer1"):  # by a unique start of the id, too
        inbox.answer(app_store, iid[:9], "reviewer2", responder="reviewer2", build=build)
    assert actions(action_log) == ["t1 ship book 'reviewer1'"]


def test_the_reads_of_an_answer_do_not_grow_with_the_backlog(tmp_path: Path) -> None:
    storage = CountingStorage(FileCheckpointer(tmp_path / "store").storage)
    checkpointer = Checkpointer(storage)
    app = asker(checkpointer)
    costs = []
    for backlog in (range(0, 5), range(5, 60)):
        ids = waiting(app, backlog)
        storage.reset()
        inbox.answer(checkpointer, ids[0], "yes")
        counted = storage.reset()
        costs.append((counted.calls["list"], counted.calls["read"]))
    assert costs[0] == costs[1]  # 5 threads waiting, then 59: the same requests
    assert costs[0][0] <= 2


def test_an_interrupt_without_a_pointer_is_found_by_listing(tmp_path: Path) -> None:
    """A thread that stopped before pointers were written (or whose pointer write failed) is still
    answered: the inbox falls back to the listing."""
    checkpointer = FileCheckpointer(tmp_path / "store")
    [iid] = waiting(asker(checkpointer), range(1))
    asyncio.run(checkpointer.storage.delete(IDS_PREFIX))
    assert pointers(checkpointer) == []
    assert inbox.answer(checkpointer, iid, "yes").interrupt.thread_id == "t0"
    with pytest.raises(AlreadyAnsweredError):
        inbox.answer(checkpointer, iid, "no")


def test_a_forged_pointer_is_passed_over(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    checkpointer = FileCheckpointer(tmp_path / "store")
    first, second = waiting(asker(checkpointer), range(2))

    def forge(interrupt_id: str, data: bytes) -> None:
        [key] = [k for k in pointers(checkpointer) if k.rsplit("/", 1)[-1].startswith(interrupt_id.split(":")[1])]
        asyncio.run(checkpointer.storage.delete(key))
        asyncio.run(checkpointer.storage.write(key, data, expect=ABSENT))

    forge(first, b'{"kind": "interrupt-pointer", "thread_id": "t1"}')  # the other thread
    assert inbox.answer(checkpointer, first, "yes").interrupt.thread_id == "t0"
    forge(second, b'{"thread_id": "../../etc"}')
    assert inbox.answer(checkpointer, second, "yes").interrupt.thread_id == "t1"
    assert "not one statehitl wrote" in caplog.text


def test_an_unknown_id_still_names_what_is_pending(tmp_path: Path) -> None:
    checkpointer = FileCheckpointer(tmp_path / "store")
    [iid] = waiting(asker(checkpointer), range(1))
    with pytest.raises(UnknownInboxItemError, match=f"no pending interrupt has id 'v2:ffffffff'; pending: {iid}"):
        inbox.answer(checkpointer, "v2:ffffffff", "yes")


def test_deleting_a_thread_deletes_the_pointers_to_it(tmp_path: Path) -> None:
    checkpointer = FileCheckpointer(tmp_path / "store")
    app = asker(checkpointer)
    first, _ = waiting(app, range(2))
    inbox.answer(checkpointer, first, "yes")  # stored, not applied: the answer names the interrupt too
    assert len(pointers(checkpointer)) == 2
    asyncio.run(checkpointer.delete_thread("t0"))
    assert [k.split("/")[-1].split(".")[0] for k in pointers(checkpointer)] != [first.split(":")[1]]
    assert len(pointers(checkpointer)) == 1
