"""Drawings: each program builds graphs from ``<root>.X`` and returns what ``get_graph()`` draws (``to_json()`` and
``draw_mermaid()``), run once with ``langgraph`` and once with ``statehitl`` as the root. They must be equal but
for the class each node's ``data`` names, the one deliberate difference (docs/langgraph.md): statehitl names its
own class at the node where LangGraph names its internal ``RunnableCallable``."""

from __future__ import annotations

import asyncio
import importlib
import json
import operator
import random
from collections.abc import Callable
from types import ModuleType
from typing import Annotated, Any, Literal

import pytest
from typing_extensions import TypedDict

pytest.importorskip("langchain_core")

Load = Callable[[str], ModuleType]

STATEHITL_CLASSES = {
    ("statehitl", "graph", "node_specs", "NodeFunction"): "a node's function",
    ("statehitl", "graph", "surface", "CompiledNode"): "the start node",
    ("statehitl", "graph", "compiled", "CompiledStateGraph"): "a compiled graph",
    ("statehitl", "prebuilt", "tool_node", "ToolNode"): "a tool node",
}
LANGGRAPH_CLASSES = {
    ("langgraph", "_internal", "_runnable", "RunnableCallable"): "a node's function",
    ("langgraph", "graph", "state", "CompiledStateGraph"): "a compiled graph",
    ("langgraph", "prebuilt", "tool_node", "ToolNode"): "a tool node",
}


def roles(drawn: Any, classes: dict[tuple[str, ...], str]) -> Any:
    """``drawn`` with each node's class id replaced by what it stands for; the start node's id as a function's
    (LangGraph draws ``__start__`` with the class it draws functions with)."""
    if isinstance(drawn, dict):
        out = {key: roles(value, classes) for key, value in drawn.items()}
        if isinstance(drawn.get("id"), list) and tuple(drawn["id"]) in classes:
            role = classes[tuple(drawn["id"])]
            out["id"] = "a node's function" if role == "the start node" else role
        return out
    if isinstance(drawn, list):
        return [roles(item, classes) for item in drawn]
    return drawn


def on_both(program: Callable[[Load], Any]) -> Any:
    """The program's drawings on LangGraph, which statehitl's must equal once class ids are read as roles."""
    expected = program(lambda path: importlib.import_module(f"langgraph.{path}"))
    seen = program(lambda path: importlib.import_module(f"statehitl.{path}"))
    assert roles(seen, STATEHITL_CLASSES) == roles(expected, LANGGRAPH_CLASSES)
    return seen


def drawn(app: Any, xray: int | bool = False) -> dict[str, Any]:
    graph = app.get_graph(xray=xray)
    return {"json": json.loads(json.dumps(graph.to_json())), "mermaid": graph.draw_mermaid(with_styles=False),
            "styled": graph.draw_mermaid()}


class Text(TypedDict):
    text: Annotated[str, operator.add]


def node_kinds_program(load: Load) -> list[Any]:
    """Every node but ``__end__`` is drawn as a runnable named after it: ``__start__``, a function, an async
    function, a subgraph (drawn whole, or in place with ``xray``), a LangChain Runnable with its own class id;
    ``aget_graph`` draws the same."""
    from langchain_core.runnables import RunnableLambda

    graph_module = load("graph")
    inner = graph_module.StateGraph(Text)
    inner.add_node("deep", lambda state: {"text": "d"})
    inner.add_edge("__start__", "deep")

    async def later(state: Text) -> dict[str, str]:
        return {"text": "l"}

    outer = graph_module.StateGraph(Text)
    outer.add_node("first", lambda state: {"text": "f"})
    outer.add_node("sub", inner.compile())
    outer.add_node("later", later)
    outer.add_node("chain", RunnableLambda(lambda state: {"text": "c"}))
    outer.add_edge("__start__", "first").add_edge("first", "sub").add_edge("sub", "later")
    outer.add_edge("later", "chain")
    app = outer.compile()
    from_async = asyncio.run(app.aget_graph(xray=True)).to_json()
    return [drawn(app), drawn(app, xray=True), json.loads(json.dumps(from_async))]


def test_every_node_is_drawn_as_a_runnable_named_after_it() -> None:
    seen = on_both(node_kinds_program)
    start, first, sub = seen[0]["json"]["nodes"][:3]
    assert start["data"] == {"id": ["statehitl", "graph", "surface", "CompiledNode"], "name": "__start__"}
    assert first["data"]["id"] == ["statehitl", "graph", "node_specs", "NodeFunction"]
    assert sub["data"]["id"] == ["statehitl", "graph", "compiled", "CompiledStateGraph"]
    assert seen[0]["json"]["nodes"][-1] == {"id": "__end__"}


