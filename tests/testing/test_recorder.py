"""The testing kit's transition recorder: what it logs, how it normalizes, how it attaches."""

from __future__ import annotations

import uuid
from importlib.metadata import entry_points
from typing import Annotated, Any

from pydantic import BaseModel

from statehitl import Agent, observe, tool
from statehitl.checkpoint import MemoryCheckpointer
from statehitl.graph import END, START, NodeContext, StateGraph, append
from statehitl.hooks import BeforeNodeCallEvent, HookRegistry
from statehitl.models import ScriptedModel
from statehitl.testing import TransitionRecorder
from statehitl.transitions import InterruptRaisedTransition, StepApplied, ToolFinished


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
    result = app.invoke({}, thread_id=thread or uuid.uuid4().hex)
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


def raised(raw_id: str, source: str = "node", reason: Any = None) -> InterruptRaisedTransition:
    return InterruptRaisedTransition(raw_id, "q", "n", source, reason)


def test_ids_are_named_in_order_of_first_appearance() -> None:
    recorder = TransitionRecorder()
    for raw in ("v1:bbb", "v1:aaa", "v1:bbb"):
        recorder.on_event(raised(raw))
    assert [line.split()[2] for line in recorder.log] == ["<id1>", "<id2>", "<id1>"]
    recorder.clear()
    assert recorder.log == []
    recorder.on_event(raised("v1:aaa", "hook", {"b": 1, "a": [2]}))
    assert recorder.log == ['interrupt "q" <id2> from hook n: {"a":[2],"b":1}']  # names survive clear()


def test_tool_use_ids_are_named_wherever_they_appear() -> None:
    recorder = TransitionRecorder()
    turn = {"role": "assistant", "content": [{"toolUse": {"toolUseId": "tooluse_x_9f3a", "name": "x", "input": {}}}]}
    recorder.on_event(StepApplied(1, {"model": {"turn": turn}}, ("tools",)))
    recorder.on_event(ToolFinished("x", "tooluse_x_9f3a", "success"))
    assert recorder.log == [
        'step 1 writes {"model":{"turn":{"content":[{"toolUse":{"input":{},"name":"x","toolUseId":"<id1>"}}],'
        '"role":"assistant"}}} next ["tools"]',
        "tool x <id1>: success",
    ]


def test_direct_tool_calls_log_the_same_on_every_run() -> None:
    """A direct call makes up a new tool-use id each time; the log must not show it."""

    @tool
    def add(a: int, b: int) -> int:
        """Add.

        Args:
            a: one
            b: the other
        """
        return a + b

    logs = []
    for _ in range(2):
        agent = Agent(model=ScriptedModel([]), tools=[add], callback_handler=None)
        with TransitionRecorder() as recorder:
            agent.tool.add(a=1, b=2)
        logs.append(recorder.log)
    assert logs[0] == logs[1] == ["tool add <id1>: success"]


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


def test_langgraphs_interrupt_reads_as_a_quoted_name_and_its_claim_fills_the_skipped_number() -> None:
    """LangGraph's ``interrupt()`` names what it asks "interrupt": quoted, the line never reads "interrupt
    interrupt"; every value is JSON (double quotes only); and the numbers the checkpoints skip are the claims'."""
    from typing import TypedDict

    from statehitl.types import Command, interrupt

    class Ticket(TypedDict):
        text: str
        approved: bool

    def review(state: Ticket) -> dict[str, Any]:
        return {"approved": interrupt({"text": state["text"]}) == "y"}

    g = StateGraph(Ticket)
    g.add_node("review", review)
    g.add_edge(START, "review")
    g.add_edge("review", END)
    app = g.compile(checkpointer=MemoryCheckpointer())
    config = {"configurable": {"thread_id": "t"}}
    with TransitionRecorder() as recorder:
        app.invoke({"text": "refund"}, config)
        app.invoke(Command(resume="y"), config)

    assert 'interrupt "interrupt" <id1> from node review: {"text":"refund"}' in recorder.log
    assert not any("interrupt interrupt" in line or "'" in line for line in recorder.log)
    checkpoints = [int(line.split()[1][1:]) for line in recorder.log if line.startswith("checkpoint #")]
    claims = [int(line.split()[1][1:]) for line in recorder.log if line.startswith("claim #")]
    assert claims == [1]
    assert checkpoints == [0, 2]
    assert "claim #1 on #0: this resume alone goes on (a claim took the number)" in recorder.log
