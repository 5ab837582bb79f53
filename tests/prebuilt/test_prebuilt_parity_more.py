"""Parity of the rest of ``langgraph.prebuilt`` (model hooks, ``version``, ``wrap_tool_call``, ``ToolRuntime``, tools
returning ``Command``, ``ValidationNode``) and of ``push_message``: each program runs on LangGraph and on statehitl
with langchain-core's fake chat models, and what it observed is compared (``both``)."""

from __future__ import annotations

import asyncio
import importlib
from collections.abc import Sequence
from types import SimpleNamespace
from typing import Annotated, Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.tools import InjectedToolCallId, tool
from pydantic import BaseModel, create_model
from test_prebuilt_parity import FakeModel, add, both, calls, names, shown

from statehitl.checkpoint import InMemorySaver
from statehitl.prebuilt import InjectedIdempotencyKey, ToolNode, ToolRuntime, create_react_agent
from statehitl.types import Command


def more(lib: str) -> SimpleNamespace:
    """``names(lib)`` plus the names these programs use."""
    ns = names(lib)
    tool_node = importlib.import_module(f"{lib}.prebuilt.tool_node")
    message = importlib.import_module(f"{lib}.graph.message")
    ns.ToolRuntime, ns.ToolCallRequest = tool_node.ToolRuntime, tool_node.ToolCallRequest
    ns.ValidationNode = importlib.import_module(f"{lib}.prebuilt").ValidationNode
    ns.push_message, ns.add_messages = message.push_message, message.add_messages
    ns.Send = importlib.import_module(f"{lib}.types").Send
    return ns


def run_both(program: Any, *, may_raise: bool = False) -> None:
    both(lambda ns: program(more(ns.lib)), may_raise=may_raise)


def in_graph(ns: SimpleNamespace, node: Any, message: AIMessage) -> list[BaseMessage]:
    """The messages after ``node`` ran as the one node of a graph given ``message`` (LangGraph's ToolNode runs
    only in a graph)."""
    g = ns.StateGraph(ns.MessagesState)
    g.add_node("tools", node)
    g.add_edge(ns.START, "tools")
    return list(g.compile().invoke({"messages": [message]})["messages"])


@pytest.mark.parametrize(("version", "post"), [("v1", False), ("v2", False), ("v2", True)])
def test_pre_and_post_model_hooks(version: str, post: bool) -> None:
    # (LangGraph 1.1's "v1" with a post_model_hook routes the agent to "tools" outside its path map: KeyError)
    def program(ns: SimpleNamespace) -> Any:
        seen: list[list[str]] = []

        class State(ns.MessagesState):  # type: ignore[name-defined,misc]
            remaining_steps: Any
            checked: int

        State.__annotations__["remaining_steps"] = importlib.import_module(f"{ns.lib}.managed").RemainingSteps

        def trim(state: Any) -> dict[str, Any]:  # the model sees only the last message
            return {"llm_input_messages": state["messages"][-1:]}

        def check(state: Any) -> dict[str, Any]:
            return {"checked": state.get("checked", 0) + 1}

        class Spy(FakeModel):
            def invoke(self, given: Any, config: Any = None, **kwargs: Any) -> Any:
                seen.append([m.content for m in given])
                return super().invoke(given, config, **kwargs)

            async def ainvoke(self, given: Any, config: Any = None, **kwargs: Any) -> Any:
                seen.append([m.content for m in given])
                return await super().ainvoke(given, config, **kwargs)

        model = Spy(responses=[calls(("add", {"a": 1, "b": 2}, "c1"), ("add", {"a": 3, "b": 4}, "c2")),
                               AIMessage(content="3 and 7", id="ai-2")])
        app = ns.create_react_agent(model, [add], pre_model_hook=trim, post_model_hook=check if post else None,
                                    state_schema=State, version=version)
        given = {"messages": [HumanMessage("add", id="h1")]}
        updates = [sorted(u) for u in app.stream(given, stream_mode="updates")]
        model.i = 0
        result = app.invoke(given)
        return shown(result["messages"]), result.get("checked"), "llm_input_messages" in result, seen, updates

    run_both(program)


def test_version_is_checked() -> None:
    run_both(lambda ns: ns.create_react_agent(FakeModel(responses=[]), [add], version="v3"), may_raise=True)