def test_a_drawn_node_runs_what_is_there() -> None:
    """The Runnable a drawn node holds runs the node's function (LangGraph's runs its function too)."""
    from statehitl.graph import StateGraph

    inner = StateGraph(Text)
    inner.add_node("inside", lambda state: {"text": "!"}).add_edge("__start__", "inside")

    async def later(state: Text) -> dict[str, str]:
        return {"text": "later"}

    graph = StateGraph(Text)
    graph.add_node("shout", lambda state: {"text": state["text"].upper()})
    graph.add_node("sub", inner.compile()).add_node("later", later)
    graph.add_edge("__start__", "shout").add_edge("shout", "sub").add_edge("sub", "later")
    nodes = graph.compile().get_graph().nodes
    assert nodes["shout"].data.invoke({"text": "hi"}) == {"text": "HI"}
    assert nodes["__start__"].data.invoke({"text": "as given"}) == {"text": "as given"}
    assert nodes["sub"].data.invoke({"text": "sub"}) == {"text": "sub!"}
    assert asyncio.run(nodes["later"].data.ainvoke({"text": ""})) == {"text": "later"}


def self_loop_program(load: Load) -> dict[str, Any]:
    """A node whose ``Command[Literal[...]]`` annotation names itself and ``__end__``: conditional edges to both,
    and a graph with a list state whose node is a subgraph (LangGraph's root channel)."""
    graph_module, types = load("graph"), load("types")

    def worker(state: Text) -> Any:
        return types.Command(goto=random.choice(["worker", "__end__"]))

    worker.__annotations__["return"] = types.Command[Literal["worker", "__end__"]]
    looped = graph_module.StateGraph(Text)
    looped.add_node("worker", worker).add_edge("__start__", "worker")
    child = graph_module.StateGraph(list)
    child.add_node("child_node", lambda state: state).add_edge("__start__", "child_node")
    parent = graph_module.StateGraph(list)
    parent.add_node("child", child.compile()).add_edge("__start__", "child")
    return {"loop": drawn(looped.compile()), "root": drawn(parent.compile()), "root_xray": drawn(parent.compile(), 1)}


def test_a_self_loop_and_a_root_channel_subgraph() -> None:
    seen = on_both(self_loop_program)
    assert {"source": "worker", "target": "worker", "conditional": True} in seen["loop"]["json"]["edges"]


def metadata_program(load: Load) -> list[Any]:
    """A node's drawn metadata: ``add_node(metadata=)``'s, ``defer`` for a deferred node, ``__interrupt`` for a
    breakpoint (before, after, both), inside a subgraph drawn with ``xray`` too (shown by the mermaid)."""
    graph_module = load("graph")
    inner = graph_module.StateGraph(Text)
    inner.add_node("ask", lambda state: {"text": "a"}).add_node("tell", lambda state: {"text": "t"})
    inner.add_edge("__start__", "ask").add_edge("ask", "tell")
    outer = graph_module.StateGraph(Text)
    outer.add_node("plan", lambda state: {"text": "p"}, metadata={"owner": "ops", "cost": 2})
    outer.add_node("side", lambda state: {"text": "s"})
    outer.add_node("inner", inner.compile(interrupt_before=["tell"]))
    outer.add_node("wrap", lambda state: {"text": "w"}, defer=True)
    outer.add_edge("__start__", "plan").add_edge("plan", "side").add_edge("plan", "inner")
    outer.add_edge("side", "wrap").add_edge("inner", "wrap")
    app = outer.compile(interrupt_before=["plan", "side"], interrupt_after=["plan"])
    return [drawn(app), drawn(app, xray=True)]


def test_node_metadata_is_drawn() -> None:
    seen = on_both(metadata_program)
    plan = next(node for node in seen[0]["json"]["nodes"] if node["id"] == "plan")
    assert plan["metadata"] == {"owner": "ops", "cost": 2, "__interrupt": "before,after"}
    assert "tell<hr/><small><em>__interrupt = before</em></small>" in seen[1]["styled"]


def xray_order_program(load: Load) -> list[Any]:
    """``xray`` lists a subgraph's nodes after the graph's own (``__end__`` among those), its edges after the
    graph's; a subgraph whose ``__start__`` leads two ways keeps it (``sub:__start__``, drawn as a runnable);
    nested subgraphs every level deep or a number of levels; several subgraph nodes in the order added."""
    graph_module = load("graph")

    def forked(prefix: str) -> Any:
        graph = graph_module.StateGraph(Text)
        graph.add_node(f"{prefix}_fast", lambda state: {"text": "f"}).add_node(f"{prefix}_slow", lambda state: {})
        graph.add_conditional_edges("__start__", lambda state: [f"{prefix}_fast", f"{prefix}_slow"],
                                    [f"{prefix}_fast", f"{prefix}_slow"])
        return graph.compile()

    middle = graph_module.StateGraph(Text)
    middle.add_node("pre", lambda state: {"text": "."}).add_node("fork", forked("in"))
    middle.add_edge("__start__", "pre").add_edge("pre", "fork")
    outer = graph_module.StateGraph(Text)
    outer.add_node("one", lambda state: {"text": "1"}).add_node("mid", middle.compile())
    outer.add_node("two", forked("out")).add_node("three", lambda state: {"text": "3"})
    outer.add_edge("__start__", "one").add_edge("one", "mid").add_edge("mid", "two").add_edge("two", "three")
    app = outer.compile()
    return [drawn(app, xray) for xray in (True, 1, 2, False)]


