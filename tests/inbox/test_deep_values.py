"""One nesting limit, checked where a value is written with nothing stored; and one unreadable index entry
never blocks the others: the library, the terminal and the page list the rest and say which one."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from inbox_app import Order, actions, build
from test_who_may_answer import request, running

from statehitl import inbox
from statehitl.checkpoint import Checkpointer
from statehitl.cli import main
from statehitl.errors import NestingTooDeepError
from statehitl.graph import END, START, NodeContext, StateGraph
from statehitl.types import Command

DEEP: Any = 1
for _ in range(210):
    DEEP = [DEEP]


def test_a_reason_nested_too_deep_is_refused_where_it_is_raised(app_store: str, action_log: Path) -> None:
    def ask(state: Order, ctx: NodeContext) -> dict[str, Any]:
        return {"decision": ctx.interrupt("deep", reason={"deep": DEEP})}

    g = StateGraph(Order)
    g.add_node("ask", ask)
    g.add_edge(START, "ask")
    g.add_edge("ask", END)
    app = g.compile(checkpointer=Checkpointer.from_url(app_store))
    with pytest.raises(NestingTooDeepError, match=r"the reason of interrupt 'deep'.*deeper than 100 levels"):
        app.invoke({"item": "book"}, thread_id="t1")
    assert inbox.pending(app_store) == []  # nothing listed, and the listing works
    assert app.get_state("t1").status == "failed"
    with pytest.raises(NestingTooDeepError, match="deeper than 100 levels"):  # a state that deep: not even started
        build("t2").invoke({"item": "book", "reason": {"deep": DEEP}}, thread_id="t2")
    assert build("t2").get_state("t2") is None


def test_an_answer_nested_too_deep_is_refused_at_every_door(app_store: str, action_log: Path) -> None:
    iid = build("t1").invoke({"item": "book"}, thread_id="t1").interrupts[0].id
    with pytest.raises(NestingTooDeepError, match="deeper than 100 levels"):
        inbox.answer(app_store, iid, DEEP, responder="ann")
    with pytest.raises(NestingTooDeepError, match="deeper than 100 levels"):
        build("t1").invoke(Command(resume=DEEP), {"configurable": {"thread_id": "t1"}})
    assert [p.id for p in inbox.pending(app_store)] == [iid]  # nothing was stored: it still waits
    assert inbox.answer(app_store, iid, "y", responder="ann", build=build).status == "completed"
    assert actions(action_log) == ["t1 ship book 'y'"]


@pytest.mark.slow
def test_one_unreadable_index_entry_hides_no_other_thread(app_store: str, action_log: Path,
                                                          capsys: pytest.CaptureFixture[str],
                                                          caplog: pytest.LogCaptureFixture) -> None:
    iid = build("t1").invoke({"item": "book"}, thread_id="t1").interrupts[0].id
    checkpointer = Checkpointer.from_url(app_store)
    entry = {"kind": "index", "thread_id": "old", "seq": 0, "status": "interrupted", "step": 1, "machine": "m",
             "updated_at": 1.0, "interrupts": [{"id": "v2:x", "name": "q", "reason": DEEP}]}
    asyncio.run(checkpointer.storage.write("index/old/entry", json.dumps(entry).encode(), expect="absent"))

    assert [p.id for p in inbox.pending(app_store)] == [iid]
    assert "thread(s) cannot be read" in caplog.text
    assert main(["inbox", "--store", app_store]) == 0
    out = capsys.readouterr()
    assert iid in out.out
    assert "thread old: its index entry cannot be read" in out.err
    assert main(["threads", "list", "--store", app_store]) == 0
    assert "unreadable" in capsys.readouterr().out
    with running(app_store, action_log) as served:
        status, page = request(served, "GET", "/")
        assert status == 200
        assert iid in page
        assert "thread old:" in page
        status, text = request(served, "POST", f"/api/answer/{iid}", {"response": "y", "responder": "ann"})
        assert status == 200, text
    assert actions(action_log) == ["t1 ship book 'y'"]
