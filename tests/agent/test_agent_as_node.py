"""An agent driven as a node of another machine, through ``agent.as_node()`` and ``call_machine_node``.

The enclosing machine here is a hand-written StateGraph; Graph and Swarm use the same interface.
"""

from __future__ import annotations

from typing import Any

import pytest
from agent_helpers import answer, assert_no_dangling_tool_use, uses
from pydantic import BaseModel

from statehitl import Agent, tool
from statehitl.checkpoint import FileCheckpointer
from statehitl.graph import END, START, NodeContext, StateGraph
from statehitl.hooks import BeforeToolCallEvent, MessageAddedEvent
from statehitl.models import ScriptedModel
from statehitl.nesting import MachineNode, call_machine_node
from statehitl.types.tools import ToolContext

RUNS: list[str] = []


@tool(context=True)
def pay(amount: int, tool_context: ToolContext) -> str:
    """Pay.

    Args:
        amount: how much
    """
    if tool_context.interrupt("confirm", reason={"amount": amount}) != "y":
        return "not paid"
    RUNS.append(f"pay {amount}")
    return f"paid {amount}"


class Desk(BaseModel):
    question: str
    clerk: dict[str, Any] = {}
    answer: str = ""
    before: str = ""


def build(store: str, replies: list[Any]) -> tuple[Any, Agent]:
    clerk = Agent(model=ScriptedModel(replies), tools=[pay], name="clerk", callback_handler=None,
                  state={"desk": 1})
    node = clerk.as_node()

    def intake(state: Desk, ctx: NodeContext) -> dict[str, Any]:
        return {"before": ctx.interrupt("open?")}  # the host's own interrupt, apart from the agent's

    async def ask_clerk(state: Desk, ctx: NodeContext) -> dict[str, Any]:
        done = await call_machine_node(node, state.question, state.clerk or node.node_state(), ctx)
        return {"clerk": done.state, "answer": str(done.result)}

    g = StateGraph(Desk)
    g.add_node("intake", intake)
    g.add_node("clerk", ask_clerk)
    g.add_edge(START, "intake")
    g.add_edge("intake", "clerk")
    g.add_edge("clerk", END)
    return g.compile(checkpointer=FileCheckpointer(store)), clerk


def test_an_agent_node_interrupts_its_host_and_resumes_in_a_new_app(tmp_path) -> None:
    RUNS.clear()
    replies = [uses(("t1", "pay", {"amount": 5})), "all paid"]
    app, _ = build(str(tmp_path), replies)
    first = app.invoke({"question": "pay 5"}, thread_id="desk")
    assert [i.name for i in first.interrupts] == ["open?"]
    second = app.invoke(answer(first), thread_id="desk")
    assert second.stop_reason == "interrupt"
    [confirm] = second.interrupts
    assert (confirm.name, confirm.source, confirm.reason) == ("confirm", "tool", {"amount": 5})
    assert confirm.id != first.interrupts[0].id
    assert RUNS == []

    # Another process: a new app and a new agent, scripted with only the reply still to come.
    app2, clerk2 = build(str(tmp_path), ["all paid"])
    added: list[str] = []
    clerk2.add_hook(MessageAddedEvent, lambda e: added.append(e.message["role"]))
    done = app2.invoke(answer(second), thread_id="desk")
    assert done.stop_reason == "end"
    assert RUNS == ["pay 5"]  # the model was not asked again before the tool ran, and it ran once
    assert done.state.answer == "all paid"
    assert done.state.before == "y"
    messages = done.state.clerk["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant", "user", "assistant"]
    assert_no_dangling_tool_use(messages)
    assert added == ["assistant", "user", "assistant"]  # announced as they joined the conversation
    assert clerk2.messages == messages  # mirrored into the live agent object
    assert done.state.clerk["agent_state"] == {"desk": 1}


def test_the_node_interface_is_what_an_agent_offers() -> None:
    agent = Agent(model=ScriptedModel([]), callback_handler=None, messages=[
        {"role": "user", "content": [{"text": "earlier"}]}])
    node = agent.as_node()
    assert isinstance(node, MachineNode)
    assert node.append_channels == frozenset({"messages"})
    assert node.node_state() == {"messages": [{"role": "user", "content": [{"text": "earlier"}]}], "agent_state": {}}


def test_a_hook_of_the_agent_interrupts_inside_the_host(tmp_path) -> None:
    app, clerk = build(str(tmp_path), [uses(("t1", "pay", {"amount": 2})), "fine"])

    def gate(event: BeforeToolCallEvent) -> None:
        if event.interrupt("allow", reason=event.tool_use["name"]) != "y":
            event.cancel_tool = "no"

    clerk.add_hook(BeforeToolCallEvent, gate)
    result = app.invoke({"question": "pay 2"}, thread_id="t")
    result = app.invoke(answer(result), thread_id="t")
    assert [(i.name, i.source) for i in result.interrupts] == [("allow", "hook")]
    result = app.invoke(answer(result, "n"), thread_id="t")
    assert result.stop_reason == "end"
    assert result.state.answer == "fine"
    results = [b["toolResult"] for m in result.state.clerk["messages"] for b in m["content"] if "toolResult" in b]
    assert results[0]["content"] == [{"text": "no"}]


@pytest.mark.parametrize("bad", [[{"interruptResponse": {"interruptId": "v1:nope", "response": "y"}}]])
def test_an_unknown_answer_to_a_nested_interrupt_changes_nothing(tmp_path, bad) -> None:
    app, _ = build(str(tmp_path), [uses(("t1", "pay", {"amount": 5})), "ok"])
    first = app.invoke({"question": "q"}, thread_id="t")
    second = app.invoke(answer(first), thread_id="t")
    before = [s.checkpoint_id for s in app.history("t")]
    with pytest.raises(KeyError, match="not pending"):
        app.invoke(bad, thread_id="t")
    assert [s.checkpoint_id for s in app.history("t")] == before
    assert app.get_state("t").interrupts[0].id == second.interrupts[0].id