def test_xray_lists_subgraph_nodes_after_the_graphs_own() -> None:
    seen = on_both(xray_order_program)
    ids = [node["id"] for node in seen[0]["json"]["nodes"]]
    assert ids.index("__end__") < ids.index("mid:pre")
    assert ids.index("mid:pre") < ids.index("two:__start__")


def sends_and_unreached_program(load: Load) -> list[Any]:
    """A router returning Sends or ``__end__`` through a list path map (edges to each, conditional), a plain
    edge back, a conditional entry point, and a node no run reaches (drawn with no edges, as LangGraph draws)."""
    graph_module, types = load("graph"), load("types")
    graph = graph_module.StateGraph(Text)
    for name in ("agent", "tool", "nothing", "orphan"):
        graph.add_node(name, lambda state: {"text": "."})
    graph.set_conditional_entry_point(lambda state: "agent", {"go": "agent"})
    graph.add_conditional_edges("agent", lambda state: [types.Send("tool", state), types.Send("nothing", state)],
                                ["tool", "nothing", "__end__"])
    graph.add_edge("tool", "agent")
    return [drawn(graph.compile())]


def test_sends_and_an_unreached_node() -> None:
    seen = on_both(sends_and_unreached_program)
    assert not any("orphan" in (edge["source"], edge["target"]) for edge in seen[0]["json"]["edges"])


def code_subgraph_program(load: Load) -> list[Any]:
    """A graph invoked in a node's code is drawn in place by ``xray`` too; a waiting edge into ``__end__`` is not
    drawn (LangGraph builds nothing for it), so a node it leaves from shows its other ways out only; a sequence
    and ``destinations=`` drawn as edges; an error handler listed as a node of its own."""
    graph_module, types = load("graph"), load("types")
    inner = graph_module.StateGraph(Text)
    inner.add_node("a", lambda state: {"text": "a"}).add_node("b", lambda state: {"text": "b"})
    inner.add_edge("__start__", "a").add_edge("a", "b")
    sub = inner.compile()

    def calls(state: Text) -> Any:
        return sub.invoke(state)

    graph = graph_module.StateGraph(Text)
    graph.add_node("calls", calls, error_handler=lambda state: {"text": "handled"})
    graph.add_sequence([("s1", lambda state: {"text": "1"}), ("s2", lambda state: {"text": "2"})])
    graph.add_node("dest", lambda state: types.Command(goto="s1"), destinations=("s1", "__end__"))
    graph.add_edge("__start__", "calls").add_edge("calls", "dest").add_edge(["s2", "calls"], "__end__")
    app = graph.compile()
    return [drawn(app), drawn(app, xray=True)]


def test_a_subgraph_called_in_code_and_a_waiting_edge_into_end() -> None:
    seen = on_both(code_subgraph_program)
    assert {"source": "calls", "target": "__end__"} not in seen[0]["json"]["edges"]
    assert {"source": "calls:b", "target": "dest"} in seen[1]["json"]["edges"]


def entrypoint_program(load: Load) -> list[Any]:
    """An ``@entrypoint`` workflow is drawn as its one node, then ``__start__`` (holding nothing) and ``__end__``,
    a plain edge in and a conditional edge out."""
    func = load("func")

    @func.task
    def add_one(number: int) -> int:
        return number + 1

    @func.entrypoint()
    def workflow(number: int) -> int:
        return add_one(number).result()

    return [drawn(workflow), json.loads(json.dumps(asyncio.run(workflow.aget_graph()).to_json()))]


def test_an_entrypoint_is_drawn_as_one_node() -> None:
    seen = on_both(entrypoint_program)
    assert [node["id"] for node in seen[0]["json"]["nodes"]] == ["workflow", "__start__", "__end__"]


