"""LangChain messages in a ``Send``'s argument (what ``create_react_agent``'s "v2" sends: each call with the state it
was made in) are stored as JSON, tagged with their registered class, and read back as the same classes in a new
process's checkpointer; nothing else is constructed because the data names it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

from statehitl.checkpoint import FileCheckpointer
from statehitl.errors import ValueNotStorableError
from statehitl.graph import START, MessagesState, StateGraph
from statehitl.types import Command, Send, interrupt


def graph(store: Path) -> Any:
    def fan_out(state: dict[str, Any]) -> list[Send]:
        return [Send("worker", {"messages": list(state["messages"]), "n": n}) for n in (1, 2)]

    def worker(arg: dict[str, Any]) -> dict[str, Any]:
        kinds = [type(m).__name__ for m in arg["messages"]]
        answer = interrupt(f"go {arg['n']}?")
        return {"messages": [ToolMessage(f"{arg['n']}: {answer} {kinds}", tool_call_id=f"c{arg['n']}")]}

    g = StateGraph(MessagesState)
    g.add_node("worker", worker)
    g.add_conditional_edges(START, fan_out, ["worker"])
    return g.compile(checkpointer=FileCheckpointer(store))


def test_sent_messages_come_back_as_their_classes_in_a_new_checkpointer(tmp_path: Path) -> None:
    config = {"configurable": {"thread_id": "t"}}
    given = [HumanMessage("hi", id="h1"), AIMessage("", id="a1", tool_calls=[{"name": "x", "args": {}, "id": "c1"}])]
    asked = graph(tmp_path).invoke({"messages": given}, config)["__interrupt__"]
    resumed = graph(tmp_path).invoke(Command(resume={i.id: "yes" for i in asked}), config)  # a fresh checkpointer
    assert sorted(m.content for m in resumed["messages"] if isinstance(m, ToolMessage)) == [
        "1: yes ['HumanMessage', 'AIMessage']", "2: yes ['HumanMessage', 'AIMessage']"]
    assert resumed["messages"][1].tool_calls[0]["id"] == "c1"


def test_an_unregistered_class_in_a_send_is_still_refused() -> None:
    class Note:
        pass

    with pytest.raises(ValueNotStorableError, match="Note"):
        Send("worker", {"messages": [HumanMessage("hi")], "note": Note()})
    stored = json.dumps(Send("worker", {"messages": [AIMessage("hi", id="a")]}).to_json())  # messages are JSON,
    assert "langchain_core.messages.ai.AIMessage" in stored  # tagged with the class's registered name
