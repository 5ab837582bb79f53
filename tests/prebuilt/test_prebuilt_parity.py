"""Parity of ``statehitl.prebuilt`` with ``langgraph.prebuilt``: each program is written once against a namespace
of either library's names, run on both with langchain-core's fake chat models, and the observed messages compared."""

from __future__ import annotations

import asyncio
import importlib
import os
import warnings
from types import SimpleNamespace
from typing import Annotated, Any

import pytest
from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel, GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.tools import InjectedToolCallId, tool
from langgraph.prebuilt import InjectedState as LGState
from langgraph.prebuilt import InjectedStore as LGStore
from pydantic import BaseModel

from statehitl.prebuilt import InjectedState as SHState
from statehitl.prebuilt import InjectedStore as SHStore

LIBS = ["langgraph", "statehitl"]


def names(lib: str) -> SimpleNamespace:
    prebuilt = importlib.import_module(f"{lib}.prebuilt")
    graph = importlib.import_module(f"{lib}.graph")
    memory = importlib.import_module("langgraph.checkpoint.memory" if lib == "langgraph" else "statehitl.checkpoint")
    store = importlib.import_module(f"{lib}.store.memory")
    types = importlib.import_module(f"{lib}.types")
    return SimpleNamespace(create_react_agent=prebuilt.create_react_agent, ToolNode=prebuilt.ToolNode,
                           tools_condition=prebuilt.tools_condition, InjectedState=prebuilt.InjectedState,
                           InjectedStore=prebuilt.InjectedStore, StateGraph=graph.StateGraph,
                           MessagesState=graph.MessagesState, START=graph.START, END=graph.END,
                           InMemorySaver=memory.InMemorySaver, InMemoryStore=store.InMemoryStore,
                           Command=types.Command, lib=lib)


class FakeModel(FakeMessagesListChatModel):
    """langchain-core's fake chat model, taking tools as a real one does (it replies from its list either way)."""

    bound: list[str] = []

    def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
        self.bound = [getattr(t, "name", None) or t.__name__ for t in tools]
        return self


def calls(*specs: tuple[str, dict[str, Any], str], id: str = "ai-1") -> AIMessage:
    return AIMessage(content="", id=id, tool_calls=[{"name": n, "args": a, "id": i} for n, a, i in specs])


def shown(messages: list[BaseMessage]) -> list[tuple[Any, ...]]:
    """What a run observably produced: each message's kind and contents (ToolMessage ids are random uuids)."""
    return [(m.type, m.content, getattr(m, "name", None), getattr(m, "tool_call_id", None),
             getattr(m, "status", None), [(c["name"], c["args"], c["id"]) for c in getattr(m, "tool_calls", [])])
            for m in messages]


def both(program: Any, *, may_raise: bool = False) -> None:
    """Run ``program`` on each library and require the same observations (or the same error type; set
    PREBUILT_DEBUG=1 to see both)."""
    seen = []
    for lib in LIBS:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # LangGraph's create_react_agent warns that it moved to langchain
            try:
                seen.append(program(names(lib)))
                if os.environ.get("PREBUILT_DEBUG"):
                    print(lib, seen[-1])
            except Exception as error:
                seen.append(("raised", type(error).__name__))
    assert seen[0] == seen[1]
    assert may_raise or seen[0][0] != "raised", seen[0]


@tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


@tool
def divide(a: int, b: int) -> float:
    """Divide a by b."""
    return a / b


def test_react_agent_runs_parallel_calls_then_answers() -> None:
    def program(ns: SimpleNamespace) -> Any:
        model = FakeModel(responses=[calls(("add", {"a": 1, "b": 2}, "c1"), ("add", {"a": 3, "b": 4}, "c2")),
                                     AIMessage(content="3 and 7", id="ai-2")])
        app = ns.create_react_agent(model, [add], prompt="You add.", name="adder")
        result = app.invoke({"messages": [HumanMessage("add things", id="h1")]})
        nodes = sorted(n for n in app.get_graph().nodes if not n.startswith("__"))
        return shown(result["messages"]), model.bound, nodes

    both(program)


def test_tool_errors_become_tool_messages_as_configured() -> None:
    cases: list[Any] = [None, True, "nope", lambda e: f"handled {type(e).__name__}", (ZeroDivisionError,)]
    for flag in cases:
        def program(ns: SimpleNamespace, flag: Any = flag) -> Any:
            extra = {} if flag is None else {"handle_tool_errors": flag}
            g = ns.StateGraph(ns.MessagesState)
            g.add_node("tools", ns.ToolNode([add, divide], **extra))
            g.add_edge(ns.START, "tools")
            app = g.compile()
            first = calls(("missing", {}, "c0"), ("add", {"a": "x", "b": 1}, "c1"))
            out = app.invoke({"messages": [first]})["messages"]
            try:
                divided = app.invoke({"messages": [calls(("divide", {"a": 1, "b": 0}, "c2"))]})["messages"]
            except ZeroDivisionError:
                return shown(out), "ZeroDivisionError"
            return shown(out), shown(divided)

        both(program, may_raise=isinstance(flag, tuple))  # arguments the tool refuses are not a ZeroDivisionError