def routers_program(load: Load) -> list[Any]:
    """A router's edges as LangGraph draws them: to each ``Literal`` of its return type (an async one's too), to
    its path map's targets labelled with their keys; a router whose destinations are not declared (no path map,
    no ``Literal``; one returning Sends) draws none, its node then drawn as where the graph ends."""
    graph_module, types = load("graph"), load("types")

    def literal(state: Text) -> Literal["b", "c", "__end__"]:
        return "b"

    def bare(state: Text) -> Any:
        return "c"

    async def awaited(state: Text) -> Literal["a", "c"]:
        return "c"

    def sends(state: Text) -> list[Any]:
        return [types.Send("c", state)]

    drawings = []
    for router, path_map in ((literal, None), (bare, None), (awaited, None), (sends, None),
                             (bare, {"yes": "b", "no": "__end__"})):
        graph = graph_module.StateGraph(Text)
        for name in ("a", "b", "c"):
            graph.add_node(name, lambda state: {"text": "."})
        graph.add_edge("__start__", "a").add_conditional_edges("a", router, path_map)
        drawings.append(drawn(graph.compile()))
    return drawings


def test_router_edges_as_declared() -> None:
    seen = on_both(routers_program)
    assert seen[1]["json"]["edges"] == [{"source": "__start__", "target": "a"}, {"source": "a", "target": "__end__"}]


def tool_node_program(load: Load) -> list[Any]:
    """A ``ToolNode`` is drawn as its own class with its tools' names as ``__tools`` metadata (after a
    breakpoint's ``__interrupt``), shown by the mermaid too."""
    from langchain_core.tools import tool

    @tool
    def search(query: str) -> str:
        """Look the query up."""
        return query

    @tool
    def fetch(url: str) -> str:
        """Fetch the page."""
        return url

    graph_module, prebuilt = load("graph"), load("prebuilt")
    graph = graph_module.StateGraph(graph_module.MessagesState)
    graph.add_node("agent", lambda state: {"messages": []})
    graph.add_node("tools", prebuilt.ToolNode([search, fetch]))
    graph.add_edge("__start__", "agent").add_edge("tools", "agent")
    graph.add_conditional_edges("agent", prebuilt.tools_condition)
    return [drawn(graph.compile()), drawn(graph.compile(interrupt_before=["tools"]))]


def test_a_tool_node_is_drawn_with_its_tools() -> None:
    seen = on_both(tool_node_program)
    tools = next(node for node in seen[1]["json"]["nodes"] if node["id"] == "tools")
    assert tools["data"]["id"] == ["statehitl", "prebuilt", "tool_node", "ToolNode"]
    assert tools["metadata"] == {"__interrupt": "before", "__tools": ["search", "fetch"]}


def end_edges_program(load: Load) -> list[Any]:
    """A plain edge into ``__end__`` from a node that has other ways out is not drawn (LangGraph draws an edge
    into ``__end__`` only from a node nothing leads on from): beside a plain edge, beside a router, and in a
    loop, where the drawing then ends at the last step's node as for a loop with no way out."""
    graph_module = load("graph")

    def route(state: Text) -> Literal["c", "__end__"]:
        return "__end__"

    def build(edges: list[tuple[str, str]], router: str | None = None) -> dict[str, Any]:
        graph = graph_module.StateGraph(Text)
        for name in ("a", "b", "c"):
            graph.add_node(name, lambda state: {"text": "."})
        for source, target in edges:
            graph.add_edge(source, target)
        if router is not None:
            graph.add_conditional_edges(router, route)
        return drawn(graph.compile())

    return [build([("__start__", "a"), ("a", "b"), ("a", "c"), ("a", "__end__"), ("b", "__end__")]),
            build([("__start__", "a"), ("a", "__end__"), ("b", "__end__"), ("c", "__end__")], router="a"),
            build([("__start__", "a"), ("a", "b"), ("b", "a"), ("b", "__end__"), ("c", "__end__")])]


def test_an_edge_into_end_beside_other_ways_out_is_not_drawn() -> None:
    seen = on_both(end_edges_program)
    assert {"source": "a", "target": "__end__"} not in seen[0]["json"]["edges"]


def string_path_map_program(load: Load) -> list[Any]:
    """A ``str`` given as the path map is no map (LangGraph reads only a dict or a list): the router's targets
    come from its ``Literal`` return type, and the graph runs as it routes."""
    graph_module = load("graph")

    def route(state: Text) -> Literal["b", "__end__"]:
        return "b" if len(state["text"]) < 3 else "__end__"

    graph = graph_module.StateGraph(Text)
    graph.add_node("a", lambda state: {"text": "a"})
    graph.add_node("b", lambda state: {"text": "b"})
    graph.add_edge("__start__", "a").add_edge("b", "a")
    graph.add_conditional_edges("a", route, "b")
    app = graph.compile()
    return [drawn(app), app.invoke({"text": ""})]


def test_a_string_path_map_is_no_map() -> None:
    assert on_both(string_path_map_program)[1] == {"text": "aba"}
