"""LangGraph programs that use the store, messages, managed values and node caching, run on LangGraph and on
statehitl with their imports changed, and compared (tests/graph/test_langgraph_parity.py's approach).

Chat models are langchain-core's fake ones, so every run is offline. What differs by design is taken out of
what is compared: message ids LangGraph and statehitl make at random (kept when a program gave them), item
times, task ids. Where a program depends on an order LangGraph's in-memory store does not promise
(insertion order there, namespace-and-key order here), it inserts in that order.
"""

from __future__ import annotations

import asyncio
import dataclasses
import importlib
import operator
import re
from types import SimpleNamespace
from typing import Annotated, Any, TypedDict

import pytest
from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel, GenericFakeChatModel
from langchain_core.messages import AIMessage, AnyMessage, BaseMessage, HumanMessage, RemoveMessage, ToolMessage
from langgraph.store.base import BaseStore  # the annotation LangGraph injects a node's store by
from pydantic import BaseModel, create_model

UUID = re.compile(r"^(lc_run--)?[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}(-[0-9]+)?$")


NAMES = {
    "InMemoryCache": "cache.memory", "InMemorySaver": "checkpoint.memory", "get_store": "config",
    "GraphRecursionError": "errors", "END": "graph", "START": "graph", "MessagesState": "graph", "StateGraph": "graph",
    "add_messages": "graph", "REMOVE_ALL_MESSAGES": "graph.message", "IsLastStep": "managed",
    "RemainingSteps": "managed", "GetOp": "store.base", "ListNamespacesOp": "store.base", "PutOp": "store.base",
    "SearchOp": "store.base", "InMemoryStore": "store.memory", "CachePolicy": "types", "Command": "types",
    "Send": "types", "interrupt": "types",
}
"""Each name a program uses, by its LangGraph module (``langgraph.<module>``); statehitl's is the same path with
``s/langgraph/statehitl/``, except the in-memory saver (``statehitl.checkpoint``)."""


def names(lib: str) -> SimpleNamespace:
    found = {}
    for name, module in NAMES.items():
        path = f"{lib}.{module}"
        if lib == "statehitl" and module == "checkpoint.memory":
            path = "statehitl.checkpoint"
        found[name] = getattr(importlib.import_module(path), name)
    return SimpleNamespace(**found)


def statehitl_names() -> SimpleNamespace:
    return names("statehitl")


def langgraph_names() -> SimpleNamespace:
    return names("langgraph")


