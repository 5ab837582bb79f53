"""A reviewer answering by id after another's answer was applied and the thread finished: every door that takes
ids says who answered first (``AlreadyAnsweredError``, a 409, the terminal's message), not that no interrupt
has that id. Deterministic: answer, resume to completion, answer again."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path
from typing import Any

import pytest
from aiohttp.test_utils import TestClient, TestServer
from inbox_app import actions, build

from statehitl import inbox
from statehitl.checkpoint.answer_pointers import POINTER_PREFIX
from statehitl.checkpoint.engine import Checkpointer
from statehitl.cli import main
from statehitl.errors import AlreadyAnsweredError, ResponderNotAllowedError, UnknownInboxItemError
from statehitl.inbox.service import answer_pending
from statehitl.inbox.web import make_app

FIRST = r"already answered by ann \(inbox\) at .*'yes'.*thread 't1' has gone on"


def finished(store: str, **order: Any) -> str:
    """A thread asked, answered by ann through the inbox with the app, and run to its end: the interrupt's id."""
    iid = build("t1").invoke({"item": "book", **order}, thread_id="t1").interrupts[0].id
    done = inbox.answer(store, iid, "yes", responder="ann", build=build)
    assert done.status == "completed"
    assert inbox.pending(store) == []
    assert inbox.unapplied(store) == []
    return iid


def test_the_library_names_the_first_answer_by_id_and_by_its_start(app_store: str, action_log: Path) -> None:
    iid = finished(app_store)
    for wanted in (iid, iid[:9]):
        with pytest.raises(AlreadyAnsweredError, match=FIRST):
            inbox.answer(app_store, wanted, "no", responder="bob", build=build)
        with pytest.raises(AlreadyAnsweredError, match=FIRST):
            inbox.find_pending(app_store, wanted)
    with pytest.raises(AlreadyAnsweredError, match=FIRST):  # the same answer again: it bound long ago
        inbox.answer(app_store, iid, "yes", responder="bob")
    assert actions(action_log) == ["t1 ship book 'yes'"]
    assert [(r.outcome, r.responder) for r in inbox.thread_audit_trail(app_store, "t1")] == [("applied", "ann")]


def test_an_id_never_answered_is_still_unknown(app_store: str) -> None:
    iid = finished(app_store)
    other = "v2:" + "".join("0" if c != "0" else "1" for c in iid[3:])
    with pytest.raises(UnknownInboxItemError, match="no pending interrupt has id"):
        inbox.answer(app_store, other, "no", responder="bob")
    with pytest.raises(UnknownInboxItemError, match="too short"):  # a start that short lists no pointers
        inbox.answer(app_store, iid[:5], "no", responder="bob")


def test_one_pointer_per_answer_by_id_and_none_for_the_apps_own_answer(app_store: str) -> None:
    iid = finished(app_store)
    storage = Checkpointer.from_url(app_store).storage
    [key] = asyncio.run(storage.list(POINTER_PREFIX))
    assert key.startswith(f"{POINTER_PREFIX}{iid}/t1/")
    asked = build("t2").invoke({"item": "pen"}, thread_id="t2").interrupts[0]
    build("t2").invoke([{"interruptResponse": {"interruptId": asked.id, "response": "ok"}}], thread_id="t2")
    assert asyncio.run(storage.list(POINTER_PREFIX)) == [key]


def test_the_terminal_says_who_answered_first(app_store: str, capsys: pytest.CaptureFixture[str]) -> None:
    iid = finished(app_store)
    capsys.readouterr()
    assert main(["inbox", "answer", iid, "no", "--as", "bob", "--store", app_store]) != 0
    said = capsys.readouterr()
    assert re.search(FIRST, said.out + said.err), said
    assert main(["inbox", "show", iid[:9], "--store", app_store]) != 0
    said = capsys.readouterr()
    assert "already answered by ann (inbox)" in said.out + said.err, said


def test_the_page_and_its_api_answer_409_naming_the_first_answer(app_store: str, action_log: Path) -> None:
    iid = build("t1").invoke({"item": "book"}, thread_id="t1").interrupts[0].id

    async def check() -> None:
        async with TestClient(TestServer(make_app(app_store, build=build))) as client:
            page = await (await client.get("/")).text()  # bob opens the page while it waits
            csrf = re.search(r'name="__csrf" value="([^"]+)"', page)
            assert csrf is not None
            assert iid in page
            done = await inbox.aanswer(app_store, iid, "yes", responder="ann", build=build)
            assert done.status == "completed"
            form = await client.post(f"/answer/{iid}", data={"response": "no", "__responder": "bob",
                                                             "__csrf": csrf.group(1)})
            assert form.status == 409
            assert "already answered by ann" in await form.text()
            api = await client.post(f"/api/answer/{iid}", json={"response": "no", "responder": "bob"})
            assert api.status == 409
            body = await api.json()
            assert body["already_answered"], body
            assert re.search(FIRST, body["error"]), body

    asyncio.run(check())
    assert actions(action_log) == ["t1 ship book 'yes'"]


def test_a_late_reviewer_not_named_is_refused_and_told_nothing_of_the_answer(app_store: str) -> None:
    iid = finished(app_store, responders=["ann"])
    with pytest.raises(ResponderNotAllowedError) as refused:
        inbox.answer(app_store, iid, "no", responder="mallory")
    assert "yes" not in str(refused.value)
    assert "already answered" not in str(refused.value)
    with pytest.raises(AlreadyAnsweredError, match=FIRST):
        inbox.answer(app_store, iid, "no", responder="ann")
    trail = [(r.outcome, r.responder) for r in inbox.thread_audit_trail(app_store, "t1")]
    assert sorted(trail) == [("applied", "ann"), ("refused", "mallory")]


def test_an_answer_to_an_interrupt_found_waiting_that_moved_on_meanwhile_names_the_first(app_store: str) -> None:
    build("t1").invoke({"item": "book"}, thread_id="t1")
    [seen] = inbox.pending(app_store)  # bob's door found it waiting...
    finished_meanwhile = inbox.answer(app_store, seen.id, "yes", responder="ann", build=build)  # ...ann was quicker
    assert finished_meanwhile.status == "completed"
    with pytest.raises(AlreadyAnsweredError, match=FIRST):
        asyncio.run(answer_pending(Checkpointer.from_url(app_store), seen, "no", responder="bob", build=build))


def test_deleting_the_thread_deletes_its_pointers_and_no_other_threads(app_store: str) -> None:
    finished(app_store)
    other = build("t10").invoke({"item": "pen"}, thread_id="t10").interrupts[0].id  # "t1" starts "t10"
    inbox.answer(app_store, other, "ok", responder="ann")
    checkpointer = Checkpointer.from_url(app_store)
    assert len(asyncio.run(checkpointer.storage.list(POINTER_PREFIX))) == 2
    asyncio.run(checkpointer.delete_thread("t1"))
    [left] = asyncio.run(checkpointer.storage.list(POINTER_PREFIX))
    assert left.startswith(f"{POINTER_PREFIX}{other}/t10/")
