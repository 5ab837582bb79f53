"""The inbox as a library: expiry on every interrupt site, listing, stored answers and their pick-up,
resuming with the app's code, the audit trail, and sweeps."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any, Literal

import pytest
from inbox_app import APPROVAL, Order, actions, build, build_agent, build_orchestrator, graph

from statehitl import inbox
from statehitl.checkpoint.engine import Checkpointer
from statehitl.errors import (
    AlreadyAnsweredError,
    AppLoadError,
    InvalidExpiryError,
    ResponseValidationError,
    UnknownInboxItemError,
)
from statehitl.graph import END, START, NodeContext, StateGraph
from statehitl.hooks import BeforeNodeCallEvent


def start(store: str, thread: str, **order: Any) -> Any:
    app = build(thread)
    result = app.invoke({"item": "book", **order}, thread_id=thread)
    assert str(result.status.value) == "interrupted"
    return result


def test_pending_lists_every_waiting_interrupt_newest_first_from_the_index(app_store: str) -> None:
    first = start(app_store, "t-old")
    second = start(app_store, "t-new", item="lamp", reason="<b>why</b>")
    items = inbox.pending(app_store)
    assert [(p.thread_id, p.id, p.name) for p in items] == [
        ("t-new", second.interrupts[0].id, APPROVAL), ("t-old", first.interrupts[0].id, APPROVAL)]
    assert items[0].reason == "<b>why</b>"
    assert items[0].machine == "OrderGraph"
    assert items[0].expires_at is None
    assert items[0].response_schema is None


def test_pending_reads_no_checkpoint(app_store: str, monkeypatch: pytest.MonkeyPatch) -> None:
    start(app_store, "t1")
    checkpointer = Checkpointer.from_url(app_store)
    read: list[str] = []
    original = checkpointer.storage.read

    async def spy(key: str) -> Any:
        read.append(key)
        return await original(key)

    monkeypatch.setattr(checkpointer.storage, "read", spy)
    assert len(inbox.pending(checkpointer)) == 1
    assert read
    assert all(key.startswith("index/") for key in read)


@pytest.mark.parametrize("site", ["node", "hook", "tool"])
def test_expiry_is_stored_with_the_interrupt_and_shown_in_the_index(app_store: str, site: str,
                                                                    action_log: Path) -> None:
    before = time.time()
    if site == "node":
        start(app_store, "t1", expires_in=60, on_expire={"approved": False})
        thread = "t1"
    elif site == "hook":
        def gate(event: BeforeNodeCallEvent) -> None:
            if event.node_id == "ship":
                event.interrupt("gate", reason="hook", expires_at=before + 60, on_expire="no")

        g = StateGraph(Order)
        g.add_node("ship", lambda s: {"shipped": True})
        g.add_edge(START, "ship")
        g.add_edge("ship", END)
        app = g.compile(checkpointer=Checkpointer.from_url(app_store))
        app.hooks.add_callback(BeforeNodeCallEvent, gate)
        app.invoke({"item": "x"}, thread_id="t1")
        thread = "t1"
    else:
        agent = build_agent("s1")
        result = agent("clean up")
        assert result.stop_reason == "interrupt"
        thread = "s1"
    [item] = inbox.pending(app_store)
    assert item.thread_id == thread
    assert item.expires_at is not None
    assert before + 59 <= item.expires_at
    entry = asyncio.run(Checkpointer.from_url(app_store).thread_info(thread))
    assert entry is not None
    assert entry.interrupts[0].expires_at == item.expires_at
    assert item.on_expire == {"node": {"approved": False}, "hook": "no", "tool": "n"}[site]


@pytest.mark.parametrize(("options", "message"), [
    ({"expires_in": 10}, "needs on_expire="),
    ({"on_expire": "n"}, "without expires_in= or expires_at="),
    ({"expires_in": 10, "expires_at": 10.0, "on_expire": "n"}, "not both"),
    ({"expires_in": -1, "on_expire": "n"}, "must be positive"),
    ({"expires_in": float("nan"), "on_expire": "n"}, "finite number"),
    ({"expires_in": 5, "on_expire": object()}, "JSON-serializable"),
])
def test_bad_expiry_fails_in_the_handler_and_stores_nothing_new(app_store: str, options: dict[str, Any],
                                                                message: str) -> None:
    g = StateGraph(Order)
    g.add_node("ask", lambda s, ctx: {"decision": ctx.interrupt("q", reason="r", **options)})
    g.add_edge(START, "ask")
    g.add_edge("ask", END)
    app = g.compile(checkpointer=Checkpointer.from_url(app_store))
    with pytest.raises(Exception, match=message) as caught:
        app.invoke({"item": "x"}, thread_id="t1")
    assert isinstance(caught.value, InvalidExpiryError) or "JSON" in str(caught.value)
    assert inbox.pending(app_store) == []


def test_an_answer_is_stored_once_and_the_app_applies_it_on_resume_answered(app_store: str,
                                                                            action_log: Path) -> None:
    result = start(app_store, "t1")
    iid = result.interrupts[0].id
    done = inbox.answer(app_store, iid, "yes", responder="ann")
    assert done.status is None
    assert done.answer.responder == "ann"
    assert inbox.pending(app_store) == []  # answered, not applied: no longer waiting on anyone
    with pytest.raises(AlreadyAnsweredError, match="already answered by ann"):
        inbox.answer(app_store, iid, "no", responder="bob")
    assert actions(action_log) == []
    app = build("t1")
    resumed = inbox.resume_answered(app, "t1")
    assert resumed.state.decision == "yes"
    assert resumed.state.shipped
    assert actions(action_log) == ["t1 ship book 'yes'"]
    assert inbox.resume_answered(app, "t1") is None  # nothing left to apply
    assert actions(action_log) == ["t1 ship book 'yes'"]
    with pytest.raises(AlreadyAnsweredError, match="already answered by ann"):  # applied: still ann's
        inbox.answer(app_store, iid, "again")


def test_answering_with_the_app_resumes_at_once(app_store: str, action_log: Path) -> None:
    iid = start(app_store, "t1").interrupts[0].id
    done = inbox.answer(app_store, iid[:9], "y", build=build)  # a unique start of the id is enough
    assert done.status == "completed"
    assert actions(action_log) == ["t1 ship book 'y'"]
    assert inbox.pending(app_store) == []


def test_an_agent_factory_resumes_its_own_session_thread(app_store: str, action_log: Path) -> None:
    assert build_agent("s1")("clean up").stop_reason == "interrupt"
    [item] = inbox.pending(app_store)
    done = inbox.answer(app_store, item.id, "y", build=build_agent)
    assert done.status == "completed"
    assert actions(action_log) == ["s1 delete /tmp/x 'y'"]
    with pytest.raises(AppLoadError, match="runs thread 's1'"):
        inbox.resume_answered(build_agent("s1"), "other")


def test_a_multiagent_graph_resumes_with_a_stored_answer(app_store: str, action_log: Path) -> None:
    first = build_orchestrator("g1")("clean up")
    assert first.interrupts
    [item] = inbox.pending(app_store)
    assert (item.thread_id, item.name) == ("g1@default_graph", "delete-approval")
    inbox.answer(app_store, item.id, "y", responder="ann")
    assert actions(action_log) == []
    result = inbox.resume_answered(build_orchestrator(item.thread_id))  # an orchestrator knows its own thread
    assert str(result.status.value) == "completed"
    [line] = actions(action_log)
    assert line.endswith("delete /tmp/x 'y'")
    build_orchestrator("g2")("clean up again")  # with the registration, answering resumes it at once
    [other] = inbox.pending(app_store)
    assert inbox.answer(app_store, other.id, "n", build=build_orchestrator).status == "completed"
    assert len(actions(action_log)) == 2


def test_unknown_ids_name_what_is_pending(app_store: str) -> None:
    iid = start(app_store, "t1").interrupts[0].id
    with pytest.raises(UnknownInboxItemError, match=f"no pending interrupt has id 'nope'; pending: {iid}"):
        inbox.answer(app_store, "nope", "y")
    with pytest.raises(AppLoadError, match="returned a str"):
        inbox.answer(app_store, iid, "y", build=lambda thread: "not an app")
    # the refused build came after the answer was stored: it waits for the app, nothing ran twice
    assert inbox.pending(app_store) == []


def test_the_audit_trail_shows_each_interrupt_with_who_answered(app_store: str, action_log: Path) -> None:
    result = start(app_store, "t1")
    checkpointer = Checkpointer.from_url(app_store)
    [row] = inbox.thread_audit_trail(checkpointer, "t1")
    assert (row.name, row.outcome, row.response) == (APPROVAL, "pending", None)
    inbox.answer(app_store, result.interrupts[0].id, {"ok": True}, responder="ann")
    [row] = inbox.thread_audit_trail(checkpointer, "t1")
    assert (row.outcome, row.response, row.responder, row.via) == ("answered, not yet applied", {"ok": True},
                                                                  "ann", "inbox")
    inbox.resume_answered(build("t1"), "t1")
    [row] = inbox.thread_audit_trail(checkpointer, "t1")
    assert (row.outcome, row.response, row.responder, row.via) == ("applied", {"ok": True}, "ann", "inbox")
    # the engine's audit trail has it too, with the responder the inbox passed on
    [entry] = asyncio.run(checkpointer.audit("t1"))
    assert (entry.interrupt_id, entry.response, entry.responder) == (result.interrupts[0].id, {"ok": True}, "ann")
    # answered directly through the app: the trail has the answer too, came "via" the app
    other = start(app_store, "t2")
    build("t2").invoke([{"interruptResponse": {"interruptId": other.interrupts[0].id, "response": "n",
                                               "responder": "bob", "comment": "not today"}}], thread_id="t2")
    [row] = inbox.thread_audit_trail(checkpointer, "t2")
    assert (row.outcome, row.response, row.responder, row.comment, row.via) == (
        "applied", "n", "bob", "not today", "app")


def test_deleting_a_thread_deletes_its_stored_answers(app_store: str) -> None:
    iid = start(app_store, "t1").interrupts[0].id
    inbox.answer(app_store, iid, "y")
    checkpointer = Checkpointer.from_url(app_store)
    asyncio.run(checkpointer.delete_thread("t1"))
    assert asyncio.run(checkpointer.storage.list("answers/")) == []


def test_sweep_applies_expired_defaults_once_and_leaves_the_rest(app_store: str, action_log: Path) -> None:
    expired = start(app_store, "t-expired", expires_in=30, on_expire="timed out").interrupts[0]
    start(app_store, "t-later", expires_in=3600, on_expire="n")
    start(app_store, "t-never")
    now = time.time() + 60
    report = inbox.sweep(app_store, now=now)
    assert [i.id for i in report.expired] == [expired.id]
    assert report.resumed == []
    assert sorted(p.thread_id for p in inbox.pending(app_store)) == ["t-later", "t-never"]
    assert inbox.sweep(app_store, now=now).expired == []  # a second sweep finds it answered
    assert actions(action_log) == []
    report = inbox.sweep(app_store, app=build, now=now)  # with the app: the recorded default is applied
    assert report.resumed == ["t-expired"]
    assert actions(action_log) == ["t-expired ship book 'timed out'"]
    [row] = inbox.thread_audit_trail(Checkpointer.from_url(app_store), "t-expired")
    assert (row.responder, row.via, row.outcome, row.response) == ("expiry", "expiry", "applied", "timed out")
    assert inbox.sweep(app_store, app=build, now=now).resumed == []
    assert len(actions(action_log)) == 1


def test_a_reviewer_who_answers_first_beats_the_sweep(app_store: str) -> None:
    iid = start(app_store, "t1", expires_in=30, on_expire="n").interrupts[0].id
    inbox.answer(app_store, iid, "y", responder="ann")
    assert inbox.sweep(app_store, now=time.time() + 60).expired == []
    [row] = inbox.thread_audit_trail(Checkpointer.from_url(app_store), "t1")
    assert (row.response, row.responder) == ("y", "ann")


def test_load_app_errors_name_what_is_wrong() -> None:
    with pytest.raises(AppLoadError, match="must be module:callable"):
        inbox.load_app("inbox_app")
    with pytest.raises(AppLoadError, match="cannot import module 'no_such_module_here'"):
        inbox.load_app("no_such_module_here:build")
    with pytest.raises(AppLoadError, match="has no attribute 'nothing'"):
        inbox.load_app("inbox_app:nothing")
    with pytest.raises(AppLoadError, match="not a callable"):
        inbox.load_app("inbox_app:APPROVAL")
    assert inbox.load_app("inbox_app:build") is build
    assert graph  # the module's graph builder is what build compiles


def test_a_typed_interrupt_refuses_a_wrong_inbox_answer_before_storing_it(memory_store: str) -> None:
    app = typed_graph(memory_store)
    [waiting] = app.invoke({"item": "pen"}, thread_id="t1").interrupts
    with pytest.raises(ResponseValidationError, match="not a valid response"):
        inbox.answer(memory_store, waiting.id, "maybe")
    assert [p.id for p in inbox.pending(memory_store)] == [waiting.id]  # still waiting: nothing stored
    inbox.answer(memory_store, waiting.id, "yes", build=lambda thread: typed_graph(memory_store))
    assert app.get_state("t1").values.decision == "yes"


def test_an_expiry_default_the_interrupt_would_refuse_fails_where_it_is_asked(memory_store: str) -> None:
    with pytest.raises(InvalidExpiryError, match="on_expire='maybe' is not a response it accepts"):
        typed_graph(memory_store, on_expire="maybe").invoke({"item": "pen"}, thread_id="t1")


def typed_graph(store: str, on_expire: str | None = None) -> Any:
    """A graph that asks ``yes`` or ``no`` (``response_type=Literal[...]``), optionally with a deadline."""

    def ask(state: Order, ctx: NodeContext) -> dict[str, Any]:
        options: dict[str, Any] = {"expires_in": 60, "on_expire": on_expire} if on_expire is not None else {}
        return {"decision": ctx.interrupt("ship", response_type=Literal["yes", "no"], **options)}

    g = StateGraph(Order)
    g.add_node("ask", ask)
    g.add_edge(START, "ask")
    g.add_edge("ask", END)
    return g.compile(checkpointer=Checkpointer.from_url(store))


def test_an_id_too_short_to_pick_an_interrupt_says_so(app_store: str) -> None:
    start(app_store, "t1")
    with pytest.raises(UnknownInboxItemError, match=r"'v2:1' is too short to pick one: give at least 4 characters"):
        inbox.answer(app_store, "v2:1", "yes")