def _recall(topic: str, state: dict, store: Any, call_id: str, first: list[BaseMessage]) -> str:
    item = store.get(("facts",), topic)
    return f"{topic}: {item.value['text']} ({len(state['messages'])} msgs, {call_id}, {first[0].content})"


@tool("recall")
def recall_lg(topic: str, state: Annotated[dict, LGState], store: Annotated[Any, LGStore()],
              call_id: Annotated[str, InjectedToolCallId], first: Annotated[list, LGState("messages")]) -> str:
    """Recall what the store knows about a topic."""
    return _recall(topic, state, store, call_id, first)


@tool("recall")
def recall_sh(topic: str, state: Annotated[dict, SHState], store: Annotated[Any, SHStore()],
              call_id: Annotated[str, InjectedToolCallId], first: Annotated[list, SHState("messages")]) -> str:
    """Recall what the store knows about a topic."""
    return _recall(topic, state, store, call_id, first)


def test_injected_state_store_and_call_id() -> None:
    def program(ns: SimpleNamespace) -> Any:
        recall = recall_lg if ns.lib == "langgraph" else recall_sh
        store = ns.InMemoryStore()
        store.put(("facts",), "tides", {"text": "twice a day"})
        model = FakeModel(responses=[calls(("recall", {"topic": "tides"}, "c1")), AIMessage(content="ok", id="ai-2")])
        app = ns.create_react_agent(model, [recall], store=store)
        result = app.invoke({"messages": [HumanMessage("tides?", id="h1")]})
        return shown(result["messages"]), sorted(recall.tool_call_schema.model_json_schema()["properties"])

    both(program)


def test_tools_condition_and_tool_node_in_a_users_graph() -> None:
    def program(ns: SimpleNamespace) -> Any:
        model = FakeModel(responses=[calls(("add", {"a": 2, "b": 2}, "c1")), AIMessage(content="4", id="ai-2")])

        def chatbot(state: Any) -> dict[str, Any]:
            return {"messages": [model.invoke(state["messages"])]}

        g = ns.StateGraph(ns.MessagesState)
        g.add_node("chatbot", chatbot)
        g.add_node("tools", ns.ToolNode([add]))
        g.add_edge(ns.START, "chatbot")
        g.add_conditional_edges("chatbot", ns.tools_condition)
        g.add_edge("tools", "chatbot")
        result = g.compile().invoke({"messages": [HumanMessage("2+2", id="h1")]})
        return shown(result["messages"]), ns.tools_condition([AIMessage("x")]), ns.tools_condition(result)

    both(program)


def test_remaining_steps_stop_the_loop() -> None:
    def program(ns: SimpleNamespace) -> Any:
        model = FakeModel(responses=[calls(("add", {"a": i, "b": 1}, f"c{i}"), id=f"ai-{i}") for i in range(5)])
        app = ns.create_react_agent(model, [add])
        result = app.invoke({"messages": [HumanMessage("loop", id="h1")]}, {"recursion_limit": 4})
        return shown(result["messages"])

    both(program)


def test_interrupt_before_tools_then_resume() -> None:
    def program(ns: SimpleNamespace) -> Any:
        model = FakeModel(responses=[calls(("add", {"a": 1, "b": 1}, "c1")), AIMessage(content="2", id="ai-2")])
        app = ns.create_react_agent(model, [add], checkpointer=ns.InMemorySaver(), interrupt_before=["tools"])
        config = {"configurable": {"thread_id": "t"}}
        first = app.invoke({"messages": [HumanMessage("1+1", id="h1")]}, config)
        waiting = app.get_state(config).next
        final = app.invoke(None, config)
        return shown(first["messages"]), tuple(waiting), shown(final["messages"])

    both(program)


@pytest.mark.parametrize("lib", LIBS)
def test_return_direct_ends_after_the_tool(lib: str) -> None:
    @tool(return_direct=True)
    def lookup(q: str) -> str:
        """Look it up."""
        return f"found {q}"

    def program(ns: SimpleNamespace) -> Any:
        model = FakeModel(responses=[calls(("lookup", {"q": "x"}, "c1")), AIMessage(content="never", id="ai-2")])
        result = ns.create_react_agent(model, [lookup]).invoke({"messages": [HumanMessage("q", id="h1")]})
        return shown(result["messages"])

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert program(names(lib))[-1][:3] == ("tool", "found x", "lookup")
    both(program)


class StreamingModel(GenericFakeChatModel):
    """langchain-core's fake chat model that streams its replies token by token, taking tools."""

    def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
        return self