def test_wrap_tool_call_changes_retries_and_answers() -> None:
    def program(ns: SimpleNamespace) -> Any:
        attempts: list[Any] = []

        @tool
        def flaky(n: int) -> str:
            """Fails on its first try."""
            attempts.append(n)
            if len(attempts) == 1:
                raise ValueError("first try fails")
            return f"ok {n}"

        def wrap(request: Any, execute: Any) -> Any:
            if request.tool_call["name"] == "add":
                return ToolMessage("cached", tool_call_id=request.tool_call["id"], name="add")
            args = {"n": request.tool_call["args"]["n"] * 2}
            doubled = request.override(tool_call={**request.tool_call, "args": args})
            try:
                return execute(doubled)
            except ValueError:
                return execute(doubled)

        node = ns.ToolNode([add, flaky], wrap_tool_call=wrap)
        out = in_graph(ns, node, calls(("flaky", {"n": 5}, "c1"), ("add", {"a": 1, "b": 1}, "c2")))
        return shown(out), attempts

    run_both(program)


def test_awrap_tool_call_under_ainvoke() -> None:
    def program(ns: SimpleNamespace) -> Any:
        async def wrap(request: Any, execute: Any) -> Any:
            answer = await execute(request)
            answer.content = f"[{answer.content}]"
            return answer

        g = ns.StateGraph(ns.MessagesState)
        g.add_node("tools", ns.ToolNode([add], awrap_tool_call=wrap))
        g.add_edge(ns.START, "tools")
        done = asyncio.run(g.compile().ainvoke({"messages": [calls(("add", {"a": 2, "b": 3}, "c1"))]}))
        return shown(done["messages"])

    run_both(program)


def _runtime_tool(runtime_class: type) -> Any:
    def inspect_run(q: str, runtime: Any) -> str:
        """Report what the run gave this tool."""
        runtime.stream_writer({"tool": q})
        count = len(runtime.state["messages"])
        stored = runtime.store.get(("notes",), "n1").value["text"] if runtime.store else None
        return f"{q}: {count} msgs, call {runtime.tool_call_id}, user {runtime.context['user']}, note {stored}"

    inspect_run.__annotations__ = {"q": "str", "runtime": runtime_class, "return": "str"}
    return tool(inspect_run)


def test_tool_runtime() -> None:
    def program(ns: SimpleNamespace) -> Any:
        inspect_run = _runtime_tool(ns.ToolRuntime)
        store = ns.InMemoryStore()
        store.put(("notes",), "n1", {"text": "hello"})
        model = FakeModel(responses=[calls(("inspect_run", {"q": "x"}, "c1")), AIMessage(content="done", id="ai-2")])
        app = ns.create_react_agent(model, [inspect_run], store=store, context_schema=dict)
        chunks = list(app.stream({"messages": [HumanMessage("go", id="h1")]}, context={"user": "ada"},
                                 stream_mode=["custom", "updates"]))
        custom = [c for mode, c in chunks if mode == "custom"]
        result = app.invoke({"messages": [HumanMessage("go", id="h1")]}, context={"user": "ada"})
        return shown(result["messages"]), custom, sorted(inspect_run.tool_call_schema.model_json_schema()["properties"])

    run_both(program)


class Visit(BaseModel):
    city: str


def _travel_tools(command_class: type) -> list[Any]:
    @tool
    def visit(city: str, call_id: Annotated[str, InjectedToolCallId]) -> Any:
        """Go to a city."""
        return command_class(update={"city": city, "messages": [ToolMessage(f"in {city}", tool_call_id=call_id)]})

    @tool
    def hand_off(call_id: Annotated[str, InjectedToolCallId]) -> Any:
        """Hand the conversation to the front desk."""
        return command_class(graph=command_class.PARENT, goto="desk",
                             update={"messages": [ToolMessage("handed off", tool_call_id=call_id)]})

    return [visit, hand_off]


def test_tools_returning_commands() -> None:
    def program(ns: SimpleNamespace) -> Any:
        visit, hand_off = _travel_tools(ns.Command)

        class State(ns.MessagesState):  # type: ignore[name-defined,misc]
            city: str

        def desk(state: Any) -> dict[str, Any]:
            return {"messages": [AIMessage("desk here", id="d1")]}

        model = FakeModel(responses=[calls(("visit", {"city": "Oslo"}, "c1"), ("add", {"a": 1, "b": 1}, "c2")),
                                     calls(("hand_off", {}, "c3"), id="ai-2"), AIMessage("never", id="ai-3")])
        inner = ns.create_react_agent(model, [visit, hand_off, add], state_schema=_with_steps(ns, State))
        outer = ns.StateGraph(State)
        outer.add_node("agent", inner)
        outer.add_node("desk", desk)
        outer.add_edge(ns.START, "agent")
        result = outer.compile().invoke({"messages": [HumanMessage("travel", id="h1")], "city": ""})
        direct = ns.StateGraph(State)
        direct.add_node("tools", ns.ToolNode([visit, add]))
        direct.add_edge(ns.START, "tools")
        updated = direct.compile().invoke({"messages": [calls(("visit", {"city": "Rome"}, "c9"),
                                                              ("add", {"a": 2, "b": 2}, "c8"))], "city": ""})
        return shown(result["messages"]), shown(updated["messages"]), updated["city"]

    run_both(program)