def seen(value: Any) -> Any:
    """What a program saw, less what each library makes its own way: random message ids, item times."""
    if isinstance(value, BaseMessage):
        fields = value.model_dump(exclude={"id"})
        return (type(value).__name__, seen(fields), "<random id>" if value.id and UUID.match(value.id) else value.id)
    if hasattr(value, "namespace") and hasattr(value, "updated_at"):  # a store Item or SearchItem
        score = getattr(value, "score", None)
        return ("item", value.namespace, value.key, value.value, None if score is None else round(score, 6))
    if type(value).__name__ == "Interrupt":
        return ("interrupt", seen(value.value))
    if isinstance(value, dict):
        return {k: seen(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(seen(v) for v in value) if not hasattr(value, "_fields") else tuple(map(seen, value))
    if isinstance(value, str) and UUID.match(value):
        return "<random id>"
    return value


def thread(name: str, **extra: Any) -> dict[str, Any]:
    return {"configurable": {"thread_id": name}, **extra}


# -- the store ---------------------------------------------------------------------------------------


class Chat(TypedDict):
    user: str
    said: Annotated[list[str], operator.add]


def store_in_nodes(lg: SimpleNamespace) -> list[Any]:
    """Nodes remember across threads through the store: by a ``store`` parameter, ``runtime.store`` and
    ``get_store()``; a subgraph's nodes use its parent's store."""
    from langgraph.runtime import Runtime  # the annotation LangGraph injects by (statehitl: by the name)

    def remember(state: Chat, *, store: BaseStore) -> dict[str, Any]:
        namespace = ("memories", state["user"])
        known = store.get(namespace, "facts")
        facts = [*(known.value["facts"] if known else []), state["said"][-1]]
        store.put(namespace, "facts", {"facts": facts, "count": len(facts)})
        return {"said": [f"noted {len(facts)}"]}

    def recall(state: Chat, runtime: Runtime) -> dict[str, Any]:
        found = runtime.store.search(("memories",), filter={"count": {"$gte": 2}})
        return {"said": [f"{item.namespace[1]} knows {item.value['facts']}" for item in found]}

    def census(state: Chat) -> dict[str, Any]:
        store = lg.get_store()
        return {"said": [str(store.list_namespaces(prefix=("memories",)))]}

    sub = lg.StateGraph(Chat)
    sub.add_node(census)
    sub.add_edge(lg.START, "census")
    g = lg.StateGraph(Chat)
    g.add_node(remember)
    g.add_node(recall)
    g.add_node("sub", sub.compile())
    g.add_edge(lg.START, "remember")
    g.add_edge("remember", "recall")
    g.add_edge("recall", "sub")
    store = lg.InMemoryStore()
    app = g.compile(checkpointer=lg.InMemorySaver(), store=store)
    runs = [app.invoke({"user": user, "said": [text]}, thread(f"t{i}"))
            for i, (user, text) in enumerate([("ann", "tea"), ("bob", "jazz"), ("ann", "walks")])]
    return [runs, store.get(("memories", "ann"), "facts"), app.store is store]


def store_api(lg: SimpleNamespace) -> list[Any]:
    """The BaseStore API on the in-memory store: put, get, search with filters and paging, list_namespaces,
    delete, batch and the async twins."""
    store = lg.InMemoryStore()
    rows = [(("docs", "a"), "1", {"kind": "memo", "score": 1, "meta": {"lang": "en"}}),
            (("docs", "a"), "2", {"kind": "note", "score": 5, "meta": {"lang": "de"}}),
            (("docs", "b"), "1", {"kind": "memo", "score": 3, "tags": ["x", "y"]}),
            (("docs", "b", "c"), "9", {"kind": "memo", "score": 4.5}),
            (("users", "ann"), "prefs", {"theme": "dark"})]
    for namespace, key, value in rows:
        store.put(namespace, key, value)
    out: list[Any] = [
        store.get(("docs", "a"), "2"), store.get(("docs", "a"), "404"),
        store.search(("docs",)), store.search(("docs",), limit=2, offset=1), store.search(("docs", "b")),
        store.search(("docs",), filter={"kind": "memo"}), store.search(("docs",), filter={"score": {"$gt": 2}}),
        store.search(("docs",), filter={"score": {"$gte": 3, "$lte": 4.5}, "kind": {"$ne": "note"}}),
        store.search(("docs",), filter={"meta": {"lang": "en"}}), store.search(("docs",), filter={"tags": ["x", "y"]}),
        store.list_namespaces(), store.list_namespaces(prefix=("docs",), max_depth=2),
        store.list_namespaces(suffix=("a",)), store.list_namespaces(prefix=("docs", "*", "c")),
        store.list_namespaces(limit=2, offset=1),
    ]
    store.put(("docs", "a"), "1", {"kind": "memo", "score": 2})
    store.delete(("docs", "b"), "1")
    out.append(store.search(("docs",), filter={"kind": "memo"}))  # (LangGraph's still lists the emptied namespace)
    out.append(store.batch([lg.GetOp(("users", "ann"), "prefs"), lg.PutOp(("users", "ann"), "prefs", {"theme": "x"}),
                            lg.SearchOp(("users",)), lg.ListNamespacesOp(max_depth=1)]))
    out.append(store.get(("users", "ann"), "prefs"))

    async def twins() -> list[Any]:
        await store.aput(("async",), "k", {"v": 1})
        got = await store.aget(("async",), "k")
        found = await store.asearch(("async",), filter={"v": 1})
        listed = await store.alist_namespaces(prefix=("async",))
        await store.adelete(("async",), "k")
        return [got, found, listed, await store.aget(("async",), "k")]

    out.append(asyncio.run(twins()))
    for bad in [(("a.b",), "k"), (("",), "k"), (("langgraph",), "k")]:
        try:
            store.put(*bad, {"v": 1})
        except ValueError as exc:
            out.append(("refused", type(exc).__name__ == "InvalidNamespaceError"))
    return out


def letters(texts: list[str]) -> list[list[float]]:
    return [[float(t.count("a")), float(t.count("b")), float(t.count("c")) + 0.1] for t in texts]


def semantic_search(lg: SimpleNamespace) -> list[Any]:
    """``index={"embed": fn, "dims": ..., "fields": [...]}``: a query ranks by similarity, with scores; items
    without vectors come after, unscored; per-put ``index=`` paths and ``index=False``."""
    store = lg.InMemoryStore(index={"embed": letters, "dims": 3, "fields": ["text"]})
    store.put(("docs",), "as", {"text": "aaaa", "kind": "x"})
    store.put(("docs",), "bs", {"text": "bbb", "kind": "x"})
    store.put(("docs",), "cs", {"text": "cc", "kind": "y"})
    store.put(("docs",), "list", {"notes": [{"t": "ab"}, {"t": "ccc"}]}, index=["notes[*].t"])
    store.put(("docs",), "off", {"text": "aaaa"}, index=False)
    return [store.search(("docs",), query="bb"), store.search(("docs",), query="a", filter={"kind": "x"}),
            store.search(("docs",), query="c", limit=2, offset=1), store.search(("docs",), query="c", limit=10),
            store.search(("docs",))]


# -- messages ----------------------------------------------------------------------------------------


def add_messages_merges_by_id(lg: SimpleNamespace) -> list[Any]:
    add = lg.add_messages
    out: list[Any] = [
        add([HumanMessage("a", id="1")], [AIMessage("b", id="2")]),
        add([HumanMessage("a", id="1")], [HumanMessage("a again", id="1"), AIMessage("c", id="3")]),
        add([HumanMessage("a", id="1"), AIMessage("b", id="2")], [RemoveMessage(id="1")]),
        add([HumanMessage("a", id="1")], [AIMessage("gone", id="2"), RemoveMessage(id=lg.REMOVE_ALL_MESSAGES),
                                          AIMessage("kept", id="3")]),
        add([], [{"role": "user", "content": "dict"}, ("assistant", "pair"), "text",
                 {"type": "system", "content": "s"}]),
        add([HumanMessage("a", id="1")], AIMessage("one", id="2")),
        add([], [AIMessage("x", id="9"), RemoveMessage(id="9"), AIMessage("back", id="9")]),
    ]
    try:
        add([HumanMessage("a", id="1")], [RemoveMessage(id="404")])
    except ValueError:
        out.append("no such id")
    try:
        add([HumanMessage("a", id="1")], None)
    except ValueError:
        out.append("needs both")
    formatted = add(format="langchain-openai")([], [{"role": "user", "content": [
        {"type": "text", "text": "look"}, {"type": "image", "source_type": "url", "url": "https://x/y.png"}]}])
    out.append(formatted)
    return out


def chat_graph(lg: SimpleNamespace) -> list[Any]:
    """A MessagesState graph: messages given as dicts, pairs and objects become LangChain messages with ids; a
    tool call and its result survive the checkpoint; update_state replaces a message by id; an interrupt in the
    middle; RemoveMessage prunes."""

    class State(lg.MessagesState):
        turns: int

    model = FakeMessagesListChatModel(responses=[
        AIMessage("", id="ai-1", tool_calls=[{"name": "lookup", "args": {"q": "tea"}, "id": "call-1"}]),
        AIMessage("Tea is a drink.", id="ai-2")])

    def agent(state: Any) -> dict[str, Any]:
        return {"messages": [model.invoke(state["messages"])], "turns": state.get("turns", 0) + 1}

    def tools(state: Any) -> dict[str, Any]:
        call = state["messages"][-1].tool_calls[0]
        answer = lg.interrupt({"tool": call["name"], "args": call["args"]})
        return {"messages": [ToolMessage(answer, tool_call_id=call["id"], id="tool-1")]}

    def route(state: Any) -> str:
        return "tools" if getattr(state["messages"][-1], "tool_calls", None) else lg.END

    def prune(state: Any) -> dict[str, Any]:
        return {"messages": [RemoveMessage(id=state["messages"][0].id)]}

    g = lg.StateGraph(State)
    g.add_node(agent)
    g.add_node(tools)
    g.add_node(prune)
    g.add_edge(lg.START, "agent")
    g.add_conditional_edges("agent", route, ["tools", lg.END])
    g.add_edge("tools", "prune")
    g.add_edge("prune", "agent")
    app = g.compile(checkpointer=lg.InMemorySaver())
    cfg = thread("chat")
    out: list[Any] = [app.invoke({"messages": [{"role": "user", "content": "tea?", "id": "h-1"}]}, cfg)]
    out.append(app.get_state(cfg).values)
    out.append(list(app.stream(lg.Command(resume="a hot drink"), cfg, stream_mode="updates")))
    out.append(app.get_state(cfg).values)
    app.update_state(cfg, {"messages": [AIMessage("Tea is a hot drink.", id="ai-2")]})
    out.append(app.get_state(cfg).values["messages"])
    app.update_state(cfg, {"messages": ("user", "thanks")})
    out.append(app.get_state(cfg).values["messages"][-1])
    root = lg.StateGraph(Annotated[list, lg.add_messages])
    root.add_node("say", lambda messages: [("assistant", f"{len(messages)} so far")])
    root.add_edge(lg.START, "say")
    out.append(root.compile().invoke([("user", "hi")]))
    return out


class Profile(BaseModel):
    name: str


def pydantic_chat(lg: SimpleNamespace) -> list[Any]:
    """A pydantic state with a message channel: what invoke and get_state give back are the messages (and a
    nested model) themselves, across a checkpoint."""

    # built with each library's add_messages, which a class body's (string) annotations could not name here
    state_model = create_model("State", messages=(Annotated[list[AnyMessage], lg.add_messages], ...),
                               profile=(Profile | None, None))

    def reply(state: Any) -> dict[str, Any]:
        return {"messages": [AIMessage(f"hi {state.messages[-1].content}", id="ai-1")],
                "profile": Profile(name=str(state.messages[-1].content))}

    g = lg.StateGraph(state_model)
    g.add_node(reply)
    g.add_edge(lg.START, "reply")
    app = g.compile(checkpointer=lg.InMemorySaver())
    out = app.invoke({"messages": [("user", "ann")]}, thread("p"))
    values = app.get_state(thread("p")).values  # statehitl's is the model itself (docs/langgraph.md)
    fields = values if isinstance(values, dict) else {name: getattr(values, name) for name in type(values).model_fields}
    return [out, {k: type(v).__name__ for k, v in out.items()}, fields]


def streaming_chat(lg: SimpleNamespace) -> list[Any]:
    """``stream_mode="messages"``: chat models' token chunks from sync and async nodes (invoke, ainvoke and
    stream), messages nodes return whole, nothing for a model tagged nostream; with other modes; a subgraph's
    only with subgraphs=True."""

    def model() -> GenericFakeChatModel:
        return GenericFakeChatModel(messages=iter(["hello there friend", "second answer", "quiet one"]))

    def graph(async_nodes: bool) -> Any:
        chat_model = model()

        def chat(state: Any) -> dict[str, Any]:
            return {"messages": [chat_model.invoke(state["messages"])]}

        async def achat(state: Any) -> dict[str, Any]:
            return {"messages": [await chat_model.ainvoke(state["messages"])]}

        def whole(state: Any) -> dict[str, Any]:
            return {"messages": [AIMessage("no model here", id="whole-1")]}

        def quiet(state: Any) -> dict[str, Any]:
            return {"messages": [chat_model.with_config(tags=["nostream"]).invoke(state["messages"])]}

        g = lg.StateGraph(lg.MessagesState)
        g.add_node("chat", achat if async_nodes else chat)
        g.add_node(whole)
        g.add_node(quiet)
        g.add_edge(lg.START, "chat")
        g.add_edge("chat", "whole")
        g.add_edge("whole", "quiet")
        return g.compile()

    def pair(item: Any) -> Any:
        chunk, meta = item
        return seen(chunk), meta["langgraph_node"], meta["langgraph_step"]

    given = {"messages": [("user", "hi")]}
    out: list[Any] = [[pair(i) for i in graph(False).stream(given, stream_mode="messages")]]
    out.append([(mode, pair(c) if mode == "messages" else seen(c))
                for mode, c in graph(False).stream(given, stream_mode=["messages", "updates"])])

    async def streamed() -> list[Any]:
        return [pair(i) async for i in graph(True).astream(given, stream_mode="messages")]

    out.append(asyncio.run(streamed()))
    inner_model = model()
    sub = lg.StateGraph(lg.MessagesState)
    sub.add_node("inner", lambda s: {"messages": [inner_model.invoke(s["messages"])]})
    sub.add_edge(lg.START, "inner")
    outer = lg.StateGraph(lg.MessagesState)
    outer.add_node("sub", sub.compile())
    outer.add_edge(lg.START, "sub")
    app = outer.compile()
    out.append([pair(i) for i in app.stream(given, stream_mode="messages")])
    out.append([(len(ns), pair(i)) for ns, i in app.stream(given, stream_mode="messages", subgraphs=True)])
    return out


# -- managed values and caching -------------------------------------------------------------------------


def remaining_steps(lg: SimpleNamespace) -> list[Any]:
    """``RemainingSteps`` and ``IsLastStep`` as nodes and conditional edges see them, in a TypedDict and a
    dataclass state; they are not in the values; a task event's input has them."""

    # built with each library's managed types, which a class body's (string) annotations could not name here
    loop = TypedDict("Loop", {"log": Annotated[list, operator.add],  # noqa: UP013
                              "remaining_steps": lg.RemainingSteps, "last": lg.IsLastStep})
    data_loop = dataclasses.make_dataclass("DataLoop", [
        ("log", Annotated[list, operator.add], dataclasses.field(default_factory=list)),
        ("remaining_steps", lg.RemainingSteps, dataclasses.field(default=0))])

    def step(state: Any) -> dict[str, Any]:
        got = state if isinstance(state, dict) else {"remaining_steps": state.remaining_steps}
        return {"log": [(got["remaining_steps"], got.get("last"))]}

    routes: list[Any] = []

    def route(state: Any) -> str:
        left = state["remaining_steps"] if isinstance(state, dict) else state.remaining_steps
        routes.append(left)
        return "step" if left > 2 else lg.END

    out: list[Any] = []
    for schema in (loop, data_loop):
        g = lg.StateGraph(schema)
        g.add_node("step", step)
        g.add_conditional_edges(lg.START, route, ["step", lg.END])
        g.add_conditional_edges("step", route, ["step", lg.END])
        out.append(g.compile().invoke({"log": []}, {"recursion_limit": 6}))
    # a task's input in the tasks stream is what the node is given: the managed values included
    out.append([dataclasses.asdict(chunk["input"]) for chunk in g.compile().stream(
        {"log": []}, {"recursion_limit": 6}, stream_mode="tasks") if "input" in chunk])  # the dataclass state's
    forever = lg.StateGraph(loop)
    forever.add_node("step", step)
    forever.add_edge(lg.START, "step")
    forever.add_edge("step", "step")
    try:
        forever.compile().invoke({"log": []}, {"recursion_limit": 4})
    except lg.GraphRecursionError:
        out.append("recursion limit")
    return [*out, routes]


def node_cache(lg: SimpleNamespace) -> list[Any]:
    """A cached node runs once per input (Sends too, and a ``key_func``'s key); the hit is marked in the
    updates stream; ``clear_cache`` forgets; without ``compile(cache=)`` nothing is cached."""

    class S(TypedDict):
        x: int
        log: Annotated[list, operator.add]

    calls: list[int] = []

    def slow(state: Any) -> dict[str, Any]:
        calls.append(state["x"])
        return {"log": [state["x"] * 10]}

    def fan(state: Any) -> list[Any]:
        return [lg.Send("slow", {"x": 1, "log": []}), lg.Send("slow", {"x": 2, "log": []})]

    g = lg.StateGraph(S)
    g.add_node("slow", slow, cache_policy=lg.CachePolicy())
    g.add_edge(lg.START, "slow")
    app = g.compile(cache=lg.InMemoryCache())
    out: list[Any] = [app.invoke({"x": 1, "log": []}), list(app.stream({"x": 1, "log": []}, stream_mode="updates")),
                      list(app.stream({"x": 2, "log": []}, stream_mode="updates")), list(calls)]
    app.clear_cache()
    out += [app.invoke({"x": 1, "log": []}), list(calls)]
    fanned = lg.StateGraph(S)
    fanned.add_node("slow", slow, cache_policy=lg.CachePolicy(key_func=lambda s: str(s["x"] % 2)))
    fanned.add_conditional_edges(lg.START, fan)
    fanned_app = fanned.compile(cache=lg.InMemoryCache())
    out += [fanned_app.invoke({"x": 0, "log": []}), fanned_app.invoke({"x": 0, "log": []}), list(calls)]
    uncached = g.compile()
    out += [uncached.invoke({"x": 5, "log": []}), uncached.invoke({"x": 5, "log": []}), list(calls)]
    out.append([{k: v for k, v in chunk.items() if k != "id"}
                for chunk in app.stream({"x": 1, "log": []}, stream_mode="tasks")])
    return out


PROGRAMS = [store_in_nodes, store_api, semantic_search, add_messages_merges_by_id, chat_graph, pydantic_chat,
            streaming_chat, remaining_steps, node_cache]


@pytest.mark.parametrize("program", PROGRAMS, ids=[p.__name__ for p in PROGRAMS])
def test_the_program_sees_what_it_sees_on_langgraph(program: Any) -> None:
    assert seen(program(statehitl_names())) == seen(program(langgraph_names()))
