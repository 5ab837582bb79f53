"""The testing kit's transition recorder: what it logs, how it normalizes, how it attaches."""

from __future__ import annotations

from importlib.metadata import entry_points
from typing import Annotated, Any

from pydantic import BaseModel

from statehitl import observe
from statehitl.checkpoint import MemoryCheckpointer
from statehitl.graph import END, START, NodeContext, StateGraph, append
from statehitl.hooks import BeforeNodeCallEvent, HookRegistry
from statehitl.testing import TransitionRecorder


class S(BaseModel):
    log: Annotated[list[str], append] = []


def ask_twice(state: S, ctx: NodeContext) -> dict[str, Any]:
    return {"log": [ctx.interrupt("first"), ctx.interrupt("second")]}


def app_with_everything():
    """A hook, an interrupting node, a plain node: every kind of transition."""
    registry = HookRegistry()
    registry.add_callback(BeforeNodeCallEvent, lambda e: e.interrupt("gate") if e.node_id == "ask" else None)
    g = StateGraph(S)
    g.add_node("ask", ask_twice)
    g.add_node("done", lambda s: {"log": "done"})
    g.add_edge(START, "ask")
    g.add_edge("ask", "done")
    g.add_edge("done", END)
    return g.compile(checkpointer=MemoryCheckpointer(), hooks=[registry])


def drive(app: Any, thread: str | None = None) -> Any:
    result = app.invoke({}, thread_id=thread)
    while result.interrupts:
        result = app.invoke([{"interruptResponse": {"interruptId": i.id, "response": i.name.upper()}}
                             for i in result.interrupts], thread_id=result.thread_id)
    return result


def test_log_of_every_kind_of_transition(transition_recorder, snapshot) -> None:
    assert drive(app_with_everything()).state.log == ["FIRST", "SECOND", "done"]
    assert transition_recorder.log == snapshot


def test_log_is_the_same_for_every_run_whatever_the_thread_and_time() -> None:
    logs = []
    for _ in range(2):
        with TransitionRecorder() as recorder:
            drive(app_with_everything())  # a random thread id each time, new timestamps
        logs.append(recorder.log)
    assert logs[0] == logs[1]
    assert not any("thread" in line or "created" in line for line in logs[0])


def test_ids_are_named_in_order_of_first_appearance() -> None:
    recorder = TransitionRecorder()
    for raw in ("v1:bbb", "v1:aaa", "v1:bbb"):
        recorder.on_event("interrupt.raised", {"name": "q", "id": raw, "source": "node", "node": "n",
                                               "reason": None})
    assert [line.split()[2] for line in recorder.log] == ["<id1>", "<id2>", "<id1>"]
    recorder.clear()
    assert recorder.log == []
    recorder.on_event("interrupt.raised", {"name": "q", "id": "v1:aaa", "source": "hook", "node": "n",
                                           "reason": {"b": 1, "a": [2]}})
    assert recorder.log == ['interrupt q <id2> from hook n: {"a":[2],"b":1}']  # names survive clear()


def test_unknown_events_are_still_logged() -> None:
    recorder = TransitionRecorder()
    recorder.on_event("custom.thing", {"b": 2, "a": object})
    assert recorder.log == ["custom.thing {\"a\":\"<class 'object'>\",\"b\":2}"]


def test_attach_and_detach() -> None:
    recorder = TransitionRecorder()
    with recorder:
        assert recorder in observe.observers
    assert recorder not in observe.observers
    recorder.detach()  # detaching twice is harmless
    assert recorder.attach() is recorder
    recorder.detach()
    assert recorder not in observe.observers


def test_nothing_is_recorded_while_detached() -> None:
    recorder = TransitionRecorder()
    drive(app_with_everything())
    assert recorder.log == []


def test_fixture_is_attached_for_the_test(transition_recorder) -> None:
    assert transition_recorder in observe.observers
    assert isinstance(transition_recorder, TransitionRecorder)


def test_plugin_is_registered_with_pytest() -> None:
    plugins = {ep.name: ep.value for ep in entry_points(group="pytest11")}
    assert plugins["statehitl"] == "statehitl.testing.plugin"