def _with_steps(ns: SimpleNamespace, state: Any) -> Any:
    class WithSteps(state):  # type: ignore[misc,valid-type]
        remaining_steps: Any

    WithSteps.__annotations__["remaining_steps"] = importlib.import_module(f"{ns.lib}.managed").RemainingSteps
    return WithSteps


def test_a_command_without_the_calls_answer_is_refused() -> None:
    def program(ns: SimpleNamespace) -> Any:
        @tool
        def silent() -> Any:
            """Updates the state but answers nothing."""
            return ns.Command(update={"messages": []})

        return in_graph(ns, ns.ToolNode([silent]), calls(("silent", {}, "c1")))

    run_both(program, may_raise=True)


def test_validation_node_in_an_extraction_loop() -> None:
    def program(ns: SimpleNamespace) -> Any:
        model = FakeModel(responses=[calls(("Visit", {"town": "Oslo"}, "v1")), calls(("Visit", {"city": "Oslo"}, "v2"),
                                                                                      id="ai-2")])

        def extract(state: Any) -> dict[str, Any]:
            return {"messages": [model.invoke(state["messages"])]}

        def again(state: Any) -> str:
            return "extract" if state["messages"][-1].additional_kwargs.get("is_error") else ns.END

        g = ns.StateGraph(ns.MessagesState)
        g.add_node("extract", extract)
        g.add_node("validate", ns.ValidationNode([Visit]))
        g.add_edge(ns.START, "extract")
        g.add_edge("extract", "validate")
        g.add_conditional_edges("validate", again, ["extract", ns.END])
        result = g.compile().invoke({"messages": [HumanMessage("where?", id="h1")]})
        return [(m.type, m.content.split("\n")[0][:60], m.additional_kwargs.get("is_error")) for m in
                result["messages"]]

    run_both(program)


def test_push_message() -> None:
    def program(ns: SimpleNamespace) -> Any:
        def node(state: Any) -> dict[str, Any]:
            ns.push_message(AIMessage("pushed", id="p1"))
            ns.push_message(AIMessage("only streamed", id="p2"), state_key=None)
            return {"messages": [AIMessage("returned", id="r1")]}

        def replaces(state: Any) -> dict[str, Any]:
            ns.push_message(AIMessage("draft", id="p3"))
            return {"messages": [AIMessage("final", id="p3")]}

        g = ns.StateGraph(ns.MessagesState)
        g.add_node("n", node)
        g.add_node("m", replaces)
        g.add_edge(ns.START, "n")
        g.add_edge("n", "m")
        app = g.compile()
        given = {"messages": [HumanMessage("hi", id="h")]}
        streamed = [(m.content, m.id, meta["langgraph_node"]) for m, meta in app.stream(given, stream_mode="messages")]
        final = [(m.content, m.id) for m in app.invoke(given)["messages"]]
        try:
            ns.push_message(AIMessage("outside", id="o1"))
        except RuntimeError:
            outside = "RuntimeError"
        try:
            g2 = ns.StateGraph(ns.MessagesState)
            g2.add_node("b", lambda state: ns.push_message(("ai", "no id")))
            g2.add_edge(ns.START, "b")
            g2.compile().invoke({"messages": []})
        except ValueError as error:
            no_id = str(error)
        return streamed, final, outside, no_id

    run_both(program)


def test_a_pydantic_state_resumed_keeps_its_message_classes() -> None:
    def program(ns: SimpleNamespace) -> Any:
        State = create_model("State", messages=(Annotated[Sequence[BaseMessage], ns.add_messages], ...),
                             name=(str | None, None))

        def ask(state: Any) -> dict[str, Any]:
            answer = importlib.import_module(f"{ns.lib}.types").interrupt("name?")
            return {"name": answer, "messages": [HumanMessage(str([type(m).__name__ for m in state.messages]))]}

        g = ns.StateGraph(State)
        g.add_node("reply", lambda state: {"messages": [AIMessage("hi", id="a1")]})
        g.add_node("ask", ask)
        g.add_edge(ns.START, "reply")
        g.add_edge("reply", "ask")
        app = g.compile(checkpointer=ns.InMemorySaver())
        config = {"configurable": {"thread_id": "t"}}
        app.invoke({"messages": [("user", "x")]}, config)
        done = app.invoke(ns.Command(resume="ada"), config)
        return [type(m).__name__ for m in done["messages"]], done["messages"][-1].content, done["name"]

    run_both(program)


# statehitl's promises with the new names: an approved call runs once, and the wrapper sees what the human decided