def test_streams_and_ainvoke() -> None:
    def replies() -> Any:
        call = {"name": "add", "args": {"a": 1, "b": 2}, "id": "c1"}
        return iter([AIMessage(content="let me add", tool_calls=[call]), AIMessage(content="three it is")])

    def program(ns: SimpleNamespace) -> Any:
        streamed = ns.create_react_agent(StreamingModel(messages=replies()), [add]).stream(
            {"messages": [("user", "1+2")]}, stream_mode="messages")
        tokens = [(type(c).__name__, c.content, meta["langgraph_node"]) for c, meta in streamed]
        updates = [sorted(u) for u in ns.create_react_agent(StreamingModel(messages=replies()), [add]).stream(
            {"messages": [("user", "1+2")]}, stream_mode="updates")]
        done = asyncio.run(ns.create_react_agent(StreamingModel(messages=replies()), [add]).ainvoke(
            {"messages": [("user", "1+2")]}))
        return tokens, updates, [m.content for m in done["messages"]]

    both(program)


class Weather(BaseModel):
    city: str
    degrees: int


def test_response_format_asks_for_the_final_answer_in_a_schema() -> None:
    for response_format in (Weather, ("Answer as a forecast.", Weather)):
        def program(ns: SimpleNamespace, response_format: Any = response_format) -> Any:
            structured = AIMessage(content="", id="ai-3", tool_calls=[
                {"name": "Weather", "args": {"city": "Oslo", "degrees": 3}, "id": "s1"}])
            model = FakeModel(responses=[calls(("add", {"a": 1, "b": 2}, "c1")), AIMessage(content="3", id="ai-2"),
                                         structured])
            app = ns.create_react_agent(model, [add], response_format=response_format, checkpointer=ns.InMemorySaver())
            config = {"configurable": {"thread_id": "t"}}
            result = app.invoke({"messages": [HumanMessage("weather?", id="h1")]}, config)
            stored = app.get_state(config).values["structured_response"]
            return shown(result["messages"]), result["structured_response"], type(stored).__name__

        both(program)


def test_a_model_given_by_name_is_made_by_init_chat_model(monkeypatch: pytest.MonkeyPatch) -> None:
    """``create_react_agent("provider:model", ...)`` asks LangChain's ``init_chat_model`` (the ``langchain``
    package) for the model, as LangGraph does; without that package it is an ImportError on both."""
    import sys
    import types as module_types

    asked: list[str] = []

    def init_chat_model(name: str) -> Any:
        asked.append(name)
        return FakeModel(responses=[calls(("add", {"a": 2, "b": 5}, "c1")), AIMessage(content="7", id="ai-2")])

    chat_models = module_types.ModuleType("langchain.chat_models")
    chat_models.init_chat_model = init_chat_model  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "langchain", module_types.ModuleType("langchain"))
    monkeypatch.setitem(sys.modules, "langchain.chat_models", chat_models)

    def program(ns: SimpleNamespace) -> Any:
        app = ns.create_react_agent("anthropic:claude-test", [add])
        return shown(app.invoke({"messages": [HumanMessage("add", id="h1")]})["messages"]), asked[-1:]

    both(program)
    monkeypatch.setitem(sys.modules, "langchain.chat_models", None)
    both(lambda ns: ns.create_react_agent("anthropic:claude-test", [add]), may_raise=True)


def test_a_tool_reads_a_state_that_extends_agent_state_or_messages_state() -> None:
    """A tool whose ``InjectedState`` parameter is annotated with a subclass of ``AgentState`` or
    ``MessagesState`` (LangGraph's documentation does both): LangChain builds the tool's schema with pydantic,
    which takes such a class only when it is a ``typing_extensions.TypedDict`` before Python 3.12."""
    from typing import NotRequired

    def program(ns: SimpleNamespace) -> Any:
        agent_state = importlib.import_module(f"{ns.lib}.prebuilt.chat_agent_executor").AgentState
        custom = type("Custom", (agent_state,), {"__annotations__": {"user_name": NotRequired[str]}})
        steps = importlib.import_module(f"{ns.lib}.managed").RemainingSteps
        named = type("Named", (ns.MessagesState,), {"__annotations__": {"user_name": str, "remaining_steps": steps}})
        seen = []
        for schema in (custom, named):
            def whoami(state: Any) -> str:
                """Who the user is."""
                return str(state.get("user_name", "unknown"))

            whoami.__annotations__ = {"state": Annotated[schema, ns.InjectedState], "return": str}
            model = FakeModel(responses=[calls(("whoami", {}, "c1")), AIMessage(content="done", id="ai-2")])
            app = ns.create_react_agent(model, [tool(whoami)], state_schema=schema)
            seen.append(shown(app.invoke({"messages": [HumanMessage("who?", id="h1")], "user_name": "ann"})
                              ["messages"]))
        return seen

    both(program)