@tool
def pay(cents: int, key: Annotated[str, InjectedIdempotencyKey], runtime: ToolRuntime) -> str:
    """Pay."""
    PAID.append((cents, key, runtime.idempotency_key))
    return f"paid {cents}"


PAID: list[tuple[int, str, str]] = []


@pytest.mark.parametrize("version", ["v1", "v2"])
def test_approved_call_runs_once_through_the_wrapper_with_its_key(version: str) -> None:
    PAID.clear()
    seen: list[dict[str, Any]] = []

    def wrap(request: Any, execute: Any) -> Any:
        seen.append(request.tool_call["args"])
        return execute(request)

    model = FakeModel(responses=[calls(("pay", {"cents": 900}, "c1")), AIMessage("done", id="ai-2")])
    app = create_react_agent(model, ToolNode([pay], wrap_tool_call=wrap, approve_tools=["pay"]),
                             checkpointer=InMemorySaver(), version=version)
    config = {"configurable": {"thread_id": "t"}}
    asked = app.invoke({"messages": [HumanMessage("pay", id="h1")]}, config)["__interrupt__"]
    assert seen == []
    assert PAID == []
    done = app.invoke(Command(resume={asked[0].id: {"type": "edit", "input": {"cents": 500}}}), config)
    assert seen == [{"cents": 500}]
    [(cents, key, runtime_key)] = PAID
    assert (cents, key) == (500, runtime_key)
    assert key.startswith("statehitl-")
    assert done["messages"][-1].content == "done"
    app.invoke(None, config)
    assert len(PAID) == 1


class Prefs(BaseModel):
    unit: str


def test_a_state_value_only_its_schema_names_reaches_an_injected_tool() -> None:
    # statehitl's Send cannot store such a value: the calls then run in one task, with the same messages
    def program(ns: SimpleNamespace) -> Any:
        def temp(city: str, prefs: Any) -> str:
            """Temperature in a city."""
            return f"3 {prefs.unit} in {city}"

        temp.__annotations__ = {"city": str, "prefs": Annotated[Prefs, ns.InjectedState("prefs")], "return": str}
        state = _with_steps(ns, create_model_state(ns))
        model = FakeModel(responses=[calls(("temp", {"city": "Oslo"}, "c1")), AIMessage("done", id="ai-2")])
        app = ns.create_react_agent(model, [tool(temp)], state_schema=state)
        return shown(app.invoke({"messages": [HumanMessage("t?", id="h1")], "prefs": Prefs(unit="C")})["messages"])

    run_both(program)


def create_model_state(ns: SimpleNamespace) -> Any:
    class State(ns.MessagesState):  # type: ignore[name-defined,misc]
        prefs: Prefs

    State.__annotations__["prefs"] = Prefs
    return State


def test_an_interrupt_in_a_tool_is_never_a_tool_error() -> None:
    def program(ns: SimpleNamespace) -> Any:
        interrupt = importlib.import_module(f"{ns.lib}.types").interrupt

        @tool
        def refund(cents: int) -> str:
            """Refund, once a human says so."""
            return f"refunded {cents}: {interrupt({'cents': cents})}"

        model = FakeModel(responses=[calls(("refund", {"cents": 5}, "c1"), ("add", {"a": 1, "b": 1}, "c2")),
                                     AIMessage("done", id="ai-2")])
        app = ns.create_react_agent(model, ns.ToolNode([refund, add], handle_tool_errors=True),
                                    checkpointer=ns.InMemorySaver())
        config = {"configurable": {"thread_id": "t"}}
        asked = app.invoke({"messages": [HumanMessage("refund", id="h1")]}, config)["__interrupt__"]
        done = app.invoke(ns.Command(resume="yes"), config)
        return [i.value for i in asked], shown(done["messages"])

    run_both(program)


@pytest.mark.parametrize("version", ["v1", "v2"])
def test_push_message_from_a_tool(version: str) -> None:
    def program(ns: SimpleNamespace) -> Any:
        @tool
        def work(n: int) -> str:
            """Work on something, saying so first."""
            ns.push_message(AIMessage(f"working on {n}", id=f"w{n}"))
            return f"did {n}"

        model = FakeModel(responses=[calls(("work", {"n": 1}, "c1"), ("work", {"n": 2}, "c2")),
                                     AIMessage("ok", id="ai-2")])
        app = ns.create_react_agent(model, [work], version=version)
        given = {"messages": [HumanMessage("go", id="h1")]}
        streamed = sorted((m.content, meta["langgraph_node"]) for m, meta in app.stream(given, stream_mode="messages"))
        model.i = 0
        return streamed, sorted(m.content for m in app.invoke(given)["messages"])

    run_both(program)
